import { describe, expect, it } from "vitest";
import type { Message } from "../../../src/ai/types.js";
import { lineageOf, nextTitleIn, sanitizeTitle } from "../../../src/state/titles.js";
import { SessionStoreError } from "../../../src/state/types.js";
import { manualClock, useTempStores } from "./helpers.js";

const { open } = useTempStores();

function code(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    if (error instanceof SessionStoreError) return error.code;
    throw error;
  }
  return undefined;
}

const turn = (q: string, a: string): Message[] => [
  { role: "user", content: q },
  { role: "assistant", content: a },
];

describe("sessions", () => {
  it("creates a session with Python's id format and reads it back", () => {
    const clock = manualClock(1_760_000_000.25);
    const store = open(undefined, { now: clock.now });
    const s = store.createSession({
      source: "cli",
      model: "anthropic/claude-sonnet-4",
      modelConfig: { max_tokens: 100 },
      systemPrompt: "You are Hermes.\n",
      cwd: "/work",
      gitBranch: "main",
      gitRepoRoot: "/work",
      userId: "u1",
      billingProvider: "openrouter",
      billingBaseUrl: "https://openrouter.ai/api/v1",
    });
    expect(s.id).toMatch(/^\d{8}_\d{6}_[0-9a-f]{6}$/);
    expect(s).toMatchObject({
      source: "cli",
      startedAt: 1_760_000_000.25,
      modelConfig: '{"max_tokens":100}',
      systemPrompt: "You are Hermes.\n",
      messageCount: 0,
      archived: false,
      title: null,
    });
    expect(store.getSession(s.id)).toEqual(s);
    expect(store.getSession("nope")).toBeNull();
  });

  it("updates, ends and reopens", () => {
    const clock = manualClock();
    const store = open(undefined, { now: clock.now });
    const s = store.createSession({ source: "cli" });
    store.updateSession(s.id, {
      model: "m2",
      archived: true,
      cwd: "/x",
      gitBranch: "dev",
      systemPrompt: "p",
    });
    clock.advance(10);
    store.endSession(s.id, "user_exit");
    expect(store.getSession(s.id)).toMatchObject({
      model: "m2",
      archived: true,
      cwd: "/x",
      gitBranch: "dev",
      systemPrompt: "p",
      endedAt: clock.now(),
      endReason: "user_exit",
    });
    store.reopenSession(s.id);
    expect(store.getSession(s.id)).toMatchObject({ endedAt: null, endReason: null });
  });

  it("throws not_found for unknown ids everywhere an id is taken", () => {
    const store = open();
    const calls: Array<() => unknown> = [
      () => store.getMessages("missing"),
      () => store.conversation("missing"),
      () => store.appendMessage("missing", { role: "user", content: "x" }),
      () => store.appendMessages("missing", [{ role: "user", content: "x" }]),
      () => store.recordUsage("missing", { inputTokens: 1, outputTokens: 1 }),
      () => store.updateSession("missing", { model: "x" }),
      () => store.setTitle("missing", "t"),
      () => store.endSession("missing", "x"),
      () => store.reopenSession("missing"),
      () => store.undoTurns("missing", 1),
      () => store.branchSession("missing"),
      () => store.deleteSession("missing"),
      () => store.around("missing", 1),
      () => store.resolveSession("missing"),
      () => [...store.exportSessions({ sessionId: "missing" })],
      () => store.createSession({ source: "cli", parentSessionId: "missing" }),
    ];
    for (const call of calls) expect(code(call)).toBe("not_found");
  });

  it("refuses a duplicate id and an invalid message", () => {
    const store = open();
    const s = store.createSession({ source: "cli" });
    expect(code(() => store.createSession({ id: s.id, source: "cli" }))).toBe("invalid");
    expect(code(() => store.appendMessage(s.id, { role: "robot" } as unknown as Message))).toBe("invalid");
    expect(code(() => store.undoTurns(s.id, 0))).toBe("invalid");
  });
});

