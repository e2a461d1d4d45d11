import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AIAgent } from "../../../src/agent/agent.js";
import type { AgentEvent } from "../../../src/agent/events.js";
import { CLEARED_STATUS } from "../../../src/config/auth-store.js";
import { defaultConfig, type HermesConfig } from "../../../src/config/defaults.js";
import { type FakeLlm, httpError, reply, startFakeLlm } from "../../support/fake-llm.js";

let llm: FakeLlm;
let backup: FakeLlm;
beforeAll(async () => {
  llm = await startFakeLlm();
  backup = await startFakeLlm();
});
afterAll(async () => {
  await llm.close();
  await backup.close();
});
beforeEach(() => {
  for (const server of [llm, backup]) {
    server.requests.length = 0;
    server.chatRequests.length = 0;
  }
});

function home(): string {
  return mkdtempSync(join(tmpdir(), "hermes-recovery-"));
}

function writePool(dir: string, provider: string, keys: string[]): void {
  const entries = keys.map((key, priority) => ({
    id: `k${priority}`,
    label: `k${priority}`,
    auth_type: "api_key",
    priority,
    source: "manual",
    access_token: key,
    ...CLEARED_STATUS,
    request_count: 0,
  }));
  const data = { version: 1, providers: {}, credential_pool: { [provider]: entries } };
  writeFileSync(join(dir, "auth.json"), `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
}

function agentFor(dir: string, config: HermesConfig, env: Record<string, string>, extra = {}) {
  const events: AgentEvent[] = [];
  const agent = new AIAgent({
    home: dir,
    cwd: dir,
    config,
    env,
    toolsets: [],
    systemPrompt: "You are a test.",
    retry: { baseMs: 1, capMs: 5 },
    ...extra,
  });
  agent.on((e) => events.push(e));
  const warnings = () =>
    events
      .filter((e): e is Extract<AgentEvent, { type: "warning" }> => e.type === "warning")
      .map((e) => e.message);
  return { agent, warnings };
}

function openrouterAt(url: string): HermesConfig {
  const config = defaultConfig();
  config.model = { ...config.model, provider: "openrouter", base_url: url, default: "primary-model" };
  return config;
}

describe("AIAgent credential rotation", () => {
  it("moves to the pool's second key after a 401, marks the first exhausted, keeps the new key", async () => {
    const dir = home();
    writePool(dir, "openrouter", ["sk-second-key-0000000000"]);
    llm.enqueue(httpError(401, { error: { message: "invalid api key" } }), reply().text("hello"));
    llm.enqueue(reply().text("again"));
    const { agent, warnings } = agentFor(dir, openrouterAt(llm.url), {
      OPENROUTER_API_KEY: "sk-first-key-00000000000",
    });
    expect(await agent.chat("hi")).toBe("hello");
    const auth = llm.chatRequests.map((r) => r.headers["authorization"]);
    expect(auth).toEqual(["Bearer sk-first-key-00000000000", "Bearer sk-second-key-0000000000"]);
    expect(warnings().some((w) => w.includes("next credential"))).toBe(true);
    // The next turn keeps the working key.
    expect(await agent.chat("more")).toBe("again");
    expect(llm.chatRequests[2]?.headers["authorization"]).toBe("Bearer sk-second-key-0000000000");
    const stored = JSON.parse(readFileSync(join(dir, "auth.json"), "utf8")).credential_pool.openrouter;
    expect(JSON.stringify(stored)).toContain("exhausted");
    await agent.close();
  });

  it("needs two usable keys: with one a 401 ends the turn", async () => {
    const dir = home();
    llm.enqueue(httpError(401, { error: { message: "invalid api key" } }));
    const { agent } = agentFor(dir, openrouterAt(llm.url), {
      OPENROUTER_API_KEY: "sk-only-key-000000000000",
    });
    const result = await agent.run("hi").result;
    expect(result.reason).toBe("error");
    expect(llm.chatRequests).toHaveLength(1);
    await agent.close();
  });

  it("an explicit apiKey means no pool", async () => {
    const dir = home();
    writePool(dir, "openrouter", ["sk-second-key-0000000000"]);
    llm.enqueue(httpError(401, { error: { message: "invalid api key" } }));
    const { agent } = agentFor(dir, openrouterAt(llm.url), {}, { apiKey: "sk-explicit-key-00000000" });
    expect((await agent.run("hi").result).reason).toBe("error");
    expect(llm.chatRequests).toHaveLength(1);
    await agent.close();
  });
});

describe("AIAgent provider fallback", () => {
  it("switches to fallback_providers on a 402 for the rest of the turn, then starts on the primary again", async () => {
    const dir = home();
    const config = openrouterAt(llm.url);
    config["fallback_providers"] = [{ provider: "custom", model: "backup-model", base_url: backup.url }];
    llm.enqueue(httpError(402, { error: { message: "Insufficient credits" } }), reply().text("primary back"));
    backup.enqueue(reply().text("from backup"));
    const { agent, warnings } = agentFor(dir, config, { OPENROUTER_API_KEY: "sk-primary-key-000000000" });
    expect(await agent.chat("hi")).toBe("from backup");
    expect(llm.chatRequests).toHaveLength(1);
    const sent = backup.chatRequests[0];
    expect((sent?.body as { model?: string } | undefined)?.model).toBe("backup-model");
    // The primary's key never travels to the fallback's endpoint.
    expect(sent?.headers["authorization"]).toBeUndefined();
    const warning = warnings().find((w) => w.includes("fallback")) ?? "";
    expect(warning).toContain("openrouter (primary-model)");
    expect(warning).toContain("custom (backup-model)");
    expect(await agent.chat("again")).toBe("primary back");
    expect(llm.chatRequests).toHaveLength(2);
    await agent.close();
  });

  it("prices the fallback's usage as the fallback model's", async () => {
    const dir = home();
    const config = openrouterAt(llm.url);
    config["fallback_providers"] = [{ provider: "custom", model: "backup-model", base_url: backup.url }];
    llm.enqueue(httpError(402, { error: { message: "Insufficient credits" } }));
    backup.enqueue(reply().text("from backup").usage({ prompt: 1_000_000, completion: 0 }));
    const { agent } = agentFor(dir, config, { OPENROUTER_API_KEY: "sk-primary-key-000000000" });
    const billed: unknown[] = [];
    agent.on((e) => {
      if (e.type === "usage") billed.push(e.billing);
    });
    expect(await agent.chat("hi")).toBe("from backup");
    expect(billed).toEqual([{ model: "backup-model", provider: "custom", baseUrl: backup.url }]);
    await agent.close();
  });

  it("accepts the legacy fallback_model", async () => {
    const dir = home();
    const config = openrouterAt(llm.url);
    config["fallback_model"] = { provider: "custom", model: "legacy-model", base_url: backup.url };
    llm.enqueue(httpError(404, { error: { message: "model not found" } }));
    backup.enqueue(reply().text("legacy"));
    const { agent } = agentFor(dir, config, { OPENROUTER_API_KEY: "sk-primary-key-000000000" });
    expect(await agent.chat("hi")).toBe("legacy");
    await agent.close();
  });
});
