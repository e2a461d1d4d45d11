/**
 * The knowledge stores a tool or the agent reaches by its home (`ctx.home`): cron jobs, memory
 * entries and skill usage. A home on the file backend gets the file stores (cron/jobs.json,
 * memories/*.md, skills/.usage.json) exactly as before. A state backend that keeps them elsewhere
 * (PostgreSQL) registers its own for the home while it is open (`registerKnowledgeStores`), so
 * every tool, review and cron run in that process reads and writes the shared copy.
 */
import { resolve } from "node:path";
import type { LearningCall } from "../state/learning-calls.js";
import { type CronJobs, CronStore, cronJobs } from "./cron/store.js";
import type { CuratorReportRecords, PendingWriteRecords, SharedOptOuts } from "./home-extras-types.js";
import { type MemoryLimitConfig, type MemoryRecords, MemoryStore, memoryRecords } from "./memory/store.js";
import type { SharedHubLock } from "./skills/hub/lock-data.js";
import type { SkillWriteSink } from "./skills/types.js";
import { type SkillUsageRecords, skillUsageFile } from "./skills/usage.js";

/** How a caller's cron view is set up (the zone schedules are read in, the clock, `~`). */
export interface CronJobsOptions {
  timezone?: string;
  now?: () => number;
  userHome?: string;
}

export interface KnowledgeStores {
  /** Cron jobs and their outputs. */
  cronJobs(options?: CronJobsOptions): CronJobs;
  /** MEMORY.md / USER.md entries under the configured character limits. */
  memory(limits?: MemoryLimitConfig): MemoryRecords;
  /**
   * The memory and skill_manage calls recorded in the sessions (the learning timeline) when the
   * backend keeps them outside the home (PostgreSQL, every instance's); absent for a file home,
   * whose state.db is read.
   */
  learningCalls?(): Promise<LearningCall[]>;
  /** Skill use counts, pins and curator state. */
  readonly skillUsage: SkillUsageRecords;
  /**
   * Where the skill tools report a skill they wrote or deleted, beside the folder on disk: the
   * PostgreSQL backend stores it for every instance. Absent for a file home (the folder is all).
   */
  readonly skillSink?: SkillWriteSink;
  /**
   * The hub's provenance of installed skills (`skills/.hub/lock.json`) when the backend keeps it
   * for every instance (PostgreSQL); absent for a file home (lock.json is all).
   */
  readonly hubLock?: SharedHubLock;
  /**
   * The opt-out lists of bundled skills, writes staged for approval and the curator's reports when
   * the backend keeps them for every instance (PostgreSQL); absent for a file home (its files).
   */
  readonly optOuts?: SharedOptOuts;
  readonly pendingWrites?: PendingWriteRecords;
  readonly curatorReports?: CuratorReportRecords;
}

/** The file stores of `home`. */
export function fileKnowledgeStores(home: string): KnowledgeStores {
  return {
    cronJobs: (options = {}) =>
      cronJobs(
        new CronStore({
          home,
          ...(options.timezone ? { timezone: options.timezone } : {}),
          ...(options.now ? { now: options.now } : {}),
          ...(options.userHome ? { userHome: options.userHome } : {}),
        }),
      ),
    memory: (limits = {}) => memoryRecords(MemoryStore.forHome(home, limits)),
    skillUsage: skillUsageFile(home),
  };
}

const registered = new Map<string, KnowledgeStores>();

/** The stores of `home`: the ones a backend registered for it, else the files. */
export function knowledgeStores(home: string): KnowledgeStores {
  return registered.get(resolve(home)) ?? fileKnowledgeStores(home);
}

/**
 * The skill usage a backend registered for `home` (PostgreSQL), or undefined on a file home, for
 * readers whose file path must stay exactly as it was (they read `skills/.usage.json` themselves).
 */
export function registeredSkillUsage(home: string): SkillUsageRecords | undefined {
  return registered.get(resolve(home))?.skillUsage;
}

/** Makes `stores` the ones `knowledgeStores(home)` answers until the returned function is called. */
export function registerKnowledgeStores(home: string, stores: KnowledgeStores): () => void {
  const key = resolve(home);
  registered.set(key, stores);
  return () => {
    if (registered.get(key) === stores) registered.delete(key);
  };
}
