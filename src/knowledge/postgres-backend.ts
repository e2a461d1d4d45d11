/**
 * The PostgreSQL state backend (`state.backend: postgres`): one pool on the configured database,
 * the schema migrated to this build's version, and every store of `StateBackend` as its PostgreSQL
 * implementation. Imported only by `openStateBackend` for a postgres home, so a SQLite home never
 * loads `pg` or this module.
 *
 * A store this build has no PostgreSQL implementation of is an error at open, naming it: the
 * backend never keeps part of the state in the home's files while the rest is in the database.
 */
import { hostname } from "node:os";
import { dirname, join } from "node:path";
import type { HermesConfig } from "../config/defaults.js";
import type { StateBackendChoice } from "../state/backend-config.js";
import { type Coordinator, localCoordinator } from "../state/coordination.js";
import type { PairingRecords } from "../state/gateway/pairing.js";
import type { ResponseRecords } from "../state/gateway/response-records.js";
import type { ChatSessionIndex } from "../state/gateway/session-index.js";
import type { WebhookDeliveries } from "../state/gateway/webhook-deliveries.js";
import type { WebhookSubscriptions } from "../state/gateway/webhook-subscriptions.js";
import { openPgDatabase, type PgDatabase } from "../state/postgres/database.js";
import { pgChatSettings, pgPendingApprovals } from "../state/postgres/gateway-approvals.js";
import { pgLearningCalls } from "../state/postgres/learning-calls.js";
import { migrate } from "../state/postgres/migrate.js";
import { MIGRATIONS } from "../state/postgres/migrations/index.js";
import type { SessionStore } from "../state/types.js";
import type { CronJobs } from "./cron/store.js";
import type { SharedOptOuts } from "./home-extras-types.js";
import type { MemoryLimitConfig, MemoryRecords } from "./memory/store.js";
import { bundledSkillsDir } from "./skills/bundled.js";
import type { SharedHubLock } from "./skills/hub/lock-data.js";
import type { SkillWriteSink } from "./skills/types.js";
import type { SkillUsageRecords } from "./skills/usage.js";
import type { CommandAllowlist, StateBackend, StateBackendOptions } from "./state-backend-types.js";
import { type CronJobsOptions, registerKnowledgeStores } from "./stores.js";

type Made<T> = T | Promise<T>;

/** The skills kept in the database, mirrored to a folder each instance runs them from. */
export interface PgSkillMirror {
  /** Brings the local mirror up to date with the database. */
  refresh(): Promise<unknown>;
  /** Where the skill tools report their writes, so the database (every instance) gets them. */
  sink(): SkillWriteSink;
  /** The hub's provenance of installed skills (`skills/.hub/lock.json`), kept for every instance. */
  hubLock?: SharedHubLock;
  /** Refreshes the mirror whenever any process changes the skills in the database (`skill-watch.ts`). */
  watch?(onError: (line: string) => void): Promise<{ close(): Promise<void> }>;
  /** The opt-out lists of bundled skills, kept for every instance (written into the files at each refresh). */
  optOuts?: SharedOptOuts;
  /** Newer bundled versions of the skills the database holds, applied once for every instance. */
  seedBundled?(bundledDir: string | undefined): Promise<{ failed: Array<{ name: string; error: string }> }>;
}

/** The PostgreSQL implementation of each store, by the name its module exports. */
export interface PgFactories {
  openPgSessionStore(db: PgDatabase): Made<SessionStore>;
  pgChatSessionIndex(db: PgDatabase): Made<ChatSessionIndex>;
  pgPairingRecords(db: PgDatabase): Made<PairingRecords>;
  pgWebhookSubscriptions(db: PgDatabase): Made<WebhookSubscriptions>;
  pgResponseRecords(db: PgDatabase): Made<ResponseRecords>;
  pgWebhookDeliveries(db: PgDatabase): Made<WebhookDeliveries>;
  pgCommandAllowlist(db: PgDatabase): Made<CommandAllowlist>;
  pgCronJobs(db: PgDatabase, options?: CronJobsOptions & { home?: string }): CronJobs;
  pgMemoryRecords(db: PgDatabase, limits: MemoryLimitConfig): MemoryRecords;
  pgSkillUsageRecords(db: PgDatabase, options?: { home?: string }): Made<SkillUsageRecords>;
  pgSkillLibrary(db: PgDatabase, mirrorDir: string): Made<PgSkillMirror>;
  openPgCoordinator(
    db: PgDatabase,
    info: { host: string; pid: number; healthUrl?: string },
  ): Promise<Coordinator>;
}

