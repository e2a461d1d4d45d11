import { describe, expect, it } from "vitest";
import {
  estimateCost,
  estimateUsageCost,
  isLocalBaseUrl,
  lookupPrice,
  normalizeModelId,
  OVERRIDE_PRICING_VERSION,
  PRICE_CATALOG,
  PRICING_VERSION,
  parsePricingOverrides,
  priceFor,
} from "../../../src/ai/pricing.js";

describe("normalizeModelId", () => {
  it.each<[string, string, string, boolean]>([
    ["anthropic/claude-sonnet-4.5", "claude-sonnet-4-5", "claude-sonnet-4-5", false],
    ["openrouter/anthropic/claude-3.5-sonnet", "claude-3-5-sonnet", "claude-3-5-sonnet", false],
    ["Claude-Sonnet-4-20250514", "claude-sonnet-4-20250514", "claude-sonnet-4", false],
    ["gpt-4o-2024-08-06", "gpt-4o-2024-08-06", "gpt-4o", false],
    ["us.anthropic.claude-sonnet-4-20250514-v1:0", "claude-sonnet-4-20250514", "claude-sonnet-4", false],
    ["claude-sonnet-4@20250514", "claude-sonnet-4", "claude-sonnet-4", false],
    ["meta-llama/llama-3.3-70b-instruct:free", "llama-3.3-70b-instruct", "llama-3.3-70b-instruct", true],
    ["anthropic/claude-3.7-sonnet:thinking", "claude-3-7-sonnet", "claude-3-7-sonnet", false],
    ["  gemini-2.5-pro  ", "gemini-2.5-pro", "gemini-2.5-pro", false],
    ["deepseek-v3", "deepseek-v3", "deepseek-v3", false],
    ["anthropic.claude-3-5-sonnet-20241022-v2:0", "claude-3-5-sonnet-20241022", "claude-3-5-sonnet", false],
  ])("%s → %s / %s", (model, id, undated, free) => {
    expect(normalizeModelId(model)).toEqual({ id, undated, free });
  });
});

