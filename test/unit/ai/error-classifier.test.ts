import { describe, expect, it } from "vitest";
import {
  type ClassifiedError,
  type ClassifyContext,
  classifyApiError,
  type FailoverReason,
} from "../../../src/ai/error-classifier.js";
import { ProviderError } from "../../../src/ai/types.js";

const NOW = Date.parse("2025-06-01T12:00:00Z");

/** An HTTP error as a transport reports it: status plus the body text exactly as the provider sent it. */
function http(
  status: number | undefined,
  body: unknown,
  extra: { headers?: Record<string, string>; message?: string; retryAfterMs?: number } = {},
): ProviderError {
  const error = new ProviderError(extra.message ?? `The provider answered with HTTP ${status}`, {
    ...(status !== undefined ? { status } : {}),
    body: typeof body === "string" ? body : JSON.stringify(body),
    ...(extra.retryAfterMs !== undefined ? { retryAfterMs: extra.retryAfterMs } : {}),
  });
  return extra.headers ? Object.assign(error, { headers: extra.headers }) : error;
}

/** A Node / undici style error with a `code`. */
function nodeError(message: string, code?: string, name?: string, cause?: unknown): Error {
  const error = new Error(message, cause === undefined ? undefined : { cause });
  if (code) Object.assign(error, { code });
  if (name) error.name = name;
  return error;
}

/** An AWS SDK v3 service exception as `@aws-sdk/client-bedrock-runtime` throws it. */
function awsError(name: string, httpStatusCode: number | undefined, message: string): Error {
  const error = new Error(message);
  error.name = name;
  return Object.assign(error, {
    $fault: "client",
    $metadata: httpStatusCode === undefined ? {} : { httpStatusCode, requestId: "req-1" },
  });
}

const anthropic = (type: string, message: string) => ({
  type: "error",
  error: { type, message },
  request_id: "req_01",
});
const openai = (message: string, type: string | null, code: string | null, param: string | null = null) => ({
  error: { message, type, param, code },
});
const gemini = (code: number, status: string, message: string, details?: unknown[]) => ({
  error: { code, message, status, ...(details ? { details } : {}) },
});
/** The body the bedrock_converse transport puts on its `ProviderError`. */
const bedrock = (type: string, message: string) => ({ __type: type, message });
const openrouter = (code: number, message: string, metadata?: Record<string, unknown>) => ({
  error: { code, message, ...(metadata ? { metadata } : {}) },
  user_id: "user_2abc",
});

type Flags = Pick<
  ClassifiedError,
  "retryable" | "shouldCompress" | "shouldRotateCredential" | "shouldFallback" | "shouldStripReasoning"
>;
const f = (retry: 0 | 1, compress: 0 | 1, rotate: 0 | 1, fallback: 0 | 1, strip: 0 | 1 = 0): Flags => ({
  retryable: retry === 1,
  shouldCompress: compress === 1,
  shouldRotateCredential: rotate === 1,
  shouldFallback: fallback === 1,
  shouldStripReasoning: strip === 1,
});
/** The documented flags of each reason (retry, compress, rotate, fallback, strip reasoning). */
const FLAGS: Record<FailoverReason, Flags> = {
  auth: f(0, 0, 1, 0),
  auth_permanent: f(0, 0, 0, 1),
  billing: f(0, 0, 1, 1),
  rate_limit: f(1, 0, 0, 0),
  overloaded: f(1, 0, 0, 1),
  server_error: f(1, 0, 0, 1),
  timeout: f(1, 0, 0, 0),
  local_server_down: f(0, 0, 0, 1),
  host_not_found: f(0, 0, 0, 1),
  context_overflow: f(0, 1, 0, 0),
  payload_too_large: f(0, 1, 0, 0),
  image_too_large: f(0, 0, 0, 0),
  max_tokens_too_large: f(0, 0, 0, 0),
  model_not_found: f(0, 0, 0, 1),
  provider_policy_blocked: f(0, 0, 0, 1),
  content_filter: f(0, 0, 0, 1),
  format_error: f(0, 0, 0, 0),
  thinking_signature: f(0, 0, 0, 0, 1),
  invalid_encrypted_content: f(0, 0, 0, 0, 1),
  long_context_tier: f(0, 1, 0, 0),
  unknown: f(0, 0, 0, 0),
};

