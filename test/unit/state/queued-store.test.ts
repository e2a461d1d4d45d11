import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openRecordingEngine } from "../../../src/state/recording-store.js";
import { openSqliteStore } from "../../../src/state/sqlite-store.js";
import type { SessionStoreError } from "../../../src/state/types.js";
import { rawDb, useTempStores } from "./helpers.js";

const { dir, track } = useTempStores();

/** A recording store whose background retries the test fires by hand. */
function recording(home: string) {
  const notices: string[] = [];
  const timers: Array<() => void> = [];
  const store = openRecordingEngine(home, {
    notify: (m) => notices.push(m),
    writeWaitMs: 20,
    settleWaitMs: 50,
    closeWaitMs: 50,
    setTimer: (fn) => {
      timers.push(fn);
      return () => undefined;
    },
  });
  track(store);
  return { store, notices, timers };
}

/** Another process's exclusive write lock on the file (WAL: readers still read). */
function holdLock(path: string) {
  const holder = rawDb(path);
  holder.pragma("busy_timeout = 0");
  holder.exec("BEGIN EXCLUSIVE");
  return {
    release: () => {
      holder.exec("ROLLBACK");
      holder.close();
    },
  };
}

function rowsOnDisk(path: string, sql: string, ...params: unknown[]): unknown[] {
  const db = rawDb(path, { readonly: true });
  try {
    return db.prepare(sql).all(...params);
  } finally {
    db.close();
  }
}

