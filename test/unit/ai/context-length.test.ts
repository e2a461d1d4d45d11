import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  catalogContextLength,
  contextLengthFor,
  DEFAULT_CONTEXT_LENGTH,
  fileContextLengthStore,
  memoryContextLengthStore,
  nextProbeTier,
  parseContextLimitFromError,
  probeDownContextLength,
} from "../../../src/ai/context-length.js";

const cfg = (context_length: number | null = null) => ({ model: { context_length } });

describe("context length", () => {
  it.each([
    ["anthropic/claude-sonnet-4", 200_000],
    ["claude-sonnet-4-5", 200_000],
    ["openai/gpt-5-mini", 400_000],
    ["gpt-4.1", 1_000_000],
    ["gpt-4o-mini", 128_000],
    ["google/gemini-2.5-flash", 1_000_000],
    ["deepseek-chat", 128_000],
    ["kimi-k2-0905-preview", 256_000],
    ["glm-4.6", 128_000],
    ["meta/llama-3.3-70b-instruct", 128_000],
  ])("catalog: %s → %i", (model, tokens) => {
    expect(catalogContextLength(model)).toBe(tokens);
  });
  it("defaults to 128k and honours config, then the cache, then provider metadata", () => {
    expect(contextLengthFor("mystery-model", cfg())).toBe(DEFAULT_CONTEXT_LENGTH);
    expect(contextLengthFor("gpt-4.1", cfg(32_000))).toBe(32_000);
    const store = memoryContextLengthStore({ "gpt-4.1@http://x/v1": 64_000 });
    expect(
      contextLengthFor("gpt-4.1", cfg(), { baseUrl: "http://x/v1/", store, providerMetadata: 500_000 }),
    ).toBe(64_000);
    expect(
      contextLengthFor("gpt-4.1", cfg(), { baseUrl: "http://y", store, providerMetadata: 500_000 }),
    ).toBe(500_000);
  });
  it("parses limits from overflow errors", () => {
    expect(parseContextLimitFromError("This model's maximum context length is 32768 tokens.")).toBe(32768);
    expect(parseContextLimitFromError("prompt is too long: 250000 tokens > 200000 maximum")).toBe(200_000);
    expect(parseContextLimitFromError("something else")).toBeUndefined();
  });
  it("probes down a tier, or to the stated limit, and caches it", async () => {
    expect(nextProbeTier(128_000)).toBe(64_000);
    expect(nextProbeTier(8_000)).toBe(8_000);
    const store = memoryContextLengthStore();
    expect(await probeDownContextLength({ model: "m", baseUrl: "http://h", current: 128_000, store })).toBe(
      64_000,
    );
    expect(store.get("m@http://h")).toBe(64_000);
    expect(
      await probeDownContextLength({
        model: "m",
        baseUrl: "http://h",
        current: 64_000,
        errorText: "maximum context length is 40960 tokens",
        store,
      }),
    ).toBe(40_960);
    expect(contextLengthFor("m", cfg(), { baseUrl: "http://h", store })).toBe(40_960);
  });
  it("persists to <home>/context_length_cache.yaml in Hermes's shape", async () => {
    const home = mkdtempSync(join(tmpdir(), "ctxlen-"));
    await fileContextLengthStore(home).set("m@http://h", 32_000);
    expect(readFileSync(join(home, "context_length_cache.yaml"), "utf8")).toContain("context_lengths:");
    expect(fileContextLengthStore(home).get("m@http://h")).toBe(32_000);
    writeFileSync(join(home, "context_length_cache.yaml"), "context_lengths: [unclosed");
    const broken = fileContextLengthStore(home);
    await broken.set("x@y", 1000);
    expect(readFileSync(join(home, "context_length_cache.yaml"), "utf8")).toBe("context_lengths: [unclosed");
  });
  it("a new store sees the file as it is now: created, changed or removed by another process", () => {
    const home = mkdtempSync(join(tmpdir(), "ctxlen-"));
    const file = join(home, "context_length_cache.yaml");
    expect(fileContextLengthStore(home).get("m@http://h")).toBeUndefined();
    writeFileSync(file, "context_lengths:\n  m@http://h: 32000\n");
    const first = fileContextLengthStore(home);
    expect(first.get("m@http://h")).toBe(32_000);
    writeFileSync(file, "context_lengths:\n  m@http://h: 16000\n  n@http://h: 8000\n");
    // A store keeps what it loaded; the next one reads the change.
    expect(first.get("n@http://h")).toBeUndefined();
    expect(fileContextLengthStore(home).get("m@http://h")).toBe(16_000);
    expect(fileContextLengthStore(home).get("n@http://h")).toBe(8_000);
    rmSync(file);
    expect(fileContextLengthStore(home).get("m@http://h")).toBeUndefined();
  });
  it("one store's learnt limit does not leak into another store's view before it is written", async () => {
    const home = mkdtempSync(join(tmpdir(), "ctxlen-"));
    writeFileSync(join(home, "context_length_cache.yaml"), "context_lengths:\n  a@h: 64000\n");
    const one = fileContextLengthStore(home);
    const two = fileContextLengthStore(home);
    expect(one.get("a@h")).toBe(64_000);
    expect(two.get("a@h")).toBe(64_000);
    await one.set("b@h", 32_000);
    expect(two.get("b@h")).toBeUndefined();
    expect(fileContextLengthStore(home).get("b@h")).toBe(32_000);
  });
  it("the catalog answers the same for a model asked again, in any case", () => {
    for (let i = 0; i < 3; i++) {
      expect(catalogContextLength("anthropic/Claude-Sonnet-4")).toBe(200_000);
      expect(catalogContextLength("unknown-model-x")).toBeUndefined();
    }
  });
});