describe("lookupPrice: catalog matching", () => {
  it.each<[string, string | undefined]>([
    // provider prefixes and OpenRouter naming
    ["anthropic/claude-sonnet-4", "claude-sonnet-4"],
    ["openrouter/anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"],
    ["anthropic/claude-3.5-sonnet", "claude-3-5-sonnet"],
    ["anthropic/claude-3.7-sonnet:thinking", "claude-3-7-sonnet"],
    ["openai/gpt-4o-mini", "gpt-4o-mini"],
    ["google/gemini-2.5-pro", "gemini-2.5-pro"],
    ["x-ai/grok-4", "grok-4"],
    ["z-ai/glm-4.6", "glm-4.6"],
    ["minimax/minimax-m2", "minimax-m2"],
    ["groq/llama-3.3-70b-versatile", "llama-3.3-70b-versatile"],
    // date suffixes, revisions, Bedrock and Vertex ids, case
    ["claude-sonnet-4-5-20250929", "claude-sonnet-4-5"],
    ["Claude-Opus-4-1-20250805", "claude-opus-4-1"],
    ["us.anthropic.claude-sonnet-4-20250514-v1:0", "claude-sonnet-4"],
    ["claude-sonnet-4@20250514", "claude-sonnet-4"],
    ["claude-opus-4-0", "claude-opus-4-0"],
    ["gpt-4o-2024-08-06", "gpt-4o"],
    ["gpt-4o-2024-05-13", "gpt-4o-2024-05-13"],
    ["deepseek/deepseek-r1-0528", "deepseek-r1"],
    ["grok-4-0709", "grok-4"],
    ["moonshotai/kimi-k2-0905", "kimi-k2"],
    // stage and mode qualifiers of the same model: longest prefix wins
    ["claude-3-5-sonnet-latest", "claude-3-5-sonnet"],
    ["gpt-5-chat-latest", "gpt-5-chat"],
    ["models/gemini-2.5-flash-preview-09-2025", "gemini-2.5-flash"],
    ["gemini-2.5-flash-lite-preview-06-17", "gemini-2.5-flash-lite"],
    ["grok-4-fast-reasoning", "grok-4-fast"],
    ["qwen-max-latest", "qwen-max"],
    ["o3-pro", "o3-pro"],
    // a sibling at another price, a newer version, or an unknown model is not guessed
    ["claude-opus-4-6", undefined],
    ["gpt-5.2", undefined],
    ["gpt-4o-audio-preview", undefined],
    ["o3-deep-research", undefined],
    ["o4-mini-deep-research", undefined],
    ["gemini-2.5-flash-image", undefined],
    ["kimi-k2-turbo-preview", undefined],
    ["deepseek/deepseek-chat-v3.1", undefined],
    ["deepseek-v3.1", undefined],
    ["glm-4.5v", undefined],
    ["meta-llama/llama-3.3-70b-instruct", undefined],
    ["qwen/qwen3-coder", undefined],
    ["llama3.1:8b", undefined],
    ["totally-unknown-model", undefined],
    ["", undefined],
    ["   ", undefined],
  ])("%j → %j", (model, key) => {
    const found = lookupPrice(model);
    expect(found?.key).toBe(key);
    if (key !== undefined) {
      expect(found?.source).toBe("official_docs_snapshot");
      expect(found?.price).toBe(PRICE_CATALOG[key]);
    }
  });

  it("prices :free variants at zero, whether or not the model is listed", () => {
    for (const model of ["meta-llama/llama-3.3-70b-instruct:free", "deepseek/deepseek-r1:free"]) {
      const price = priceFor(model);
      expect(price).toEqual({ input: 0, output: 0, cache_read: 0, cache_write: 0 });
      expect(estimateCost({ inputTokens: 1e6, outputTokens: 1e6, cacheReadTokens: 5e5 }, price!)).toBe(0);
    }
  });

  it("keeps the published prices for a few anchors", () => {
    expect(priceFor("claude-sonnet-4-5")).toMatchObject({
      input: 3,
      output: 15,
      cache_read: 0.3,
      cache_write: 3.75,
    });
    expect(priceFor("claude-opus-4-1")).toMatchObject({ input: 15, output: 75 });
    expect(priceFor("claude-opus-4-5")).toMatchObject({ input: 5, output: 25 });
    expect(priceFor("gpt-5")).toMatchObject({ input: 1.25, output: 10, cache_read: 0.125 });
    expect(priceFor("gemini-2.5-flash")).toMatchObject({ input: 0.3, output: 2.5 });
  });

  it("every catalog entry has non-negative finite prices", () => {
    for (const [model, price] of Object.entries(PRICE_CATALOG)) {
      for (const value of [price.input, price.output, price.cache_read ?? 0, price.cache_write ?? 0]) {
        expect(Number.isFinite(value) && value >= 0, model).toBe(true);
      }
      expect(model, "catalog keys are normalised").toBe(normalizeModelId(model).id);
    }
  });
});

