import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ChatSession } from "../../../src/agent/chat-session.js";
import { sessionRecorder } from "../../../src/agent/session-recorder.js";
import { PRICING_VERSION } from "../../../src/ai/pricing.js";
import { formatUsage } from "../../../src/cli/tui/info.js";
import { createStyle } from "../../../src/cli/tui/style.js";
import { defaultConfig } from "../../../src/config/defaults.js";
import { openSessionStore, type SqliteSessionStore } from "../../../src/state/sqlite-store.js";
import type { SessionStore, SqliteSessionStoreHandle } from "../../../src/state/types.js";
import { ScriptedTransport, say } from "../../support/scripted-transport.js";

const stores: SqliteSessionStore[] = [];
const sessions: ChatSession[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) await s.close();
  for (const s of stores.splice(0)) await s.close();
});

/** `store` for the code under test; `db`, its synchronous engine, for looking at what was written. */
function setup(): { store: SqliteSessionStore; db: SqliteSessionStoreHandle; cwd: string; home: string } {
  const root = mkdtempSync(join(tmpdir(), "hermes-session-cost-"));
  const cwd = join(root, "work");
  const home = join(root, "home");
  mkdirSync(cwd);
  mkdirSync(home);
  const store = openSessionStore(join(home, "state.db"));
  stores.push(store);
  return { store, db: store.engine, cwd, home };
}

async function open(
  transport: ScriptedTransport,
  env: { store: SessionStore | null; cwd: string; home: string },
  extra: Partial<Parameters<typeof ChatSession.open>[0]> = {},
): Promise<ChatSession> {
  const session = await ChatSession.open({
    transport,
    cwd: env.cwd,
    home: env.home,
    env: {},
    toolsets: [],
    store: env.store,
    ...extra,
  });
  sessions.push(session);
  return session;
}

// 2,000 uncached + 6,000 cache read + 2,000 cache write, 1,000 out.
const CACHED_USAGE = {
  inputTokens: 10_000,
  cacheReadTokens: 6_000,
  cacheWriteTokens: 2_000,
  outputTokens: 1_000,
};
const SONNET_COST = 0.0303; // 2k × $3 + 6k × $0.30 + 2k × $3.75 + 1k × $15, per million
const GPT4O_COST = 0.0275; // 2k × $2.50 + 6k × $1.25 + 2k × $2.50 + 1k × $10, per million

function scripted(replies: number): ScriptedTransport {
  const transport = new ScriptedTransport(Array.from({ length: replies }, (_, i) => say(`reply ${i}`)));
  transport.usage = CACHED_USAGE;
  return transport;
}

describe("session cost", () => {
  it("records the estimated cost of each model call on the session row", async () => {
    const env = setup();
    const session = await open(scripted(1), env, { model: "anthropic/claude-sonnet-4-20250514" });
    await session.run("hello").result;
    const row = env.db.getSession(session.id);
    expect(row).toMatchObject({
      costStatus: "estimated",
      costSource: "official_docs_snapshot",
      pricingVersion: PRICING_VERSION,
    });
    expect(row?.estimatedCostUsd).toBeCloseTo(SONNET_COST, 12);
    const report = await session.usageReport();
    expect(report.costStatus).toBe("estimated");
    expect(report.costUsd).toBeCloseTo(SONNET_COST, 12);
    expect(formatUsage(report, createStyle(false)).join("\n")).toMatch(/Cost\s+\$0\.0303 \(estimated\)$/m);
  });

  it("keeps adding after a resume, and prices usage after /model at the new model", async () => {
    const env = setup();
    const first = await open(scripted(1), env, { model: "claude-sonnet-4" });
    await first.run("one").result;
    const id = first.id;
    await first.close();
    sessions.splice(sessions.indexOf(first), 1);

    const resumed = await open(scripted(2), env, { model: "claude-sonnet-4", resume: id });
    await resumed.run("two").result;
    expect(env.db.getSession(id)?.estimatedCostUsd).toBeCloseTo(2 * SONNET_COST, 12);

    await resumed.setModel("openai/gpt-4o");
    await resumed.run("three").result;
    const row = env.db.getSession(id);
    expect(row?.model).toBe("openai/gpt-4o");
    expect(row?.estimatedCostUsd).toBeCloseTo(2 * SONNET_COST + GPT4O_COST, 12);
    expect(row?.apiCallCount).toBe(3);
    expect((await resumed.usageReport()).costUsd).toBeCloseTo(2 * SONNET_COST + GPT4O_COST, 12);
  });

  it("says the cost is unknown for a model without a price, and marks a later total as a floor", async () => {
    const env = setup();
    const session = await open(scripted(2), env, { model: "house-model" });
    await session.run("hi").result;
    expect(env.db.getSession(session.id)).toMatchObject({ estimatedCostUsd: null, costStatus: "unknown" });
    const text = async () => formatUsage(await session.usageReport(), createStyle(false)).join("\n");
    expect(await text()).toMatch(/Cost\s+cost unknown for house-model$/m);

    await session.setModel("claude-sonnet-4");
    await session.run("again").result;
    expect(env.db.getSession(session.id)?.costStatus).toBe("unknown");
    expect(await text()).toMatch(/Cost\s+\$0\.0303\+ \(some usage has no known price\)$/m);
  });

  it("uses config.yaml pricing before the catalog and warns about entries it cannot read", async () => {
    const env = setup();
    const warnings: string[] = [];
    const config = {
      ...defaultConfig(),
      pricing: { "house-model": { input: 1, output: 2 }, broken: { input: "lots", output: 1 } },
    };
    const transport = new ScriptedTransport([say("ok")]);
    const session = await open(transport, env, {
      model: "house-model",
      config,
      onWarning: (m) => warnings.push(m),
    });
    await session.run("hi").result;
    const row = env.db.getSession(session.id);
    // default scripted usage: 10 in × $1 + 5 out × $2, per million
    expect(row?.estimatedCostUsd).toBeCloseTo(20e-6, 15);
    expect(row).toMatchObject({ costStatus: "estimated", costSource: "user_override" });
    expect(warnings).toEqual([expect.stringMatching(/pricing\.broken\.input: .*"lots".*ignored/)]);
  });

  it("keeps the cost in memory when sessions are not recorded", async () => {
    const env = { ...setup(), store: null };
    const session = await open(scripted(2), env, { model: "claude-sonnet-4" });
    await session.run("a").result;
    await session.run("b").result;
    const report = await session.usageReport();
    expect(report.costStatus).toBe("estimated");
    expect(report.costUsd).toBeCloseTo(2 * SONNET_COST, 12);
  });
});

