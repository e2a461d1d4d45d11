/**
 * The classifier's fixture table by failure family (Safety II item 6): each row is a status, a
 * provider's own wording and the shape the transport reports it in, and what the loop must do with
 * it: retry (and how often), compress, or fall back. Rows marked "in-stream" arrive inside a 200
 * response, so they have no HTTP status of their own (or only the one the transport derives).
 */
import { describe, expect, it } from "vitest";
import {
  type ClassifyContext,
  classifyApiError,
  type FailoverReason,
} from "../../../src/ai/error-classifier.js";
import { ProviderError } from "../../../src/ai/types.js";

const URL_REMOTE = "https://openrouter.ai/api/v1";

/** An HTTP answer as our transports report it: status plus the body text the provider sent. */
function http(status: number | undefined, body: unknown, message?: string): ProviderError {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  const summary = status === undefined ? "an error" : `HTTP ${status}`;
  return new ProviderError(message ?? `The provider at ${URL_REMOTE} answered with ${summary}: ${text}`, {
    ...(status !== undefined ? { status } : {}),
    body: text,
    baseUrl: URL_REMOTE,
  });
}

/** A failed connect as the openai SDK surfaces it: APIConnectionError ← fetch failed ← ECONNREFUSED. */
function refused(url: string, message = "connect ECONNREFUSED", code = "ECONNREFUSED"): ProviderError {
  const sys = Object.assign(new Error(message), { code });
  const fetchFailed = new TypeError("fetch failed", { cause: sys });
  const sdk = Object.assign(new Error("Connection error."), {
    name: "APIConnectionError",
    cause: fetchFailed,
  });
  return new ProviderError(
    `Could not connect to ${url}: Connection error. (fetch failed). Is the server running and the base URL right?`,
    { transport: true, cause: sdk, baseUrl: url },
  );
}

/** A wire failure mid-response (undici "terminated", "socket hang up", ECONNRESET). */
function wire(detail: string, code?: string): ProviderError {
  const cause = Object.assign(new Error(detail), code ? { code } : {});
  return new ProviderError(`The connection to ${URL_REMOTE} failed mid-response: ${detail}`, {
    transport: true,
    partial: true,
    cause,
    baseUrl: URL_REMOTE,
  });
}

const openai = (message: string, type: string | null, code: string | number | null) => ({
  error: { message, type, param: null, code },
});
const anthropic = (type: string, message: string) => ({ type: "error", error: { type, message } });
const bedrock = (type: string, message: string) => ({ __type: type, message });

interface Row {
  family: string;
  name: string;
  error: unknown;
  reason: FailoverReason;
  retry: boolean;
  /** Retries allowed by the classification (undefined: as many as the policy allows). */
  limit?: number;
  compress?: boolean;
  fallback?: boolean;
  context?: ClassifyContext;
}

