import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openSqliteStore, sessionStorePath } from "../../../src/state/sqlite-store.js";
import { SessionStoreError } from "../../../src/state/types.js";
import { rawDb, useTempStores } from "./helpers.js";

const { dir, track } = useTempStores();

function failure(fn: () => unknown): SessionStoreError {
  try {
    fn();
  } catch (error) {
    if (error instanceof SessionStoreError) return error;
    throw error;
  }
  throw new Error("expected a SessionStoreError");
}

describe("opening", () => {
  it("creates the file and its directory, in WAL mode", () => {
    const home = join(dir(), "nested", "home");
    const store = track(openSqliteStore(sessionStorePath(home)));
    expect(store.path).toBe(join(home, "state.db"));
    expect(existsSync(join(home, "state.db"))).toBe(true);
    const db = rawDb(store.path, { readonly: true });
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(db.prepare("SELECT version FROM schema_version").all()).toEqual([{ version: 17 }]);
    db.close();
  });

  it.each([
    ["text", Buffer.from("this is not a database, it is a note to self\n".repeat(100))],
    ["zeroed pages", Buffer.alloc(8192)],
    ["a truncated SQLite header", Buffer.from("SQLite format")],
    ["random bytes", Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256))],
  ])("refuses %s as corrupt and leaves the bytes untouched", (_name, bytes) => {
    const path = join(dir(), "state.db");
    writeFileSync(path, bytes);
    for (const readonly of [false, true]) {
      const error = failure(() => openSqliteStore(path, { readonly }));
      expect(error.code).toBe("corrupt");
      expect(error.message).toContain(path);
      expect(error.message).toContain("nothing was changed");
      expect(error.message).toContain("hermes sessions repair --check");
      expect(readFileSync(path).equals(bytes)).toBe(true);
      expect(existsSync(`${path}-wal`)).toBe(false);
    }
  });

  it("refuses a database whose pages are damaged past the header", () => {
    const path = join(dir(), "state.db");
    const store = track(openSqliteStore(path));
    const s = store.createSession({ source: "cli" });
    store.appendMessages(
      s.id,
      Array.from({ length: 200 }, (_, i) => ({ role: "user", content: `message ${i} `.repeat(50) })),
    );
    store.close();
    const bytes = readFileSync(path);
    // Keep the header page, overwrite the rest with garbage.
    for (let i = 4096; i < bytes.length; i++) bytes[i] = (i * 31) % 251;
    writeFileSync(path, bytes);
    const error = failure(() => {
      const broken = track(openSqliteStore(path));
      broken.getMessages(s.id);
    });
    expect(error.code).toBe("corrupt");
    expect(readFileSync(path).equals(bytes)).toBe(true);
  });

  it("opening read-only a file that does not exist says so and creates nothing", () => {
    const home = join(dir(), "home");
    const error = failure(() => openSqliteStore(sessionStorePath(home), { readonly: true }));
    expect(error.code).toBe("not_found");
    expect(error.message).toContain(join(home, "state.db"));
    expect(existsSync(home)).toBe(false);
  });

  it("a directory named state.db is not a database", () => {
    const path = join(dir(), "state.db");
    mkdirSync(path);
    expect(failure(() => openSqliteStore(path)).code).toBe("corrupt");
  });

  it("read-only stores refuse every write", () => {
    const path = join(dir(), "state.db");
    const w = track(openSqliteStore(path));
    const s = w.createSession({ source: "cli" });
    w.close();
    const before = readFileSync(path);
    const ro = track(openSqliteStore(path, { readonly: true }));
    const writes: Array<() => unknown> = [
      () => ro.createSession({ source: "cli" }),
      () => ro.appendMessage(s.id, { role: "user", content: "x" }),
      () => ro.setTitle(s.id, "t"),
      () => ro.deleteSession(s.id),
      () => ro.prune({ olderThanDays: 0 }),
      () => ro.importLegacyJsonl(dir()),
    ];
    for (const write of writes) expect(failure(write).code).toBe("readonly");
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it("a closed store says so", () => {
    const store = openSqliteStore(join(dir(), "state.db"));
    store.close();
    expect(failure(() => store.listSessions()).code).toBe("invalid");
    store.close();
  });
});

describe("locks", () => {
  it("a writer gives up with `locked` when another connection holds the write lock, and changes nothing", () => {
    const path = join(dir(), "state.db");
    const setup = track(openSqliteStore(path));
    const s = setup.createSession({ source: "cli" });
    setup.appendMessage(s.id, { role: "user", content: "before" });
    setup.close();

    const holder = rawDb(path);
    holder.pragma("busy_timeout = 0");
    holder.exec("BEGIN EXCLUSIVE");
    try {
      const store = track(openSqliteStore(path, { busyTimeoutMs: 20, retryBudgetMs: 250 }));
      // Readers still work in WAL mode while a writer holds the lock.
      expect(store.conversation(s.id)).toEqual([{ role: "user", content: "before" }]);
      const error = failure(() => store.appendMessage(s.id, { role: "user", content: "blocked" }));
      expect(error.code).toBe("locked");
      expect(error.message).toContain(path);
      expect(error.message).toMatch(/another process/);
    } finally {
      holder.exec("ROLLBACK");
      holder.close();
    }
    const after = track(openSqliteStore(path, { readonly: true }));
    expect(after.conversation(s.id)).toEqual([{ role: "user", content: "before" }]);
  });

  it("opening gives up with `locked` on a rollback-journal file held exclusively, leaving it as it was", () => {
    const path = join(dir(), "state.db");
    const holder = rawDb(path);
    holder.exec("CREATE TABLE t (x); INSERT INTO t VALUES (1);");
    holder.pragma("busy_timeout = 0");
    holder.exec("BEGIN EXCLUSIVE; INSERT INTO t VALUES (2);");
    const bytes = readFileSync(path);
    try {
      const error = failure(() => openSqliteStore(path, { busyTimeoutMs: 20, retryBudgetMs: 200 }));
      expect(error.code).toBe("locked");
      expect(error.message).toContain(path);
      expect(readFileSync(path).equals(bytes)).toBe(true);
    } finally {
      holder.exec("ROLLBACK");
      holder.close();
    }
  });
});
