import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Message } from "../../../src/ai/types.js";
import { openSqliteStore, sessionStorePath } from "../../../src/state/sqlite-store.js";
import { manualClock, rawDb, useTempStores } from "./helpers.js";

const { dir, open, track } = useTempStores();

const shapes: Array<[string, Message]> = [
  ["plain text", { role: "user", content: "Hello, Hermes" }],
  [
    "multimodal parts",
    {
      role: "user",
      content: [
        { type: "text", text: "What is in this picture?" },
        { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
      ],
    },
  ],
  [
    "assistant calling tools, no text",
    {
      role: "assistant",
      content: null,
      tool_calls: [
        { id: "call_1", type: "function", function: { name: "terminal", arguments: '{"command":"ls -la"}' } },
        { id: "call_2", type: "function", function: { name: "read_file", arguments: '{"path":"a.ts"}' } },
      ],
      finish_reason: "tool_calls",
    },
  ],
  [
    "tool result",
    {
      role: "tool",
      content: '{"output":"a.ts\\nb.ts","exit_code":0}',
      tool_call_id: "call_1",
      name: "terminal",
    },
  ],
  [
    "reasoning",
    { role: "assistant", content: "Done.", reasoning: "The user wants a listing.", finish_reason: "stop" },
  ],
  [
    "Anthropic thinking blocks with signatures",
    {
      role: "assistant",
      content: "Checked.",
      reasoning: "Look at the file first.",
      reasoning_details: [
        { type: "thinking", thinking: "Look at the file first.", signature: "EqQBCkgIBxABGAIiQ..." },
        { type: "redacted_thinking", data: "EmwKAhgBEgy3va..." },
      ],
      finish_reason: "stop",
    },
  ],
  [
    "Responses reasoning items",
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "call_9", type: "function", function: { name: "terminal", arguments: "{}" } }],
      codex_reasoning_items: [{ type: "reasoning", id: "rs_1", encrypted_content: "gAAAA...", summary: [] }],
      finish_reason: "tool_calls",
    },
  ],
  ["system", { role: "system", content: "You are Hermes." }],
  ["unicode", { role: "user", content: "naïve café — 今天天气很好 — 😀🎉 — \u0000 nul — \u200b zero width" }],
  ["string that looks like JSON parts", { role: "user", content: '[{"type":"text","text":"not parts"}]' }],
  ["empty string", { role: "assistant", content: "" }],
];