interface Case {
  name: string;
  error: unknown;
  reason: FailoverReason;
  context?: ClassifyContext;
  /** Flags that differ from the reason's documented defaults, and other expected fields. */
  expect?: Partial<ClassifiedError>;
}

const LARGE = { approxContextTokens: 150_000 };

const cases: Case[] = [
  // ── OpenAI ──
  {
    name: "OpenAI 400 context_length_exceeded",
    error: http(
      400,
      openai(
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 130442 tokens. Please reduce the length of the messages.",
        "invalid_request_error",
        "context_length_exceeded",
        "messages",
      ),
    ),
    reason: "context_overflow",
    expect: { status: 400, availableOutputTokens: undefined },
  },
  {
    name: "OpenAI 400 context overflow with a messages/completion breakdown",
    error: http(
      400,
      openai(
        "This model's maximum context length is 16385 tokens. However, you requested 17000 tokens (12000 in the messages, 5000 in the completion). Please reduce the length of the messages or completion.",
        "invalid_request_error",
        "context_length_exceeded",
        "messages",
      ),
    ),
    reason: "context_overflow",
    expect: { availableOutputTokens: 4385 },
  },
  {
    name: "OpenAI 429 insufficient_quota (billing, not a rate limit)",
    error: http(
      429,
      openai(
        "You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.",
        "insufficient_quota",
        "insufficient_quota",
      ),
    ),
    reason: "billing",
  },
  {
    name: "OpenAI 429 rate_limit_exceeded with 'try again in 1.4s'",
    error: http(
      429,
      openai(
        "Rate limit reached for gpt-4o in organization org-abc123 on tokens per min (TPM): Limit 30000, Used 29500, Requested 1200. Please try again in 1.4s. Visit https://platform.openai.com/account/rate-limits to learn more.",
        "tokens",
        "rate_limit_exceeded",
      ),
    ),
    reason: "rate_limit",
    expect: { retryAfterMs: 1400 },
  },
  {
    name: "OpenAI 401 invalid_api_key",
    error: http(
      401,
      openai(
        "Incorrect API key provided: sk-abc***xyz. You can find your API key at https://platform.openai.com/account/api-keys.",
        "invalid_request_error",
        "invalid_api_key",
      ),
    ),
    reason: "auth",
  },
  {
    name: "OpenAI 404 model_not_found",
    error: http(
      404,
      openai(
        "The model `gpt-9-turbo` does not exist or you do not have access to it.",
        "invalid_request_error",
        "model_not_found",
      ),
    ),
    reason: "model_not_found",
  },
  {
    name: "OpenAI 400 unsupported max_tokens parameter is a format error, not an overflow",
    error: http(
      400,
      openai(
        "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
        "invalid_request_error",
        "unsupported_parameter",
        "max_tokens",
      ),
    ),
    reason: "format_error",
  },
  {
    name: "OpenAI 500 server_error",
    error: http(
      500,
      openai(
        "The server had an error while processing your request. Sorry about that!",
        "server_error",
        null,
      ),
    ),
    reason: "server_error",
  },
  {
    name: "OpenAI 503 engine overloaded",
    error: http(
      503,
      openai("The engine is currently overloaded, please try again later.", "server_error", null),
    ),
    reason: "overloaded",
  },
  {
    name: "OpenAI Responses 400 invalid_encrypted_content",
    error: http(
      400,
      openai(
        "The encrypted content for item rs_123 could not be verified.",
        "invalid_request_error",
        "invalid_encrypted_content",
      ),
    ),
    reason: "invalid_encrypted_content",
  },
  {
    name: "our chat-completions transport's body (the SDK's inner error object) with a 429",
    error: http(429, { message: "slow down" }, { retryAfterMs: 0 }),
    reason: "rate_limit",
    expect: { retryAfterMs: 0, detail: "slow down" },
  },
  {
    name: "Azure OpenAI 400 content_filter",
    error: http(400, {
      error: {
        message:
          "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry.",
        type: null,
        param: "prompt",
        code: "content_filter",
        status: 400,
        innererror: {
          code: "ResponsibleAIPolicyViolation",
          content_filter_result: { violence: { filtered: true, severity: "high" } },
        },
      },
    }),
    reason: "content_filter",
  },
  // ── Anthropic ──
  {
    name: "Anthropic 529 overloaded_error",
    error: http(529, anthropic("overloaded_error", "Overloaded")),
    reason: "overloaded",
  },
  {
    name: "Anthropic 429 rate_limit_error with retry-after",
    error: http(
      429,
      anthropic(
        "rate_limit_error",
        "This request would exceed the rate limit for your organization (org-1) of 400,000 input tokens per minute.",
      ),
      { headers: { "retry-after": "17", "anthropic-ratelimit-input-tokens-remaining": "0" } },
    ),
    reason: "rate_limit",
    expect: { retryAfterMs: 17_000 },
  },
  {
    name: "Anthropic 429 whose input-token limit resets in 3 minutes (rotate and fall back)",
    error: http(
      429,
      anthropic("rate_limit_error", "Number of request tokens has exceeded your daily rate limit."),
      {
        headers: {
          "anthropic-ratelimit-requests-remaining": "40",
          "anthropic-ratelimit-requests-reset": "2025-06-01T12:00:05Z",
          "anthropic-ratelimit-input-tokens-remaining": "0",
          "anthropic-ratelimit-input-tokens-reset": "2025-06-01T12:03:00Z",
        },
      },
    ),
    reason: "rate_limit",
    expect: {
      resetAt: Date.parse("2025-06-01T12:03:00Z"),
      shouldRotateCredential: true,
      shouldFallback: true,
    },
  },
  {
    name: "Anthropic 400 prompt is too long",
    error: http(
      400,
      anthropic("invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"),
    ),
    reason: "context_overflow",
  },
  {
    name: "Anthropic 400 invalid thinking signature",
    error: http(
      400,
      anthropic("invalid_request_error", "messages.1.content.0: Invalid `signature` in `thinking` block"),
    ),
    reason: "thinking_signature",
  },
  {
    name: "Anthropic 400 modified thinking blocks",
    error: http(
      400,
      anthropic(
        "invalid_request_error",
        "messages.3.content.0: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response.",
      ),
    ),
    reason: "thinking_signature",
  },
  {
    name: "Anthropic 400 max_tokens above the model's output limit",
    error: http(
      400,
      anthropic(
        "invalid_request_error",
        "max_tokens: 64000 > 32000, which is the maximum allowed number of output tokens for claude-opus-4-20250514",
      ),
    ),
    reason: "max_tokens_too_large",
    expect: { availableOutputTokens: 32_000 },
  },
  {
    name: "Anthropic 400 input plus max_tokens over the context limit",
    error: http(
      400,
      anthropic(
        "invalid_request_error",
        "input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000, decrease input length or `max_tokens` and try again",
      ),
    ),
    reason: "context_overflow",
    expect: { availableOutputTokens: 3000 },
  },
  {
    name: "Anthropic 400 credit balance too low",
    error: http(
      400,
      anthropic(
        "invalid_request_error",
        "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.",
      ),
    ),
    reason: "billing",
  },
  {
    name: "Anthropic 401 authentication_error",
    error: http(401, anthropic("authentication_error", "invalid x-api-key")),
    reason: "auth",
  },
  {
    name: "Anthropic 403 permission_error",
    error: http(
      403,
      anthropic("permission_error", "Your API key does not have permission to use the specified resource."),
    ),
    reason: "auth_permanent",
  },
  {
    name: "Anthropic 404 not_found_error for a model",
    error: http(404, anthropic("not_found_error", "model: claude-5-opus")),
    reason: "model_not_found",
  },
  {
    name: "Anthropic 413 request_too_large",
    error: http(413, anthropic("request_too_large", "Request exceeds the maximum allowed number of bytes.")),
    reason: "payload_too_large",
  },
  {
    name: "Anthropic 400 image over 5 MB",
    error: http(
      400,
      anthropic(
        "invalid_request_error",
        "messages.0.content.1.image.source.base64: image exceeds 5 MB maximum: 6291456 bytes > 5242880 bytes",
      ),
    ),
    reason: "image_too_large",
  },
  {
    name: "Anthropic 429 long-context tier gate",
    error: http(
      429,
      anthropic("rate_limit_error", "Extra usage is required for long context requests over 200k tokens."),
    ),
    reason: "long_context_tier",
  },
  {
    name: "Anthropic overloaded_error inside a 200 stream (no status)",
    error: http(undefined, anthropic("overloaded_error", "Overloaded"), {
      message: "The stream reported an error",
    }),
    reason: "overloaded",
  },
  {
    name: "Anthropic 500 api_error",
    error: http(500, anthropic("api_error", "Internal server error")),
    reason: "server_error",
  },
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
  // ── DeepSeek, xAI, Mistral ──
  {
    name: "DeepSeek 402 Insufficient Balance",
    error: http(402, openai("Insufficient Balance", "unknown_error", "invalid_request_error")),
    reason: "billing",
  },
  {
    name: "DeepSeek 400 maximum context length",
    error: http(
      400,
      openai(
        "This model's maximum context length is 65536 tokens. However, you requested 70000 tokens (66000 in the messages, 4000 in the completion). Please reduce the length of the messages or completion.",
        "invalid_request_error",
        "invalid_request_error",
      ),
    ),
    reason: "context_overflow",
    expect: { availableOutputTokens: undefined },
  },
  {
    name: "xAI 400 maximum prompt length (error is a string)",
    error: http(400, {
      code: "Client specified an invalid argument",
      error: "This model's maximum prompt length is 131072 but the request contains 140000 tokens.",
    }),
    reason: "context_overflow",
  },
  {
    name: "xAI 403 team without credits",
    error: http(403, {
      code: "The caller does not have permission to execute the specified operation",
      error:
        "Your newly created team doesn't have any credits yet. You can purchase credits on https://console.x.ai/team/abc.",
    }),
    reason: "billing",
  },
  {
    name: "xAI Grok subscription error in an SSE frame (no status)",
    error: http(undefined, {
      error: "You have either run out of available resources or do not have an active Grok subscription.",
    }),
    reason: "billing",
  },
  {
    name: "Mistral 429 rate limit (flat message)",
    error: http(429, { message: "Requests rate limit exceeded" }),
    reason: "rate_limit",
  },
  {
    name: "Mistral 400 prompt too large for the context",
    error: http(400, {
      object: "error",
      message:
        "Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length",
      type: "invalid_request_message_error",
      param: null,
      code: "3051",
    }),
    reason: "context_overflow",
  },
  {
    name: "Mistral 401 Unauthorized",
    error: http(401, { message: "Unauthorized", request_id: "0f3e" }),
    reason: "auth",
  },
  // ── z.ai, Kimi, MiniMax ──
  {
    name: "z.ai 429 code 1305 overload (not a per-key limit)",
    error: http(429, {
      error: { code: "1305", message: "The service may be temporarily overloaded, please try again later" },
    }),
    context: { provider: "zai" },
    reason: "overloaded",
  },
  {
    name: "z.ai 429 code 1113 insufficient balance",
    error: http(429, { error: { code: "1113", message: "余额不足或无可用资源包,请充值。" } }),
    context: { provider: "zai" },
    reason: "billing",
  },
  {
    name: "z.ai code 1261 prompt too long, recognised by code alone",
    error: http(400, { error: { code: "1261", message: "Prompt 超长" } }),
    context: { baseUrl: "https://api.z.ai/api/paas/v4" },
    reason: "context_overflow",
  },
  {
    name: "Kimi 429 exceeded_current_quota_error",
    error: http(429, {
      error: {
        message: "Your account org-abc <ak-xyz> is suspended, please check your plan and billing details",
        type: "exceeded_current_quota_error",
      },
    }),
    reason: "billing",
  },
  {
    name: "Kimi 429 rate_limit_reached_error with 'try again after 1 seconds'",
    error: http(429, {
      error: {
        message:
          "Your account org-abc<ak-xyz> request reached organization max RPM: 3, please try again after 1 seconds",
        type: "rate_limit_reached_error",
      },
    }),
    reason: "rate_limit",
    expect: { retryAfterMs: 1000 },
  },
  {
    name: "Kimi 400 model token limit",
    error: http(400, {
      error: {
        message: "Invalid request: Your request exceeded model token limit: 8192",
        type: "invalid_request_error",
      },
    }),
    reason: "context_overflow",
  },
  {
    name: "MiniMax base_resp 1008 insufficient balance (HTTP 200 body)",
    error: http(undefined, { base_resp: { status_code: 1008, status_msg: "insufficient balance" } }),
    reason: "billing",
  },
  {
    name: "MiniMax base_resp 1002 rate limit",
    error: http(undefined, {
      id: "x",
      base_resp: { status_code: 1002, status_msg: "rate limit exceeded(RPM)" },
    }),
    reason: "rate_limit",
  },
  // ── local servers ──
  {
    name: "Ollama 404 model not found",
    error: http(404, { error: 'model "llama3.3" not found, try pulling it first' }),
    reason: "model_not_found",
  },
  {
    name: "vLLM 400 maximum context length 4096",
    error: http(400, {
      object: "error",
      message:
        "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.",
      type: "BadRequestError",
      param: null,
      code: 400,
    }),
    reason: "context_overflow",
    expect: { availableOutputTokens: 96 },
  },
  {
    name: "vLLM 400 max_tokens too large for the remaining context",
    error: http(400, {
      error: {
        message:
          "'max_tokens' or 'max_completion_tokens' is too large: 4000. This model's maximum context length is 4096 tokens and your request has 200 input tokens (4000 > 4096 - 200).",
        type: "BadRequestError",
        param: null,
        code: 400,
      },
    }),
    reason: "max_tokens_too_large",
    expect: { availableOutputTokens: 3896 },
  },
  {
    name: "llama.cpp 400 exceeds the available context size",
    error: http(400, {
      error: {
        code: 400,
        message: "the request exceeds the available context size, try increasing it or enable context shift",
        type: "exceed_context_size_error",
        n_prompt_tokens: 3500,
        n_ctx: 4096,
      },
    }),
    reason: "context_overflow",
    expect: { availableOutputTokens: 596 },
  },
  {
    name: "llama.cpp 503 loading model",
    error: http(503, { error: { code: 503, message: "Loading model", type: "unavailable_error" } }),
    reason: "overloaded",
  },
  // ── generic HTTP ──
  {
    name: "nginx 413 HTML page",
    error: http(413, "<html><head><title>413 Request Entity Too Large</title></head></html>"),
    reason: "payload_too_large",
  },
  {
    name: "Cloudflare 502 on a large session → probably too long",
    error: http(502, "<html><title>502 Bad gateway</title><body>cloudflare</body></html>"),
    context: LARGE,
    reason: "context_overflow",
    expect: { retryable: true },
  },
  {
    name: "Cloudflare 502 on a small session → server error",
    error: http(502, "<html><title>502 Bad gateway</title><body>cloudflare</body></html>"),
    context: { approxContextTokens: 2000 },
    reason: "server_error",
  },
  {
    name: "gateway 502 for an unknown parameter fails fast",
    error: http(502, openai("Unknown parameter: 'reasoning_effort'.", "invalid_request_error", null)),
    reason: "format_error",
  },
  {
    name: "OpenRouter error inside a 200 stream: status from the body code",
    error: http(undefined, { error: { code: 502, message: "Upstream error from Together" } }),
    reason: "server_error",
    expect: { status: 502 },
  },
  {
    name: "402 'usage limit, try again in 5 minutes' is a rate limit",
    error: http(402, { error: { message: "Usage limit reached for this period. Try again in 5 minutes." } }),
    reason: "rate_limit",
    expect: { retryAfterMs: 300_000, shouldRotateCredential: true, shouldFallback: true },
  },
  {
    name: "400 with an account deactivated message on 401",
    error: http(
      401,
      openai("Your account has been deactivated.", "invalid_request_error", "account_deactivated"),
    ),
    reason: "auth_permanent",
  },
  // ── connections ──
  {
    name: "Node ECONNRESET",
    error: nodeError("read ECONNRESET", "ECONNRESET"),
    reason: "timeout",
  },
  {
    name: "Node ETIMEDOUT on a large session stays a timeout",
    error: nodeError("connect ETIMEDOUT 10.0.0.1:443", "ETIMEDOUT"),
    context: LARGE,
    reason: "timeout",
  },
  {
    name: "TLS bad record mac on a large session is a timeout, never context_overflow",
    error: nodeError(
      "write EPROTO 4C3B0000:error:0A000119:SSL routines:ssl3_get_record:decryption failed or bad record mac",
      "ERR_SSL_DECRYPTION_FAILED_OR_BAD_RECORD_MAC",
    ),
    context: LARGE,
    reason: "timeout",
  },
  {
    name: "TLS alert mid-stream, wrapped by a transport, on a large session → timeout",
    error: new ProviderError(
      "The connection to https://api.anthropic.com failed mid-response: SSL/TLS alert bad record mac",
      {
        transport: true,
        partial: true,
        cause: nodeError(
          "ssl3_read_bytes:sslv3 alert bad record mac",
          "ERR_SSL_SSL/TLS_ALERT_BAD_RECORD_MAC",
        ),
      },
    ),
    context: LARGE,
    reason: "timeout",
  },
  {
    name: "socket hang up wrapped by a transport",
    error: new ProviderError(
      "The connection to https://api.example.com/v1 failed mid-response: socket hang up",
      {
        transport: true,
        partial: true,
      },
    ),
    reason: "timeout",
  },
  {
    name: "a disconnect on a large session → context_overflow (still retryable)",
    error: new ProviderError(
      "The connection to https://openrouter.ai/api/v1 failed mid-response: terminated",
      { transport: true, baseUrl: "https://openrouter.ai/api/v1" },
    ),
    context: LARGE,
    reason: "context_overflow",
    expect: { retryable: true, baseUrl: "https://openrouter.ai/api/v1" },
  },
  {
    name: "the same disconnect below 60% of a 1M context → timeout",
    error: new ProviderError(
      "The connection to https://openrouter.ai/api/v1 failed mid-response: terminated",
      {
        transport: true,
      },
    ),
    context: { approxContextTokens: 150_000, contextLength: 1_000_000 },
    reason: "timeout",
  },
  {
    name: "a disconnect at 60% of a known 32k context → context_overflow",
    error: nodeError("other side closed", "UND_ERR_SOCKET", "SocketError"),
    context: { approxContextTokens: 20_000, contextLength: 32_768 },
    reason: "context_overflow",
    expect: { retryable: true },
  },
  {
    name: "undici fetch failed caused by a closed socket",
    error: new TypeError("fetch failed", {
      cause: nodeError("other side closed", "UND_ERR_SOCKET", "SocketError"),
    }),
    reason: "timeout",
  },
  {
    name: "connection refused",
    error: new TypeError("fetch failed", {
      cause: nodeError("connect ECONNREFUSED 127.0.0.1:8080", "ECONNREFUSED"),
    }),
    context: LARGE,
    reason: "timeout",
  },
  {
    name: "AbortError from a stall timeout",
    error: nodeError("This operation was aborted", undefined, "AbortError"),
    context: LARGE,
    reason: "timeout",
  },
  {
    name: "TimeoutError from AbortSignal.timeout",
    error: nodeError("The operation was aborted due to timeout", undefined, "TimeoutError"),
    reason: "timeout",
  },
  {
    name: "a programming error is not retried",
    error: new TypeError("Cannot read properties of undefined (reading 'map')"),
    reason: "unknown",
  },
  { name: "a thrown string", error: "something odd", reason: "unknown" },
  { name: "null", error: null, reason: "unknown" },
];

