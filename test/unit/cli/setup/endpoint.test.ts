import { describe, expect, it } from "vitest";
import {
  configuredEndpoint,
  endpointVariable,
  needsEndpoint,
  normaliseEndpoint,
} from "../../../../src/cli/setup/endpoint.js";
import { defaultConfig } from "../../../../src/config/defaults.js";

const ok = (provider: string, input: string) => {
  const result = normaliseEndpoint(provider, input);
  if (!result.ok) throw new Error(`expected ${input} to pass: ${result.message}`);
  return result;
};
const refused = (provider: string, input: string): string => {
  const result = normaliseEndpoint(provider, input);
  if (result.ok) throw new Error(`expected ${input} to be refused, got ${result.url}`);
  return result.message;
};

describe("normaliseEndpoint for azure-foundry", () => {
  it.each([
    ["https://res.openai.azure.com/openai/v1", "https://res.openai.azure.com/openai/v1"],
    ["https://res.openai.azure.com/openai/v1/", "https://res.openai.azure.com/openai/v1"],
    // The portal's "Endpoint" field: the bare resource URL.
    ["https://res.openai.azure.com/", "https://res.openai.azure.com/openai/v1"],
    ["https://res.openai.azure.com", "https://res.openai.azure.com/openai/v1"],
    ["https://res.openai.azure.com/openai", "https://res.openai.azure.com/openai/v1"],
    ["https://res.cognitiveservices.azure.com/", "https://res.cognitiveservices.azure.com/openai/v1"],
    // Foundry: the project URL and the model-inference URL both mean the resource's v1 API.
    ["https://res.services.ai.azure.com/api/projects/proj1", "https://res.services.ai.azure.com/openai/v1"],
    ["https://res.services.ai.azure.com/models", "https://res.services.ai.azure.com/openai/v1"],
    [
      "https://res.services.ai.azure.com/openai/v1/chat/completions",
      "https://res.services.ai.azure.com/openai/v1",
    ],
    ["res.openai.azure.com", "https://res.openai.azure.com/openai/v1"],
    ["  https://RES.openai.azure.com/openai/v1  ", "https://res.openai.azure.com/openai/v1"],
  ])("%s → %s", (input, url) => {
    expect(ok("azure-foundry", input).url).toBe(url);
  });

  it("takes a deployment's request URL apart: the v1 base, and the deployment as the model to offer", () => {
    const result = ok(
      "azure",
      "https://res.openai.azure.com/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21",
    );
    expect(result).toMatchObject({
      url: "https://res.openai.azure.com/openai/v1",
      deployment: "gpt-4o-prod",
    });
    expect(result.note).toContain("?api-version=2024-10-21 dropped");
  });

  it("says what it changed, and nothing when the address was already right", () => {
    expect(ok("azure-foundry", "https://res.openai.azure.com/").note).toBe("the API path is /openai/v1");
    expect(ok("azure-foundry", "res.openai.azure.com").note).toContain("https:// added");
    expect(ok("azure-foundry", "https://res.openai.azure.com/openai/v1").note).toBeUndefined();
  });

  it("keeps a gateway's own path (API Management, a loopback proxy) and drops only the operation", () => {
    expect(ok("azure-foundry", "https://gw.example.com/ai/openai/v1/").url).toBe(
      "https://gw.example.com/ai/openai/v1",
    );
    expect(ok("azure-foundry", "http://127.0.0.1:4010/v1/chat/completions").url).toBe(
      "http://127.0.0.1:4010/v1",
    );
    expect(ok("azure-foundry", "http://localhost:4010/v1").url).toBe("http://localhost:4010/v1");
    expect(ok("azure-foundry", "http://[::1]:4010/v1").url).toBe("http://[::1]:4010/v1");
  });

  it("refuses plain http to another machine, since the key would travel in clear text", () => {
    const message = refused("azure-foundry", "http://res.openai.azure.com/openai/v1");
    expect(message).toContain("unencrypted");
    expect(message).toContain("https://res.openai.azure.com/openai/v1");
    expect(refused("azure-foundry", "http://10.0.0.5:8080/v1")).toContain("unencrypted");
    // A name that merely starts like loopback is another machine.
    expect(refused("azure-foundry", "http://127.0.0.1.evil.example/v1")).toContain("unencrypted");
    expect(refused("azure-foundry", "http://localhost.evil.example/v1")).toContain("unencrypted");
  });

  it.each([
    ["", "No address given."],
    ["not a url", "has spaces"],
    ["foo", "needs http:// or https://"],
    ["https://", "is not a URL"],
    ["ftp://res.openai.azure.com/", "is not an http(s) URL"],
    ["file:///etc/passwd", "is not an http(s) URL"],
    ["javascript:alert(1)", "is not"],
    ["https://user:secret@res.openai.azure.com/", "user name or password"],
    ["https://gw.example.com/v1?key=abc", "without"],
  ])("refuses %j (%s)", (input, words) => {
    expect(refused("azure-foundry", input)).toContain(words);
  });

  it("does not repeat a key pasted at the address question", () => {
    const message = refused("azure-foundry", "3f9c2a7be1d04c58a6b2e0f7c9d1a4b6");
    expect(message).toContain("looks like a key");
    expect(message).not.toContain("3f9c2a7b");
    expect(refused("custom", "sk-or-v1-0123456789abcdef0123")).not.toContain("sk-or");
  });

  it("never echoes a password from the URL back", () => {
    expect(refused("azure-foundry", "https://u:hunter2secret@res.openai.azure.com/")).not.toContain(
      "hunter2",
    );
  });
});