describe("sessionRecorder pricing routes", () => {
  async function record(options: { billingProvider?: string; billingBaseUrl?: string; model: string }) {
    const env = setup();
    const listener = sessionRecorder({ store: env.store, source: "cli", cwd: env.cwd, ...options });
    await listener({
      type: "session_start",
      sessionId: "s1",
      model: options.model,
      systemPrompt: "sys",
      tools: [],
    });
    await listener({ type: "turn_start", iteration: 1 });
    await listener({ type: "usage", usage: CACHED_USAGE, total: CACHED_USAGE });
    // The usage is written with the call's assistant message, or at the end of the call without one.
    await listener({ type: "turn_end", iteration: 1, finishReason: "stop" });
    return env.db.getSession("s1");
  }

  it("records a local endpoint as included at no cost", async () => {
    expect(
      await record({
        model: "llama3.1:8b",
        billingProvider: "custom",
        billingBaseUrl: "http://127.0.0.1:11434/v1",
      }),
    ).toMatchObject({
      estimatedCostUsd: 0,
      costStatus: "included",
      pricingVersion: "local",
      costSource: null,
    });
  });

  it("prices an OpenRouter model id at its vendor's list price", async () => {
    const row = await record({
      model: "anthropic/claude-sonnet-4",
      billingProvider: "openrouter",
      billingBaseUrl: "https://openrouter.ai/api/v1",
    });
    expect(row?.estimatedCostUsd).toBeCloseTo(SONNET_COST, 12);
    expect(row?.billingProvider).toBe("openrouter");
  });

  it("prices a :free variant at zero", async () => {
    const row = await record({
      model: "meta-llama/llama-3.3-70b-instruct:free",
      billingProvider: "openrouter",
    });
    expect(row).toMatchObject({ estimatedCostUsd: 0, costStatus: "estimated" });
  });
});