const rows: Row[] = [
  // ── rate limits, by status and by wording ──
  {
    family: "rate limit",
    name: "OpenAI 429 rate_limit_exceeded",
    error: http(
      429,
      openai(
        "Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000. Please try again in 2s.",
        "tokens",
        "rate_limit_exceeded",
      ),
    ),
    reason: "rate_limit",
    retry: true,
  },
  {
    family: "rate limit",
    name: "429 'Too Many Requests' as plain text (nginx in front of vLLM)",
    error: http(429, "Too Many Requests"),
    reason: "rate_limit",
    retry: true,
  },
  {
    family: "rate limit",
    name: "Gemini 429 RESOURCE_EXHAUSTED quota exceeded per minute",
    error: http(429, {
      error: {
        code: 429,
        status: "RESOURCE_EXHAUSTED",
        message:
          "Quota exceeded for quota metric 'Generate Content API requests per minute' and limit 'GenerateContent request limit per minute'.",
      },
    }),
    reason: "rate_limit",
    retry: true,
  },
  {
    family: "rate limit",
    name: "a 400 that says 'rate limit' (some OpenAI-compatible gateways)",
    error: http(400, openai("Rate limit exceeded, please slow down", "invalid_request_error", null)),
    reason: "rate_limit",
    retry: true,
  },
  {
    family: "rate limit",
    name: "no status, the message says 'Rate limit exceeded' (in-stream, OpenRouter)",
    error: http(undefined, { error: { message: "Rate limit exceeded: free-models-per-min." } }),
    reason: "rate_limit",
    retry: true,
  },
  {
    family: "rate limit",
    name: "no status, 'too many requests' only",
    error: http(undefined, { error: { message: "Too many requests, please wait" } }),
    reason: "rate_limit",
    retry: true,
  },
  {
    family: "rate limit",
    name: "in-stream OpenRouter chunk with error.code 429",
    // The chat-completions transport takes a numeric `code` of an in-stream error as its status.
    error: http(429, { code: 429, message: "Rate limit exceeded: google/gemini-2.0-flash-exp:free" }),
    reason: "rate_limit",
    retry: true,
  },
  {
    family: "rate limit",
    name: "Anthropic 429 rate_limit_error",
    error: http(
      429,
      anthropic("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"),
    ),
    reason: "rate_limit",
    retry: true,
  },
  {
    family: "rate limit",
    name: "Bedrock ThrottlingException (HTTP 429)",
    error: http(429, bedrock("ThrottlingException", "Too many tokens, please wait before trying again.")),
    reason: "rate_limit",
    retry: true,
  },
  {
    family: "rate limit",
    name: "Bedrock ThrottlingException mid-stream (status derived by the transport)",
    error: http(429, bedrock("ThrottlingException", "Rate exceeded")),
    reason: "rate_limit",
    retry: true,
  },
  {
    family: "rate limit",
    name: "no status: a throttled request named by the message only",
    error: http(undefined, { message: "Request was throttled. Expected available in 3 seconds." }),
    reason: "rate_limit",
    retry: true,
  },
  // ── overload ──
  {
    family: "overloaded",
    name: "Anthropic 529 overloaded_error",
    error: http(529, anthropic("overloaded_error", "Overloaded")),
    reason: "overloaded",
    retry: true,
    fallback: true,
  },
  {
    family: "overloaded",
    name: "Anthropic in-stream event: error overloaded_error (transport maps it to 529)",
    error: http(529, anthropic("overloaded_error", "Overloaded")),
    reason: "overloaded",
    retry: true,
    fallback: true,
  },
  {
    family: "overloaded",
    name: "no status, 'The server is overloaded' (in-stream)",
    error: http(undefined, { error: { message: "The server is currently overloaded, please try again" } }),
    reason: "overloaded",
    retry: true,
    fallback: true,
  },
  {
    family: "overloaded",
    name: "503 loading model (llama.cpp while it loads)",
    error: http(503, { error: { code: 503, message: "Loading model", type: "unavailable_error" } }),
    reason: "overloaded",
    retry: true,
    fallback: true,
  },
  // ── context overflow → compress ──
  {
    family: "context overflow",
    name: "OpenAI maximum context length",
    error: http(
      400,
      openai(
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 130442 tokens.",
        "invalid_request_error",
        "context_length_exceeded",
      ),
    ),
    reason: "context_overflow",
    retry: false,
    compress: true,
  },
  {
    family: "context overflow",
    name: "Anthropic prompt is too long",
    error: http(
      400,
      anthropic("invalid_request_error", "prompt is too long: 213462 tokens > 200000 maximum"),
    ),
    reason: "context_overflow",
    retry: false,
    compress: true,
  },
  {
    family: "context overflow",
    name: "Bedrock 'Input is too long for requested model'",
    error: http(400, bedrock("ValidationException", "Input is too long for requested model.")),
    reason: "context_overflow",
    retry: false,
    compress: true,
  },
  {
    family: "context overflow",
    name: "Bedrock 'too many input tokens'",
    error: http(
      400,
      bedrock("ValidationException", "The model returned the following errors: too many input tokens"),
    ),
    reason: "context_overflow",
    retry: false,
    compress: true,
  },
  {
    family: "context overflow",
    name: "Bedrock 'Input tokens exceed the configured limit'",
    error: http(
      400,
      bedrock(
        "ValidationException",
        "Input tokens exceed the configured limit of 272000 tokens. Your messages resulted in 290211 tokens.",
      ),
    ),
    reason: "context_overflow",
    retry: false,
    compress: true,
  },
  {
    family: "context overflow",
    name: "llama.cpp exceed_context_size_error",
    error: http(400, {
      error: {
        code: 400,
        message: "the request exceeds the available context size, try increasing it",
        type: "exceed_context_size_error",
        n_prompt_tokens: 9000,
        n_ctx: 8192,
      },
    }),
    reason: "context_overflow",
    retry: false,
    compress: true,
  },
  {
    family: "context overflow",
    name: "vLLM maximum context length with input tokens",
    error: http(400, {
      object: "error",
      message:
        "This model's maximum context length is 32768 tokens. However, you requested 40000 tokens (36000 in the messages, 4000 in the completion).",
      type: "BadRequestError",
      code: 400,
    }),
    reason: "context_overflow",
    retry: false,
    compress: true,
  },
  {
    family: "context overflow",
    name: "TGI `inputs` must have less than N tokens (422)",
    error: http(422, {
      error: "Input validation error: `inputs` must have less than 4096 tokens. Given: 5000",
      error_type: "validation",
    }),
    reason: "context_overflow",
    retry: false,
    compress: true,
  },
  {
    family: "context overflow",
    name: "HTTP 413 Request Entity Too Large (a proxy, plain text)",
    error: http(413, "<html><body><h1>413 Request Entity Too Large</h1></body></html>"),
    reason: "payload_too_large",
    retry: false,
    compress: true,
  },
  {
    family: "context overflow",
    name: "HTTP 413 with Anthropic's request_too_large",
    error: http(413, anthropic("request_too_large", "Request exceeds the maximum allowed number of bytes.")),
    reason: "payload_too_large",
    retry: false,
    compress: true,
  },
  {
    family: "context overflow",
    name: "no status, 'context length exceeded' (in-stream)",
    error: http(undefined, { error: { message: "Context length exceeded: 140000 > 131072" } }),
    reason: "context_overflow",
    retry: false,
    compress: true,
  },
  // ── billing → fallback ──
  {
    family: "billing",
    name: "402 insufficient credits (OpenRouter)",
    error: http(402, {
      error: {
        code: 402,
        message: "Insufficient credits. Add more using https://openrouter.ai/settings/credits",
      },
    }),
    reason: "billing",
    retry: false,
    fallback: true,
  },
  {
    family: "billing",
    name: "402 with no words at all",
    error: http(402, ""),
    reason: "billing",
    retry: false,
    fallback: true,
  },
  {
    family: "billing",
    name: "Anthropic 400 credit balance too low",
    error: http(
      400,
      anthropic(
        "invalid_request_error",
        "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.",
      ),
    ),
    reason: "billing",
    retry: false,
    fallback: true,
  },
  {
    family: "billing",
    name: "429 out of extra usage (Claude subscription)",
    error: http(
      429,
      anthropic("rate_limit_error", "You're out of extra usage. Add more at claude.ai/settings/usage."),
    ),
    reason: "billing",
    retry: false,
    fallback: true,
  },
  {
    family: "billing",
    name: "OpenAI 429 insufficient_quota",
    error: http(
      429,
      openai(
        "You exceeded your current quota, please check your plan and billing details.",
        "insufficient_quota",
        "insufficient_quota",
      ),
    ),
    reason: "billing",
    retry: false,
    fallback: true,
  },
  {
    family: "billing",
    name: "no status, 'insufficient credits' (in-stream)",
    error: http(undefined, { error: { message: "Insufficient credits for this request" } }),
    reason: "billing",
    retry: false,
    fallback: true,
  },
  {
    family: "billing",
    name: "403 'credits exhausted' (a relay)",
    error: http(403, { error: { message: "Your credits exhausted; top up to continue" } }),
    reason: "billing",
    retry: false,
    fallback: true,
  },
  // ── unknown transient: retried once ──
  {
    family: "unknown transient",
    name: "500 with a generic body",
    error: http(500, openai("The server had an error while processing your request.", "server_error", null)),
    reason: "server_error",
    retry: true,
    limit: 1,
    fallback: true,
  },
  {
    family: "unknown transient",
    name: "502 Bad Gateway HTML",
    error: http(502, "<html><head><title>502 Bad Gateway</title></head></html>"),
    reason: "server_error",
    retry: true,
    limit: 1,
    fallback: true,
  },
  {
    family: "unknown transient",
    name: "Anthropic 500 api_error",
    error: http(500, anthropic("api_error", "Internal server error")),
    reason: "server_error",
    retry: true,
    limit: 1,
    fallback: true,
  },
  {
    family: "unknown transient",
    name: "in-stream OpenRouter error 'Internal Server Error' without a code",
    error: http(undefined, { error: { message: "Internal Server Error" } }),
    reason: "server_error",
    retry: true,
    limit: 1,
    fallback: true,
  },
  {
    family: "unknown transient",
    name: "in-stream chunk with finish_reason error (OpenRouter upstream failure)",
    error: new ProviderError(`The provider at ${URL_REMOTE} stopped the answer with finish_reason "error".`, {
      transport: true,
      partial: true,
    }),
    reason: "timeout",
    retry: true,
    limit: 1,
  },
  {
    family: "unknown transient",
    name: "socket hang up",
    error: wire("socket hang up", "ECONNRESET"),
    reason: "timeout",
    retry: true,
    limit: 1,
  },
  {
    family: "unknown transient",
    name: "ECONNRESET",
    error: wire("read ECONNRESET", "ECONNRESET"),
    reason: "timeout",
    retry: true,
    limit: 1,
  },
  {
    family: "unknown transient",
    name: "undici terminated",
    error: wire("terminated", "UND_ERR_SOCKET"),
    reason: "timeout",
    retry: true,
    limit: 1,
  },
  // ── connection failures: local fails fast, remote may retry ──
  {
    family: "connection",
    name: "refused by 127.0.0.1 (nothing listening)",
    error: refused("http://127.0.0.1:8080/v1", "connect ECONNREFUSED 127.0.0.1:8080"),
    reason: "local_server_down",
    retry: false,
    fallback: true,
  },
  {
    family: "connection",
    name: "a host name that does not resolve (ENOTFOUND): not retried, fallback",
    error: refused("https://api.opneai.com/v1", "getaddrinfo ENOTFOUND api.opneai.com", "ENOTFOUND"),
    reason: "host_not_found",
    retry: false,
    fallback: true,
  },
  {
    family: "connection",
    name: "DNS briefly down (EAI_AGAIN): retried",
    error: refused("https://api.openai.com/v1", "getaddrinfo EAI_AGAIN api.openai.com", "EAI_AGAIN"),
    reason: "timeout",
    retry: true,
  },
  {
    family: "connection",
    name: "a port fetch never connects to (9): not retried",
    error: new ProviderError(
      "Could not connect to http://127.0.0.1:9/v1: fetch failed (bad port). Is the server running and the base URL right?",
      { transport: true, cause: new TypeError("fetch failed", { cause: new Error("bad port") }) },
    ),
    reason: "format_error",
    retry: false,
  },
  {
    family: "connection",
    name: "refused by localhost (both addresses, an AggregateError)",
    error: new ProviderError("Could not connect to http://localhost:11434/v1: Connection error.", {
      transport: true,
      baseUrl: "http://localhost:11434/v1",
      cause: new AggregateError(
        [
          Object.assign(new Error("connect ECONNREFUSED ::1:11434"), { code: "ECONNREFUSED" }),
          Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:11434"), { code: "ECONNREFUSED" }),
        ],
        "",
      ),
    }),
    reason: "local_server_down",
    retry: false,
    fallback: true,
  },
  {
    family: "connection",
    name: "refused by [::1]",
    error: refused("http://[::1]:8000/v1"),
    reason: "local_server_down",
    retry: false,
    fallback: true,
  },
  {
    family: "connection",
    name: "refused by a LAN host (192.168.x)",
    error: refused("http://192.168.1.20:1234/v1"),
    reason: "local_server_down",
    retry: false,
    fallback: true,
  },
  {
    family: "connection",
    name: "refused by a remote host: retried within the ladder",
    error: refused("https://api.example.com/v1"),
    reason: "timeout",
    retry: true,
  },
  {
    family: "connection",
    name: "a local server that timed out is not 'down'",
    error: new ProviderError(
      "http://127.0.0.1:8080/v1 sent no response headers within 60 s, so the request was cut (agent.stream_stall_timeout).",
      { transport: true, stalled: true },
    ),
    reason: "timeout",
    retry: true,
  },
  // ── look-alikes that must keep their own reason ──
  {
    family: "look-alike",
    name: "a 400 naming a length limit that is not the context (tool name too long)",
    error: http(
      400,
      openai(
        "Invalid 'tools[0].function.name': string must have less than 64 characters.",
        "invalid_request_error",
        null,
      ),
    ),
    reason: "format_error",
    retry: false,
  },
  {
    family: "look-alike",
    name: "a 400 whose message says 'internal error' is still a rejected request",
    error: http(
      400,
      openai("Internal error while validating the tool schema: unknown type", "invalid_request_error", null),
    ),
    reason: "format_error",
    retry: false,
  },
  {
    family: "look-alike",
    name: "a 401 that mentions rate limits in passing is still a bad key",
    error: http(
      401,
      openai(
        "Incorrect API key provided. Rate limits do not apply to invalid keys.",
        "invalid_request_error",
        "invalid_api_key",
      ),
    ),
    reason: "auth",
    retry: false,
  },
  {
    family: "look-alike",
    name: "a refused connection named only in a remote URL's text is not a local server",
    error: refused("https://localhost.example.com/v1"),
    reason: "timeout",
    retry: true,
  },
];

