import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defaultConfig, type HermesConfig } from "../../../src/config/defaults.js";
import {
  aggregatorPrompt,
  MAX_REFERENCE_CHARS,
  mixtureOfAgentsTool,
  resolveMoa,
} from "../../../src/tools/moa.js";
import { MOA_DEFAULT_AGGREGATOR, readMoaPlan } from "../../../src/tools/moa-routes.js";
import { CORE_TOOLSET_PLATFORMS, resolveToolsets, TOOLSETS } from "../../../src/tools/toolsets.js";
import {
  type FakeLlm,
  httpError,
  type RecordedRequest,
  reply,
  startFakeLlm,
} from "../../support/fake-llm.js";
import { makeToolContext } from "../../support/tool-context.js";

/** Keys that would add hosted providers are blanked so only the fake answers. */
const ISOLATED_ENV = {
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  OPENROUTER_API_KEY: "",
  NOUS_API_KEY: "",
  MINIMAX_API_KEY: "",
  DEEPSEEK_API_KEY: "",
  XIAOMI_API_KEY: "",
  OPENAI_API_KEY: "",
  OPENAI_BASE_URL: "",
};

let llm: FakeLlm;
beforeEach(async () => {
  llm = await startFakeLlm();
});
afterEach(async () => {
  await llm.close();
});

function config(extra: Record<string, unknown>): HermesConfig {
  const base = defaultConfig();
  return {
    ...base,
    model: { ...base.model, provider: "custom", base_url: llm.url, default: "main-model" },
    ...extra,
  } as HermesConfig;
}

function auxConfig(models: unknown[]): HermesConfig {
  return config({
    auxiliary: {
      moa_reference: { provider: "custom", base_url: llm.url, models, max_tokens: 300 },
      moa_aggregator: { provider: "custom", base_url: llm.url, model: "agg" },
    },
  });
}

const modelOf = (r: RecordedRequest) => (r.body as { model?: string }).model;
const systemOf = (r: RecordedRequest) =>
  ((r.body as { messages: { role: string; content: string }[] }).messages.find((m) => m.role === "system")
    ?.content ?? "") as string;

describe("readMoaPlan", () => {
  it("falls back to upstream's default models when nothing is configured", () => {
    const plan = readMoaPlan({});
    expect(plan.source).toBe("defaults");
    expect(plan.references.map((r) => r.label)).toEqual([
      "minimax/MiniMax-M2.7",
      "deepseek/deepseek-reasoner",
    ]);
    expect(plan.aggregator).toEqual(MOA_DEFAULT_AGGREGATOR);
  });

  it("reads several references from auxiliary.moa_reference.models with the section's endpoint", () => {
    const plan = readMoaPlan({
      auxiliary: {
        moa_reference: {
          provider: "custom",
          base_url: "http://x/v1",
          models: ["a", { model: "b", label: "B" }],
        },
        moa_aggregator: { provider: "openrouter", model: "z/agg" },
      },
    });
    expect(plan.references).toEqual([
      { provider: "custom", model: "a", baseUrl: "http://x/v1", label: "custom/a" },
      { provider: "custom", model: "b", baseUrl: "http://x/v1", label: "B" },
    ]);
    expect(plan.aggregator).toMatchObject({ provider: "openrouter", model: "z/agg" });
  });

  it("prefers the active moa preset, with its temperatures and max_tokens", () => {
    const plan = readMoaPlan({
      moa: {
        default_preset: "deep",
        presets: {
          deep: {
            reference_models: ["openrouter:x/one", "vendor/two", "plain"],
            aggregator: { provider: "nous", model: "agg" },
            reference_temperature: 0.9,
            max_tokens: 1000,
          },
        },
      },
    });
    expect(plan.source).toBe("moa.presets.deep");
    expect(plan.references.map((r) => [r.provider, r.model])).toEqual([
      ["openrouter", "x/one"],
      ["openrouter", "vendor/two"],
      ["main", "plain"],
    ]);
    expect(plan.referenceTemperature).toBe(0.9);
    expect(plan.maxTokens).toBe(1000);
  });

  it("skips a preset that is switched off, and notes entries it cannot read", () => {
    const plan = readMoaPlan({
      moa: { presets: { default: { enabled: false, reference_models: ["a"] } } },
      auxiliary: { moa_reference: { models: [42, "main:m"] } },
    });
    expect(plan.source).toBe("auxiliary.moa_reference");
    expect(plan.references).toHaveLength(1);
    expect(plan.problems[0]).toContain("auxiliary.moa_reference.models[0]");
  });
});

