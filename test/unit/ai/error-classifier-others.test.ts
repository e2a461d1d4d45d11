import { describe, expect, it } from "vitest";
import { ProviderError } from "../../../src/ai/types.js";
import {
  type Case,
  classifiesEach,
  http,
  LARGE,
  nodeError,
  openai,
} from "../../support/error-classifier-cases.js";

const cases: Case[] = [
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

describe("classifyApiError: other providers, local servers, HTTP and connection errors", () => {
  it("covers at least 43 real error shapes", () => {
    expect(cases.length).toBeGreaterThanOrEqual(43);
  });

  classifiesEach(cases);
});
