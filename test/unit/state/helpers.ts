import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type BetterSqlite3 from "better-sqlite3";
import { afterEach } from "vitest";
import { openSqliteStore } from "../../../src/state/sqlite-store.js";
import type { OpenOptions, SyncSessionStore } from "../../../src/state/types.js";

/** A fresh temp directory per call; directories and open stores are cleaned up after each test. */
export function useTempStores(): {
  dir: () => string;
  open: (path?: string, options?: OpenOptions) => SyncSessionStore;
  track: (store: SyncSessionStore) => SyncSessionStore;
} {
  const dirs: string[] = [];
  const stores: SyncSessionStore[] = [];
  afterEach(() => {
    for (const s of stores.splice(0)) {
      try {
        s.close();
      } catch {
        // already closed
      }
    }
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const dir = () => {
    const d = mkdtempSync(join(tmpdir(), "hermes-state-"));
    dirs.push(d);
    return d;
  };
  const track = (store: SyncSessionStore) => {
    stores.push(store);
    return store;
  };
  return {
    dir,
    track,
    open: (path, options) => track(openSqliteStore(path ?? join(dir(), "state.db"), options)),
  };
}

/** better-sqlite3 opened directly, for looking at the file the way another program would. */
export function rawDb(path: string, options: BetterSqlite3.Options = {}): BetterSqlite3.Database {
  const require = createRequire(import.meta.url);
  const Database = require("better-sqlite3") as typeof BetterSqlite3;
  return new Database(path, options);
}

/** A clock the test moves by hand (seconds). */
export function manualClock(start = 1_760_000_000): {
  now: () => number;
  advance: (s: number) => void;
  set: (s: number) => void;
} {
  let t = start;
  return {
    now: () => t,
    advance: (s) => {
      t += s;
    },
    set: (s) => {
      t = s;
    },
  };
}

const ROOT = resolve(import.meta.dirname, "../../..");

/** A child process started by `spawnStoreScript`, with its output so far. */
export interface StoreScript {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  /** The exit code (null when killed by a signal). */
  exited: Promise<number | null>;
}

/**
 * Writes `source` to `<home>/<name>` and runs it in its own Node process under tsx, with the URL of
 * src/state/recording-store.ts as `process.argv[2]` and `home` as `process.argv[3]`, for tests that
 * exit or kill a writing process.
 */
export function spawnStoreScript(home: string, name: string, source: string): StoreScript {
  const script = join(home, name);
  writeFileSync(script, source);
  const tsx = createRequire(import.meta.url).resolve("tsx");
  const store = pathToFileURL(join(ROOT, "src/state/recording-store.ts")).href;
  const child = spawn(process.execPath, ["--import", pathToFileURL(tsx).href, script, store, home], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  return { child, out: () => out, err: () => err, exited };
}
