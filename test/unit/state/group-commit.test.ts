/**
 * Group commits of the recording store (state/async-store.ts): while several conversations write
 * close together (a gateway, the API server), their writes share one transaction per loop turn,
 * each in a savepoint of its own; one session alone (the CLI chat) still commits inside the call.
 * What must hold either way: a write's promise settles only once it is committed, one failing
 * write takes no other with it, every call sees the writes started before it, and nothing
 * collected is lost at close, at exit, or when another process holds the lock.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Message } from "../../../src/ai/types.js";
import { AsyncSessionStore } from "../../../src/state/async-store.js";
import type { AsyncQueuedStore } from "../../../src/state/queued-store.js";
import { openRecordingStore } from "../../../src/state/recording-store.js";
import { openSqliteStore } from "../../../src/state/sqlite-store.js";
import type { SyncSessionStore } from "../../../src/state/types.js";
import { waitFor } from "../tools/terminal/helpers.js";
import { rawDb, spawnStoreScript, useTempStores } from "./helpers.js";

const { dir } = useTempStores();
const opened: AsyncQueuedStore[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close().catch(() => {});
});

function recording(
  home: string,
  options: { writeWaitMs?: number; notices?: string[] } = {},
): AsyncQueuedStore {
  const store = openRecordingStore(home, {
    notify: (m) => options.notices?.push(m),
    open: { durability: "normal" },
    // Under a loaded test machine, two awaited writes may be far apart: collect for the whole test.
    collectWindowMs: 60_000,
    ...(options.writeWaitMs !== undefined ? { writeWaitMs: options.writeWaitMs } : {}),
  });
  opened.push(store);
  return store;
}

/** Commits in the WAL: frames whose header gives the database size after a commit (non-zero). */
function commitsInWal(dbPath: string): number {
  const wal = readFileSync(`${dbPath}-wal`);
  const pageSize = wal.readUInt32BE(8);
  let commits = 0;
  for (let off = 32; off + 24 + pageSize <= wal.length; off += 24 + pageSize) {
    if (wal.readUInt32BE(off + 4) !== 0) commits++;
  }
  return commits;
}

function onDisk(dbPath: string, sql: string, ...params: unknown[]): Array<Record<string, unknown>> {
  const db = rawDb(dbPath, { readonly: true });
  try {
    return db.prepare(sql).all(...params) as Array<Record<string, unknown>>;
  } finally {
    db.close();
  }
}

const user = (content: string): Message => ({ role: "user", content });

/** Two conversations writing close together: what starts collecting. */
async function twoConversations(store: AsyncQueuedStore): Promise<void> {
  await store.startSession({ id: "a", source: "api_server" }, user("a0"));
  await store.startSession({ id: "b", source: "api_server" }, user("b0"));
}

