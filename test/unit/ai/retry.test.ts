import { describe, expect, it } from "vitest";
import { classifyApiError } from "../../../src/ai/error-classifier.js";
import {
  backoffMs,
  DEFAULT_RETRY_POLICY,
  failureAdvice,
  failureHint,
  giveUpNotice,
  isRetryable,
  parseDuration,
  parseResetHeaders,
  parseRetryAfter,
  planRetry,
  RetryLadder,
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

describe("backoff and retryDelayMs", () => {
  const policy: RetryPolicy = DEFAULT_RETRY_POLICY;
  const server = new ProviderError("boom", { status: 500 });

  it("defaults: 3 retries, first wait 1–2 s, 60 s of waiting in all", () => {
    expect(DEFAULT_RETRY_POLICY).toEqual({ maxRetries: 3, baseMs: 1_000, capMs: 30_000, budgetMs: 60_000 });
    expect(backoffMs(1, policy, () => 0)).toBe(1_000);
    expect(backoffMs(1, policy, () => 0.6)).toBe(1_600);
    expect(backoffMs(1, policy, () => 1)).toBe(2_000);
  });

  it("grows: each retry's range starts where the previous one's ended", () => {
    expect([1, 2, 3, 4].map((n) => backoffMs(n, policy, () => 0))).toEqual([1_000, 2_000, 4_000, 8_000]);
    expect([1, 2, 3, 4].map((n) => backoffMs(n, policy, () => 1))).toEqual([2_000, 4_000, 8_000, 16_000]);
    expect(backoffMs(9, policy, () => 1)).toBe(policy.capMs);
  });

  it("stays within [base·2^(n-1), cap] for any random value", () => {
    for (let n = 1; n <= 8; n++)
      for (const r of [0, 0.001, 0.25, 0.5, 0.999, 1, -3, 7]) {
        const delay = backoffMs(n, policy, () => r);
        expect(delay).toBeGreaterThanOrEqual(Math.min(policy.capMs, policy.baseMs * 2 ** (n - 1)));
        expect(delay).toBeLessThanOrEqual(policy.capMs);
      }
  });

  it("uses backoff when the provider gives no wait", () => {
    expect(retryDelayMs(1, server, policy, () => 0.5)).toBe(1_500);
    expect(retryDelayMs(2, server, policy, () => 0.5)).toBe(3_000);
  });

  it("honours Retry-After and the provider's reset time, bounded by the budget", () => {
    const limited = (ms: number) => new ProviderError("slow", { status: 429, retryAfterMs: ms });
    expect(retryDelayMs(1, limited(0), policy, () => 1)).toBe(0);
    expect(retryDelayMs(1, limited(12_000), policy, () => 1)).toBe(12_000);
    expect(retryDelayMs(1, limited(900_000), policy, () => 1)).toBe(60_000);
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
  const policy: RetryPolicy = { maxRetries: 2, baseMs: 1000, capMs: 60_000, budgetMs: 60_000 };
  const overloaded = classifyApiError(new ProviderError("boom", { status: 503 }));

  it("retries retryable failures up to maxRetries, saying which attempt comes", () => {
    expect(planRetry(overloaded, 1, policy, { random: () => 0 })).toEqual({
      retry: true,
      delayMs: 1000,
      attempt: 2,
      attempts: 3,
    });
    expect(planRetry(overloaded, 2, policy, { random: () => 1 })).toEqual({
      retry: true,
      delayMs: 4000,
      attempt: 3,
      attempts: 3,
    });
    expect(planRetry(overloaded, 3, policy)).toEqual({ retry: false, why: "exhausted", attempts: 3 });
  });

  it("retries a failure with a retryLimit of 1 once only, whatever maxRetries says", () => {
    const bare500 = classifyApiError(new ProviderError("boom", { status: 500 }));
    const big = { ...policy, maxRetries: 10 };
    expect(planRetry(bare500, 1, big, { random: () => 0 })).toMatchObject({ retry: true, attempts: 2 });
    expect(planRetry(bare500, 2, big, { reasonRetries: 1 })).toEqual({
      retry: false,
      why: "exhausted",
      attempts: 2,
    });
  });

  it("does not repeat a request that needs changing first", () => {
    for (const body of [
      '{"type":"error","error":{"type":"invalid_request_error","message":"messages.1.content.0: Invalid `signature` in `thinking` block"}}',
      '{"error":{"message":"prompt is too long: 210000 tokens > 200000 maximum"}}',
    ]) {
      const c = classifyApiError(new ProviderError("bad", { status: 400, body }));
      expect(planRetry(c, 1, policy)).toEqual({ retry: false, why: "not_retryable", attempts: 1 });
    }
  });

  it("does not wait for a provider that asks for longer than the budget has left", () => {
    const c = classifyApiError(new ProviderError("slow", { status: 429, retryAfterMs: 45_000 }));
    expect(planRetry(c, 1, policy, { waitedMs: 0 })).toMatchObject({ retry: true, delayMs: 45_000 });
    expect(planRetry(c, 2, policy, { waitedMs: 20_000 })).toEqual({
      retry: false,
      why: "wait_too_long",
      attempts: 2,
      waitMs: 45_000,
      remainingMs: 40_000,
    });
    const hour = classifyApiError(new ProviderError("slow", { status: 429, retryAfterMs: 3_600_000 }));
    expect(planRetry(hour, 1, policy)).toMatchObject({ retry: false, why: "wait_too_long" });
  });

  it("shortens the last backoff to what is left, and stops when nothing is", () => {
    expect(planRetry(overloaded, 2, policy, { random: () => 1, waitedMs: 58_500 })).toMatchObject({
      retry: true,
      delayMs: 1_500,
    });
    expect(planRetry(overloaded, 2, policy, { waitedMs: 60_000 })).toEqual({
      retry: false,
      why: "budget_spent",
      attempts: 2,
      remainingMs: 0,
    });
  });
});

describe("RetryLadder (injected clock and random)", () => {
  const now = () => NOW;

  it("first wait is 1–2 s, later ones grow, and the whole ladder stays within 60 s", () => {
    for (const r of [0, 0.37, 0.5, 0.99, 1]) {
      const ladder = new RetryLadder({ ...DEFAULT_RETRY_POLICY, maxRetries: 20 }, { random: () => r, now });
      const overloaded = classifyApiError(new ProviderError("overloaded", { status: 529 }));
      const waits: number[] = [];
      for (let plan = ladder.plan(overloaded); plan.retry; plan = ladder.plan(overloaded)) {
        waits.push(plan.delayMs);
        ladder.waitedFor(plan.delayMs, overloaded);
      }
      expect(waits[0]).toBeGreaterThanOrEqual(1_000);
      expect(waits[0]).toBeLessThanOrEqual(2_000);
      // Each wait is at least as long as the one before, except the last, cut to what was left.
      for (let i = 1; i < waits.length - 1; i++) expect(waits[i]).toBeGreaterThanOrEqual(waits[i - 1] ?? 0);
      expect(waits.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(60_000);
      expect(ladder.waitedMs).toBeLessThanOrEqual(60_000);
      expect(ladder.plan(overloaded)).toMatchObject({ retry: false, why: "budget_spent" });
    }
  });

  it("with the defaults, a run of rate limits waits at most 14 s over 3 retries", () => {
    const ladder = new RetryLadder(DEFAULT_RETRY_POLICY, { random: () => 1, now });
    const limited = classifyApiError(new ProviderError("slow down", { status: 429 }));
    const waits: number[] = [];
    for (let plan = ladder.plan(limited); plan.retry; plan = ladder.plan(limited)) {
      waits.push(plan.delayMs);
      ladder.waitedFor(plan.delayMs, limited);
    }
    expect(waits).toEqual([2_000, 4_000, 8_000]);
    expect(ladder.plan(limited)).toMatchObject({ retry: false, why: "exhausted", attempts: 4 });
  });

  it("retries an unknown transient failure (a dropped connection) once", () => {
    const ladder = new RetryLadder(DEFAULT_RETRY_POLICY, { random: () => 0.5, now });
    const hangUp = classifyApiError(Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }));
    expect(ladder.plan(hangUp)).toEqual({ retry: true, delayMs: 1_500, attempt: 2, attempts: 2 });
    ladder.waitedFor(1_500, hangUp);
    expect(ladder.plan(hangUp)).toMatchObject({ retry: false, why: "exhausted" });
  });

  it("limits retries per reason: a 500 after a 429 gets its one retry, a second 500 none", () => {
    const ladder = new RetryLadder(DEFAULT_RETRY_POLICY, { random: () => 0, now });
    const limited = classifyApiError(new ProviderError("slow down", { status: 429 }));
    const bare500 = classifyApiError(new ProviderError("boom", { status: 500 }));
    const first = ladder.plan(limited);
    expect(first).toMatchObject({ retry: true, attempt: 2, attempts: 4 });
    ladder.waitedFor(1_000, limited);
    expect(ladder.plan(bare500)).toMatchObject({ retry: true, delayMs: 2_000, attempt: 3, attempts: 3 });
    ladder.waitedFor(2_000, bare500);
    expect(ladder.plan(bare500)).toMatchObject({ retry: false, why: "exhausted", attempts: 3 });
    // Other failures still get what the policy leaves.
    expect(ladder.plan(limited)).toMatchObject({ retry: true, attempt: 4, attempts: 4 });
  });

  it("counts retries per route but the waiting budget per call", () => {
    const ladder = new RetryLadder({ ...DEFAULT_RETRY_POLICY, budgetMs: 5_000 }, { random: () => 1, now });
    const overloaded = classifyApiError(new ProviderError("overloaded", { status: 503 }));
    ladder.waitedFor(2_000);
    ladder.waitedFor(2_500);
    ladder.newRoute();
    expect(ladder.retries).toBe(0);
    expect(ladder.plan(overloaded)).toMatchObject({ retry: true, delayMs: 500, attempt: 2 });
  });

  it("reads the reset time against the injected clock", () => {
    const ladder = new RetryLadder(DEFAULT_RETRY_POLICY, { now });
    const reset = classifyApiError(
      withHeaders(429, { "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(NOW + 3_000) }),
      { now: NOW },
    );
    expect(ladder.plan(reset)).toMatchObject({ retry: true, delayMs: 3_000 });
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
        { status: 401, baseUrl: "https://api.anthropic.com" },
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

  it("writes the retry line with the provider, its words, the wait and the attempt", () => {
    const c = classifyApiError(
      new ProviderError("HTTP 429", { status: 429, body: '{"message":"slow down."}' }),
    );
    expect(retryNotice(c, { delayMs: 1_600, attempt: 2, attempts: 4 }, { provider: "openrouter" })).toBe(
      "rate limited by openrouter (429): slow down; retrying in 1.6 s (attempt 2 of 4)",
    );
    const dropped = classifyApiError(Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }));
    expect(retryNotice(dropped, { delayMs: 1_200, attempt: 2, attempts: 2 }, { provider: "anthropic" })).toBe(
      "the connection to anthropic dropped; retrying in 1.2 s (attempt 2 of 2)",
    );
    const bare = classifyApiError(new ProviderError("boom", { status: 500 }));
    expect(retryNotice(bare, { delayMs: 12_300, attempt: 2, attempts: 2 })).toBe(
      "the provider had a server error (500): boom; retrying in 13 s (attempt 2 of 2)",
    );
  });

  it("says why retrying stopped", () => {
    const slow = classifyApiError(new ProviderError("slow", { status: 429, retryAfterMs: 90_000 }));
    expect(
      giveUpNotice(
        slow,
        { why: "wait_too_long", attempts: 1, waitMs: 90_000, remainingMs: 60_000 },
        { provider: "openrouter" },
      ),
    ).toBe(
      "rate limited by openrouter (429); it asks to wait 90 s, more than the 60 s left for retrying this call, so hermes did not wait: try again in about 90 s, or add fallback_providers to config.yaml",
    );
    const overloaded = classifyApiError(new ProviderError("boom", { status: 529 }));
    expect(giveUpNotice(overloaded, { why: "exhausted", attempts: 4 }, { provider: "anthropic" })).toBe(
      "anthropic is overloaded (529); failed 4 times: usually temporary; try again shortly or switch model with /model",
    );
  });

  it("tells how to start a local server that refused the connection", () => {
    const refused = (url: string) =>
      classifyApiError(
        new ProviderError(`Could not connect to ${url}: Connection error.`, {
          transport: true,
          baseUrl: url,
          cause: Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }),
        }),
      );
    expect(failureAdvice(refused("http://127.0.0.1:8080/v1"))).toBe(
      "nothing is listening at http://127.0.0.1:8080/v1 (connection refused): is the server running? Start it with `llama-server -m MODEL.gguf --port 8080` (or your server), or check model.base_url in config.yaml",
    );
    expect(failureHint(refused("http://localhost:11434/v1"))).toContain("`ollama serve`");
    expect(failureHint(refused("http://localhost:1234/v1"))).toContain("lms server start");
    expect(failureHint(refused("http://10.0.0.2:8000/v1"))).toContain("`vllm serve MODEL --port 8000`");
  });
});
