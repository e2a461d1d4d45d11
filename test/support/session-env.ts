/**
 * A temporary home, working directory and state.db for in-process ChatSession tests; every store
 * opened this way is closed after each test.
 *
 *   const setup = useSessionEnvs("hermes-chat-session-");
 *   const { store, cwd, home } = setup();
 */
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { openSqliteStore } from "../../src/state/sqlite-store.js";
import type { SyncSessionStore } from "../../src/state/types.js";

export interface SessionEnv {
  store: SyncSessionStore;
  cwd: string;
  home: string;
}

export function useSessionEnvs(prefix: string): () => SessionEnv {
  const stores: SyncSessionStore[] = [];
  afterEach(() => {
    for (const s of stores.splice(0)) s.close();
  });
  return () => {
    const root = mkdtempSync(join(tmpdir(), prefix));
    const cwd = join(root, "work");
    const home = join(root, "home");
    mkdirSync(cwd);
    mkdirSync(home);
    const store = openSqliteStore(join(home, "state.db"));
    stores.push(store);
    return { store, cwd, home };
  };
}