describe("config.yaml pricing overrides", () => {
  it("take precedence over the catalog, matched as written or normalised", () => {
    const config = { pricing: { "claude-sonnet-4": { input: 1, output: 2 } } };
    expect(priceFor("anthropic/claude-sonnet-4-20250514", "openrouter", config)).toEqual({
      input: 1,
      output: 2,
    });
    const found = lookupPrice("claude-sonnet-4", parsePricingOverrides(config.pricing).overrides);
    expect(found).toMatchObject({ source: "user_override", key: "claude-sonnet-4" });
  });

  it("price models the catalog does not know, including provider-qualified ids", () => {
    const { overrides, problems } = parsePricingOverrides({
      "my-org/house-model": { input: "0.5", output: 1, cache_read: 0.05, cache_write: 0.5 },
    });
    expect(problems).toEqual([]);
    expect(lookupPrice("my-org/house-model", overrides)?.price).toEqual({
      input: 0.5,
      output: 1,
      cache_read: 0.05,
      cache_write: 0.5,
    });
    expect(lookupPrice("House-Model", overrides)?.source).toBe("user_override");
    expect(priceFor("house-model")).toBeUndefined();
  });

  it("an override can price a :free id, and a paid model's override leaves its :free variant free", () => {
    const { overrides } = parsePricingOverrides({
      "x/model:free": { input: 1, output: 1 },
      "llama-3.3-70b-instruct": { input: 0.9, output: 0.9 },
    });
    expect(lookupPrice("x/model:free", overrides)?.source).toBe("user_override");
    expect(lookupPrice("x/model", overrides)).toBeUndefined();
    expect(lookupPrice("meta-llama/llama-3.3-70b-instruct", overrides)?.price.input).toBe(0.9);
    expect(lookupPrice("meta-llama/llama-3.3-70b-instruct:free", overrides)?.price.input).toBe(0);
  });

  it.each<[unknown, RegExp[]]>([
    [undefined, []],
    [null, []],
    [{}, []],
    ["cheap", [/expected a mapping of model names to prices, got "cheap"/]],
    [[1, 2], [/expected a mapping/]],
    [{ a: 5 }, [/pricing\.a: expected \{input, output\}.*got 5/]],
    [{ a: { input: "ninety", output: 1 } }, [/pricing\.a\.input: expected a number .* got "ninety"/]],
    [{ a: { input: 1 } }, [/pricing\.a\.output: .* got nothing/]],
    [{ a: { input: -1, output: 1 } }, [/pricing\.a\.input: .*got -1/]],
    [{ a: { input: 1, output: 1, cache_read: "x" } }, [/pricing\.a\.cache_read/]],
  ])("parsePricingOverrides(%j) reports bad entries", (raw, expected) => {
    const { overrides, problems } = parsePricingOverrides(raw);
    expect(problems).toHaveLength(expected.length);
    for (const [i, re] of expected.entries()) expect(problems[i]).toMatch(re);
    if (expected.length > 0) expect(Object.keys(overrides)).toEqual([]);
  });

  it("keeps the good entries next to a bad one", () => {
    const { overrides, problems } = parsePricingOverrides({ good: { input: 1, output: 2 }, bad: "x" });
    expect(Object.keys(overrides)).toEqual(["good"]);
    expect(problems).toHaveLength(1);
  });
});

describe("estimateCost", () => {
  it("bills uncached input, cache reads, cache writes and output at their rates", () => {
    const usage = {
      inputTokens: 10_000,
      cacheReadTokens: 6_000,
      cacheWriteTokens: 2_000,
      outputTokens: 1_000,
    };
    // 2,000 × $3 + 6,000 × $0.30 + 2,000 × $3.75 + 1,000 × $15, per million
    expect(estimateCost(usage, priceFor("claude-sonnet-4")!)).toBeCloseTo(0.0303, 10);
  });

  it("defaults cache reads to a tenth of input and cache writes to 1.25 ×", () => {
    const usage = { inputTokens: 1_000, cacheReadTokens: 500, cacheWriteTokens: 100, outputTokens: 10 };
    // 400 × 2 + 500 × 0.2 + 100 × 2.5 + 10 × 8
    expect(estimateCost(usage, { input: 2, output: 8 })).toBeCloseTo(0.00123, 12);
  });

  it("counts reasoning tokens only as part of output", () => {
    const price = { input: 1, output: 10 };
    const base = estimateCost({ inputTokens: 100, outputTokens: 50 }, price);
    expect(estimateCost({ inputTokens: 100, outputTokens: 50, reasoningTokens: 40 }, price)).toBe(base);
  });

  it("switches the whole request to long-context rates above the threshold", () => {
    const sonnet = priceFor("claude-sonnet-4")!;
    expect(estimateCost({ inputTokens: 200_000, outputTokens: 1_000 }, sonnet)).toBeCloseTo(0.615, 10);
    expect(estimateCost({ inputTokens: 250_000, outputTokens: 1_000 }, sonnet)).toBeCloseTo(1.5225, 10);
  });

  it("treats negative, missing and non-finite counts as zero and never bills negative input", () => {
    const price = { input: 1, output: 1 };
    expect(estimateCost({ inputTokens: -5, outputTokens: Number.NaN }, price)).toBe(0);
    // More cache reads reported than input: the uncached part is zero, not negative.
    expect(estimateCost({ inputTokens: 10, cacheReadTokens: 20, outputTokens: 0 }, price)).toBeCloseTo(
      20 * 0.1e-6,
      15,
    );
    expect(estimateCost({ inputTokens: 0, outputTokens: 0 }, price)).toBe(0);
  });
});