describe("titles and lineage", () => {
  it("cleans titles like Python does", () => {
    expect(sanitizeTitle("  my\u200b   title\u0007 ")).toBe("my title");
    expect(sanitizeTitle("   ")).toBeNull();
    expect(() => sanitizeTitle("x".repeat(101))).toThrow(/too long/);
    expect(lineageOf("work #12")).toEqual({ base: "work", number: 12 });
    expect(lineageOf("#2")).toEqual({ base: "#2", number: 1 });
    expect(nextTitleIn("work", [])).toBe("work");
    expect(nextTitleIn("work", ["work"])).toBe("work #2");
    expect(nextTitleIn("work", ["work", "work #2", "work #7"])).toBe("work #8");
    expect(nextTitleIn("work", ["work #3"])).toBe("work #4");
  });

  it("keeps titles unique and can clear them", () => {
    const store = open();
    const a = store.createSession({ source: "cli", title: "work" });
    const b = store.createSession({ source: "cli" });
    expect(code(() => store.setTitle(b.id, "work"))).toBe("title_taken");
    expect(code(() => store.createSession({ source: "cli", title: " work " }))).toBe("title_taken");
    expect(store.setTitle(a.id, "work").title).toBe("work");
    expect(store.setTitle(a.id, null).title).toBeNull();
    expect(store.setTitle(b.id, "work").title).toBe("work");
    expect(store.setTitle(b.id, "   ").title).toBeNull();
  });

  it("numbers a lineage: work → work #2 → work #3", () => {
    const store = open();
    expect(store.nextLineageTitle("work")).toBe("work");
    store.createSession({ source: "cli", title: "work" });
    expect(store.nextLineageTitle("work")).toBe("work #2");
    store.createSession({ source: "cli", title: "work #2" });
    expect(store.nextLineageTitle("work")).toBe("work #3");
    expect(store.nextLineageTitle("work #2")).toBe("work #3");
    store.createSession({ source: "cli", title: "work_x #9" });
    expect(store.nextLineageTitle("work%")).toBe("work%");
  });

  it("resolves by id, title, lineage and unique prefix", () => {
    const clock = manualClock();
    const store = open(undefined, { now: clock.now });
    const a = store.createSession({ id: "20250101_120000_aaaaaa", source: "cli", title: "work" });
    clock.advance(60);
    const b = store.createSession({ id: "20250101_120000_aaabbb", source: "cli", title: "work #2" });
    clock.advance(60);
    const c = store.createSession({ id: "20250102_090000_cccccc", source: "cli", title: "solo" });
    expect(store.resolveSession(a.id).id).toBe(a.id);
    expect(store.resolveSession("solo").id).toBe(c.id);
    expect(store.resolveSession("work #2").id).toBe(b.id);
    // A base title finds the newest of its lineage.
    expect(store.resolveSession("work").id).toBe(b.id);
    expect(store.resolveSession("20250102").id).toBe(c.id);
    expect(code(() => store.resolveSession("2025"))).toBe("ambiguous");
    expect(() => store.resolveSession("20250101_1200")).toThrow(`${a.id}, ${b.id}`);
    expect(code(() => store.resolveSession("202"))).toBe("not_found");
    // A lineage whose base was renamed away still resolves by its base.
    store.setTitle(a.id, null);
    expect(store.resolveSession("work").id).toBe(b.id);
    expect(code(() => store.resolveSession("  "))).toBe("invalid");
  });

  it("finds the latest session, by activity, by source or by lineage", () => {
    const clock = manualClock();
    const store = open(undefined, { now: clock.now });
    expect(store.latestSession()).toBeNull();
    const old = store.createSession({ source: "cli", title: "work" });
    clock.advance(10);
    const tg = store.createSession({ source: "telegram" });
    clock.advance(10);
    const cont = store.createSession({ source: "cli", title: "work #2" });
    clock.advance(10);
    store.appendMessages(old.id, turn("q", "a"));
    expect(store.latestSession()?.id).toBe(old.id);
    expect(store.latestSession({ source: "telegram" })?.id).toBe(tg.id);
    expect(store.latestSession({ title: "work" })?.id).toBe(old.id);
    clock.advance(10);
    store.appendMessages(cont.id, turn("q2", "a2"));
    expect(store.latestSession({ title: "work" })?.id).toBe(cont.id);
    expect(store.latestSession({ title: "work #2" })?.id).toBe(cont.id);
    expect(store.latestSession({ title: "nothing" })).toBeNull();
  });
});

