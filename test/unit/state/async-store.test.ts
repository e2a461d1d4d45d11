import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openRecordingStore } from "../../../src/state/recording-store.js";
import { openSessionStore } from "../../../src/state/sqlite-store.js";
import { SessionStoreError } from "../../../src/state/types.js";
import { rawDb, useTempStores } from "./helpers.js";

const { dir } = useTempStores();

function holdLock(path: string) {
  const holder = rawDb(path);
  holder.pragma("busy_timeout = 0");
  holder.exec("BEGIN EXCLUSIVE");
  return () => {
    holder.exec("ROLLBACK");
    holder.close();
  };
}

describe("the asynchronous session store contract over SQLite", () => {
  it("answers every method with a promise and rejects (never throws) on bad input", async () => {
    const store = openSessionStore(join(dir(), "state.db"));
    try {
      const missing = store.getMessages("no-such-session");
      expect(missing).toBeInstanceOf(Promise);
      await expect(missing).rejects.toMatchObject({ code: "not_found" });
      let thrown: unknown;
      let pending: Promise<unknown> | undefined;
      try {
        pending = store.appendMessage("no-such-session", { role: "user", content: "hi" });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeUndefined();
      await expect(pending).rejects.toBeInstanceOf(SessionStoreError);
      await expect(store.createSession({ source: "" })).rejects.toMatchObject({ code: "invalid" });
      await expect(store.undoTurns("x", 0)).rejects.toMatchObject({ code: "invalid" });
    } finally {
      await store.close();
    }
  });

  it("keeps a turn's writes in the order they were started, awaited or not, and in the file before the promise settles", async () => {
    const path = join(dir(), "state.db");
    const store = openSessionStore(path);
    const { id } = await store.createSession({ source: "cli" });
    // Three writes started back to back, awaited together: they land in call order.
    const ids = await Promise.all([
      store.appendMessage(id, { role: "user", content: "one" }),
      store.appendMessage(id, { role: "assistant", content: "two" }),
      store.appendMessages(id, [{ role: "user", content: "three" }]),
    ]);
    expect(ids[0]).toBeLessThan(ids[1]);
    expect(ids[1]).toBeLessThan(ids[2][0]!);
    // The SQLite store writes inside the call: another connection sees the row before any await.
    const written = store.appendMessage(id, { role: "assistant", content: "four" });
    const reader = rawDb(path, { readonly: true });
    const rows = reader
      .prepare("SELECT content FROM messages WHERE session_id = ? ORDER BY id")
      .all(id) as Array<{
      content: string;
    }>;
    reader.close();
    expect(rows.map((r) => r.content)).toEqual(["one", "two", "three", "four"]);
    await written;
    expect((await store.conversation(id)).map((m) => m.content)).toEqual(["one", "two", "three", "four"]);
    await store.close();
  });

  it("exports sessions as an async iterable and closes for good", async () => {
    const store = openSessionStore(join(dir(), "state.db"));
    const a = await store.createSession({ source: "cli", title: "first" });
    await store.appendMessage(a.id, { role: "user", content: "hello" });
    const b = await store.createSession({ source: "telegram" });
    const seen: string[] = [];
    for await (const entry of store.exportSessions())
      seen.push(`${entry.session.id}:${entry.messages.length}`);
    expect(seen).toEqual([`${a.id}:1`, `${b.id}:0`]);
    await store.close();
    await expect(store.getSession(a.id)).rejects.toThrow();
  });

  it("the recording store answers through promises while another process holds the lock, then saves in order", async () => {
    const home = dir();
    const notices: string[] = [];
    const store = openRecordingStore(home, {
      notify: (m) => notices.push(m),
      writeWaitMs: 20,
      settleWaitMs: 50,
      closeWaitMs: 50,
      setTimer: () => () => undefined,
    });
    const { id } = await store.createSession({ source: "cli" });
    const release = holdLock(join(home, "state.db"));
    const first = await store.appendMessage(id, { role: "user", content: "queued one" });
    const second = await store.appendMessage(id, { role: "assistant", content: "queued two" });
    expect(first).toBeLessThan(0);
    expect(second).toBeLessThan(first);
    expect(store.pendingMessages).toBe(2);
    expect(notices.join("\n")).toMatch(/locked by another process/);
    release();
    expect(await store.drain(2000)).toBe(true);
    expect(store.pendingWrites).toBe(0);
    expect((await store.conversation(id)).map((m) => m.content)).toEqual(["queued one", "queued two"]);
    await store.close();
  });
});
