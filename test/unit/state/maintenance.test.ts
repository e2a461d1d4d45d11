import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Message } from "../../../src/ai/types.js";
import { openSqliteStore } from "../../../src/state/sqlite-store.js";
import { manualClock, rawDb, useTempStores } from "./helpers.js";

const { dir, open, track } = useTempStores();
const DAY = 86_400;

let callNumber = 0;
const toolTurn = (q: string, tool: string): Message[] => {
  const id = `call_${++callNumber}`;
  return [
    { role: "user", content: q },
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id, type: "function", function: { name: tool, arguments: "{}" } }],
    },
    { role: "tool", content: "ok", tool_call_id: id, name: tool },
    { role: "assistant", content: `answer to ${q}` },
  ];
};

describe("delete and prune", () => {
  it("deletes a session with its messages and search rows; children live on", () => {
    const store = open();
    const parent = store.createSession({ source: "cli", title: "p" });
    store.appendMessages(parent.id, toolTurn("zebra", "terminal"));
    const child = store.branchSession(parent.id);
    expect(store.deleteSession(parent.id)).toEqual({ messages: 4 });
    expect(store.getSession(parent.id)).toBeNull();
    expect(store.getSession(child.id)?.parentSessionId).toBeNull();
    expect(new Set(store.search({ query: "zebra" }).map((h) => h.sessionId))).toEqual(new Set([child.id]));
    expect(store.check().problems).toEqual([]);
  });

  it("prunes only ended sessions whose start, end and last activity are all past the cutoff", () => {
    const clock = manualClock(1_800_000_000);
    const store = open(undefined, { now: clock.now });
    const at = (daysAgo: number) => clock.set(1_800_000_000 - daysAgo * DAY);
    at(200);
    const oldEnded = store.createSession({ source: "cli" });
    store.appendMessages(oldEnded.id, toolTurn("a", "x"));
    store.endSession(oldEnded.id, "user_exit");
    const oldOpen = store.createSession({ source: "cli" });
    store.appendMessages(oldOpen.id, toolTurn("b", "x"));
    const oldResumed = store.createSession({ source: "cli" });
    store.endSession(oldResumed.id, "user_exit");
    const oldTelegram = store.createSession({ source: "telegram" });
    store.endSession(oldTelegram.id, "idle");
    const oldParent = store.createSession({ source: "cli", title: "parent" });
    store.endSession(oldParent.id, "branched");
    at(5);
    store.appendMessages(oldResumed.id, toolTurn("c", "x"));
    const youngChild = store.branchSession(oldParent.id);
    const young = store.createSession({ source: "cli" });
    store.endSession(young.id, "user_exit");
    at(0);

    const candidates = store.prunable({ olderThanDays: 90 }).map((s) => s.id);
    expect(candidates.sort()).toEqual([oldEnded.id, oldParent.id, oldTelegram.id].sort());
    expect(store.prunable({ olderThanDays: 90, source: "telegram" }).map((s) => s.id)).toEqual([
      oldTelegram.id,
    ]);
    expect(store.prune({ olderThanDays: 90, source: "telegram" })).toEqual({ sessions: 1, messages: 0 });
    expect(store.prune({ olderThanDays: 90 })).toEqual({ sessions: 2, messages: 4 });
    expect(store.getSession(youngChild.id)?.parentSessionId).toBeNull();
    for (const kept of [oldOpen, oldResumed, young, youngChild])
      expect(store.getSession(kept.id)).not.toBeNull();
    expect(() => store.prune({ olderThanDays: -1 })).toThrow(/olderThanDays/);
  });

  it("auto-prunes at most once per interval, across processes sharing the file", () => {
    const clock = manualClock(1_800_000_000);
    const store = open(undefined, { now: clock.now });
    clock.set(1_800_000_000 - 120 * DAY);
    const old = store.createSession({ source: "cli" });
    store.appendMessages(old.id, toolTurn("ancient", "x"));
    store.endSession(old.id, "user_exit");
    clock.set(1_800_000_000);
    const policy = { retentionDays: 90, minIntervalHours: 24, vacuum: true };
    expect(store.autoPrune(policy)).toEqual({ skipped: false, sessions: 1, vacuumed: true });
    expect(store.getSession(old.id)).toBeNull();

    // A second process opening the same file an hour later sees the marker and skips.
    clock.advance(3600);
    const other = track(openSqliteStore(store.path, { now: clock.now }));
    expect(other.autoPrune(policy)).toEqual({ skipped: true, sessions: 0, vacuumed: false });
    clock.advance(24 * 3600);
    expect(other.autoPrune(policy)).toEqual({ skipped: false, sessions: 0, vacuumed: false });
  });
});

