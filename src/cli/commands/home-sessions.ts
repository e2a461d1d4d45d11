/**
 * The session store a CLI command reads: the home's state.db, or, when the home's config says
 * `state.backend: postgres`, the shared database's sessions (the same ones every gateway instance
 * writes). Only the session store is opened there: a CLI command is not a gateway instance, so it
 * registers nothing with the other instances. A config.yaml that does not load leaves the command
 * on state.db as before (the command that edits config is where that error belongs).
 */
import { existsSync } from "node:fs";
import { stateBackendChoice } from "../../state/backend-config.js";
import type { QueuedSessionStore } from "../../state/queued-store.js";
import { openSessionStore, sessionStorePath } from "../../state/sqlite-store.js";
import type { SessionStore } from "../../state/types.js";
import { loadHomeConfig } from "../home-env.js";

function postgresChoice(home: string, env: Record<string, string | undefined>) {
  let loaded: ReturnType<typeof loadHomeConfig>;
  try {
    loaded = loadHomeConfig(home, env);
  } catch {
    return undefined;
  }
  const choice = stateBackendChoice(loaded.config.state, loaded.env);
  return choice.kind === "postgres" ? choice : undefined;
}

/** Opens the shared database's session store (the schema must be there: an instance migrates it). */
async function openPostgresSessions(url: string): Promise<SessionStore> {
  const { openPgDatabase } = await import("../../state/postgres/database.js");
  const { openPgSessionStore } = await import("../../state/postgres/session-store.js");
  const db = await openPgDatabase(url, { max: 2, applicationName: "hermes cli" });
  try {
    return await openPgSessionStore(db, { closeDatabase: true });
  } catch (error) {
    await db.close();
    throw error;
  }
}

/**
 * A chat's session store on a postgres home: the shared sessions, with the write-queue controls a
 * chat uses answered for a store that queues nothing (each write is awaited before the next step).
 * Undefined on a SQLite home (the chat opens state.db as before).
 */
export async function openPostgresChatStore(
  home: string,
  env: Record<string, string | undefined>,
): Promise<QueuedSessionStore | undefined> {
  const choice = postgresChoice(home, env);
  if (!choice) return undefined;
  const store = await openPostgresSessions(choice.url);
  const controls: Record<PropertyKey, unknown> = {
    pendingWrites: 0,
    pendingMessages: 0,
    flush: () => true,
    drain: async () => true,
  };
  return new Proxy(store, {
    get(target, prop) {
      if (Object.hasOwn(controls, prop)) return controls[prop];
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as QueuedSessionStore;
}

/** The home's session store, or null when it has none yet (no state.db on a SQLite home). */
export async function openHomeSessions(
  home: string,
  options: { readonly?: boolean; env?: Record<string, string | undefined> } = {},
): Promise<SessionStore | null> {
  const choice = postgresChoice(home, options.env ?? process.env);
  if (choice) return openPostgresSessions(choice.url);
  const path = sessionStorePath(home);
  if (!existsSync(path)) return null;
  return openSessionStore(path, { readonly: options.readonly ?? false });
}
