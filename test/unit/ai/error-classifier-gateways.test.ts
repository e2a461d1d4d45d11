import { describe, expect, it } from "vitest";
import {
  awsError,
  bedrock,
  type Case,
  classifiesEach,
  gemini,
  http,
  openrouter,
} from "../../support/error-classifier-cases.js";

const cases: Case[] = [
  // ── OpenRouter ──
  {
    name: "OpenRouter 402 requires more credits",
    error: http(
      402,
      openrouter(
        402,
        "This request requires more credits, or fewer max_tokens. You requested up to 64000 tokens, but can only afford 12000. To increase, visit https://openrouter.ai/settings/credits and upgrade to a paid account",
      ),
    ),
    reason: "billing",
    expect: { availableOutputTokens: 12_000 },
  },
  {
    name: "OpenRouter 429 upstream rate limit in metadata.raw",
    error: http(
      429,
      openrouter(429, "Provider returned error", {
        raw: "google/gemini-2.5-pro-exp-03-25:free is temporarily rate-limited upstream. Please retry shortly, or add your own key to accumulate your rate limits: https://openrouter.ai/settings/integrations",
        provider_name: "Google AI Studio",
      }),
    ),
    reason: "rate_limit",
  },
  {
    name: "OpenRouter 400 with the upstream context error as JSON in metadata.raw",
    error: http(
      400,
      openrouter(400, "Provider returned error", {
        raw: JSON.stringify({
          error: {
            message:
              "This model's maximum context length is 65536 tokens. However, you requested 70120 tokens (62120 in the messages, 8000 in the completion).",
            code: "context_length_exceeded",
          },
        }),
        provider_name: "DeepInfra",
      }),
    ),
    reason: "context_overflow",
    expect: { availableOutputTokens: 3416 },
  },
  {
    name: "OpenRouter 404 no endpoints found",
    error: http(404, openrouter(404, "No endpoints found for mistralai/mistral-9b.")),
    reason: "model_not_found",
  },
  {
    name: "OpenRouter 404 blocked by the account's data policy",
    error: http(
      404,
      openrouter(
        404,
        "No endpoints found matching your data policy (Free model publication). Configure: https://openrouter.ai/settings/privacy",
      ),
    ),
    reason: "provider_policy_blocked",
  },
  {
    name: "OpenRouter 403 moderation flag",
    error: http(
      403,
      openrouter(
        403,
        'openai/gpt-4o requires moderation on OpenAI. Your input was flagged for "harassment". No credits were charged.',
        {
          reasons: ["harassment"],
          flagged_input: "...",
          provider_name: "OpenAI",
          model_slug: "openai/gpt-4o",
        },
      ),
    ),
    reason: "content_filter",
  },
  {
    name: "OpenRouter 401 no auth credentials",
    error: http(401, openrouter(401, "No auth credentials found")),
    reason: "auth",
  },
  {
    name: "OpenRouter 403 key limit exceeded",
    error: http(
      403,
      openrouter(403, "Key limit exceeded (daily limit). Manage it at https://openrouter.ai/settings/keys"),
    ),
    reason: "billing",
  },
  // ── Google Gemini ──
  {
    name: "Gemini 429 RESOURCE_EXHAUSTED per-minute quota with RetryInfo",
    error: http(
      429,
      gemini(
        429,
        "RESOURCE_EXHAUSTED",
        "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.",
        [
          {
            "@type": "type.googleapis.com/google.rpc.QuotaFailure",
            violations: [
              {
                quotaMetric: "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                quotaId: "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
              },
            ],
          },
          { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "32s" },
        ],
      ),
    ),
    reason: "rate_limit",
    expect: { retryAfterMs: 32_000 },
  },
  {
    name: "Gemini (OpenAI-compatible endpoint) 429 as a one-element array",
    error: http(429, [gemini(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota).")]),
    reason: "rate_limit",
  },
  {
    name: "Gemini 400 INVALID_ARGUMENT token count",
    error: http(
      400,
      gemini(
        400,
        "INVALID_ARGUMENT",
        "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
      ),
    ),
    reason: "context_overflow",
  },
  {
    name: "Gemini 400 API_KEY_INVALID",
    error: http(
      400,
      gemini(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.", [
        {
          "@type": "type.googleapis.com/google.rpc.ErrorInfo",
          reason: "API_KEY_INVALID",
          domain: "googleapis.com",
        },
      ]),
    ),
    reason: "auth",
  },
  {
    name: "Gemini 503 UNAVAILABLE",
    error: http(503, gemini(503, "UNAVAILABLE", "The model is overloaded. Please try again later.")),
    reason: "overloaded",
  },
  {
    name: "Gemini 404 NOT_FOUND model",
    error: http(
      404,
      gemini(
        404,
        "NOT_FOUND",
        "models/gemini-9-pro is not found for API version v1beta, or is not supported for generateContent.",
      ),
    ),
    reason: "model_not_found",
  },
  {
    name: "Gemini 400 FAILED_PRECONDITION unsupported location",
    error: http(400, gemini(400, "FAILED_PRECONDITION", "User location is not supported for the API use.")),
    reason: "provider_policy_blocked",
  },
  // ── AWS Bedrock ──
  {
    name: "Bedrock ThrottlingException",
    error: awsError("ThrottlingException", 429, "Too many requests, please wait before trying again."),
    reason: "rate_limit",
  },
  {
    name: "Bedrock ValidationException input too long",
    error: awsError("ValidationException", 400, "Input is too long for requested model."),
    reason: "context_overflow",
  },
  {
    name: "Bedrock AccessDeniedException",
    error: awsError(
      "AccessDeniedException",
      403,
      "You don't have access to the model with the specified model ID.",
    ),
    reason: "auth_permanent",
  },
  {
    name: "Bedrock ServiceUnavailableException mid-stream (no status)",
    error: awsError("ServiceUnavailableException", undefined, "Bedrock is unable to process your request."),
    reason: "overloaded",
  },
  {
    name: "Bedrock ModelTimeoutException",
    error: awsError("ModelTimeoutException", 408, "Model has timed out in processing the request."),
    reason: "timeout",
  },
  {
    name: "Bedrock body with __type (HTTP, no SDK)",
    error: http(429, {
      __type: "com.amazon.coral.availability#ThrottlingException",
      message: "Rate exceeded",
    }),
    reason: "rate_limit",
  },
  // Bedrock errors as the bedrock_converse transport reports them: status plus `{__type, message}`.
  {
    name: "Bedrock transport 429 ThrottlingException",
    error: http(429, bedrock("ThrottlingException", "Too many requests, please wait before trying again.")),
    reason: "rate_limit",
    expect: { status: 429 },
  },
  {
    name: "Bedrock transport 429 ThrottlingException, tokens per day",
    error: http(
      429,
      bedrock("ThrottlingException", "Too many tokens per day, please wait before trying again."),
    ),
    reason: "rate_limit",
  },
  {
    name: "Bedrock transport 503 ServiceUnavailableException",
    error: http(503, bedrock("ServiceUnavailableException", "Bedrock is unable to process your request.")),
    reason: "overloaded",
  },
  {
    name: "Bedrock transport 429 ModelNotReadyException",
    error: http(
      429,
      bedrock("ModelNotReadyException", "Model is not ready for inference. Wait and try your request again."),
    ),
    reason: "overloaded",
  },
  {
    name: "Bedrock transport 400 ValidationException input is too long",
    error: http(400, bedrock("ValidationException", "Input is too long for requested model.")),
    reason: "context_overflow",
  },
  {
    name: "Bedrock transport 400 ValidationException too many input tokens",
    error: http(400, bedrock("ValidationException", "The request has too many input tokens for this model.")),
    reason: "context_overflow",
  },
  {
    name: "Bedrock transport in-stream validationException (status from the exception type)",
    error: http(400, bedrock("ValidationException", "Input is too long for requested model."), {
      message:
        "Bedrock at https://bedrock-runtime.us-east-1.amazonaws.com reported ValidationException mid-stream",
    }),
    reason: "context_overflow",
  },
  {
    name: "Bedrock transport 400 ValidationException invalid model identifier",
    error: http(400, bedrock("ValidationException", "The provided model identifier is invalid.")),
    reason: "model_not_found",
  },
  {
    name: "Bedrock transport 404 ResourceNotFoundException",
    error: http(404, bedrock("ResourceNotFoundException", "Model not found.")),
    reason: "model_not_found",
  },
  {
    name: "Bedrock transport 403 AccessDeniedException, invalid API key (auth)",
    error: http(
      403,
      bedrock("AccessDeniedException", "Authentication failed: Please make sure your API Key is valid."),
    ),
    reason: "auth",
  },
  {
    name: "Bedrock transport 403 AccessDeniedException, IAM permission missing (auth_permanent)",
    error: http(
      403,
      bedrock(
        "AccessDeniedException",
        "User: arn:aws:iam::123456789012:user/dev is not authorized to perform: bedrock:InvokeModelWithResponseStream on resource: arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-haiku-20240307-v1:0",
      ),
    ),
    reason: "auth_permanent",
  },
  {
    name: "Bedrock transport 403 UnrecognizedClientException (bad access key)",
    error: http(
      403,
      bedrock("UnrecognizedClientException", "The security token included in the request is invalid."),
    ),
    reason: "auth",
  },
  {
    name: "Bedrock SDK 403 InvalidSignatureException (wrong secret key)",
    error: awsError(
      "InvalidSignatureException",
      403,
      "The request signature we calculated does not match the signature you provided.",
    ),
    reason: "auth",
  },
  {
    name: "Bedrock transport: no AWS credentials found (no status)",
    error: http(
      undefined,
      bedrock("CredentialsProviderError", "Could not load credentials from any providers"),
      { message: "No AWS credentials for Bedrock: Could not load credentials from any providers." },
    ),
    reason: "auth",
  },
  {
    name: "Bedrock transport 408 ModelTimeoutException",
    error: http(408, bedrock("ModelTimeoutException", "Model has timed out in processing the request.")),
    reason: "timeout",
  },
  {
    name: "Bedrock transport 424 ModelStreamErrorException (in-stream)",
    error: http(424, bedrock("ModelStreamErrorException", "The model stream failed.")),
    reason: "server_error",
  },
  {
    name: "Bedrock transport 424 ModelErrorException",
    error: http(424, bedrock("ModelErrorException", "The model returned an error.")),
    reason: "server_error",
  },
  {
    name: "Bedrock transport 500 InternalServerException",
    error: http(500, bedrock("InternalServerException", "The server encountered an internal error.")),
    reason: "server_error",
  },
  {
    name: "Bedrock transport 400 ServiceQuotaExceededException",
    error: http(
      400,
      bedrock("ServiceQuotaExceededException", "Your request exceeds the service quota for your account."),
    ),
    reason: "rate_limit",
  },
];

describe("classifyApiError: OpenRouter, Gemini and Bedrock error shapes", () => {
  it("covers at least 40 real error shapes", () => {
    expect(cases.length).toBeGreaterThanOrEqual(40);
  });

  classifiesEach(cases);
});