describe("export", () => {
  it("streams every session with its messages, one at a time", () => {
    const store = open();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const s = store.createSession({ source: i % 2 ? "telegram" : "cli" });
      store.appendMessages(s.id, toolTurn(`q${i}`, "t"));
      ids.push(s.id);
    }
    store.undoTurns(ids[0]!, 1);
    const iterator = store.exportSessions()[Symbol.iterator]();
    const first = iterator.next();
    expect(first.done).toBe(false);
    if (!first.done) {
      expect(first.value.session.id).toBe(ids[0]);
      expect(first.value.messages.map((m) => m.active)).toEqual([false, false, false, false]);
    }
    const rest = [...{ [Symbol.iterator]: () => iterator }];
    expect(rest.map((e) => e.session.id)).toEqual(ids.slice(1));
    expect([...store.exportSessions({ source: "telegram" })].map((e) => e.session.id)).toEqual([
      ids[1],
      ids[3],
    ]);
    expect([...store.exportSessions({ sessionId: ids[2]! })]).toHaveLength(1);
  });
});

describe("stats, optimize, check and repair", () => {
  it("reports counts, sources, sizes and the schema version", () => {
    const store = open();
    const a = store.createSession({ source: "cli", startedAt: 100 });
    store.createSession({ source: "telegram", startedAt: 200 });
    store.appendMessages(a.id, toolTurn("q", "t"));
    const s = store.stats();
    expect(s).toMatchObject({
      sessions: 2,
      messages: 4,
      bySource: { cli: 1, telegram: 1 },
      fts: true,
      trigram: true,
      schemaVersion: 17,
      oldestStartedAt: 100,
      newestStartedAt: 200,
    });
    expect(s.bytes).toBeGreaterThan(0);
  });

  it("optimizes without losing anything", () => {
    const store = open();
    for (let i = 0; i < 30; i++) {
      const s = store.createSession({ source: "cli" });
      store.appendMessages(s.id, toolTurn(`question${i}`, "t"));
      if (i % 2) store.deleteSession(s.id);
    }
    const result = store.optimize();
    expect(result.bytesBefore).toBeGreaterThan(0);
    expect(result.bytesAfter).toBeGreaterThan(0);
    expect(store.search({ query: "question4" })).toHaveLength(2);
    expect(store.check()).toEqual({ integrity: true, problems: [], fixed: [] });
  });

  it("finds drifted counters and missing FTS rows, and repair fixes them without touching messages", () => {
    const path = join(dir(), "state.db");
    const store = track(openSqliteStore(path));
    const s = store.createSession({ source: "cli" });
    store.appendMessages(s.id, toolTurn("walrus", "terminal"));
    const db = rawDb(path);
    db.prepare("UPDATE sessions SET message_count = 99, tool_call_count = 0").run();
    db.prepare("DELETE FROM messages_fts").run();
    db.prepare("DELETE FROM messages_fts_trigram WHERE rowid > 1").run();
    db.prepare("DROP TRIGGER messages_fts_trigram_insert").run();
    db.close();
    const report = store.check();
    expect(report.integrity).toBe(true);
    expect(report.problems.join("\n")).toMatch(/messages_fts indexes 0 messages but there are 4/);
    expect(report.problems.join("\n")).toMatch(/missing trigger messages_fts_trigram_insert/);
    expect(report.problems.join("\n")).toMatch(/message_count 99, counted 4/);
    expect(report.fixed).toEqual([]);
    // Only the row the trigram index still holds can be found.
    expect(store.search({ query: "walrus" }).map((h) => h.messageId)).toEqual([1]);

    const fixed = store.repair();
    expect(fixed.integrity).toBe(true);
    expect(fixed.problems).toEqual([]);
    expect(fixed.fixed.join("\n")).toMatch(/created trigger messages_fts_trigram_insert/);
    expect(fixed.fixed.join("\n")).toMatch(/rebuilt messages_fts \(/);
    expect(fixed.fixed.join("\n")).toMatch(/rebuilt messages_fts_trigram/);
    expect(fixed.fixed.join("\n")).toMatch(/recomputed counters of 1 session/);
    expect(store.getSession(s.id)).toMatchObject({ messageCount: 4, toolCallCount: 1 });
    expect(store.search({ query: "walrus" })).toHaveLength(2);
    expect(store.search({ query: "alru" })).toHaveLength(2);
    expect(store.getMessages(s.id)).toHaveLength(4);
    expect(store.check()).toEqual({ integrity: true, problems: [], fixed: [] });
  });

  it("check works read-only and changes nothing", () => {
    const path = join(dir(), "state.db");
    const writer = track(openSqliteStore(path));
    writer.appendMessages(writer.createSession({ source: "cli" }).id, toolTurn("q", "t"));
    writer.close();
    const ro = track(openSqliteStore(path, { readonly: true }));
    expect(ro.check()).toEqual({ integrity: true, problems: [], fixed: [] });
    expect(() => ro.repair()).toThrow(/read-only/);
    expect(() => ro.optimize()).toThrow(/read-only/);
  });
});

describe("insights", () => {
  it("sums sessions, messages, tools, models, sources and days in the window", () => {
    const clock = manualClock(new Date(2026, 2, 10, 12).getTime() / 1000);
    const store = open(undefined, { now: clock.now });
    const a = store.createSession({ source: "cli", model: "m/a" });
    store.appendMessages(a.id, [
      ...toolTurn("q1", "terminal"),
      ...toolTurn("q2", "read_file"),
      ...toolTurn("q3", "terminal"),
    ]);
    store.recordUsage(a.id, { inputTokens: 100, outputTokens: 10, costUsd: 0.5 });
    clock.advance(DAY);
    const b = store.createSession({ source: "telegram", model: "m/b" });
    store.appendMessages(b.id, [{ role: "user", content: "hi" }]);
    store.recordUsage(b.id, { inputTokens: 5, outputTokens: 1, reasoningTokens: 3 });
    // Tool rows without assistant tool_calls (an older writer) still count.
    const c = store.createSession({ source: "cli", model: "m/a" });
    store.appendMessages(c.id, [{ role: "tool", content: "x", name: "web_search", tool_call_id: "w" }]);
    clock.advance(-40 * DAY);
    store.createSession({ source: "cli", model: "m/old" });
    clock.advance(41 * DAY);

    const ins = store.insights({ days: 7 });
    expect(ins).toMatchObject({
      sessions: 3,
      messages: 14,
      userMessages: 4,
      toolCalls: 4,
      costUsd: 0.5,
      unpricedSessions: 1,
    });
    expect(ins.tools).toEqual([
      { name: "terminal", calls: 2 },
      { name: "read_file", calls: 1 },
      { name: "web_search", calls: 1 },
    ]);
    expect(ins.byModel).toEqual([
      {
        model: "m/a",
        sessions: 2,
        apiCalls: 1,
        inputTokens: 100,
        outputTokens: 10,
        cacheReadTokens: 0,
        reasoningTokens: 0,
        costUsd: 0.5,
        unpricedSessions: 0,
      },
      {
        model: "m/b",
        sessions: 1,
        apiCalls: 1,
        inputTokens: 5,
        outputTokens: 1,
        cacheReadTokens: 0,
        reasoningTokens: 3,
        costUsd: null,
        unpricedSessions: 1,
      },
    ]);
    expect(ins.bySource).toEqual([
      {
        source: "cli",
        sessions: 2,
        messages: 13,
        inputTokens: 100,
        outputTokens: 10,
        costUsd: 0.5,
        unpricedSessions: 0,
      },
      {
        source: "telegram",
        sessions: 1,
        messages: 1,
        inputTokens: 5,
        outputTokens: 1,
        costUsd: null,
        unpricedSessions: 1,
      },
    ]);
    expect(ins.perDay).toHaveLength(8);
    expect(ins.perDay.filter((d) => d.sessions > 0)).toEqual([
      { day: "2026-03-10", sessions: 1, messages: 12 },
      { day: "2026-03-11", sessions: 2, messages: 2 },
    ]);
    expect(store.insights({ days: 7, source: "telegram" }).sessions).toBe(1);
    expect(store.insights({ days: 365 }).sessions).toBe(4);
    expect(() => store.insights({ days: 0 })).toThrow(/days/);
  });
});

describe("legacy JSONL import", () => {
  it("imports each transcript once, skipping bad lines and sessions already in the database", () => {
    const home = dir();
    const sessions = join(home, "sessions");
    mkdirSync(sessions);
    writeFileSync(
      join(sessions, "20240301_101010_abcdef.jsonl"),
      [
        JSON.stringify({
          role: "session_meta",
          model: "gpt-4o",
          platform: "telegram",
          timestamp: "2024-03-01T10:10:10Z",
          tools: [],
        }),
        JSON.stringify({ role: "user", content: "legacy hello", timestamp: "2024-03-01T10:10:11Z" }),
        "{not json",
        JSON.stringify({
          role: "assistant",
          content: "",
          tool_calls: [
            { id: "c1", type: "function", function: { name: "terminal", arguments: { command: "ls" } } },
          ],
        }),
        JSON.stringify({ role: "tool", tool_call_id: "c1", tool_name: "terminal", content: "a b" }),
        JSON.stringify({ role: "narrator", content: "?" }),
        JSON.stringify([1, 2]),
        JSON.stringify({ role: "assistant", content: "legacy answer", timestamp: 1709287800 }),
        "",
      ].join("\n"),
    );
    writeFileSync(
      join(sessions, "cli_only.jsonl"),
      `${JSON.stringify({ role: "user", content: "no meta here" })}\n`,
    );
    writeFileSync(
      join(sessions, "existing.jsonl"),
      `${JSON.stringify({ role: "user", content: "duplicate" })}\n`,
    );
    writeFileSync(join(sessions, "sessions.json"), "{}");
    const store = track(openSqliteStore(join(home, "state.db")));
    store.createSession({ id: "existing", source: "cli" });

    expect(store.importLegacyJsonl(sessions)).toEqual({ sessions: 2, messages: 5, skipped: 3 });
    const s = store.getSession("20240301_101010_abcdef")!;
    expect(s).toMatchObject({
      source: "telegram",
      model: "gpt-4o",
      startedAt: 1709287810,
      messageCount: 4,
      toolCallCount: 1,
    });
    const messages = store.conversation(s.id);
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(messages[1]?.tool_calls?.[0]?.function.arguments).toBe('{"command":"ls"}');
    expect(messages[2]).toMatchObject({ name: "terminal", tool_call_id: "c1" });
    const ts = store.getMessages(s.id).map((m) => m.timestamp);
    expect([...ts].sort((x, y) => x - y)).toEqual(ts);
    expect(store.getSession("cli_only")?.source).toBe("cli");
    expect(store.getMessages("existing")).toEqual([]);
    expect(store.search({ query: "legacy" })).toHaveLength(2);

    writeFileSync(join(sessions, "later.jsonl"), `${JSON.stringify({ role: "user", content: "x" })}\n`);
    expect(store.importLegacyJsonl(sessions)).toEqual({ sessions: 0, messages: 0, skipped: 0 });
    expect(store.getSession("later")).toBeNull();
  });

  it("does nothing for a missing directory", () => {
    const store = open();
    expect(store.importLegacyJsonl(join(dir(), "nope"))).toEqual({ sessions: 0, messages: 0, skipped: 0 });
  });
});