describe("normaliseEndpoint for a custom server", () => {
  it("accepts plain http on the local network (no key goes there by default) and trims the operation", () => {
    expect(ok("custom", "http://192.168.1.20:11434/v1/").url).toBe("http://192.168.1.20:11434/v1");
    expect(ok("custom", "http://127.0.0.1:8080/v1/models").url).toBe("http://127.0.0.1:8080/v1");
    expect(ok("custom", "http://127.0.0.1:8080/v1/models").note).toContain("/models dropped");
  });
  it("adds no scheme or path of its own", () => {
    expect(refused("custom", "127.0.0.1:8080/v1")).toContain("needs http:// or https:// in front");
    expect(refused("custom", "localhost:8080")).toContain("needs http:// or https:// in front");
    expect(ok("custom", "https://llm.example.com").url).toBe("https://llm.example.com");
  });
  it("requires https for a keyed hosted provider given another address", () => {
    expect(refused("openrouter", "http://proxy.example.com/v1")).toContain("unencrypted");
    expect(ok("openrouter", "https://proxy.example.com/v1").url).toBe("https://proxy.example.com/v1");
  });
});

describe("which providers need an endpoint, and where a configured one is found", () => {
  it("azure-foundry and its aliases need one; hosted providers, custom and local servers do not here", () => {
    expect(needsEndpoint("azure-foundry")).toBe(true);
    expect(needsEndpoint("AZURE")).toBe(true);
    expect(needsEndpoint("openrouter")).toBe(false);
    expect(needsEndpoint("custom")).toBe(false);
    expect(needsEndpoint("ollama")).toBe(false);
    expect(needsEndpoint("nosuch")).toBe(false);
    expect(endpointVariable("azure")).toBe("AZURE_FOUNDRY_BASE_URL");
  });

  it("config.yaml's base_url counts only for the provider config.yaml names; then the variable", () => {
    const config = {
      ...defaultConfig(),
      model: {
        ...defaultConfig().model,
        provider: "azure",
        base_url: "https://a.openai.azure.com/openai/v1",
      },
    };
    expect(configuredEndpoint("azure-foundry", config, {})).toBe("https://a.openai.azure.com/openai/v1");
    const other = { ...config, model: { ...config.model, provider: "custom" } };
    expect(configuredEndpoint("azure-foundry", other, {})).toBeUndefined();
    expect(configuredEndpoint("azure-foundry", other, { AZURE_FOUNDRY_BASE_URL: " https://b/v1 " })).toBe(
      "https://b/v1",
    );
  });
});