describe("writes while another process holds state.db", () => {
  it("queues them in order, answers at once, and writes them when the lock frees", () => {
    const home = dir();
    const { store, notices, timers } = recording(home);
    const s = store.createSession({ source: "cli" });
    const firstId = store.appendMessage(s.id, { role: "user", content: "before the lock" });
    expect(firstId).toBeGreaterThan(0);

    const lock = holdLock(store.path);
    const ids = [
      store.appendMessage(s.id, { role: "user", content: "one" }),
      store.appendMessage(s.id, {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "terminal", arguments: "{}" } }],
      }),
      store.appendMessage(s.id, { role: "tool", content: "out", tool_call_id: "c1", name: "terminal" }),
      store.appendMessage(s.id, { role: "assistant", content: "two" }),
    ];
    store.recordUsage(s.id, { inputTokens: 7, outputTokens: 3 });
    const child = store.createSession({ source: "cli", title: "made while locked", parentSessionId: s.id });
    store.appendMessage(child.id, { role: "user", content: "in the child" });
    store.endSession(s.id, "done");

    // Provisional ids: negative and distinct, never an id another row could have.
    expect(new Set(ids).size).toBe(4);
    for (const id of ids) expect(id).toBeLessThan(0);
    // The session id and record are there at once.
    expect(child.id).toMatch(/^\d{8}_\d{6}_[0-9a-f]{6}$/);
    expect(store.getSession(child.id)?.title).toBe("made while locked");
    expect(store.pendingWrites).toBe(8);
    expect(store.pendingMessages).toBe(5);
    expect(notices.filter((n) => n.includes("is locked by another process"))).toHaveLength(1);
    expect(timers.length).toBeGreaterThan(0);
    // Nothing reached the file yet; a read that needs the queued messages waits, then says why.
    expect(rowsOnDisk(store.path, "SELECT content FROM messages")).toEqual([{ content: "before the lock" }]);
    const error = (() => {
      try {
        store.getMessages(s.id);
      } catch (e) {
        return e as SessionStoreError;
      }
      return null;
    })();
    expect(error?.code).toBe("locked");
    expect(error?.message).toMatch(/waiting for it/);

    // Still locked: the background retry leaves everything queued.
    timers.shift()?.();
    expect(store.pendingWrites).toBe(8);

    lock.release();
    timers.shift()?.();
    expect(store.pendingWrites).toBe(0);
    expect(notices.at(-1)).toMatch(/free again: saved 8 queued writes \(5 messages\)/);
    expect(store.conversation(s.id).map((m) => m.content)).toEqual([
      "before the lock",
      "one",
      null,
      "out",
      "two",
    ]);
    const row = store.getSession(s.id);
    expect(row?.endReason).toBe("done");
    expect(row?.messageCount).toBe(5);
    expect(row?.toolCallCount).toBe(1);
    expect(row?.inputTokens).toBe(7);
    expect(store.getSession(child.id)?.parentSessionId).toBe(s.id);
    expect(store.conversation(child.id)).toEqual([{ role: "user", content: "in the child" }]);
    // The search index got the queued messages like any other.
    expect(store.search({ query: "child" }).map((h) => h.sessionId)).toEqual([child.id]);
  });

  it("a compression hand-off made while locked is queued as one write and lands whole", () => {
    const home = dir();
    const { store, timers } = recording(home);
    const parent = store.createSession({ source: "cli" });
    store.appendMessage(parent.id, { role: "user", content: "long talk" });
    const lock = holdLock(store.path);
    const child = store.continueSession(parent.id, { source: "cli", parentSessionId: parent.id }, [
      { role: "user", content: "summary of the long talk" },
    ]);
    expect(store.getSession(child.id)?.parentSessionId).toBe(parent.id);
    expect(store.pendingWrites).toBe(1);
    expect(store.pendingMessages).toBe(1);
    lock.release();
    timers.shift()?.();
    expect(store.pendingWrites).toBe(0);
    expect(store.getSession(parent.id)?.endReason).toBe("compression");
    expect(store.conversation(child.id)).toEqual([{ role: "user", content: "summary of the long talk" }]);
  });

  it("later writes go behind the queue even once the lock frees, so order holds", () => {
    const home = dir();
    const { store } = recording(home);
    const s = store.createSession({ source: "cli" });
    const lock = holdLock(store.path);
    store.appendMessage(s.id, { role: "user", content: "queued first" });
    lock.release();
    store.appendMessage(s.id, { role: "assistant", content: "written second" });
    expect(store.pendingWrites).toBe(0);
    expect(store.conversation(s.id).map((m) => m.content)).toEqual(["queued first", "written second"]);
  });

  it("drain waits without blocking and saves as soon as the lock frees", async () => {
    const home = dir();
    const { store, notices } = recording(home);
    const s = store.createSession({ source: "cli" });
    const lock = holdLock(store.path);
    store.appendMessage(s.id, { role: "user", content: "late" });
    setTimeout(() => lock.release(), 150);
    expect(await store.drain(10_000)).toBe(true);
    expect(notices.some((n) => /waiting up to 10 s/.test(n))).toBe(true);
    expect(store.conversation(s.id).map((m) => m.content)).toEqual(["late"]);
  });

  it("closing with the lock still held writes an unsaved-writes file that repair --from brings back once", () => {
    const home = dir();
    const { store, notices } = recording(home);
    const s = store.createSession({ source: "cli" });
    store.appendMessage(s.id, { role: "user", content: "saved" });
    const lock = holdLock(store.path);
    const fresh = store.createSession({ source: "cli", title: "unsaved one" });
    store.appendMessage(s.id, {
      role: "assistant",
      content: "not saved yet sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
    });
    store.appendMessage(fresh.id, { role: "user", content: "hello" });
    store.close();
    lock.release();

    const files = readdirSync(home).filter((f) => f.startsWith("state-unsaved-"));
    expect(files).toHaveLength(1);
    const file = join(home, files[0]!);
    expect(notices.at(-1)).toContain("2 messages (3 writes) could not be saved");
    expect(notices.at(-1)).toContain(`hermes sessions repair --from ${file}`);
    // The file holds no secret the store would not have stored.
    expect(readFileSync(file, "utf8")).not.toContain("AAAAAAAAAAAAAAAAAAAA");

    const target = track(openSqliteStore(store.path));
    const report = target.recoverFrom(file);
    expect(report).toMatchObject({
      kind: "unsaved",
      readable: true,
      sessions: { recovered: 1, skipped: 0 },
      messages: { recovered: 2, skipped: 0 },
    });
    expect(target.conversation(s.id).map((m) => m.content)).toEqual([
      "saved",
      expect.stringContaining("not saved yet"),
    ]);
    expect(target.getSession(fresh.id)?.title).toBe("unsaved one");
    const again = target.recoverFrom(file);
    expect(again.messages.recovered).toBe(0);
    expect(again.reason).toMatch(/already replayed/);
    expect(target.conversation(fresh.id)).toHaveLength(1);
  });

  it("a message with its call's usage: one write when free; queued, both land, in order", () => {
    const home = dir();
    const { store } = recording(home);
    const s = store.createSession({ source: "cli" });
    const free = store.appendMessage(
      s.id,
      { role: "assistant", content: "free" },
      { usage: { inputTokens: 5, outputTokens: 0 } },
    );
    expect(free).toBeGreaterThan(0);
    expect(rowsOnDisk(store.path, "SELECT input_tokens, api_call_count FROM sessions")).toEqual([
      { input_tokens: 5, api_call_count: 1 },
    ]);
    const lock = holdLock(store.path);
    const queued = store.appendMessage(
      s.id,
      { role: "assistant", content: "locked" },
      { usage: { inputTokens: 7, outputTokens: 0 } },
    );
    expect(queued).toBeLessThan(0);
    expect(store.pendingMessages).toBe(1);
    lock.release();
    expect(store.flush()).toBe(true);
    expect(rowsOnDisk(store.path, "SELECT content FROM messages ORDER BY id")).toEqual([
      { content: "free" },
      { content: "locked" },
    ]);
    expect(rowsOnDisk(store.path, "SELECT input_tokens, api_call_count FROM sessions")).toEqual([
      { input_tokens: 12, api_call_count: 2 },
    ]);
  });

  it("a reply and its results with the call's usage: one write when free; queued, all land", () => {
    const home = dir();
    const { store } = recording(home);
    const s = store.createSession({ source: "cli" });
    const reply = (id: string) => ({
      role: "assistant" as const,
      content: null,
      tool_calls: [{ id, type: "function" as const, function: { name: "todo", arguments: "{}" } }],
    });
    const result = (id: string) => ({ role: "tool" as const, tool_call_id: id, name: "todo", content: "[]" });
    const free = store.appendMessages(s.id, [reply("a"), result("a")], {
      usage: { inputTokens: 5, outputTokens: 0 },
    });
    expect(free.every((id) => id > 0)).toBe(true);
    const lock = holdLock(store.path);
    const queued = store.appendMessages(s.id, [reply("b"), result("b")], {
      usage: { inputTokens: 7, outputTokens: 0 },
    });
    expect(queued.every((id) => id < 0)).toBe(true);
    lock.release();
    expect(store.flush()).toBe(true);
    expect(rowsOnDisk(store.path, "SELECT tool_call_id FROM messages ORDER BY id")).toEqual([
      { tool_call_id: null },
      { tool_call_id: "a" },
      { tool_call_id: null },
      { tool_call_id: "b" },
    ]);
    expect(rowsOnDisk(store.path, "SELECT input_tokens, api_call_count FROM sessions")).toEqual([
      { input_tokens: 12, api_call_count: 2 },
    ]);
  });

  it("a queued write to an unknown session is refused at once, as the store would", () => {
    const { store } = recording(dir());
    const s = store.createSession({ source: "cli" });
    const lock = holdLock(store.path);
    try {
      store.appendMessage(s.id, { role: "user", content: "queued" });
      expect(() => store.appendMessage("nope", { role: "user", content: "x" })).toThrow(/No session/);
      expect(() => store.appendMessage(s.id, { role: "robot" as "user", content: "x" })).toThrow(
        /unknown role/,
      );
      expect(store.pendingWrites).toBe(1);
    } finally {
      lock.release();
    }
  });
});

describe("what is left after exit", () => {
  it("nothing when the lock freed in time", () => {
    const home = dir();
    const { store } = recording(home);
    const s = store.createSession({ source: "cli" });
    const lock = holdLock(store.path);
    store.appendMessage(s.id, { role: "user", content: "x" });
    lock.release();
    store.close();
    expect(readdirSync(home).some((f) => f.startsWith("state-unsaved-"))).toBe(false);
    expect(existsSync(join(home, "state.db"))).toBe(true);
    expect(rowsOnDisk(join(home, "state.db"), "SELECT content FROM messages")).toEqual([{ content: "x" }]);
  });
});
