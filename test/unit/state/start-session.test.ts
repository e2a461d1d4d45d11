import { statSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { openRecordingEngine } from "../../../src/state/recording-store.js";
import { openSqliteStore } from "../../../src/state/sqlite-store.js";
import type { SessionStoreError } from "../../../src/state/types.js";
import { rawDb, useTempStores } from "./helpers.js";

const { dir, track } = useTempStores();

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

describe("startSession: a new session's row and first message in one transaction", () => {
  it("writes the row, the message and the usage in one commit", () => {
    const home = dir();
    const store = track(openSqliteStore(`${home}/state.db`, { durability: "normal" }));
    // Warm the file up so the WAL's growth is one commit's frames.
    store.createSession({ source: "cli", id: "warm" });
    const wal = () => statSync(`${home}/state.db-wal`).size;
    const before = wal();
    const id = store.startSession(
      { source: "api_server", id: "s1", model: "m", systemPrompt: "sys" },
      { role: "user", content: "hello there" },
      { usage: { inputTokens: 12, outputTokens: 3 } },
    );
    const oneCommit = wal() - before;
    expect(id).toBeGreaterThan(0);
    expect(store.getSession("s1")).toMatchObject({
      source: "api_server",
      model: "m",
      systemPrompt: "sys",
      messageCount: 1,
      inputTokens: 12,
      outputTokens: 3,
    });
    expect(store.getMessages("s1").map((m) => m.content)).toEqual(["hello there"]);
    // The same two writes made apart: two commits, each with its own WAL header frames.
    const apart = wal();
    store.createSession({ source: "api_server", id: "s2", model: "m", systemPrompt: "sys" });
    store.appendMessage("s2", { role: "user", content: "hello there" });
    expect(wal() - apart).toBeGreaterThan(oneCommit);
    // Python Hermes's search finds the message (the FTS triggers ran in the same transaction).
    expect(store.search({ query: "hello" }).map((h) => h.sessionId)).toContain("s1");
  });

  it("writes nothing when any part is refused", () => {
    const home = dir();
    const store = track(openSqliteStore(`${home}/state.db`));
    store.createSession({ source: "cli", id: "taken", title: "Mine" });
    expect(() =>
      store.startSession({ source: "cli", id: "s1" }, { role: "user", content: 42 } as never),
    ).toThrow();
    expect(store.getSession("s1")).toBeNull();
    expect(() =>
      store.startSession({ source: "cli", id: "s2", title: "Mine" }, { role: "user", content: "hi" }),
    ).toThrow(expect.objectContaining({ code: "title_taken" }) as SessionStoreError);
    expect(store.getSession("s2")).toBeNull();
    expect(() => store.startSession({ source: "cli", id: "taken" }, { role: "user", content: "hi" })).toThrow(
      /already exists/,
    );
    expect(store.getMessages("taken")).toEqual([]);
  });

  it("queues the row and then the message while another process holds the lock", () => {
    const home = dir();
    const notices: string[] = [];
    const store = openRecordingEngine(home, {
      notify: (m) => notices.push(m),
      writeWaitMs: 20,
      settleWaitMs: 50,
      closeWaitMs: 50,
      setTimer: () => () => undefined,
    });
    track(store);
    const lock = holdLock(store.path);
    const id = store.startSession({ source: "cli", id: "s1" }, { role: "user", content: "while locked" });
    expect(id).toBeLessThan(0);
    expect(store.pendingWrites).toBe(2);
    expect(store.pendingMessages).toBe(1);
    // A malformed first message is refused at once, locked or not, and queues nothing.
    expect(() =>
      store.startSession({ source: "cli", id: "s2" }, { role: "user", content: 42 } as never),
    ).toThrow();
    expect(store.pendingWrites).toBe(2);
    lock.release();
    expect(store.flush()).toBe(true);
    expect(store.getSession("s1")).toMatchObject({ source: "cli", messageCount: 1 });
    expect(store.getMessages("s1").map((m) => m.content)).toEqual(["while locked"]);
    expect(store.getSession("s2")).toBeNull();
    expect(notices.join("\n")).toMatch(/locked by another process/);
  });
});
