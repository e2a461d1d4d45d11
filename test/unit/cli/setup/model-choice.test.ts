import { describe, expect, it } from "vitest";
import { formatModelLines, modelChoices, pickModel } from "../../../../src/ai/model-choices.js";
import { parseModelSpec } from "../../../../src/ai/model-spec.js";
import { serverModelDecision } from "../../../../src/cli/setup/local-model.js";
import { parseToolsetAnswer } from "../../../../src/cli/setup/sections.js";

describe("parseModelSpec", () => {
  it.each([
    ["anthropic/claude-sonnet-4", { model: "anthropic/claude-sonnet-4" }],
    ["openrouter:anthropic/claude-sonnet-4", { provider: "openrouter", model: "anthropic/claude-sonnet-4" }],
    // A local id's own colon is not a provider.
    ["llama3:8b", { model: "llama3:8b" }],
    ["ollama:qwen3:8b", { provider: "ollama", model: "qwen3:8b" }],
    ["custom:work:my-model", { provider: "custom:work", model: "my-model" }],
    ["us.anthropic.claude-sonnet-4-20250514-v1:0", { model: "us.anthropic.claude-sonnet-4-20250514-v1:0" }],
    ["anthropic:", { provider: "anthropic", model: "" }],
  ])("%s", (text, spec) => {
    expect(parseModelSpec(text)).toEqual({ ok: true, spec });
  });

  it("follows an alias once, never into a second alias", () => {
    const aliases = {
      fast: "groq-ish",
      "groq-ish": "x",
      big: { model: "m", provider: "openrouter", base_url: "http://h/v1" },
    };
    expect(parseModelSpec("fast", aliases)).toEqual({ ok: true, spec: { model: "groq-ish" } });
    expect(parseModelSpec("big", aliases)).toEqual({
      ok: true,
      spec: { model: "m", provider: "openrouter", baseUrl: "http://h/v1" },
    });
  });

  it("rejects empty input and broken aliases, and ignores inherited names", () => {
    expect(parseModelSpec("  ").ok).toBe(false);
    expect(parseModelSpec("bad", { bad: 3 }).ok).toBe(false);
    expect(parseModelSpec("bad", { bad: {} }).ok).toBe(false);
    expect(parseModelSpec("toString", {})).toEqual({ ok: true, spec: { model: "toString" } });
  });
});

describe("pickModel", () => {
  const choices = modelChoices([
    { id: "alpha-7b" },
    { id: "beta-13b" },
    { id: "beta-70b" },
    { id: "alpha-7b" },
  ]);
  it.each([
    ["2", "beta-13b"],
    ["BETA-70B", "beta-70b"],
    ["alp", "alpha-7b"],
    ["13b", "beta-13b"],
  ])("%s → %s", (answer, id) => {
    expect(pickModel(answer, choices)).toEqual({ ok: true, id });
  });
  it("refuses what is not clearly one model", () => {
    expect(choices).toHaveLength(3);
    expect(pickModel("4", choices)).toMatchObject({ ok: false, message: "4 is not in the list (1-3)." });
    expect(pickModel("0", choices).ok).toBe(false);
    expect(pickModel("beta", choices)).toMatchObject({ ok: false });
    expect(pickModel("gamma", choices).ok).toBe(false);
    expect(pickModel("gamma", choices, { free: true })).toEqual({ ok: true, id: "gamma" });
  });
  it("shows windows and prices from the catalog", () => {
    const lines = formatModelLines(
      modelChoices([{ id: "claude-sonnet-4-5" }, { id: "x", contextLength: 32768 }]),
      "x",
    );
    expect(lines[0]).toMatch(/1\. claude-sonnet-4-5\s+200k ctx\s+\$3\/\$15 per Mtok/);
    expect(lines[1]).toMatch(/2\. x\s+33k ctx \(current\)$/);
  });
});

describe("serverModelDecision", () => {
  it("uses the only model, asks among several, and leaves failures to the model call", () => {
    expect(serverModelDecision({ ok: true, models: [{ id: "a" }, { id: "a" }] })).toEqual({
      kind: "use",
      id: "a",
    });
    expect(serverModelDecision({ ok: true, models: [{ id: "a" }, { id: "b" }] })).toEqual({
      kind: "choose",
      ids: ["a", "b"],
    });
    expect(serverModelDecision({ ok: true, models: [] })).toEqual({ kind: "none" });
    expect(serverModelDecision({ ok: false, kind: "unreachable", message: "x" })).toEqual({ kind: "keep" });
  });
});

describe("parseToolsetAnswer", () => {
  const names = ["web", "terminal", "file"];
  it("reads numbers, names and all", () => {
    expect(parseToolsetAnswer("1, file,1", names)).toEqual({ ok: true, toolsets: ["web", "file"] });
    expect(parseToolsetAnswer("all", names)).toEqual({ ok: true, toolsets: ["hermes-cli"] });
  });
  it("refuses unknown names, out-of-range numbers, inherited keys and nothing", () => {
    expect(parseToolsetAnswer("9", names).ok).toBe(false);
    expect(parseToolsetAnswer("nonesuch", names).ok).toBe(false);
    expect(parseToolsetAnswer("constructor", names).ok).toBe(false);
    expect(parseToolsetAnswer(" , ", names).ok).toBe(false);
  });
});
