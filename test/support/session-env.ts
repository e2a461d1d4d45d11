/**
 * A temporary home, working directory and state.db for in-process ChatSession tests; every store
 * opened this way is closed after each test.
 *
 *   const setup = useSessionEnvs("hermes-chat-session-");
 *   const { store, db, cwd, home } = setup();
 *
 * `store` is the asynchronous `SessionStore` the code under test is given; `db` is its synchronous
 * SQLite engine (the same connection), for a test to look at what was written.
 */
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { openSessionStore, type SqliteSessionStore } from "../../src/state/sqlite-store.js";
import type { SqliteSessionStoreHandle } from "../../src/state/types.js";

export interface SessionEnv {
  store: SqliteSessionStore;
  db: SqliteSessionStoreHandle;
  cwd: string;
  home: string;
}

export function useSessionEnvs(prefix: string): () => SessionEnv {
  const stores: SqliteSessionStore[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
  });
  return () => {
    const root = mkdtempSync(join(tmpdir(), prefix));
    const cwd = join(root, "work");
    const home = join(root, "home");
    mkdirSync(cwd);
    mkdirSync(home);
    const store = openSessionStore(join(home, "state.db"));
    stores.push(store);
    return { store, db: store.engine, cwd, home };
  };
}
