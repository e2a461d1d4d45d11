import { describe, expect, it } from "vitest";
import { classifyApiError } from "../../../src/ai/error-classifier.js";
import {
  DEFAULT_RETRY_POLICY,
  failureAdvice,
  failureHint,
  isRetryable,
  parseDuration,
  parseResetHeaders,
  parseRetryAfter,
  planRetry,
  type RetryPolicy,
  retryDelayMs,
  retryNotice,
} from "../../../src/ai/retry.js";
import { ProviderError } from "../../../src/ai/types.js";

const NOW = Date.parse("2025-06-01T12:00:00Z");
const at = (iso: string) => Date.parse(iso);

function withHeaders(status: number, headers: Record<string, string>, body = "{}"): ProviderError {
  return Object.assign(new ProviderError(`HTTP ${status}`, { status, body }), { headers });
}

describe("parseRetryAfter", () => {
  it.each([
    ["3", 3000],
    ["1.5", 1500],
    ["0", 0],
    [" 12 ", 12_000],
    [2, 2000],
    ["Sun, 01 Jun 2025 12:00:10 GMT", 10_000],
    ["Sun, 01 Jun 2025 11:59:00 GMT", 0],
    ["soon", undefined],
    ["-5", undefined],
    ["", undefined],
    [undefined, undefined],
    [null, undefined],
  ])("%j → %s", (value, expected) => {
    expect(parseRetryAfter(value, NOW)).toBe(expected);
  });
});

describe("parseDuration", () => {
  it.each([
    ["1s", 1000],
    ["20ms", 20],
    ["6m0s", 360_000],
    ["2m59.56s", 179_560],
    ["1h2m3.5s", 3_723_500],
    ["32.940959404s", 32_941],
    ["45", 45_000],
    ["", undefined],
    ["soon", undefined],
    ["5 minutes", undefined],
  ])("%j → %s", (value, expected) => {
    expect(parseDuration(value)).toBe(expected);
  });
});

describe("parseResetHeaders", () => {
  it("reads OpenAI's duration resets and picks the exhausted limit", () => {
    const headers = new Headers({
      "x-ratelimit-remaining-requests": "499",
      "x-ratelimit-reset-requests": "120ms",
      "x-ratelimit-remaining-tokens": "0",
      "x-ratelimit-reset-tokens": "6m0s",
    });
    expect(parseResetHeaders(headers, NOW)).toEqual({ resetAt: NOW + 360_000 });
  });

  it("reads Anthropic's RFC 3339 resets, the latest exhausted one winning", () => {
    const headers = {
      "anthropic-ratelimit-requests-remaining": "0",
      "anthropic-ratelimit-requests-reset": "2025-06-01T12:00:30Z",
      "anthropic-ratelimit-input-tokens-remaining": "0",
      "anthropic-ratelimit-input-tokens-reset": "2025-06-01T12:02:00Z",
      "anthropic-ratelimit-output-tokens-remaining": "8000",
      "anthropic-ratelimit-output-tokens-reset": "2025-06-01T12:00:01Z",
      "retry-after": "30",
    };
    expect(parseResetHeaders(headers, NOW)).toEqual({
      retryAfterMs: 30_000,
      resetAt: at("2025-06-01T12:02:00Z"),
    });
  });

  it("reads OpenRouter's X-RateLimit-Reset in epoch milliseconds, case-insensitively", () => {
    const headers = {
      "X-RateLimit-Limit": "20",
      "X-RateLimit-Remaining": "0",
      "X-RateLimit-Reset": String(NOW + 45_000),
    };
    expect(parseResetHeaders(headers, NOW)).toEqual({ resetAt: NOW + 45_000 });
  });

  it("takes epoch seconds and delta seconds, and the earliest reset when none is marked exhausted", () => {
    expect(
      parseResetHeaders({ "anthropic-ratelimit-unified-reset": String(NOW / 1000 + 3600) }, NOW),
    ).toEqual({
      resetAt: NOW + 3_600_000,
    });
    const headers = { "x-ratelimit-reset-requests-day": "33011.5", "x-ratelimit-reset-tokens-minute": "42" };
    expect(parseResetHeaders(headers, NOW)).toEqual({ resetAt: NOW + 42_000 });
  });

  it("prefers retry-after-ms, ignores past or junk resets, and returns {} for nothing", () => {
    expect(parseResetHeaders({ "retry-after-ms": "250", "retry-after": "9" }, NOW)).toEqual({
      retryAfterMs: 250,
    });
    expect(
      parseResetHeaders({ "x-ratelimit-reset": String(NOW - 1000), "x-ratelimit-remaining": "0" }, NOW),
    ).toEqual({});
    expect(parseResetHeaders({ "x-ratelimit-reset-tokens": "whenever" }, NOW)).toEqual({});
    expect(parseResetHeaders({}, NOW)).toEqual({});
    expect(parseResetHeaders(undefined, NOW)).toEqual({});
  });
});