describe("error families (status × wording × provider)", () => {
  it.each(rows.map((r) => [`${r.family}: ${r.name}`, r] as const))("%s", (_label, row) => {
    const got = classifyApiError(row.error, row.context ?? {});
    expect({
      reason: got.reason,
      retryable: got.retryable,
      retryLimit: got.retryLimit,
      shouldCompress: got.shouldCompress,
      shouldFallback: got.shouldFallback,
    }).toEqual({
      reason: row.reason,
      retryable: row.retry,
      retryLimit: row.limit,
      shouldCompress: row.compress ?? false,
      shouldFallback: row.fallback ?? false,
    });
  });

  it("names the local server that refused, so the user knows which one to start", () => {
    const got = classifyApiError(refused("http://127.0.0.1:8080/v1"));
    expect(got.message).toBe("nothing is listening at http://127.0.0.1:8080/v1 (connection refused)");
  });

  it("takes the endpoint from the caller when the error does not name it", () => {
    const bare = Object.assign(new Error("connect ECONNREFUSED 10.0.0.5:8000"), { code: "ECONNREFUSED" });
    expect(classifyApiError(bare, { baseUrl: "http://10.0.0.5:8000/v1" }).reason).toBe("local_server_down");
    expect(classifyApiError(bare, { baseUrl: "https://api.mistral.ai/v1" }).reason).toBe("timeout");
  });

  it("covers every family with several wordings", () => {
    const families = new Map<string, number>();
    for (const row of rows) families.set(row.family, (families.get(row.family) ?? 0) + 1);
    for (const count of families.values()) expect(count).toBeGreaterThanOrEqual(3);
  });
});