describe("sessionRecorder usage and messages", () => {
  /** A store that counts its write transactions (each appendMessage or recordUsage is one). */
  async function counted() {
    const env = setup();
    const writes: string[] = [];
    const store = new Proxy(env.store, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver) as unknown;
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          if (name === "appendMessage" || name === "recordUsage" || name === "startSession")
            writes.push(String(name));
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const listener = sessionRecorder({ store, source: "cli", cwd: env.cwd });
    await listener({
      type: "session_start",
      sessionId: "s1",
      model: "gpt-4o",
      systemPrompt: "sys",
      tools: [],
    });
    return { env, writes, listener };
  }

  it("saves a call's usage in the same write as its assistant message, and only once", async () => {
    const { env, writes, listener } = await counted();
    await listener({ type: "turn_start", iteration: 1 });
    await listener({ type: "usage", usage: CACHED_USAGE, total: CACHED_USAGE });
    await listener({ type: "message", message: { role: "assistant", content: "hi" } });
    // The session's first message: its row, the message and the usage in one write.
    expect(writes).toEqual(["startSession"]);
    // Both are on disk before the next step: a crash after this loses neither.
    expect(env.db.getSession("s1")).toMatchObject({
      inputTokens: 10_000,
      outputTokens: 1_000,
      apiCallCount: 1,
    });
    expect(env.db.getMessages("s1").map((m) => m.content)).toEqual(["hi"]);
    await listener({ type: "turn_end", iteration: 1, finishReason: "stop" });
    expect(writes).toEqual(["startSession"]);
    expect(env.db.getSession("s1")).toMatchObject({ inputTokens: 10_000, apiCallCount: 1 });
    await listener({ type: "turn_start", iteration: 2 });
    await listener({ type: "usage", usage: CACHED_USAGE, total: CACHED_USAGE });
    await listener({ type: "message", message: { role: "assistant", content: "again" } });
    expect(writes).toEqual(["startSession", "appendMessage"]);
    expect(env.db.getSession("s1")).toMatchObject({ inputTokens: 20_000, apiCallCount: 2 });
  });

  it("writes a new session's row with its first message, in one transaction", async () => {
    const { env, listener } = await counted();
    // Nothing is written until there is a message to write with the row.
    expect(env.db.getSession("s1")).toBeNull();
    await listener({ type: "message", message: { role: "user", content: "first words" } });
    expect(env.db.getSession("s1")).toMatchObject({ source: "cli", model: "gpt-4o", messageCount: 1 });
    expect(env.db.getMessages("s1").map((m) => m.content)).toEqual(["first words"]);
  });

  it("still writes the row when the turn ends before any message", async () => {
    const { env, listener } = await counted();
    await listener({ type: "done", reason: "error", text: "", usage: CACHED_USAGE } as never);
    expect(env.db.getSession("s1")).toMatchObject({ source: "cli", model: "gpt-4o", messageCount: 0 });
  });

  it("keeps the row and tells the failure when the first message cannot be saved", async () => {
    const errors: string[] = [];
    const env = setup();
    const listener = sessionRecorder({
      store: env.store,
      source: "cli",
      cwd: env.cwd,
      onError: (m) => errors.push(m),
    });
    await listener({
      type: "session_start",
      sessionId: "s9",
      model: "gpt-4o",
      systemPrompt: "sys",
      tools: [],
    });
    await listener({ type: "message", message: { role: "user", content: 42 } as never });
    expect(env.db.getSession("s9")).toMatchObject({ source: "cli", messageCount: 0 });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/Could not save a message/);
    await listener({ type: "message", message: { role: "user", content: "retry" } });
    expect(env.db.getMessages("s9").map((m) => m.content)).toEqual(["retry"]);
  });

  it("counts a call without usage with its message, and a call without a message at its end", async () => {
    const { env, listener } = await counted();
    await listener({ type: "turn_start", iteration: 1 });
    await listener({ type: "message", message: { role: "assistant", content: "no usage reported" } });
    await listener({ type: "turn_end", iteration: 1, finishReason: "stop" });
    await listener({ type: "turn_start", iteration: 2 });
    await listener({ type: "usage", usage: CACHED_USAGE, total: CACHED_USAGE });
    await listener({ type: "turn_end", iteration: 2, finishReason: "error" });
    expect(env.db.getSession("s1")).toMatchObject({ inputTokens: 10_000, apiCallCount: 2 });
  });

  it("keeps every report when a call reports usage twice, and never puts usage on a tool result", async () => {
    const { env, writes, listener } = await counted();
    await listener({ type: "turn_start", iteration: 1 });
    await listener({ type: "usage", usage: CACHED_USAGE, total: CACHED_USAGE });
    await listener({ type: "usage", usage: CACHED_USAGE, total: CACHED_USAGE });
    await listener({
      type: "message",
      message: {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "todo", arguments: "{}" } }],
      },
    });
    await listener({ type: "turn_end", iteration: 1, finishReason: "tool_calls" });
    await listener({ type: "message", message: { role: "tool", tool_call_id: "c1", content: "ok" } });
    expect(writes).toEqual(["recordUsage", "appendMessage", "appendMessage"]);
    expect(env.db.getSession("s1")).toMatchObject({
      inputTokens: 20_000,
      outputTokens: 2_000,
      apiCallCount: 1,
    });
  });

  it("still saves the usage when the message cannot be saved", async () => {
    const { env, listener } = await counted();
    await listener({ type: "turn_start", iteration: 1 });
    await listener({ type: "usage", usage: CACHED_USAGE, total: CACHED_USAGE });
    // Not a valid message for the store: its write fails, the usage gets one of its own.
    await listener({ type: "message", message: { role: "assistant", content: 42 } as never });
    expect(env.db.getSession("s1")).toMatchObject({ inputTokens: 10_000, apiCallCount: 1 });
  });
});