describe("mixture_of_agents", () => {
  it("is opt-in: only the moa toolset (or all) offers it, never a platform's default set", () => {
    expect(resolveToolsets(["moa"]).tools).toEqual(["mixture_of_agents"]);
    const platforms = Object.keys(TOOLSETS).filter((name) => name.startsWith("hermes-"));
    expect(platforms.length).toBeGreaterThan(CORE_TOOLSET_PLATFORMS.length);
    for (const name of [...platforms, "coding", "debugging", "safe"]) {
      expect(resolveToolsets([name]).tools).not.toContain("mixture_of_agents");
    }
  });

  it("is not offered when no model of the mixture can be used", async () => {
    const base = defaultConfig();
    const cfg = { ...base, model: { ...base.model, provider: "", default: "" } } as HermesConfig;
    const ok = await mixtureOfAgentsTool.check?.({ env: ISOLATED_ENV, config: cfg as never });
    expect(ok).toBe(false);
  });

  it("asks every reference model in parallel and hands their answers to the aggregator", async () => {
    llm.respondWith((req) => {
      const model = modelOf(req);
      if (model === "ref-a") return reply().text("Answer A: 42").usage({ prompt: 10, completion: 5 });
      if (model === "ref-b") return reply().text("Answer B: forty-two").usage({ prompt: 10, completion: 6 });
      if (model === "agg") return reply().text("Combined: 42").usage({ prompt: 50, completion: 4 });
      return undefined;
    });
    const ctx = makeToolContext({ config: auxConfig(["ref-a", "ref-b"]) as never, env: ISOLATED_ENV });
    const result = (await mixtureOfAgentsTool.handler({ user_prompt: "What is 6*7?" }, ctx)) as Record<
      string,
      unknown
    >;
    expect(result).toMatchObject({
      success: true,
      response: "Combined: 42",
      models_used: { reference_models: ["custom/ref-a", "custom/ref-b"], aggregator_model: "custom/agg" },
      usage: { input_tokens: 70, output_tokens: 15 },
    });
    expect(result["failed_models"]).toBeUndefined();
    const agg = llm.chatRequests.find((r) => modelOf(r) === "agg");
    expect(agg).toBeDefined();
    expect(systemOf(agg as RecordedRequest)).toContain("1. Answer A: 42");
    expect(systemOf(agg as RecordedRequest)).toContain("2. Answer B: forty-two");
    const refBody = llm.chatRequests.find((r) => modelOf(r) === "ref-a")?.body as Record<string, unknown>;
    expect(refBody["max_tokens"] ?? refBody["max_completion_tokens"]).toBe(300);
    expect(refBody["temperature"]).toBe(0.6);
  });

  it("reports a failing reference and still aggregates the others", async () => {
    llm.respondWith((req) => {
      const model = modelOf(req);
      if (model === "ref-a") return reply().text("Answer A");
      if (model === "ref-broken")
        return httpError(404, '{"error":{"message":"model ref-broken does not exist"}}');
      if (model === "agg") return reply().text("Only A was there");
      return undefined;
    });
    const ctx = makeToolContext({ config: auxConfig(["ref-a", "ref-broken"]) as never, env: ISOLATED_ENV });
    const result = (await mixtureOfAgentsTool.handler({ user_prompt: "q" }, ctx)) as Record<string, unknown>;
    expect(result["success"]).toBe(true);
    expect(result["models_used"]).toMatchObject({ reference_models: ["custom/ref-a"] });
    const failed = result["failed_models"] as { model: string; error: string }[];
    expect(failed).toHaveLength(1);
    expect(failed[0]?.model).toBe("custom/ref-broken");
    expect(failed[0]?.error).toMatch(/ref-broken/);
    const agg = llm.chatRequests.find((r) => modelOf(r) === "agg") as RecordedRequest;
    expect(systemOf(agg)).not.toContain("2.");
  });

  it("fails with every reference's error when none answers", async () => {
    llm.respondWith((req) =>
      modelOf(req) === "agg" ? reply().text("never") : httpError(401, '{"error":{"message":"bad key"}}'),
    );
    const ctx = makeToolContext({ config: auxConfig(["r1", "r2"]) as never, env: ISOLATED_ENV });
    await expect(mixtureOfAgentsTool.handler({ user_prompt: "q" }, ctx)).rejects.toThrow(
      /Every reference model failed.*custom\/r1.*custom\/r2/,
    );
    expect(llm.chatRequests.some((r) => modelOf(r) === "agg")).toBe(false);
  });

  it("says which aggregator failed", async () => {
    llm.respondWith((req) =>
      modelOf(req) === "agg" ? httpError(400, '{"error":{"message":"context too long"}}') : reply().text("x"),
    );
    const ctx = makeToolContext({ config: auxConfig(["r1"]) as never, env: ISOLATED_ENV });
    await expect(mixtureOfAgentsTool.handler({ user_prompt: "q" }, ctx)).rejects.toThrow(
      /aggregator custom\/agg failed/,
    );
  });

  it("skips references whose provider has no key, and says so", () => {
    const cfg = auxConfig(["ref-a", "deepseek:deepseek-chat"]);
    const resolved = resolveMoa(cfg, ISOLATED_ENV, undefined);
    expect(resolved.references.map((r) => r.route.label)).toEqual(["custom/ref-a"]);
    expect(resolved.skipped).toEqual([
      { model: "deepseek/deepseek-chat", reason: expect.stringMatching(/key/) },
    ]);
  });

  it("stops when the turn is interrupted", async () => {
    const controller = new AbortController();
    llm.respondWith(() => {
      controller.abort();
      return reply().text("late").delay(200);
    });
    const ctx = makeToolContext({
      config: auxConfig(["r1"]) as never,
      env: ISOLATED_ENV,
      signal: controller.signal,
    });
    await expect(mixtureOfAgentsTool.handler({ user_prompt: "q" }, ctx)).rejects.toThrow();
    expect(llm.chatRequests.some((r) => modelOf(r) === "agg")).toBe(false);
  });

  it("caps each reference answer before the aggregator reads it", () => {
    const prompt = aggregatorPrompt(["x".repeat(MAX_REFERENCE_CHARS + 500), "short"]);
    expect(prompt.length).toBeLessThan(MAX_REFERENCE_CHARS + 1000);
    expect(prompt).toContain(`answer cut at ${MAX_REFERENCE_CHARS} characters`);
    expect(prompt).toContain("2. short");
  });
});