describe("classifyApiError", () => {
  it("covers at least 40 real error shapes", () => {
    expect(cases.length).toBeGreaterThanOrEqual(40);
  });

  it.each(cases)("$name → $reason", ({ error, reason, context, expect: extra }) => {
    const result = classifyApiError(error, { now: NOW, ...context });
    const entries = Object.entries(extra ?? {});
    const present = Object.fromEntries(entries.filter(([, value]) => value !== undefined));
    expect(result).toMatchObject({ reason, ...FLAGS[reason], ...present });
    expect(result.message).toMatch(/^[a-z]/);
    for (const [key, value] of entries) if (value === undefined) expect(result).not.toHaveProperty(key);
  });

  it("puts the status in the summary and keeps the provider's own words as detail", () => {
    const result = classifyApiError(http(429, anthropic("rate_limit_error", "Too   many\nrequests")));
    expect(result.message).toBe("rate limited by the provider (429)");
    expect(result.detail).toBe("Too many requests");
  });

  it("reads retry timing from headers on the error's cause (the openai SDK error)", () => {
    const sdkError = Object.assign(new Error("429 slow down"), {
      status: 429,
      headers: new Headers({ "retry-after-ms": "250", "x-ratelimit-remaining-requests": "0" }),
    });
    const wrapped = new ProviderError(
      "The provider at https://api.openai.com/v1 answered with HTTP 429: slow down",
      {
        status: 429,
        body: JSON.stringify({ message: "slow down" }),
        cause: sdkError,
      },
    );
    expect(classifyApiError(wrapped, { now: NOW })).toMatchObject({
      reason: "rate_limit",
      retryAfterMs: 250,
    });
  });

  it("prefers the transport's retryAfterMs over body hints", () => {
    const error = http(429, openai("Please try again in 20s.", "requests", "rate_limit_exceeded"), {
      retryAfterMs: 3000,
    });
    expect(classifyApiError(error).retryAfterMs).toBe(3000);
  });

  it("does not trust z.ai codes from other providers", () => {
    const error = http(400, { error: { code: "1261", message: "bad thing" } });
    expect(classifyApiError(error).reason).toBe("format_error");
  });

  it("never throws on odd inputs", () => {
    const cyclic: Record<string, unknown> = { message: "loop" };
    cyclic["cause"] = cyclic;
    const hostile = Object.assign(new Error("x"), {
      headers: {
        forEach() {
          throw new Error("nope");
        },
      },
    });
    for (const odd of [undefined, 42, [], {}, cyclic, hostile, http(400, "{not json"), http(500, "")])
      expect(() => classifyApiError(odd)).not.toThrow();
    expect(classifyApiError(cyclic).reason).toBe("unknown");
  });
});
