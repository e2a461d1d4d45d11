import { describe, expect, it } from "vitest";
import {
  AuxiliaryError,
  auxiliaryComplete,
  resolveAuxiliary,
  resolveAuxiliaryChain,
} from "../../../src/ai/auxiliary.js";
import type { ResolvedRuntime } from "../../../src/ai/resolve.js";
import { ProviderError, type Transport } from "../../../src/ai/types.js";
import { defaultConfig } from "../../../src/config/defaults.js";
import { ScriptedTransport, say } from "../../support/scripted-transport.js";

const main: ResolvedRuntime = {
  provider: "anthropic",
  model: "claude-sonnet-4-5",
  baseUrl: "https://api.anthropic.com",
  apiKey: "sk-ant",
  apiMode: "anthropic_messages",
};

describe("resolveAuxiliaryChain", () => {
  it("auto: OpenRouter, then Nous, then the main runtime", () => {
    const chain = resolveAuxiliaryChain("compression", {
      config: defaultConfig(),
      env: { OPENROUTER_API_KEY: "or", NOUS_API_KEY: "nous" },
      main,
      home: undefined,
    });
    expect(chain.map((r) => [r.source, r.provider])).toEqual([
      ["auto:openrouter", "openrouter"],
      ["auto:nous", "nous"],
      ["main", "anthropic"],
    ]);
    expect(chain[0]?.timeoutMs).toBe(120_000);
  });
  it("falls back to the main runtime when no aux key is set", () => {
    expect(
      resolveAuxiliary("title_generation", { config: defaultConfig(), env: {}, main, home: undefined })
        .source,
    ).toBe("main");
  });
  it("honours auxiliary.<task> provider, model, base_url and api_key", () => {
    const config = {
      ...defaultConfig(),
      auxiliary: {
        compression: {
          provider: "custom",
          model: "small",
          base_url: "http://127.0.0.1:9/v1",
          api_key: "k",
          timeout: 5,
        },
      },
    };
    const chain = resolveAuxiliaryChain("compression", {
      config,
      env: { OPENROUTER_API_KEY: "or" },
      main,
      home: undefined,
    });
    expect(chain.map((r) => r.source)).toEqual(["auxiliary.compression", "main"]);
    expect(chain[0]).toMatchObject({
      model: "small",
      baseUrl: "http://127.0.0.1:9/v1",
      apiKey: "k",
      timeoutMs: 5000,
    });
    const mainModel = {
      ...defaultConfig(),
      auxiliary: { vision: { provider: "main", model: "claude-haiku-4-5" } },
    };
    expect(resolveAuxiliary("vision", { config: mainModel, env: {}, main, home: undefined }).model).toBe(
      "claude-haiku-4-5",
    );
  });
});

describe("auxiliaryComplete", () => {
  const chain = resolveAuxiliaryChain("compression", {
    config: defaultConfig(),
    env: { OPENROUTER_API_KEY: "or", NOUS_API_KEY: "nous" },
    main,
    home: undefined,
  });
  const scripted = (by: Record<string, ScriptedTransport>) => async (r: { source: string }) =>
    by[r.source] as Transport;

  it("collects the streamed text", async () => {
    const t = new ScriptedTransport([say("a summary")]);
    const result = await auxiliaryComplete(chain, [{ role: "user", content: "hi" }], {
      transportFor: scripted({ "auto:openrouter": t }),
      maxTokens: 100,
    });
    expect(result.text).toBe("a summary");
    expect(result.runtime.source).toBe("auto:openrouter");
    expect(t.requests[0]).toMatchObject({ model: "google/gemini-3-flash-preview", maxTokens: 100 });
  });
  it("retries a retryable error once on the same provider", async () => {
    const t = new ScriptedTransport([new ProviderError("overloaded", { status: 503 }), say("ok")]);
    const waits: number[] = [];
    const result = await auxiliaryComplete(chain, [], {
      transportFor: scripted({ "auto:openrouter": t }),
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    expect(result.text).toBe("ok");
    expect(waits).toHaveLength(1);
  });
  it("moves past providers that need payment, down to the main model", async () => {
    const billing = () =>
      new ProviderError("Payment Required: insufficient credits", {
        status: 402,
        body: '{"error":{"message":"insufficient credits"}}',
      });
    const or = new ScriptedTransport([billing()]);
    const nous = new ScriptedTransport([billing()]);
    const m = new ScriptedTransport([say("from main")]);
    const result = await auxiliaryComplete(chain, [], {
      transportFor: scripted({ "auto:openrouter": or, "auto:nous": nous, main: m }),
      sleep: async () => {},
    });
    expect(result.text).toBe("from main");
    expect(result.runtime.source).toBe("main");
    expect(or.requests).toHaveLength(1);
  });
  it("throws AuxiliaryError listing every attempt when all fail; empty answers count as failures", async () => {
    const empty = () => new ScriptedTransport([say(""), say("")]);
    await expect(
      auxiliaryComplete(chain, [], {
        transportFor: scripted({ "auto:openrouter": empty(), "auto:nous": empty(), main: empty() }),
        sleep: async () => {},
      }),
    ).rejects.toSatisfy((e: unknown) => e instanceof AuxiliaryError && e.attempts.length === 6);
  });
  it("throws a non-recoverable error at once", async () => {
    const bad = new ScriptedTransport([new ProviderError("bad request: invalid field", { status: 400 })]);
    await expect(
      auxiliaryComplete(chain, [], {
        transportFor: scripted({ "auto:openrouter": bad }),
        sleep: async () => {},
      }),
    ).rejects.toBeInstanceOf(ProviderError);
  });
});