const FACTORY_STORES: Record<keyof PgFactories, string> = {
  openPgSessionStore: "sessions and messages",
  pgChatSessionIndex: "the chat → session index",
  pgPairingRecords: "pairing and approved users",
  pgWebhookSubscriptions: "webhook subscriptions",
  pgResponseRecords: "the Responses store",
  pgWebhookDeliveries: "webhook delivery dedupe",
  pgCommandAllowlist: "the approvals allowlist",
  pgCronJobs: "cron jobs",
  pgMemoryRecords: "memories",
  pgSkillUsageRecords: "skill usage",
  pgSkillLibrary: "skills",
  openPgCoordinator: "coordination between instances",
};

/** The PostgreSQL store implementations this build carries. */
export async function pgFactories(): Promise<Partial<PgFactories>> {
  const [
    sessions,
    chatIndex,
    pairing,
    webhooks,
    responses,
    allowlist,
    coordination,
    cron,
    memory,
    usage,
    skills,
    hubLock,
    skillWatch,
    homeExtras,
    bundledSeed,
  ] = await Promise.all([
    import("../state/postgres/session-store.js"),
    import("../state/postgres/gateway-chat-index.js"),
    import("../state/postgres/gateway-pairing.js"),
    import("../state/postgres/gateway-webhooks.js"),
    import("../state/postgres/gateway-responses.js"),
    import("../state/postgres/gateway-allowlist.js"),
    import("../state/postgres/coordination.js"),
    import("./postgres/cron-jobs.js"),
    import("./postgres/memory-records.js"),
    import("./postgres/skill-usage.js"),
    import("./postgres/skill-library.js"),
    import("./postgres/hub-lock.js"),
    import("./postgres/skill-watch.js"),
    import("./postgres/home-extras.js"),
    import("./postgres/bundled-seed.js"),
  ]);
  return {
    openPgSessionStore: (db) => sessions.openPgSessionStore(db),
    pgChatSessionIndex: chatIndex.pgChatSessionIndex,
    pgPairingRecords: (db) => pairing.pgPairingRecords(db),
    pgWebhookSubscriptions: webhooks.pgWebhookSubscriptions,
    pgResponseRecords: (db) => responses.pgResponseRecords(db),
    pgWebhookDeliveries: (db) => webhooks.pgWebhookDeliveries(db),
    pgCommandAllowlist: allowlist.pgCommandAllowlist,
    pgCronJobs: (db, options) => cron.pgCronJobs(db, options),
    pgMemoryRecords: (db, limits) => memory.pgMemoryRecords(db, limits),
    pgSkillUsageRecords: (db, options) => usage.pgSkillUsageRecords(db, options),
    pgSkillLibrary: (db, mirrorDir) => {
      const library = skills.pgSkillLibrary(db, mirrorDir);
      // mirrorDir is <home>/skills; lock.json follows the database's entries after every refresh.
      const hub = hubLock.pgHubLock(db, dirname(mirrorDir), { channel: library.channel });
      // The opt-out files follow the database's lists after every refresh too.
      const optOuts = homeExtras.pgOptOuts(db, dirname(mirrorDir), { channel: library.channel });
      const refresh = async (options: { onlyChanged?: boolean } = {}) => {
        const report = await library.refresh(options);
        await hub.materialize();
        await optOuts.materialize();
        return report;
      };
      return {
        refresh: () => refresh(),
        sink: () => library.sink(),
        hubLock: hub,
        optOuts,
        seedBundled: async (bundledDir) => {
          const seeded = await bundledSeed.seedSharedBundled({
            db,
            home: dirname(mirrorDir),
            mirrorDir,
            bundledDir,
            putIn: (client, skill, putOptions) => library.putIn(client, skill, putOptions),
          });
          // This instance's own copy follows at once (the others by their watch).
          if (seeded.updated.length > 0) await refresh();
          return seeded;
        },
        // On a notification only the database's changes are applied (this process's own write in
        // flight is left to finish); the start-up refresh also puts back hand-changed folders.
        watch: (onError) =>
          skillWatch.watchSkills(db, library.channel, () => refresh({ onlyChanged: true }), { onError }),
      };
    },
    openPgCoordinator: (db, info) => coordination.openPgCoordinator(db, info),
  };
}

