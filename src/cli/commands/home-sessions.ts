/**
 * The session store a CLI command reads: the home's state.db, or, when the home's config says
 * `state.backend: postgres`, the shared database's sessions (the same ones every gateway instance
 * writes). Only the session store is opened there: a CLI command is not a gateway instance, so it
 * registers nothing with the other instances. A config.yaml that does not load leaves the command
 * on state.db as before (the command that edits config is where that error belongs).
 */
import { existsSync } from "node:fs";
import { stateBackendChoice } from "../../state/backend-config.js";
import type { PgDatabase } from "../../state/postgres/database.js";
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
  return (await openPostgresPool(url)).store;
}

async function openPostgresPool(url: string): Promise<{ store: SessionStore; db: PgDatabase }> {
  const { openPgDatabase } = await import("../../state/postgres/database.js");
  const { openPgSessionStore } = await import("../../state/postgres/session-store.js");
  const db = await openPgDatabase(url, { max: 2, applicationName: "hermes cli" });
  try {
    return { store: await openPgSessionStore(db, { closeDatabase: true }), db };
  } catch (error) {
    await db.close();
    throw error;
  }
}

/**
 * The chat's skill usage is the shared database's too: its prompt index ranks by every
 * instance's uses, pins hold, and its own skill views are counted there. Registered for the home
 * until the chat's store closes; the other knowledge stores stay as they were.
 */
async function shareSkillUsage(home: string, db: PgDatabase): Promise<() => void> {
  const { pgSkillUsageRecords } = await import("../../knowledge/postgres/skill-usage.js");
  const { knowledgeStores, registerKnowledgeStores } = await import("../../knowledge/stores.js");
  const usage = pgSkillUsageRecords(db, { home });
  // Read once now, so discovery's labels are the database's from the first prompt.
  await usage.read().catch(() => undefined);
  return registerKnowledgeStores(home, { ...knowledgeStores(home), skillUsage: usage });
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
  const { store, db } = await openPostgresPool(choice.url);
  const unshare = await shareSkillUsage(home, db);
  const controls: Record<PropertyKey, unknown> = {
    pendingWrites: 0,
    pendingMessages: 0,
    flush: () => true,
    drain: async () => true,
    close: async () => {
      unshare();
      await store.close();
    },
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