describe("message round trip", () => {
  it.each(shapes)("%s", (_name, message) => {
    const store = open();
    const s = store.createSession({ source: "cli" });
    const id = store.appendMessage(s.id, message);
    const [stored] = store.getMessages(s.id);
    expect(stored?.id).toBe(id);
    expect(store.conversation(s.id)).toEqual([message]);
    // No undefined-valued keys: what the agent sends is exactly what was stored.
    for (const value of Object.values(store.conversation(s.id)[0]!)) expect(value).not.toBeUndefined();
  });

  it("keeps 1 MB of content intact", () => {
    const store = open();
    const s = store.createSession({ source: "cli" });
    const big = "x".repeat(512 * 1024) + "🎉".repeat(128 * 1024);
    store.appendMessage(s.id, { role: "tool", content: big, tool_call_id: "c", name: "read_file" });
    expect(store.conversation(s.id)[0]?.content).toBe(big);
  });

  it("stores columns as Python Hermes does (JSON text, Python's content prefix, REAL timestamps)", () => {
    const d = dir();
    const path = join(d, "state.db");
    const store = track(openSqliteStore(path));
    const s = store.createSession({ source: "cli", modelConfig: { temperature: 0.2 } });
    store.appendMessages(
      s.id,
      shapes.map(([, m]) => m),
    );
    store.close();
    const db = rawDb(path, { readonly: true });
    const rows = db
      .prepare("SELECT role, content, tool_calls, typeof(timestamp) AS t FROM messages ORDER BY id")
      .all() as Array<{
      role: string;
      content: string | null;
      tool_calls: string | null;
      t: string;
    }>;
    expect(rows.every((r) => r.t === "real")).toBe(true);
    expect(rows[1]?.content?.startsWith("\u0000json:[")).toBe(true);
    expect(JSON.parse(rows[2]!.tool_calls!)).toHaveLength(2);
    const session = db.prepare("SELECT model_config, typeof(started_at) AS t FROM sessions").get() as {
      model_config: string;
      t: string;
    };
    expect(JSON.parse(session.model_config)).toEqual({ temperature: 0.2 });
    expect(session.t).toBe("real");
    db.close();
  });

  it("reads Python's newer \\x01json: content prefix and leaves unreadable JSON as text", () => {
    const path = join(dir(), "state.db");
    const store = track(openSqliteStore(path));
    const s = store.createSession({ source: "cli" });
    const [a, b] = store.appendMessages(s.id, [
      { role: "user", content: "a" },
      { role: "user", content: "b" },
    ]);
    const db = rawDb(path);
    db.prepare("UPDATE messages SET content = ? WHERE id = ?").run(
      '\u0001json:[{"type":"text","text":"hi"}]',
      a,
    );
    db.prepare("UPDATE messages SET content = ? WHERE id = ?").run("\u0000json:{not json", b);
    db.close();
    expect(store.conversation(s.id).map((m) => m.content)).toEqual([
      [{ type: "text", text: "hi" }],
      "{not json",
    ]);
  });

  it("maintains message_count and tool_call_count on append", () => {
    const store = open();
    const s = store.createSession({ source: "cli" });
    store.appendMessages(
      s.id,
      shapes.map(([, m]) => m),
    );
    const after = store.getSession(s.id)!;
    expect(after.messageCount).toBe(shapes.length);
    expect(after.toolCallCount).toBe(3);
  });

  it("orders messages by time, and never lets a clock that steps back reorder a turn", () => {
    const clock = manualClock(2_000_000);
    const store = open(undefined, { now: clock.now });
    const s = store.createSession({ source: "cli" });
    store.appendMessage(s.id, { role: "user", content: "first" });
    clock.advance(-3600);
    store.appendMessage(s.id, { role: "assistant", content: "second" });
    expect(store.conversation(s.id).map((m) => m.content)).toEqual(["first", "second"]);
    const ts = store.getMessages(s.id).map((m) => m.timestamp);
    expect(ts[1]).toBeGreaterThanOrEqual(ts[0]!);
  });

  it("takes an explicit timestamp and token count", () => {
    const store = open();
    const s = store.createSession({ source: "cli" });
    store.appendMessage(s.id, { role: "user", content: "hi" }, { timestamp: 1234.5, tokenCount: 7 });
    expect(store.getMessages(s.id)[0]).toMatchObject({ timestamp: 1234.5, tokenCount: 7 });
  });

  it("records usage: tokens, calls and cost add up", () => {
    const store = open();
    const s = store.createSession({ source: "cli" });
    store.recordUsage(s.id, { inputTokens: 100, outputTokens: 20, cacheReadTokens: 50, reasoningTokens: 5 });
    store.recordUsage(s.id, {
      inputTokens: 10,
      outputTokens: 2,
      cacheWriteTokens: 3,
      apiCalls: 2,
      costUsd: 0.5,
    });
    store.recordUsage(s.id, { inputTokens: 1, outputTokens: 1, costUsd: 0.25 });
    expect(store.getSession(s.id)).toMatchObject({
      inputTokens: 111,
      outputTokens: 23,
      cacheReadTokens: 50,
      cacheWriteTokens: 3,
      reasoningTokens: 5,
      apiCallCount: 4,
      estimatedCostUsd: 0.75,
    });
  });

  it("leaves estimated cost NULL until a cost is given", () => {
    const store = open();
    const s = store.createSession({ source: "cli" });
    store.recordUsage(s.id, { inputTokens: 1, outputTokens: 1 });
    expect(store.getSession(s.id)?.estimatedCostUsd).toBeNull();
  });

  it("appendMessages writes all or nothing", () => {
    const store = open();
    const s = store.createSession({ source: "cli" });
    const bad = { role: "user", content: { not: "valid" } } as unknown as Message;
    expect(() => store.appendMessages(s.id, [{ role: "user", content: "ok" }, bad])).toThrow();
    expect(store.getMessages(s.id)).toEqual([]);
    expect(store.getSession(s.id)?.messageCount).toBe(0);
  });

  it("is durable once appendMessage returns: another connection sees it at once", () => {
    const d = dir();
    const store = track(openSqliteStore(sessionStorePath(d)));
    const s = store.createSession({ source: "cli" });
    store.appendMessage(s.id, { role: "user", content: "persisted" });
    const other = track(openSqliteStore(sessionStorePath(d), { readonly: true }));
    expect(other.conversation(s.id)).toEqual([{ role: "user", content: "persisted" }]);
    const db = rawDb(sessionStorePath(d), { readonly: true });
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    db.close();
  });
});
