/**
 * The session store a CLI command reads: the home's state.db, or, when the home's config says
 * `state.backend: postgres`, the shared database's sessions (the same ones every gateway instance
 * writes). A chat there opens the home's whole state backend (`openPostgresChatStore`), so its
 * memory, cron jobs and skill usage are the database's too; it does not join the gateway
 * instances. A config.yaml that does not load leaves the command on state.db as before (the
 * command that edits config is where that error belongs).
 */
import { existsSync } from "node:fs";
import type { HermesConfig } from "../../config/defaults.js";
import type { CronJobs } from "../../knowledge/cron/store.js";
import type { MemoryRecords } from "../../knowledge/memory/store.js";
import type { SkillUsageRecords } from "../../knowledge/skills/usage.js";
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
 * A chat's session store on a postgres home, from the home's state backend opened as the gateway
 * opens it (without joining the gateway instances: a chat is not one). While it is open the
 * backend's knowledge stores are the home's (`knowledgeStores(home)`): the memory tool and the
 * prompt's memory snapshot use the database's MEMORY/USER entries, the cronjob tool creates jobs
 * the gateway instances run, and skill usage is counted there. The write-queue controls a chat
 * uses are answered for a store that queues nothing (each write is awaited before the next step).
 * Closing the store closes the backend. Undefined on a SQLite home (the chat opens state.db).
 */
export async function openPostgresChatStore(
  home: string,
  env: Record<string, string | undefined>,
  config?: HermesConfig,
): Promise<QueuedSessionStore | undefined> {
  if (!postgresChoice(home, env)) return undefined;
  const { openStateBackend } = await import("../../knowledge/state-backend.js");
  const loaded = config ? { config, env } : loadHomeConfig(home, env);
  const backend = await openStateBackend(home, loaded.config, { env: loaded.env, joinInstances: false });
  const store = backend.openSessions();
  const controls: Record<PropertyKey, unknown> = {
    pendingWrites: 0,
    pendingMessages: 0,
    flush: () => true,
    drain: async () => true,
    close: async () => {
      await store.close();
      await backend.close();
    },
  };
  return new Proxy(store, {
    get(target, prop) {
      if (Object.hasOwn(controls, prop)) return controls[prop];
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as unknown as QueuedSessionStore;
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

/**
 * A postgres home whose database did not answer: until the returned function is called, the
 * home's memory, cron and skill usage answer every call with `reason` instead of falling back to
 * the home's files, so nothing a chat saves lands where no other instance (or this home, once the
 * database is back) would read it.
 */
export async function refuseFileKnowledge(home: string, reason: string): Promise<() => void> {
  const { registerKnowledgeStores } = await import("../../knowledge/stores.js");
  const { DEFAULT_MEMORY_LIMITS } = await import("../../knowledge/memory/store.js");
  const refusing = <T>(fixed: Record<PropertyKey, unknown>): T =>
    new Proxy(fixed, {
      get: (target, prop) =>
        Object.hasOwn(target, prop)
          ? target[prop]
          : prop === "then"
            ? undefined
            : () => Promise.reject(new Error(reason)),
    }) as T;
  const memory = refusing<MemoryRecords>({ limits: DEFAULT_MEMORY_LIMITS });
  const usage = refusing<SkillUsageRecords>({});
  return registerKnowledgeStores(home, {
    cronJobs: () =>
      refusing<CronJobs>({
        timezone: "UTC",
        iso: (ms?: number) => new Date(ms ?? Date.now()).toISOString(),
      }),
    memory: () => memory,
    skillUsage: usage,
  });
}