describe("retryDelayMs", () => {
  const policy: RetryPolicy = DEFAULT_RETRY_POLICY;
  const server = new ProviderError("boom", { status: 500 });

  it("uses decorrelated jitter between base and 3x the previous delay", () => {
    expect(retryDelayMs(1, server, policy, () => 0)).toBe(5_000);
    expect(retryDelayMs(1, server, policy, () => 1)).toBe(15_000);
    expect(retryDelayMs(2, server, policy, () => 0.5, { previousMs: 10_000 })).toBe(17_500);
    expect(retryDelayMs(3, server, policy, () => 1, { previousMs: 20_000 })).toBe(60_000);
  });

  it("stays within [base, cap] for any random value and any previous delay", () => {
    for (const previousMs of [undefined, 1, 5_000, 50_000, 10_000_000])
      for (const r of [0, 0.001, 0.25, 0.5, 0.999, 1, -3, 7]) {
        const delay = retryDelayMs(
          4,
          server,
          policy,
          () => r,
          previousMs === undefined ? {} : { previousMs },
        );
        expect(delay).toBeGreaterThanOrEqual(policy.baseMs);
        expect(delay).toBeLessThanOrEqual(policy.capMs);
      }
  });

  it("grows from the previous delay when none is given", () => {
    expect(retryDelayMs(2, server, policy, () => 1)).toBe(30_000);
    expect(retryDelayMs(3, server, policy, () => 1)).toBe(60_000);
    expect(retryDelayMs(9, server, policy, () => 1)).toBe(120_000);
  });

  it("honours Retry-After (capped) and the provider's reset time", () => {
    const limited = (ms: number) => new ProviderError("slow", { status: 429, retryAfterMs: ms });
    expect(retryDelayMs(1, limited(0), policy, () => 1)).toBe(0);
    expect(retryDelayMs(1, limited(12_000), policy, () => 1)).toBe(12_000);
    expect(retryDelayMs(1, limited(900_000), policy, () => 1)).toBe(120_000);
    const reset = withHeaders(429, {
      "x-ratelimit-remaining": "0",
      "x-ratelimit-reset": String(NOW + 42_000),
    });
    expect(retryDelayMs(1, reset, policy, () => 1, { now: NOW })).toBe(42_000);
  });
});

describe("isRetryable", () => {
  it.each([
    [new ProviderError("slow down", { status: 429 }), true],
    [new ProviderError("boom", { status: 503 }), true],
    [new ProviderError("socket hang up", { transport: true }), true],
    [Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }), true],
    [new ProviderError("invalid api key", { status: 401 }), false],
    [new ProviderError("bad", { status: 400, body: '{"error":{"message":"prompt is too long"}}' }), false],
    [new TypeError("x is not a function"), false],
  ])("%s → %s", (error, expected) => {
    expect(isRetryable(error)).toBe(expected);
  });
});

describe("planRetry", () => {
  const policy: RetryPolicy = { maxRetries: 2, baseMs: 1000, capMs: 60_000 };

  it("retries retryable failures up to maxRetries", () => {
    const c = classifyApiError(new ProviderError("boom", { status: 502 }));
    expect(planRetry(c, 1, policy, { random: () => 0 })).toEqual({ retry: true, delayMs: 1000 });
    expect(planRetry(c, 2, policy, { random: () => 1, previousMs: 2000 })).toEqual({
      retry: true,
      delayMs: 6000,
    });
    expect(planRetry(c, 3, policy)).toEqual({ retry: false, why: "exhausted" });
  });

  it("does not repeat a request that needs changing first", () => {
    for (const body of [
      '{"type":"error","error":{"type":"invalid_request_error","message":"messages.1.content.0: Invalid `signature` in `thinking` block"}}',
      '{"error":{"message":"prompt is too long: 210000 tokens > 200000 maximum"}}',
    ]) {
      const c = classifyApiError(new ProviderError("bad", { status: 400, body }));
      expect(planRetry(c, 1, policy)).toEqual({ retry: false, why: "not_retryable" });
    }
  });

  it("gives up when the provider asks to wait longer than the cap", () => {
    const c = classifyApiError(new ProviderError("slow", { status: 429, retryAfterMs: 3_600_000 }));
    expect(planRetry(c, 1, policy)).toEqual({ retry: false, why: "wait_too_long" });
  });
});

describe("what the user is told", () => {
  it("names the provider's key variable for a rejected key", () => {
    const c = classifyApiError(new ProviderError("invalid api key", { status: 401 }));
    expect(failureAdvice(c, { provider: "openrouter" })).toBe(
      "the API key was rejected (401): check OPENROUTER_API_KEY in ~/.hermes/.env",
    );
    const viaUrl = classifyApiError(
      new ProviderError(
        "The provider at https://api.anthropic.com answered with HTTP 401: invalid x-api-key",
        {
          status: 401,
        },
      ),
    );
    expect(failureHint(viaUrl)).toBe("check ANTHROPIC_API_KEY in ~/.hermes/.env");
    expect(failureHint(c)).toMatch(/~\/\.hermes\/\.env/);
  });

  it("says when a rate limit resets and how far to lower max_tokens", () => {
    const limited = classifyApiError(new ProviderError("slow", { status: 429, retryAfterMs: 180_000 }));
    expect(limited).toMatchObject({ shouldRotateCredential: true, shouldFallback: true });
    expect(failureAdvice(limited)).toBe(
      "rate limited by the provider (429): the limit resets in about 3 min",
    );
    const tooBig = classifyApiError(
      new ProviderError("bad", {
        status: 400,
        body: '{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: 64000 > 32000, which is the maximum allowed number of output tokens for claude-opus-4"}}',
      }),
    );
    expect(failureHint(tooBig)).toMatch(/^set model\.max_tokens in config\.yaml to 32000 or less/);
  });

  it("writes the retry warning with the reason, the provider's words and the wait", () => {
    const c = classifyApiError(
      new ProviderError("HTTP 429", { status: 429, body: '{"message":"slow down."}' }),
    );
    expect(retryNotice(c, 12_000, 1, 3)).toBe(
      "Rate limited by the provider (429): slow down. Retrying in 12.0s (attempt 1 of 3).",
    );
    const dropped = classifyApiError(new ProviderError("socket hang up", { transport: true }));
    expect(retryNotice(dropped, 5_000, 2, 3)).toBe(
      "The connection failed or timed out: socket hang up. Retrying in 5.0s (attempt 2 of 3).",
    );
  });
});
