import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseModelArgs, saveModelChoice } from "../../../src/commands/model-args.js";

describe("/model words", () => {
  it.each([
    ["", { spec: undefined, global: false, refresh: false }],
    ["--refresh", { spec: undefined, global: false, refresh: true }],
    ["gpt-5", { spec: "gpt-5", global: false, refresh: false }],
    ["gpt-5 --session", { spec: "gpt-5", global: false, refresh: false }],
    ["gpt-5 --global", { spec: "gpt-5", global: true, refresh: false }],
    ["--global openrouter:x/y", { spec: "openrouter:x/y", global: true, refresh: false }],
    [
      "claude-sonnet-4 --provider anthropic",
      { spec: "anthropic:claude-sonnet-4", global: false, refresh: false },
    ],
    ["--provider=openrouter", { spec: "openrouter:", global: false, refresh: false }],
    ["qwen3:8b", { spec: "qwen3:8b", global: false, refresh: false }],
  ])("%j", (text, expected) => {
    expect(parseModelArgs(text)).toEqual(expected);
  });

  it.each([
    ["gpt 5", /one word; got "gpt 5"/],
    ["gpt-5 --globl", /Unknown option --globl/],
    ["gpt-5 --provider", /--provider needs a provider id/],
    ["gpt-5 --provider --global", /--provider needs a provider id/],
    ["gpt-5 --global --session", /not both/],
    ["--global", /--global saves a model/],
  ])("refuses %j", (text, message) => {
    const parsed = parseModelArgs(text);
    expect("error" in parsed && parsed.error).toMatch(message);
  });
});

describe("/model --global", () => {
  const home = () => {
    const dir = mkdtempSync(join(tmpdir(), "hermes-model-args-"));
    writeFileSync(
      join(dir, "config.yaml"),
      "# mine\nmodel:\n  provider: openrouter\n  default: a/b\n  api_key: sk-or-old\n",
    );
    return dir;
  };
  const configured = { provider: "openrouter", base_url: "", api_key: "sk-or-old", api_mode: "" };

  it("saves only the model on the same provider, keeping comments and the key", () => {
    const dir = home();
    expect(saveModelChoice(dir, configured, { model: "c/d", provider: "openrouter" })).toEqual([
      "model.default: c/d",
    ]);
    const text = readFileSync(join(dir, "config.yaml"), "utf8");
    expect(text).toContain("# mine");
    expect(text).toContain("default: c/d");
    expect(text).toContain("api_key: sk-or-old");
  });

  it("on another provider writes it and its endpoint, and drops the old provider's key", () => {
    const dir = home();
    const saved = saveModelChoice(dir, configured, {
      model: "qwen3:8b",
      provider: "custom",
      baseUrl: "http://127.0.0.1:11434/v1",
    });
    expect(saved).toEqual([
      "model.default: qwen3:8b",
      "model.provider: custom",
      "model.base_url: http://127.0.0.1:11434/v1",
      'model.api_key: ""',
    ]);
    expect(readFileSync(join(dir, "config.yaml"), "utf8")).not.toContain("sk-or-old");
  });
});
