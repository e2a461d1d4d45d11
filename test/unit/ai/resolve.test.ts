import { describe, expect, it } from "vitest";
import {
  createTransport,
  type Env,
  NoProviderError,
  type ResolvedRuntime,
  type RuntimeFlags,
  resolveRuntime,
  UnsupportedApiModeError,
} from "../../../src/ai/resolve.js";
import { defaultConfig, type HermesConfig, type ModelConfig } from "../../../src/config/defaults.js";
import { reply, startFakeLlm } from "../../support/fake-llm.js";

function config(model: Partial<ModelConfig> = {}, extra: Record<string, unknown> = {}): HermesConfig {
  const c = defaultConfig();
  return { ...c, ...extra, model: { ...c.model, ...model } };
}

interface Case {
  name: string;
  flags?: RuntimeFlags;
  model?: Partial<ModelConfig>;
  extra?: Record<string, unknown>;
  env?: Env;
  expected: Partial<ResolvedRuntime>;
}

const cases: Case[] = [
  {
    name: "OPENROUTER_API_KEY alone → openrouter with its default model",
    env: { OPENROUTER_API_KEY: "or-key" },
    expected: {
      provider: "openrouter",
      model: "anthropic/claude-sonnet-4",
      baseUrl: "https://openrouter.ai/api/v1",
      apiKey: "or-key",
      apiMode: "chat_completions",
    },
  },
  {
    name: "OPENAI_BASE_URL + OPENAI_API_KEY → custom endpoint with that key",
    env: { OPENAI_BASE_URL: "http://127.0.0.1:8000/v1/", OPENAI_API_KEY: "local", OPENROUTER_API_KEY: "or" },
    expected: { provider: "custom", baseUrl: "http://127.0.0.1:8000/v1", apiKey: "local", model: "default" },
  },
  {
    name: "OPENAI_BASE_URL alone → keyless custom endpoint",
    env: { OPENAI_BASE_URL: "http://127.0.0.1:8080/v1" },
    expected: { provider: "custom", apiKey: undefined },
  },
  {
    name: "OPENAI_API_KEY alone → openai-api",
    env: { OPENAI_API_KEY: "sk" },
    expected: {
      provider: "openai-api",
      baseUrl: "https://api.openai.com/v1",
      apiKey: "sk",
      model: "gpt-4.1",
    },
  },
  {
    name: "env detection order: OpenRouter before Nous before Anthropic before OpenAI",
    env: { OPENAI_API_KEY: "sk", ANTHROPIC_API_KEY: "a", NOUS_API_KEY: "n" },
    expected: { provider: "nous", apiKey: "n", model: "Hermes-4-405B" },
  },
  {
    name: "ANTHROPIC_API_KEY → anthropic_messages",
    env: { ANTHROPIC_API_KEY: "a" },
    expected: { provider: "anthropic", apiMode: "anthropic_messages", baseUrl: "https://api.anthropic.com" },
  },
  {
    name: "HERMES_INFERENCE_MODEL sets the model below config",
    env: { OPENROUTER_API_KEY: "k", HERMES_INFERENCE_MODEL: "qwen/qwen3-coder" },
    expected: { provider: "openrouter", model: "qwen/qwen3-coder" },
  },
  {
    name: "config beats env",
    model: { provider: "nous", default: "Hermes-4-70B" },
    env: { OPENROUTER_API_KEY: "or", NOUS_API_KEY: "n", HERMES_INFERENCE_MODEL: "env-model" },
    expected: { provider: "nous", model: "Hermes-4-70B", apiKey: "n" },
  },
  {
    name: "config model applies to an env-detected provider (provider auto)",
    model: { provider: "auto", default: "openai/gpt-5" },
    env: { OPENROUTER_API_KEY: "or" },
    expected: { provider: "openrouter", model: "openai/gpt-5" },
  },
  {
    name: "config api_key beats the environment key",
    model: { provider: "openrouter", api_key: "from-config" },
    env: { OPENROUTER_API_KEY: "from-env" },
    expected: { apiKey: "from-config" },
  },
  {
    name: "config base_url without provider → custom",
    model: { base_url: "http://10.0.0.5:8000/v1", default: "qwen3" },
    env: { OPENROUTER_API_KEY: "or" },
    expected: { provider: "custom", baseUrl: "http://10.0.0.5:8000/v1", model: "qwen3", apiKey: undefined },
  },
  {
    name: "config custom endpoint does not borrow OPENAI_API_KEY meant for another URL",
    model: { provider: "custom", base_url: "http://10.0.0.5:8000/v1" },
    env: { OPENAI_API_KEY: "sk-real", OPENAI_BASE_URL: "https://elsewhere.example/v1" },
    expected: { baseUrl: "http://10.0.0.5:8000/v1", apiKey: undefined },
  },
  {
    name: "config provider custom without a URL takes OPENAI_BASE_URL and its key",
    model: { provider: "custom" },
    env: { OPENAI_API_KEY: "sk-local", OPENAI_BASE_URL: "http://127.0.0.1:9000/v1" },
    expected: { baseUrl: "http://127.0.0.1:9000/v1", apiKey: "sk-local" },
  },
  {
    name: "config api_mode is honoured",
    model: { base_url: "http://127.0.0.1:4000", api_mode: "anthropic_messages" },
    expected: { apiMode: "anthropic_messages" },
  },
  {
    name: "flags beat config",
    flags: { model: "flag-model", provider: "nous" },
    model: { provider: "openrouter", default: "config-model" },
    env: { OPENROUTER_API_KEY: "or", NOUS_API_KEY: "n" },
    expected: { provider: "nous", model: "flag-model", apiKey: "n" },
  },
  {
    name: "switching provider by flag drops config's model, URL and key",
    flags: { provider: "nous" },
    model: { provider: "custom", base_url: "http://127.0.0.1:8000/v1", api_key: "x", default: "local-model" },
    env: { NOUS_API_KEY: "n" },
    expected: {
      provider: "nous",
      baseUrl: "https://inference.nousresearch.com/v1",
      apiKey: "n",
      model: "Hermes-4-405B",
    },
  },
  {
    name: "naming config's own provider by flag keeps its settings",
    flags: { provider: "OpenRouter" },
    model: { provider: "openrouter", base_url: "https://proxy.example/v1", default: "m" },
    env: { OPENROUTER_API_KEY: "or" },
    expected: { provider: "openrouter", baseUrl: "https://proxy.example/v1", model: "m" },
  },
  {
    name: "--base-url alone → custom, keeping config's model",
    flags: { baseUrl: "http://127.0.0.1:7000/v1" },
    model: { default: "my-model" },
    env: { OPENROUTER_API_KEY: "or" },
    expected: {
      provider: "custom",
      baseUrl: "http://127.0.0.1:7000/v1",
      model: "my-model",
      apiKey: undefined,
    },
  },
  {
    name: "alias ollama → custom at Ollama's port, even with OPENAI_BASE_URL set",
    flags: { provider: "ollama", model: "llama3.1" },
    env: { OPENAI_BASE_URL: "http://127.0.0.1:9999/v1" },
    expected: {
      provider: "custom",
      baseUrl: "http://127.0.0.1:11434/v1",
      model: "llama3.1",
      apiMode: "chat_completions",
    },
  },
  {
    name: "lmstudio needs no key",
    flags: { provider: "lmstudio" },
    expected: {
      provider: "lmstudio",
      baseUrl: "http://127.0.0.1:1234/v1",
      apiKey: undefined,
      model: "default",
    },
  },
  {
    name: "lmstudio takes LM_API_KEY when set",
    flags: { provider: "lmstudio" },
    env: { LM_API_KEY: "lm" },
    expected: { apiKey: "lm" },
  },
  {
    name: "a second key variable is used when the first is unset",
    flags: { provider: "gemini" },
    env: { GEMINI_API_KEY: "g" },
    expected: { provider: "gemini", apiKey: "g" },
  },
  {
    name: "gpt-5 on openai-api → codex_responses",
    flags: { provider: "openai", model: "gpt-5" },
    env: { OPENAI_API_KEY: "sk" },
    expected: { provider: "openai-api", apiMode: "codex_responses" },
  },
  {
    name: "named custom_providers entry",
    model: { provider: "custom:lab" },
    extra: {
      custom_providers: [{ name: "lab", base_url: "http://lab:8000/v1", api_key: "lk", model: "big" }],
    },
    expected: { provider: "custom:lab", baseUrl: "http://lab:8000/v1", apiKey: "lk", model: "big" },
  },
  {
    name: "azure-foundry: key and endpoint from its own variables, sent as api-key",
    flags: { provider: "azure" },
    env: {
      AZURE_FOUNDRY_API_KEY: "az-key",
      AZURE_FOUNDRY_BASE_URL: "https://res.openai.azure.com/openai/v1/",
      OPENAI_API_KEY: "sk-openai",
    },
    expected: {
      provider: "azure-foundry",
      baseUrl: "https://res.openai.azure.com/openai/v1",
      apiKey: "az-key",
      apiKeyHeader: "api-key",
      apiMode: "chat_completions",
    },
  },
  {
    name: "named custom_providers entry by bare name",
    flags: { provider: "lab" },
    extra: { custom_providers: [{ name: "Lab", base_url: "http://lab:8000/v1" }] },
    expected: { provider: "custom:Lab", baseUrl: "http://lab:8000/v1", model: "default" },
  },
];

