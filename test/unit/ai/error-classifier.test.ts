/**
 * The classifier's behaviour beyond the reason of each error shape (those tables are in
 * error-classifier-{openai-anthropic,gateways,others}.test.ts): summary and detail, retry timing,
 * codes trusted only from their provider, inputs it must survive.
 */
import { describe, expect, it } from "vitest";
import { classifyApiError } from "../../../src/ai/error-classifier.js";
import { ProviderError } from "../../../src/ai/types.js";
import { anthropic, http, NOW, openai } from "../../support/error-classifier-cases.js";

describe("classifyApiError: summaries, retry timing, odd inputs", () => {
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