export class PostgresBackendError extends Error {
  override name = "PostgresBackendError";
}

/** The factories every store needs, or the error naming those this build lacks. */
export function requireFactories(found: Partial<PgFactories>): PgFactories {
  const missing = (Object.keys(FACTORY_STORES) as Array<keyof PgFactories>).filter((k) => !found[k]);
  if (missing.length > 0) {
    throw new PostgresBackendError(
      `PostgreSQL backend: ${missing.map((k) => FACTORY_STORES[k]).join(", ")} ${missing.length === 1 ? "is" : "are"} not available in this build. Set state.backend: sqlite to use this home's files.`,
    );
  }
  return found as PgFactories;
}

/** Opens the pool, migrates, and assembles the stores (see the file comment). */
export async function openPostgresBackend(
  home: string,
  config: HermesConfig,
  choice: Extract<StateBackendChoice, { kind: "postgres" }>,
  options: StateBackendOptions = {},
  factories: () => Promise<Partial<PgFactories>> = pgFactories,
): Promise<StateBackend> {
  const f = requireFactories(await factories());
  const db = await openPgDatabase(choice.url, { max: choice.poolSize });
  const undo: Array<() => unknown> = [() => db.close()];
  try {
    await migrate(db, MIGRATIONS);
    const sessions = await f.openPgSessionStore(db);
    undo.unshift(() => sessions.close());
    const skills = await f.pgSkillLibrary(db, join(home, "skills"));
    await skills.refresh();
    if (skills.seedBundled) {
      // A newer bundled version of a skill the database holds: once for every instance (bundled-seed.ts).
      const seeded = await skills
        .seedBundled(bundledSkillsDir({ ...(options.env ?? process.env) }))
        .catch((error: unknown) => ({ failed: [{ name: "bundled skills", error: String(error) }] }));
      const onWarning = options.onWarning ?? ((line: string) => process.stderr.write(`hermes: ${line}\n`));
      for (const miss of seeded.failed)
        onWarning(`bundled skill not updated for every instance: ${miss.name}: ${miss.error}`);
    }
    if (options.joinInstances !== false && skills.watch) {
      // A gateway instance keeps its copy current as other processes change the skills.
      const onWarning = options.onWarning ?? ((line: string) => process.stderr.write(`hermes: ${line}\n`));
      const watch = await skills.watch(onWarning);
      undo.unshift(() => watch.close());
    }
    const coordinator =
      options.joinInstances === false
        ? localCoordinator(options.instance ?? {})
        : await f.openPgCoordinator(db, {
            host: options.instance?.host ?? hostname(),
            pid: process.pid,
            ...(options.instance?.healthUrl ? { healthUrl: options.instance.healthUrl } : {}),
          });
    undo.unshift(() => coordinator.close());
    const [chatIndex, pairing, storedSubscriptions, allowlist, usage] = await Promise.all([
      f.pgChatSessionIndex(db),
      f.pgPairingRecords(db),
      f.pgWebhookSubscriptions(db),
      f.pgCommandAllowlist(db),
      f.pgSkillUsageRecords(db, { home }),
    ]);
    // Read once now, so discovery's labels (its synchronous `snapshot`) are the database's from the start.
    await usage.read().catch(() => undefined);
    const extras = await import("./postgres/home-extras.js");
    const responses = await f.pgResponseRecords(db);
    const deliveries = await f.pgWebhookDeliveries(db);
    const subscriptions = announcingChanges(storedSubscriptions, coordinator);
    // "Always" answers given on any instance approve here too: the database's list joins config.yaml's.
    config.command_allowlist = [
      ...new Set([...(config.command_allowlist ?? []), ...(await allowlist.list())]),
    ];
    const knowledge = {
      learningCalls: () => pgLearningCalls(db),
      // The home: a job's script must resolve inside this instance's scripts/ folder.
      cronJobs: (o?: CronJobsOptions) => f.pgCronJobs(db, { ...o, home }),
      memory: (limits: MemoryLimitConfig = {}) => f.pgMemoryRecords(db, limits),
      skillUsage: usage,
      // Every writer of skills/ (tools, hub, curator, snapshot import, bundled resets) reports here.
      skillSink: skills.sink(),
      ...(skills.hubLock ? { hubLock: skills.hubLock } : {}),
      ...(skills.optOuts ? { optOuts: skills.optOuts } : {}),
      pendingWrites: extras.pgPendingWrites(db),
      curatorReports: extras.pgCuratorReports(db),
    };
    const unregister = registerKnowledgeStores(home, knowledge);
    let closed: Promise<void> | undefined;
    return {
      kind: "postgres",
      label: choice.label,
      coordinator,
      ...knowledge,
      openSessions: () => shared(sessions, { drain: async () => true }),
      chatIndex: () => chatIndex,
      pairing,
      webhookSubscriptions: subscriptions,
      sharedWebhooks: { subscriptions, deliveries },
      // One store on the pool for every surface: a surface "closing" it leaves it to the backend.
      openResponses: () => shared(responses, {}),
      commandAllowlist: allowlist,
      pendingApprovals: pgPendingApprovals(db),
      chatSettings: pgChatSettings(db),
      close: () => {
        closed ??= (async () => {
          unregister();
          for (const step of undo) await step();
        })();
        return closed;
      },
    };
  } catch (error) {
    for (const step of undo) await Promise.resolve(step()).catch(() => undefined);
    const message = error instanceof Error ? error.message : String(error);
    throw new PostgresBackendError(
      `PostgreSQL backend at ${choice.label}: ${message.split(choice.url).join(choice.label)}`,
    );
  }
}