describe("estimateUsageCost: billing routes", () => {
  const usage = { inputTokens: 100_000, outputTokens: 10_000 };

  it("estimates a catalog model on a hosted provider", () => {
    const cost = estimateUsageCost(usage, { model: "anthropic/claude-sonnet-4", provider: "openrouter" });
    expect(cost).toMatchObject({
      status: "estimated",
      source: "official_docs_snapshot",
      pricingVersion: PRICING_VERSION,
    });
    expect(cost.usd).toBeCloseTo(0.45, 10);
  });

  it("is unknown, with no amount, for a model no table knows", () => {
    expect(
      estimateUsageCost(usage, {
        model: "house-model",
        provider: "custom",
        baseUrl: "https://llm.example.com/v1",
      }),
    ).toEqual({ usd: null, status: "unknown", source: "none", pricingVersion: null });
  });

  it.each<[string, string | undefined, string | undefined]>([
    ["llama3.1:8b", "custom", "http://127.0.0.1:11434/v1"],
    ["deepseek-r1", "custom", "http://localhost:8080/v1"],
    ["qwen/qwen3-30b", "lmstudio", undefined],
    ["anything", "ollama", undefined],
  ])("a local model (%s via %s) costs nothing and is marked included", (model, provider, baseUrl) => {
    expect(estimateUsageCost(usage, { model, provider, baseUrl })).toEqual({
      usd: 0,
      status: "included",
      source: "none",
      pricingVersion: "local",
    });
  });

  it("a subscription route is included", () => {
    expect(estimateUsageCost(usage, { model: "gpt-5-codex", provider: "openai-codex" })).toMatchObject({
      usd: 0,
      status: "included",
    });
  });

  it("a config override wins even on a local endpoint (a proxy in front of a paid API)", () => {
    const overrides = parsePricingOverrides({ "claude-sonnet-4": { input: 2, output: 10 } }).overrides;
    const cost = estimateUsageCost(usage, {
      model: "claude-sonnet-4",
      provider: "custom",
      baseUrl: "http://127.0.0.1:4000",
      overrides,
    });
    expect(cost).toMatchObject({
      status: "estimated",
      source: "user_override",
      pricingVersion: OVERRIDE_PRICING_VERSION,
    });
    expect(cost.usd).toBeCloseTo(0.3, 10); // 100k × $2 + 10k × $10, per million
  });
});

describe("isLocalBaseUrl", () => {
  it.each<[string | undefined, boolean]>([
    ["http://127.0.0.1:11434/v1", true],
    ["http://localhost:1234/v1", true],
    ["http://[::1]:8080", true],
    ["http://0.0.0.0:8000", true],
    ["http://gpu-box.local:8000/v1", true],
    ["https://openrouter.ai/api/v1", false],
    ["https://localhost.example.com", false],
    ["not a url", false],
    ["", false],
    [undefined, false],
  ])("%j → %s", (url, local) => {
    expect(isLocalBaseUrl(url)).toBe(local);
  });
});
