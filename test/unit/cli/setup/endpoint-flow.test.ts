/**
 * The model section's conversation for azure-foundry with scripted answers and a scripted
 * `/models` endpoint: what is asked again after each failure, what is kept, and that it ends.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { askModelPlan } from "../../../../src/cli/setup/model-flow.js";
import { PromptCancelled } from "../../../../src/cli/setup/prompter.js";
import { defaultConfig } from "../../../../src/config/defaults.js";
import { scriptedPrompter } from "../../../support/scripted-prompter.js";

/** A prompter answering from a script; records every question and line said. */

type Seen = { url: string; headers: Record<string, string> };

/** A `/models` endpoint: lists `gpt-4.1-deploy` for `good`, 401 for any other key. */
function azureFetch(good: string, seen: Seen[]): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const headers = Object.fromEntries(Object.entries((init?.headers ?? {}) as Record<string, string>));
    seen.push({ url: String(input), headers });
    if (String(input).startsWith("https://down.openai.azure.com")) throw new TypeError("fetch failed");
    if (headers["api-key"] !== good || headers["authorization"]) {
      return new Response(JSON.stringify({ error: { code: "401" } }), { status: 401 });
    }
    return new Response(JSON.stringify({ data: [{ id: "gpt-4.1-deploy" }] }), { status: 200 });
  }) as typeof fetch;
}

function flowContext(fetchImpl: typeof fetch) {
  const home = mkdtempSync(join(tmpdir(), "hermes-endpoint-flow-"));
  return { home, env: {}, config: defaultConfig(), fetch: fetchImpl };
}

describe("askModelPlan for azure-foundry", () => {
  it("asks the endpoint again after it does not answer, keeping the key, then the key after a 401", async () => {
    const seen: Seen[] = [];
    const p = scriptedPrompter([
      "azure",
      "https://down.openai.azure.com/",
      "1",
      "good-key-1",
      // The address did not answer: only the address is asked again.
      "https://res.openai.azure.com/openai/deployments/gpt-4.1-deploy/chat/completions?api-version=2024-10-21",
      "",
    ]);
    const plan = await askModelPlan(flowContext(azureFetch("good-key-1", seen)), p);
    expect(plan).toMatchObject({
      provider: "azure-foundry",
      baseUrl: "https://res.openai.azure.com/openai/v1",
      model: "gpt-4.1-deploy",
      envWrites: [{ name: "AZURE_FOUNDRY_API_KEY", value: "good-key-1" }],
    });
    expect(p.asked.filter((q) => q.startsWith("Paste your"))).toHaveLength(1);
    expect(p.said.join("\n")).toContain("did not answer");
    expect(seen.at(-1)).toMatchObject({
      url: "https://res.openai.azure.com/openai/v1/models",
      headers: { "api-key": "good-key-1" },
    });
    expect(plan.runtime.apiKeyHeader).toBe("api-key");
  });

  it("a key refused again and again ends in a typed model after three tries, not a loop", async () => {
    const p = scriptedPrompter([
      "azure",
      "https://res.openai.azure.com",
      "1",
      "k1",
      "k2",
      "k3",
      "k4",
      "my-deployment",
    ]);
    const plan = await askModelPlan(flowContext(azureFetch("never", [])), p);
    expect(p.asked.filter((q) => q.startsWith("Paste your"))).toHaveLength(4);
    expect(plan.model).toBe("my-deployment");
    expect(plan.envWrites).toEqual([{ name: "AZURE_FOUNDRY_API_KEY", value: "k4" }]);
  });

  it("takes a deployment that the listing does not show, typed by name", async () => {
    const p = scriptedPrompter([
      "azure-foundry",
      "https://res.openai.azure.com/openai/v1",
      "",
      "good",
      "prod-gpt5",
    ]);
    const plan = await askModelPlan(flowContext(azureFetch("good", [])), p);
    expect(plan.model).toBe("prod-gpt5");
    expect(p.said.join("\n")).toContain("the name of a deployment");
  });

  it("Ctrl+C at the key leaves with nothing planned", async () => {
    const p = scriptedPrompter(["azure", "https://res.openai.azure.com"]);
    await expect(askModelPlan(flowContext(azureFetch("good", [])), p)).rejects.toBeInstanceOf(
      PromptCancelled,
    );
  });
});

/** A local server's `/models` that wants `Bearer <good>`. */
function bearerFetch(good: string): typeof fetch {
  return (async (_input: string | URL | Request, init?: RequestInit) => {
    const headers = (init?.headers ?? {}) as Record<string, string>;
    if (headers["authorization"] !== `Bearer ${good}`) return new Response("{}", { status: 401 });
    return new Response(JSON.stringify({ data: [{ id: "served-7b" }] }), { status: 200 });
  }) as typeof fetch;
}

describe("askModelPlan for a server that wants a key", () => {
  it("custom: the key goes to .env as CUSTOM_API_KEY and model.api_key refers to it", async () => {
    const p = scriptedPrompter(["custom", "http://127.0.0.1:8000/v1", "srv-key", ""]);
    const plan = await askModelPlan(flowContext(bearerFetch("srv-key")), p);
    expect(plan).toMatchObject({
      provider: "custom",
      baseUrl: "http://127.0.0.1:8000/v1",
      model: "served-7b",
      envWrites: [{ name: "CUSTOM_API_KEY", value: "srv-key" }],
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the reference as config.yaml holds it
      apiKeyRef: "${CUSTOM_API_KEY}",
    });
    expect(plan.runtime.apiKey).toBe("srv-key");
    expect(p.said).toContain("The server wants a key.");
  });

  it("LM Studio: the key is its own LM_API_KEY, with no reference in config.yaml", async () => {
    const p = scriptedPrompter(["lmstudio", "", "lm-key", ""]);
    const plan = await askModelPlan(flowContext(bearerFetch("lm-key")), p);
    expect(plan).toMatchObject({
      provider: "lmstudio",
      envWrites: [{ name: "LM_API_KEY", value: "lm-key" }],
    });
    expect(plan.apiKeyRef).toBeUndefined();
    expect(plan.runtime.apiKey).toBe("lm-key");
  });
});