/** The topic every instance's webhook server re-reads its routes on (`gateway/coordination/reloads.ts`). */
export const WEBHOOK_RELOAD_TOPIC = "reload.webhooks";

/**
 * Subscriptions whose every subscribe and remove tells the instances (`reload.webhooks`), so each
 * webhook server serves the change at once instead of at its next read. The change is committed
 * before the announcement; one that cannot be sent is left to that read (at most 2 s later).
 */
function announcingChanges(store: WebhookSubscriptions, coordinator: Coordinator): WebhookSubscriptions {
  const announce = () =>
    coordinator.publish(WEBHOOK_RELOAD_TOPIC, { kind: "webhooks" }).catch(() => undefined);
  return {
    list: () => store.list(),
    get: (name) => store.get(name),
    save: async (name, route) => {
      const saved = await store.save(name, route);
      await announce();
      return saved;
    },
    remove: async (name) => {
      const removed = await store.remove(name);
      if (removed) await announce();
      return removed;
    },
  };
}

/**
 * One of the backend's stores as a surface sees it: `close` is the backend's (the surface's close
 * does nothing), and `extra` adds what the surface expects beside the contract (`drain`: nothing is
 * ever queued, each write is a statement on the pool).
 */
function shared<T extends object, E extends object>(store: T, extra: E): T & E {
  const own: Record<PropertyKey, unknown> = { ...extra, close: async () => undefined };
  return new Proxy(store, {
    get(target, prop) {
      if (Object.hasOwn(own, prop)) return own[prop];
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as T & E;
}
