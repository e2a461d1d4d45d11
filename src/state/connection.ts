/**
 * One SQLite connection to `state.db`: loading the native driver on first use, opening without
 * ever damaging a file it cannot read, retrying writers that meet another process's lock, and
 * turning SQLite errors into `SessionStoreError`s a person can act on.
 */
import { closeSync, existsSync, mkdirSync, openSync, readSync, statSync } from "node:fs";
import { dirname } from "node:path";
// The driver's JavaScript is small and is bundled into the CLI (covered by its code cache, no
// module resolution at start); its native addon is loaded by the first open (scripts/build.mjs
// points the driver's addon lookup straight at the file).
import BetterSqlite3 from "better-sqlite3";
import { SessionStoreError } from "./types.js";

export type Db = BetterSqlite3.Database;
export type Statement = BetterSqlite3.Statement;
type Driver = typeof BetterSqlite3;

/** The driver; its native addon loads with the first database opened. */
export function loadDriver(): Driver {
  return BetterSqlite3;
}

export function sqliteCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : "";
}

export function isBusy(error: unknown): boolean {
  const code = sqliteCode(error);
  return code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED");
}

export function isCorrupt(error: unknown): boolean {
  const code = sqliteCode(error);
  return code.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB";
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function corruptError(path: string, error: unknown): SessionStoreError {
  return new SessionStoreError(
    "corrupt",
    `${path} is not a readable SQLite database (${messageOf(error)}); nothing was changed. ` +
      "Run `hermes sessions repair --check` to inspect it; the next `hermes` chat moves it aside " +
      "(state.db.corrupt-<time>) and starts a new one, and `hermes sessions repair --from <that file>` recovers what it can.",
  );
}

export function lockedError(path: string, waitedMs: number, error: unknown): SessionStoreError {
  return new SessionStoreError(
    "locked",
    `${path} is locked: another process holds it (still busy after ${(waitedMs / 1000).toFixed(1)} s of retries: ` +
      `${messageOf(error)}). Close the other Hermes process or try again.`,
  );
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Blocks the thread for `ms` milliseconds (the store's API is synchronous, like SQLite's). */
export function sleepSync(ms: number): void {
  if (ms > 0) Atomics.wait(sleeper, 0, 0, ms);
}

/**
 * Runs `attempt` until it does not throw SQLITE_BUSY/SQLITE_LOCKED, sleeping a jittered,
 * exponentially growing delay between tries (full jitter, 10 ms doubling to 400 ms), so several
 * processes that collide do not retry in lockstep. Gives up with `locked` once `budgetMs` is spent.
 */
export function withBusyRetry<T>(path: string, budgetMs: number, attempt: () => T): T {
  const started = Date.now();
  let ceiling = 10;
  for (;;) {
    try {
      return attempt();
    } catch (error) {
      if (!isBusy(error)) throw error;
      const waited = Date.now() - started;
      if (waited >= budgetMs) throw lockedError(path, waited, error);
      const delay = Math.min(budgetMs - waited, Math.max(1, Math.random() * ceiling));
      ceiling = Math.min(400, ceiling * 2);
      sleepSync(delay);
    }
  }
}

const SQLITE_HEADER = "SQLite format 3\u0000";

/**
 * Checks the first bytes of an existing file before SQLite touches it: a file that is neither empty
 * nor a SQLite database is refused here, so nothing is ever written over it.
 */
export function checkHeader(path: string): void {
  let size: number;
  try {
    const st = statSync(path);
    if (st.isDirectory())
      throw new SessionStoreError("corrupt", `${path} is a directory, not a SQLite database.`);
    size = st.size;
  } catch (error) {
    if (error instanceof SessionStoreError) throw error;
    return;
  }
  if (size === 0) return;
  const fd = openSync(path, "r");
  try {
    const buf = Buffer.alloc(16);
    const n = readSync(fd, buf, 0, 16, 0);
    if (n < 16 || buf.toString("latin1") !== SQLITE_HEADER) {
      throw corruptError(path, new Error("the file does not start with the SQLite header"));
    }
  } finally {
    closeSync(fd);
  }
}

export interface ConnectOptions {
  readonly: boolean;
  busyTimeoutMs: number;
  retryBudgetMs: number;
  synchronous: "FULL" | "NORMAL";
}

/**
 * Opens the file with the pragmas every connection needs. A missing file is created (with its
 * directory) unless `readonly`; an unreadable one throws `corrupt` before anything is written.
 */
export function connect(path: string, options: ConnectOptions): Db {
  const Database = loadDriver();
  if (options.readonly) {
    if (!existsSync(path)) {
      throw new SessionStoreError(
        "not_found",
        `${path} does not exist; there are no sessions to read. Nothing was created.`,
      );
    }
    if (statSync(path).isFile() && statSync(path).size === 0) {
      // Read-only commands report it; the next chat moves it aside (state/recording-store.ts).
      throw new SessionStoreError(
        "corrupt",
        `${path} is empty (0 bytes): it holds no sessions; nothing was changed. The next \`hermes\` chat ` +
          "moves it aside (state.db.corrupt-<time>) and starts a new one.",
      );
    }
  } else {
    mkdirSync(dirname(path), { recursive: true });
    // The history holds everything said and run: owner-only. SQLite gives the -wal and -shm files
    // the database file's permissions, so creating it 0600 covers them too.
    if (!existsSync(path)) closeSync(openSync(path, "a", 0o600));
  }
  if (existsSync(path)) checkHeader(path);
  let db: Db;
  try {
    db = new Database(path, { readonly: options.readonly, fileMustExist: options.readonly });
  } catch (error) {
    if (isCorrupt(error)) throw corruptError(path, error);
    throw new SessionStoreError("invalid", `cannot open ${path}: ${messageOf(error)}`);
  }
  try {
    withBusyRetry(path, options.retryBudgetMs, () => {
      db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs))}`);
      // Reading the schema is the first real access: it fails here for a file that is not a database.
      db.prepare("SELECT COUNT(*) FROM sqlite_master").get();
      if (!options.readonly) {
        const mode = String(db.pragma("journal_mode", { simple: true })).toLowerCase();
        if (mode !== "wal") db.pragma("journal_mode = WAL");
      }
    });
    db.pragma("foreign_keys = ON");
    db.pragma(`synchronous = ${options.synchronous}`);
    db.pragma("cache_size = -32000");
    db.pragma("temp_store = MEMORY");
    return db;
  } catch (error) {
    db.close();
    if (error instanceof SessionStoreError) throw error;
    if (isCorrupt(error)) throw corruptError(path, error);
    throw error;
  }
}

/** An in-memory database from the same driver (used to read the DDL's column lists back). */
export function memoryDb(): Db {
  const Database = loadDriver();
  return new Database(":memory:");
}