describe("listing", () => {
  it("lists newest first with previews and last activity, filtered and paged", () => {
    const clock = manualClock();
    const store = open(undefined, { now: clock.now });
    const a = store.createSession({ source: "cli" });
    store.appendMessages(a.id, [
      { role: "assistant", content: "greeting" },
      { role: "user", content: `  first\n\n question ${"long ".repeat(40)}` },
      { role: "user", content: "second question" },
    ]);
    clock.advance(100);
    const b = store.createSession({ source: "telegram" });
    clock.advance(100);
    const c = store.createSession({ source: "cli" });
    store.updateSession(c.id, { archived: true });
    const list = store.listSessions();
    expect(list.map((s) => s.id)).toEqual([b.id, a.id]);
    const first = list[1]!;
    expect(first.preview.startsWith("first question long")).toBe(true);
    expect(first.preview.length).toBeLessThanOrEqual(80);
    expect(first.lastActiveAt).toBe(store.getMessages(a.id)[2]!.timestamp);
    expect(list[0]).toMatchObject({ preview: "", lastActiveAt: b.startedAt });
    expect(store.listSessions({ source: "cli" }).map((s) => s.id)).toEqual([a.id]);
    expect(store.listSessions({ includeArchived: true }).map((s) => s.id)).toEqual([c.id, b.id, a.id]);
    expect(store.listSessions({ includeArchived: true, limit: 1, offset: 1 }).map((s) => s.id)).toEqual([
      b.id,
    ]);
  });

  it("browses the most recently active sessions, without empty or excluded ones", () => {
    const clock = manualClock();
    const store = open(undefined, { now: clock.now });
    const a = store.createSession({ source: "cli" });
    const b = store.createSession({ source: "cli" });
    store.createSession({ source: "cli" });
    store.appendMessages(b.id, turn("about b", "ok"));
    clock.advance(5);
    store.appendMessages(a.id, turn("about a", "ok"));
    expect(store.recent().map((s) => [s.id, s.preview])).toEqual([
      [a.id, "about a"],
      [b.id, "about b"],
    ]);
    expect(store.recent(10, a.id).map((s) => s.id)).toEqual([b.id]);
    expect(store.recent(1).map((s) => s.id)).toEqual([a.id]);
  });

  it("returns the active messages around one message", () => {
    const store = open();
    const s = store.createSession({ source: "cli" });
    const ids = store.appendMessages(
      s.id,
      Array.from(
        { length: 20 },
        (_, i) => ({ role: i % 2 ? "assistant" : "user", content: `m${i}` }) as Message,
      ),
    );
    const around = store.around(s.id, ids[10]!, 3);
    expect(around.map((m) => m.content)).toEqual(["m7", "m8", "m9", "m10", "m11", "m12", "m13"]);
    expect(store.around(s.id, ids[0]!).map((m) => m.content)).toEqual(["m0", "m1", "m2", "m3", "m4", "m5"]);
    const other = store.createSession({ source: "cli" });
    expect(code(() => store.around(other.id, ids[0]!))).toBe("not_found");
  });
});

describe("undo and branch", () => {
  it("undoes the last turns, keeps them on disk, and fixes the counters", () => {
    const store = open();
    const s = store.createSession({ source: "cli" });
    store.appendMessages(s.id, [
      ...turn("one", "1"),
      { role: "user", content: [{ type: "text", text: "two" }] },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c", type: "function", function: { name: "terminal", arguments: "{}" } }],
      },
      { role: "tool", content: "out", tool_call_id: "c", name: "terminal" },
      { role: "assistant", content: "2" },
      ...turn("three", "3"),
    ]);
    expect(store.undoTurns(s.id, 2)).toEqual({ removed: 6, userText: "two" });
    expect(store.conversation(s.id).map((m) => m.content)).toEqual(["one", "1"]);
    expect(store.getMessages(s.id, { includeInactive: true })).toHaveLength(8);
    expect(store.getSession(s.id)).toMatchObject({ messageCount: 2, toolCallCount: 0 });
    expect(store.undoTurns(s.id, 5)).toEqual({ removed: 2, userText: "one" });
    expect(store.undoTurns(s.id, 1)).toEqual({ removed: 0, userText: null });
    store.appendMessages(s.id, turn("again", "A"));
    expect(store.conversation(s.id).map((m) => m.content)).toEqual(["again", "A"]);
  });

  it("branches a copy of the active messages with their timestamps and a lineage title", () => {
    const clock = manualClock();
    const store = open(undefined, { now: clock.now });
    const s = store.createSession({
      source: "cli",
      title: "plan",
      model: "m",
      systemPrompt: "sys",
      modelConfig: { a: 1 },
    });
    store.appendMessages(s.id, [
      ...turn("keep", "kept"),
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c", type: "function", function: { name: "t", arguments: "{}" } }],
      },
      ...turn("drop", "dropped"),
    ]);
    store.undoTurns(s.id, 1);
    clock.advance(100);
    const b = store.branchSession(s.id);
    expect(b).toMatchObject({
      parentSessionId: s.id,
      title: "plan #2",
      source: "cli",
      model: "m",
      systemPrompt: "sys",
      messageCount: 3,
      toolCallCount: 1,
      startedAt: clock.now(),
    });
    expect(JSON.parse(b.modelConfig!)).toEqual({ a: 1, _branched_from: s.id });
    expect(store.conversation(b.id)).toEqual(store.conversation(s.id));
    expect(store.getMessages(b.id).map((m) => m.timestamp)).toEqual(
      store.getMessages(s.id).map((m) => m.timestamp),
    );
    expect(store.branchSession(s.id).title).toBe("plan #3");
    expect(store.branchSession(s.id, { title: "mine", source: "telegram" })).toMatchObject({
      title: "mine",
      source: "telegram",
    });
    expect(code(() => store.branchSession(s.id, { title: "mine" }))).toBe("title_taken");
    const untitled = store.createSession({ source: "cli" });
    expect(store.branchSession(untitled.id).title).toBeNull();
  });
});