describe("resolveRuntime", () => {
  it.each(cases)("$name", ({ flags = {}, model, extra, env = {}, expected }) => {
    const runtime = resolveRuntime({ flags, config: config(model, extra), env, home: undefined });
    expect(runtime).toMatchObject(expected);
  });

  it.each<[string, RuntimeFlags, Partial<ModelConfig>, Env, RegExp]>([
    ["nothing configured", {}, {}, {}, /^No model provider is configured\.\n.*OPENROUTER_API_KEY/],
    ["only a model", { model: "m" }, {}, { HERMES_INFERENCE_MODEL: "x" }, /No model provider/],
    [
      "blank values count as unset",
      { provider: " " },
      { provider: "", base_url: "  " },
      { OPENAI_API_KEY: "" },
      /No model/,
    ],
    [
      "unknown provider",
      { provider: "frobnicate" },
      {},
      {},
      /^Unknown provider "frobnicate"\.\nUse one of: .*openrouter/,
    ],
    [
      "keyed provider without key",
      { provider: "openrouter" },
      {},
      {},
      /^Provider openrouter needs an API key.*\n.*OPENROUTER_API_KEY/,
    ],
    ["custom without URL", { provider: "custom" }, {}, {}, /^Provider "custom" needs a base URL\.\n/],
    [
      "azure-foundry without its endpoint",
      { provider: "azure-foundry" },
      {},
      { AZURE_FOUNDRY_API_KEY: "az-key" },
      /^Provider "azure-foundry" needs a base URL\.\nRun hermes setup model, or hermes model azure-foundry:MODEL on a terminal .*set AZURE_FOUNDRY_BASE_URL in ~\/\.hermes\/\.env/,
    ],
    [
      "azure-foundry without its key",
      { provider: "azure-foundry" },
      {},
      { AZURE_FOUNDRY_BASE_URL: "https://res.openai.azure.com/openai/v1" },
      /^Provider azure-foundry needs an API key, and AZURE_FOUNDRY_API_KEY is not set/,
    ],
    ["bad api_mode", {}, { base_url: "http://x/v1", api_mode: "chat" }, {}, /not a known api_mode/],
  ])("throws for %s", (_label, flags, model, env, message) => {
    expect(() => resolveRuntime({ flags, config: config(model), env, home: undefined })).toThrow(message);
  });

  it.each([
    ["azure-foundry", { AZURE_FOUNDRY_API_KEY: "az-key" }, "AZURE_FOUNDRY_BASE_URL"],
    ["custom", {}, "OPENAI_BASE_URL"],
  ])(
    "a missing endpoint for %s names only fixes every command has, never --base-url",
    (provider, env, variable) => {
      let thrown: unknown;
      try {
        resolveRuntime({ flags: { provider }, config: config({}), env, home: undefined });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(NoProviderError);
      const error = thrown as NoProviderError;
      expect(error.missing).toBe("base_url");
      expect(error.provider).toBe(provider);
      expect(error.message).not.toMatch(/--base-url/i);
      expect(error.message).toContain("hermes setup model");
      expect(error.message).toContain(`set ${variable} in ~/.hermes/.env`);
      expect(error.message).toContain(`model.provider: ${provider} and model.base_url`);
    },
  );

  it.each<[string, RuntimeFlags, Partial<ModelConfig>]>([
    ["nothing configured", {}, {}],
    ["unknown provider", { provider: "nope" }, {}],
    ["missing key", { provider: "nous" }, {}],
    ["bad api_mode", {}, { base_url: "http://x/v1", api_mode: "chat" }],
  ])("throws a two-line NoProviderError for %s", (_label, flags, model) => {
    let error: unknown;
    try {
      resolveRuntime({ flags, config: config(model), env: {}, home: undefined });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(NoProviderError);
    expect((error as Error).message.split("\n")).toHaveLength(2);
  });
});

describe("createTransport", () => {
  it("builds a working chat-completions transport for a resolved runtime", async () => {
    const llm = await startFakeLlm();
    try {
      const runtime = resolveRuntime({
        flags: { baseUrl: llm.url, model: "m" },
        config: config(),
        env: {},
        home: undefined,
      });
      const transport = await createTransport(runtime);
      expect(transport.apiMode).toBe("chat_completions");
      llm.enqueue(reply().text("pong"));
      let answer = "";
      for await (const event of transport.stream({
        model: runtime.model,
        messages: [{ role: "user", content: "ping" }],
      })) {
        if (event.type === "finish") answer = String(event.message.content);
      }
      expect(answer).toBe("pong");
    } finally {
      await llm.close();
    }
  });

  it("refuses an api_mode without a transport, naming mode and provider", async () => {
    const local = config();
    local.model.api_mode = "local";
    local.model.base_url = "http://127.0.0.1:1/v1";
    const runtime = resolveRuntime({ flags: {}, config: local, env: {}, home: undefined });
    const attempt = createTransport(runtime);
    await expect(attempt).rejects.toBeInstanceOf(UnsupportedApiModeError);
    await expect(attempt).rejects.toThrow('api_mode "local" (provider custom) is not supported yet');
  });

  it("builds the Bedrock Converse transport for the bedrock provider, with no API key needed", async () => {
    const runtime = resolveRuntime({
      flags: { provider: "bedrock" },
      config: config(),
      env: {},
      home: undefined,
    });
    expect(runtime.apiMode).toBe("bedrock_converse");
    const transport = await createTransport(runtime, {
      env: { AWS_REGION: "eu-west-1", AWS_ACCESS_KEY_ID: "AKIDEXAMPLE", AWS_SECRET_ACCESS_KEY: "secret" },
    });
    expect(transport.apiMode).toBe("bedrock_converse");
  });

  it("builds the Anthropic Messages and Responses transports for their api_modes", async () => {
    const anthropic = resolveRuntime({
      flags: {},
      config: config(),
      env: { ANTHROPIC_API_KEY: "a" },
      home: undefined,
    });
    expect((await createTransport(anthropic)).apiMode).toBe("anthropic_messages");
    const responses = resolveRuntime({
      flags: { provider: "openai-api", model: "gpt-5" },
      config: config(),
      env: { OPENAI_API_KEY: "k" },
      home: undefined,
    });
    expect((await createTransport(responses)).apiMode).toBe("codex_responses");
  });
});
