import { describe, expect, it } from "vitest";
import { isApiMode } from "../../../src/ai/api-mode.js";
import { defaultBaseUrl, findProvider, PROVIDERS } from "../../../src/ai/providers.js";

describe("provider catalog", () => {
  it("has unique ids and aliases, valid modes and URLs, and a default model for each entry", () => {
    const names = PROVIDERS.flatMap((p) => [p.id, ...p.aliases]);
    expect(new Set(names).size).toBe(names.length);
    for (const p of PROVIDERS) {
      expect(isApiMode(p.apiMode)).toBe(true);
      // custom and Azure (one endpoint per resource) take the user's URL; Azure names its variable.
      if (p.id === "azure-foundry") expect(p.baseUrlEnv).toEqual(["AZURE_FOUNDRY_BASE_URL"]);
      else if (p.id !== "custom") expect(() => new URL(p.baseUrl)).not.toThrow();
      expect(p.defaultModel).not.toBe("");
      // Without a key variable, a provider must have a login to stand in for the key.
      if (!p.keyOptional && !p.login) expect(p.apiKeyEnv.length).toBeGreaterThan(0);
    }
  });

  it.each([
    ["openrouter", "openrouter"],
    ["OpenRouter ", "openrouter"],
    ["grok", "xai"],
    ["hf", "huggingface"],
    ["ollama", "custom"],
    ["vllm", "custom"],
    ["llamacpp", "custom"],
    ["lm-studio", "lmstudio"],
    ["azure", "azure-foundry"],
    ["azure-ai-foundry", "azure-foundry"],
    ["nope", undefined],
    ["", undefined],
  ])("findProvider(%j) → %s", (name, id) => {
    expect(findProvider(name)?.id).toBe(id);
  });

  it.each([
    ["ollama", "http://127.0.0.1:11434/v1"],
    ["vllm", "http://127.0.0.1:8000/v1"],
    ["llamacpp", "http://127.0.0.1:8080/v1"],
    ["lmstudio", "http://127.0.0.1:1234/v1"],
    ["nous", "https://inference.nousresearch.com/v1"],
    ["opencode-go", "https://opencode.ai/zen/go/v1"],
    ["custom", ""],
    ["nope", ""],
  ])("defaultBaseUrl(%s) → %s", (name, url) => {
    expect(defaultBaseUrl(name)).toBe(url);
  });

  it("holds upstream's API-key providers whose wire is chat completions, opencode-go among them", () => {
    const go = findProvider("opencode-go");
    expect(go?.apiMode).toBe("chat_completions");
    expect(go?.apiKeyEnv).toEqual(["OPENCODE_GO_API_KEY"]);
    expect(go?.baseUrlEnv).toEqual(["OPENCODE_GO_BASE_URL"]);
  });
});