describe("group commits of the recording store", () => {
  it("one conversation alone commits each write inside the call, as before", async () => {
    const home = dir();
    const store = recording(home);
    await store.startSession({ id: "s1", source: "cli" }, user("first"));
    const pending = store.appendMessage("s1", user("second"));
    // Before anything is awaited, the row is already in the file (another process can read it).
    expect(store.collectedWrites).toBe(0);
    expect(onDisk(join(home, "state.db"), "SELECT content FROM messages ORDER BY id")).toEqual([
      { content: "first" },
      { content: "second" },
    ]);
    expect(await pending).toBeGreaterThan(0);
  });

  it("collects only while two sessions write close together, and stops once one is left", async () => {
    const home = dir();
    const store = openRecordingStore(home, {
      notify: () => {},
      open: { durability: "normal" },
      collectWindowMs: 500,
    });
    opened.push(store);
    await store.startSession({ id: "a", source: "api_server" }, user("a0"));
    void store.appendMessage("a", user("a1"));
    expect(store.collectedWrites).toBe(0);
    // Another session right after: collecting starts (this write included).
    const b = store.startSession({ id: "b", source: "api_server" }, user("b0"));
    expect(store.collectedWrites).toBe(1);
    await b;
    void store.appendMessage("a", user("a2"));
    expect(store.collectedWrites).toBe(1);
    await store.conversation("a");
    // Quiet for longer than the window: one session writing alone commits inside the call again.
    await new Promise((r) => setTimeout(r, 1200));
    void store.appendMessage("a", user("a3"));
    expect(store.collectedWrites).toBe(0);
    expect((await store.conversation("a")).map((m) => m.content)).toEqual(["a0", "a1", "a2", "a3"]);
  });

  it("many conversations' writes share one commit, each settling only once it is in the file", async () => {
    const home = dir();
    const db = join(home, "state.db");
    const store = recording(home);
    await twoConversations(store);
    const before = commitsInWal(db);
    const writes = [];
    for (let i = 0; i < 20; i++) {
      writes.push(store.startSession({ id: `c${i}`, source: "api_server" }, user(`hello ${i}`)));
      writes.push(store.appendMessage(i % 2 ? "a" : "b", user(`more ${i}`)));
    }
    // Collected, not yet written: nobody has been told they are saved.
    expect(store.collectedWrites).toBe(40);
    expect(onDisk(db, "SELECT COUNT(*) AS n FROM sessions")).toEqual([{ n: 2 }]);
    const ids = await Promise.all(writes);
    expect(commitsInWal(db) - before).toBe(1);
    expect(new Set(ids).size).toBe(40);
    // In the order the calls were made.
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
    expect(onDisk(db, "SELECT COUNT(*) AS n FROM sessions")).toEqual([{ n: 22 }]);
    expect(
      onDisk(db, "SELECT content FROM messages WHERE session_id = 'a' ORDER BY id").map((r) => r["content"]),
    ).toEqual(["a0", ...Array.from({ length: 10 }, (_, k) => `more ${2 * k + 1}`)]);
    // The full-text index got every message of the group.
    expect(onDisk(db, "SELECT COUNT(*) AS n FROM messages_fts WHERE messages_fts MATCH 'hello'")).toEqual([
      { n: 20 },
    ]);
    const reader = openSqliteStore(db, { readonly: true });
    try {
      expect(reader.getSession("a")).toMatchObject({ messageCount: 11 });
      expect(reader.check()).toMatchObject({ integrity: true, problems: [] });
    } finally {
      reader.close();
    }
  });

  it("a write that fails in a group rejects alone; the others are saved", async () => {
    const home = dir();
    const db = join(home, "state.db");
    const store = recording(home);
    await twoConversations(store);
    const other = rawDb(db);
    other.exec(
      "CREATE TRIGGER refuse_boom BEFORE INSERT ON messages WHEN new.content = 'boom' BEGIN SELECT RAISE(ABORT, 'boom refused'); END",
    );
    other.close();
    const good1 = store.appendMessage("a", user("kept 1"));
    const bad = store.appendMessage("no-such-session", user("lost"));
    const taken = store.startSession({ id: "a", source: "api_server" }, user("a session id already taken"));
    const badShape = store.appendMessage("b", { role: "wizard", content: "x" } as unknown as Message);
    // Fails after its session row was inserted (another program's trigger refuses the message):
    // the savepoint takes the row back too.
    const halfDone = store.startSession({ id: "half", source: "api_server" }, user("boom"));
    const good2 = store.appendMessage("b", user("kept 2"));
    await expect(bad).rejects.toMatchObject({ code: "not_found" });
    await expect(taken).rejects.toMatchObject({ code: "invalid" });
    await expect(badShape).rejects.toThrow();
    await expect(halfDone).rejects.toThrow(/boom refused/);
    expect(await good1).toBeGreaterThan(0);
    expect(await good2).toBeGreaterThan(await good1);
    expect(onDisk(db, "SELECT session_id, content FROM messages ORDER BY id")).toEqual([
      { session_id: "a", content: "a0" },
      { session_id: "b", content: "b0" },
      { session_id: "a", content: "kept 1" },
      { session_id: "b", content: "kept 2" },
    ]);
    // Nothing half-done of the failed ones: counters match the rows.
    expect(onDisk(db, "SELECT id, message_count FROM sessions ORDER BY id")).toEqual([
      { id: "a", message_count: 2 },
      { id: "b", message_count: 2 },
    ]);
  });

  it("every other call first commits what it may need: reads see the writes started before them", async () => {
    const home = dir();
    const store = recording(home);
    await twoConversations(store);
    void store.appendMessage("a", user("not awaited"));
    void store.appendMessage("b", user("for b"));
    expect(store.collectedWrites).toBe(2);
    // A read of another session leaves them collected (it could not see them anyway)...
    expect(await store.getMessages("c-unknown").catch((e: { code: string }) => e.code)).toBe("not_found");
    expect(store.collectedWrites).toBe(2);
    // ...a read of the session commits them first.
    expect((await store.conversation("a")).map((m) => m.content)).toEqual(["a0", "not awaited"]);
    expect(store.collectedWrites).toBe(0);
    void store.appendMessage("b", user("then searched"));
    expect((await store.search({ query: "searched" })).map((h) => h.sessionId)).toEqual(["b"]);
    void store.endSession("a", "done");
    expect((await store.listSessions()).find((s) => s.id === "a")?.endReason).toBe("done");
  });

  it("close commits what was collected", async () => {
    const home = dir();
    const store = recording(home);
    await twoConversations(store);
    const write = store.appendMessage("a", user("collected at close"));
    expect(store.collectedWrites).toBe(1);
    await store.close();
    expect(await write).toBeGreaterThan(0);
    expect(
      onDisk(join(home, "state.db"), "SELECT content FROM messages WHERE session_id = 'a' ORDER BY id"),
    ).toEqual([{ content: "a0" }, { content: "collected at close" }]);
  });

  it("another process holding the lock: the group's writes queue in order and are saved when it frees", async () => {
    const home = dir();
    const db = join(home, "state.db");
    const notices: string[] = [];
    const store = recording(home, { writeWaitMs: 30, notices });
    await twoConversations(store);
    const holder = rawDb(db);
    holder.pragma("busy_timeout = 0");
    holder.exec("BEGIN EXCLUSIVE");
    const started = Date.now();
    const ids = await Promise.all([
      store.appendMessage("a", user("q1")),
      store.appendMessage("b", user("q2")),
      store.appendMessage("a", user("q3")),
    ]);
    // One short wait for the whole group, not one per write.
    expect(Date.now() - started).toBeLessThan(2000);
    for (const id of ids) expect(id).toBeLessThan(0);
    expect(store.pendingWrites).toBe(3);
    expect(notices.join("\n")).toMatch(/locked by another process/);
    holder.exec("ROLLBACK");
    holder.close();
    expect(store.flush()).toBe(true);
    expect(onDisk(db, "SELECT content FROM messages ORDER BY id").map((r) => r["content"])).toEqual([
      "a0",
      "b0",
      "q1",
      "q2",
      "q3",
    ]);
  });

  it("a group whose commit fails runs each write again on its own, with its own outcome", async () => {
    const runs: string[] = [];
    const engine = {
      path: "fake",
      close: () => undefined,
      appendMessage: (sessionId: string, message: Message) => {
        runs.push(`${sessionId}:${String(message.content)}`);
        if (sessionId === "bad") throw new Error("no such session");
        return runs.length;
      },
    } as unknown as SyncSessionStore;
    const grouping = {
      group<T>(fn: () => T): T {
        fn();
        throw new Error("disk I/O error at commit");
      },
    };
    const store = new AsyncSessionStore(engine, { groupCommits: grouping, collectWindowMs: 60_000 });
    // A write to another session just before starts collecting.
    await store.appendMessage("w", user("warm"));
    const writes = [
      store.appendMessage("x", user("1")),
      store.appendMessage("bad", user("2")),
      store.appendMessage("y", user("3")),
    ];
    const settled = await Promise.allSettled(writes);
    expect(settled.map((s) => s.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    // Once inside the failed group, then once each on its own.
    expect(runs.slice(1)).toEqual(["x:1", "bad:2", "y:3", "x:1", "bad:2", "y:3"]);
  });

  it("process exit before the loop's check phase still writes what was collected", async () => {
    const home = dir();
    const run = spawnStoreScript(
      home,
      "exits.mjs",
      `
const { openRecordingStore } = await import(process.argv[2]);
const store = openRecordingStore(process.argv[3], { open: { durability: "normal" }, notify: () => {}, collectWindowMs: 60000 });
await store.startSession({ id: "a", source: "api_server" }, { role: "user", content: "a0" });
await store.startSession({ id: "b", source: "api_server" }, { role: "user", content: "b0" });
store.appendMessage("a", { role: "user", content: "written at exit 1" });
store.appendMessage("b", { role: "user", content: "written at exit 2" });
process.exit(0);
`,
    );
    expect(await run.exited, run.err()).toBe(0);
    expect(
      onDisk(join(home, "state.db"), "SELECT content FROM messages ORDER BY id").map((r) => r["content"]),
    ).toEqual(["a0", "b0", "written at exit 1", "written at exit 2"]);
  }, 60_000);

  it("kill -9 of a process writing in groups: every write it was told was saved is there", async () => {
    const home = dir();
    const db = join(home, "state.db");
    const { child, out, err, exited } = spawnStoreScript(
      home,
      "writer.mjs",
      `
const { openRecordingStore } = await import(process.argv[2]);
const store = openRecordingStore(process.argv[3], { open: { durability: "normal" }, notify: () => {}, collectWindowMs: 60000 });
const sessions = Array.from({ length: 8 }, (_, i) => "s" + i);
for (const id of sessions) await store.startSession({ id, source: "api_server" }, { role: "user", content: id + " 0" });
for (let n = 1; ; n++) {
  // Eight conversations writing at once; printed only once every write of the round settled.
  await Promise.all(sessions.map((id) => store.appendMessage(id, { role: "user", content: id + " " + n })));
  process.stdout.write(n + "\\n");
}
`,
    );
    try {
      await waitFor(() => out().split("\n").length > 60 || child.exitCode !== null, 60_000, "60 rounds");
      expect(child.exitCode, err()).toBeNull();
    } finally {
      child.kill("SIGKILL");
    }
    await exited;
    const told = Number(
      out()
        .split("\n")
        .filter((l) => l !== "")
        .at(-1),
    );
    const reader = openSqliteStore(db, { readonly: true });
    try {
      for (let i = 0; i < 8; i++) {
        const contents = reader.conversation(`s${i}`).map((m) => m.content);
        expect(contents.length).toBeGreaterThanOrEqual(told + 1);
        expect(contents.slice(0, told + 1)).toEqual(Array.from({ length: told + 1 }, (_, n) => `s${i} ${n}`));
      }
      expect(reader.check()).toMatchObject({ integrity: true, problems: [] });
    } finally {
      reader.close();
    }
  }, 90_000);
});
