import { describe, expect, it } from "vitest";
import { anthropic, type Case, classifiesEach, http, openai } from "../../support/error-classifier-cases.js";

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
];

describe("classifyApiError: OpenAI and Anthropic error shapes", () => {
  it("covers at least 29 real error shapes", () => {
    expect(cases.length).toBeGreaterThanOrEqual(29);
  });

  classifiesEach(cases);
});
