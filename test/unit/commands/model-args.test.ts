import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { NoProviderError, resolveRuntime } from "../../../src/ai/resolve.js";
import { missingEndpointAdvice, parseModelArgs, saveModelChoice } from "../../../src/commands/model-args.js";
import { defaultConfig } from "../../../src/config/defaults.js";

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

describe("/model to a provider with no endpoint", () => {
  const failure = (provider: string, env: Record<string, string> = {}): unknown => {
    try {
      resolveRuntime({ flags: { provider }, config: defaultConfig(), env, home: undefined });
    } catch (error) {
      return error;
    }
    return undefined;
  };

  it("sends the REPL user to hermes model on a terminal or the variable, never to a flag /model lacks", () => {
    const lines = missingEndpointAdvice(
      failure("azure", { AZURE_FOUNDRY_API_KEY: "k" }),
      "azure:dep",
      "repl",
    );
    expect(lines).toEqual([
      "Azure AI Foundry needs its endpoint, and none is configured; the model was not changed.",
      "In a shell, run: hermes model azure:dep (it asks for the endpoint, and the key when none is set, and makes it the default), then start hermes again.",
      "Or add AZURE_FOUNDRY_BASE_URL=https://<resource>.openai.azure.com/openai/v1 to ~/.hermes/.env, then start hermes again.",
    ]);
  });

  it("names the wizard for a custom server and the gateway restart in a chat", () => {
    const lines = missingEndpointAdvice(failure("custom"), "custom:m", "chat") ?? [];
    expect(lines[1]).toBe(
      "In a shell, run: hermes setup model (it asks for the server's address and makes it the default), then restart the gateway (hermes gateway restart).",
    );
    expect(lines[2]).toContain("Or add OPENAI_BASE_URL=http://127.0.0.1:8080/v1 to ~/.hermes/.env");
    expect(lines.join(" ")).not.toContain("--base-url");
  });

  it("leaves other failures to the caller", () => {
    expect(missingEndpointAdvice(failure("openrouter"), "openrouter:x", "repl")).toBeUndefined();
    expect(missingEndpointAdvice(new NoProviderError("other"), "x", "repl")).toBeUndefined();
    expect(missingEndpointAdvice(new Error("boom"), "x", "repl")).toBeUndefined();
  });
});
