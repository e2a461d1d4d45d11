import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Message } from "../../../src/ai/types.js";
import { INSERT_ROWS_MAX } from "../../../src/state/history.js";
import { SessionStoreError } from "../../../src/state/types.js";
import { rawDb, useTempStores } from "./helpers.js";

const { dir, open } = useTempStores();

const INDEXES = ["messages_fts", "messages_fts_trigram"] as const;

function setup() {
  const path = join(dir(), "state.db");
  const store = open(path);
  const session = store.createSession({ source: "cli" });
  const db = rawDb(path, { readonly: true });
  /** Index segments of each full-text table (what every flush of pending rows adds). */
  const segments = () =>
    INDEXES.map((t) => Number(db.prepare(`SELECT COUNT(DISTINCT segid) FROM ${t}_idx`).pluck().get()));
  const matches = (table: (typeof INDEXES)[number], query: string) =>
    db
      .prepare(`SELECT rowid FROM ${table} WHERE ${table} MATCH ? ORDER BY rowid`)
      .pluck()
      .all(query)
      .map(Number);
  const row = () =>
    db
      .prepare(
        "SELECT message_count, tool_call_count, api_call_count, input_tokens FROM sessions WHERE id = ?",
      )
      .get(session.id) as Record<string, number>;
  return { store, session, db, segments, matches, row };
}

const call = (i: number) => ({
  id: `call_${i}`,
  type: "function" as const,
  function: { name: "todo", arguments: `{"step":"marker${i}"}` },
});

describe("appending several messages in one write", () => {
  it("adds one segment to each full-text index per write, with every message searchable in both", () => {
    const { store, session, segments, matches, db } = setup();
    try {
      expect(segments()).toEqual([0, 0]);
      const ids = store.appendMessages(session.id, [
        { role: "assistant", content: null, tool_calls: [call(1)], finish_reason: "tool_calls" },
        { role: "tool", tool_call_id: "call_1", name: "todo", content: "zebrafish result" },
        { role: "user", content: "quokka question" },
      ]);
      // One statement for the three rows: their index entries are written out together at the commit.
      expect(segments()).toEqual([1, 1]);
      store.appendMessage(session.id, { role: "assistant", content: "wombat answer" });
      expect(segments()).toEqual([2, 2]);
      expect(matches("messages_fts", "marker1")).toEqual([ids[0]]);
      expect(matches("messages_fts", "zebrafish")).toEqual([ids[1]]);
      expect(matches("messages_fts_trigram", "okka")).toEqual([ids[2]]);
      expect(matches("messages_fts_trigram", "ombat")).toHaveLength(1);
    } finally {
      db.close();
    }
  });

  it("returns ids in message order past one statement's rows, and stores every message in that order", () => {
    const { store, session, matches, row, db } = setup();
    try {
      const count = INSERT_ROWS_MAX * 2 + 5;
      const messages: Message[] = Array.from({ length: count }, (_, i) =>
        i % 2 === 0
          ? { role: "assistant", content: null, tool_calls: [call(i)], finish_reason: "tool_calls" }
          : { role: "tool", tool_call_id: `call_${i - 1}`, name: "todo", content: `result number${i}` },
      );
      const ids = store.appendMessages(session.id, messages, { usage: { inputTokens: 7, outputTokens: 1 } });
      expect(ids).toHaveLength(count);
      expect([...ids].sort((a, b) => a - b)).toEqual(ids);
      expect(new Set(ids).size).toBe(count);
      const stored = store.getMessages(session.id);
      expect(stored.map((m) => m.id)).toEqual(ids);
      expect(stored.map((m) => m.content)).toEqual(messages.map((m) => m.content));
      expect(stored.map((m) => m.toolCalls?.[0]?.id ?? null)).toEqual(
        messages.map((m) => m.tool_calls?.[0]?.id ?? null),
      );
      expect(row()).toEqual({
        message_count: count,
        tool_call_count: Math.ceil(count / 2),
        api_call_count: 1,
        input_tokens: 7,
      });
      expect(matches("messages_fts", `number${count - 2}`)).toEqual([ids[count - 2]]);
      expect(matches("messages_fts", `marker${count - 1}`)).toEqual([ids[count - 1]]);
      expect(matches("messages_fts_trigram", "marker0")).toEqual([ids[0]]);
    } finally {
      db.close();
    }
  });

  it("adds the call's usage in the same write: tokens, cost, the worse cost status, source and pricing", () => {
    const { store, session, db } = setup();
    db.close();
    const pair: Message[] = [
      { role: "assistant", content: null, tool_calls: [call(1)], finish_reason: "tool_calls" },
      { role: "tool", tool_call_id: "call_1", name: "todo", content: "done" },
    ];
    store.appendMessages(session.id, pair, {
      usage: {
        inputTokens: 10,
        outputTokens: 2,
        costUsd: 0.25,
        costStatus: "actual",
        costSource: "provider",
      },
    });
    store.appendMessages(session.id, [{ role: "user", content: "next" }], {
      usage: { inputTokens: 5, outputTokens: 1, costUsd: 0.5, costStatus: "estimated", pricingVersion: "p2" },
    });
    store.appendMessages(session.id, [{ role: "assistant", content: "free" }], {
      usage: { inputTokens: 1, outputTokens: 1, costStatus: "included" },
    });
    expect(store.getSession(session.id)).toMatchObject({
      messageCount: 4,
      toolCallCount: 1,
      apiCallCount: 3,
      inputTokens: 16,
      outputTokens: 4,
      estimatedCostUsd: 0.75,
      costStatus: "estimated",
      costSource: "provider",
      pricingVersion: "p2",
    });
  });

  it("writes nothing (no row, no count, no usage, no index entry) when one message of the write is invalid", () => {
    const { store, session, segments, row, db } = setup();
    try {
      store.appendMessages(session.id, [{ role: "user", content: "kept first" }], {
        usage: { inputTokens: 3, outputTokens: 0 },
      });
      const before = row();
      const bad = { role: "wizard", content: "conjured" } as unknown as Message;
      expect(() =>
        store.appendMessages(session.id, [{ role: "user", content: "lost too" }, bad], {
          usage: { inputTokens: 100, outputTokens: 0 },
        }),
      ).toThrow(SessionStoreError);
      expect(row()).toEqual(before);
      expect(store.getMessages(session.id).map((m) => m.content)).toEqual(["kept first"]);
      expect(segments()).toEqual([1, 1]);
      expect(
        db.prepare("SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH 'lost'").pluck().get(),
      ).toBe(0);
    } finally {
      db.close();
    }
  });

  it("refuses a write to a missing session with not_found and adds nothing", () => {
    const { store, db } = setup();
    try {
      let caught: unknown;
      try {
        store.appendMessages("no-such-session", [{ role: "user", content: "orphan" }], {
          usage: { inputTokens: 1, outputTokens: 0 },
        });
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(SessionStoreError);
      expect((caught as SessionStoreError).code).toBe("not_found");
      expect(db.prepare("SELECT COUNT(*) FROM messages").pluck().get()).toBe(0);
    } finally {
      db.close();
    }
  });
});
