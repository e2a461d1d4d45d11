/**
 * `cron/jobs.json`, shared with Python Hermes: `{"jobs": [...], "updated_at": ISO}`, two-space
 * indented, mode 600. Every read-modify-write holds the flock Python takes (`cron/.jobs.lock`) and
 * re-reads the file under it, and the file is replaced atomically. Fields this code does not know
 * are written back unchanged. A file that does not parse is never overwritten: every call fails
 * with an error naming it until a person fixes or moves it.
 */
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { type Asynchronous, asyncView } from "../../state/async-view.js";
import { atomicWriteFile } from "../../util/atomic-write.js";
import { withFileLock } from "../../util/file-lock.js";
import { redactText } from "../../util/redact.js";
import {
  buildJob,
  type CronRules,
  CronStoreError,
  cronIso,
  isRecord,
  jobIndex,
  jobNotFound,
  markJobDue,
  normalizeJob,
  pauseJob,
  prepareEdit,
  resumeJob,
  SAFE_JOB_ID,
} from "./job-ops.js";
import { type CronOutputEntry, type CronOutputText, listOutputFiles, readOutputFile } from "./outputs.js";
import { readStoredTime, systemTimezone } from "./time.js";
import type { CronJob, CronJobPatch, NewCronJob } from "./types.js";

export { CronStoreError } from "./job-ops.js";

export interface CronStoreOptions {
  /** HERMES_HOME. */
  home: string;
  /** Clock in ms. */
  now?: () => number;
  /** config.yaml `timezone`; default this machine's zone. */
  timezone?: string;
  /** How long a write waits for another process's lock (default 30 s, as Python). */
  lockTimeoutMs?: number;
  /** The user's home, for a script given as `~/.hermes/scripts/x.sh`. */
  userHome?: string;
}

/** Outputs kept per job (config `cron.output_retention`, Hermes default 50). */
export const DEFAULT_OUTPUT_RETENTION = 50;

export class CronStore {
  readonly home: string;
  readonly dir: string;
  readonly path: string;
  readonly timezone: string;
  private readonly now: () => number;
  private readonly lockTimeoutMs: number;
  private readonly userHome: string | undefined;

  constructor(options: CronStoreOptions) {
    this.userHome = options.userHome;
    this.home = options.home;
    this.dir = join(options.home, "cron");
    this.path = join(this.dir, "jobs.json");
    this.timezone = options.timezone || systemTimezone();
    this.now = options.now ?? Date.now;
    this.lockTimeoutMs = options.lockTimeoutMs ?? 30_000;
  }

  /** Now as Hermes writes it (ISO with offset in the configured zone). */
  iso(ms: number = this.now()): string {
    return cronIso(this.rules, ms);
  }

  /** The rules' view of this store (job-ops.ts). */
  private get rules(): CronRules {
    return { home: this.home, timezone: this.timezone, now: this.now, userHome: this.userHome };
  }

  /** The jobs on disk; [] when there is no file. Throws `CronStoreError` for a broken file. */
  list(): CronJob[] {
    return this.read().jobs;
  }

  /** A job by id, or by exact name when no id matches; undefined when neither does. */
  find(idOrName: string): CronJob | undefined {
    const jobs = this.list();
    return jobs.find((j) => j.id === idOrName) ?? jobs.find((j) => j.name === idOrName);
  }

  /**
   * Runs `fn` on the jobs read under the lock, then saves what it leaves in the array (it mutates
   * the records or the array). When `fn` throws, nothing is written.
   */
  async update<T>(fn: (jobs: CronJob[]) => T | Promise<T>): Promise<T> {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    return withFileLock(
      this.path,
      async () => {
        const file = this.read();
        const result = await fn(file.jobs);
        await this.write(file.extra, file.jobs);
        return result;
      },
      { lockPath: join(this.dir, ".jobs.lock"), timeoutMs: this.lockTimeoutMs },
    );
  }

  /** Adds a job; throws `CronScheduleError` for a schedule that does not parse (nothing written). */
  async create(input: NewCronJob): Promise<CronJob> {
    const job = buildJob(this.rules, input, () => this.list());
    await this.update((jobs) => {
      jobs.push(job);
    });
    return job;
  }

  /** Changes a job; a new schedule is parsed first and recomputes `next_run_at`. */
  async edit(idOrName: string, patch: CronJobPatch): Promise<CronJob> {
    return this.withJob(
      idOrName,
      prepareEdit(this.rules, patch, () => this.list()),
    );
  }

  /** Stops a job from running until `resume`. */
  pause(idOrName: string, reason?: string): Promise<CronJob> {
    return this.withJob(idOrName, (job) => pauseJob(this.rules, job, reason));
  }

  /** Lets a paused job run again from its next scheduled time (a missed time is not caught up). */
  resume(idOrName: string): Promise<CronJob> {
    return this.withJob(idOrName, (job) => resumeJob(this.rules, job));
  }

  /** Makes a job due now; the next tick runs it (once), then its schedule goes on as before. */
  markDue(idOrName: string): Promise<CronJob> {
    return this.withJob(idOrName, (job) => markJobDue(this.rules, job));
  }

  /** Deletes a job and its saved outputs; returns the removed record. */
  async remove(idOrName: string): Promise<CronJob> {
    const removed = await this.update((jobs) => {
      const at = jobIndex(jobs, idOrName);
      if (at < 0) throw jobNotFound(idOrName, jobs);
      return jobs.splice(at, 1)[0] as CronJob;
    });
    const dir = this.outputDir(removed.id);
    if (dir) rmSync(dir, { recursive: true, force: true });
    return removed;
  }

  /** `cron/output/<id>`, or undefined when the id could escape that folder. */
  outputDir(id: string): string | undefined {
    return SAFE_JOB_ID.test(id) ? join(this.dir, "output", id) : undefined;
  }

  /** The job's saved outputs, newest first ([] for none or an id that names no folder). */
  listOutputs(id: string): CronOutputEntry[] {
    return listOutputFiles(this.outputDir(id));
  }

  /** At most `maxBytes` of one saved output by its listed name; undefined when there is none. */
  readOutput(id: string, name: string, maxBytes: number): CronOutputText | undefined {
    return readOutputFile(this.outputDir(id), name, maxBytes);
  }

  /**
   * Saves one run's output as `cron/output/<id>/<YYYY-MM-DD_HH-MM-SS>.md` (local wall time, as
   * Python names them) and keeps the newest `retention`. Returns the file's path.
   */
  async saveOutput(
    id: string,
    text: string,
    at: number,
    retention = DEFAULT_OUTPUT_RETENTION,
  ): Promise<string> {
    const dir = this.outputDir(id);
    if (!dir) throw new CronStoreError(`Job id "${id}" cannot name an output folder.`);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const stamp = this.iso(at).slice(0, 19).replace("T", "_").replace(/:/g, "-");
    let path = join(dir, `${stamp}.md`);
    for (let n = 2; existsSync(path); n++) path = join(dir, `${stamp}-${n}.md`);
    // A run's answer is history like any other: known secrets and key shapes never reach the file.
    await atomicWriteFile(path, redactText(text), { mode: 0o600 });
    const files = readdirSync(dir)
      .filter((f) => f.endsWith(".md"))
      .sort();
    for (const old of files.slice(0, Math.max(0, files.length - Math.max(1, retention)))) {
      rmSync(join(dir, old), { force: true });
    }
    return path;
  }

  private async withJob(idOrName: string, fn: (job: CronJob) => void): Promise<CronJob> {
    return this.update((jobs) => {
      const at = jobIndex(jobs, idOrName);
      if (at < 0) throw jobNotFound(idOrName, jobs);
      const job = jobs[at] as CronJob;
      fn(job);
      return { ...job };
    });
  }

  private read(): { jobs: CronJob[]; extra: Record<string, unknown> } {
    let text: string;
    try {
      text = readFileSync(this.path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return { jobs: [], extra: {} };
      throw new CronStoreError(`Could not read ${this.path}: ${(error as Error).message}`);
    }
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    if (text.trim() === "") return { jobs: [], extra: {} };
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (error) {
      throw new CronStoreError(
        `${this.path} is not valid JSON (${(error as Error).message}). It was left untouched: fix it by hand, ` +
          "or move it aside to start with no jobs.",
      );
    }
    const raw = Array.isArray(data) ? data : isRecord(data) ? data["jobs"] : undefined;
    if (!Array.isArray(raw)) {
      throw new CronStoreError(
        `${this.path} does not hold {"jobs": [...]}. It was left untouched: fix it by hand, or move it aside.`,
      );
    }
    const extra: Record<string, unknown> = isRecord(data) ? { ...data } : {};
    delete extra["jobs"];
    delete extra["updated_at"];
    return { jobs: raw.filter(isRecord).map(normalizeJob), extra };
  }

  private async write(extra: Record<string, unknown>, jobs: CronJob[]): Promise<void> {
    const body = `${JSON.stringify({ jobs, updated_at: this.iso(), ...extra }, null, 2)}\n`;
    await atomicWriteFile(this.path, body, { mode: 0o600 });
    try {
      chmodSync(this.path, 0o600);
    } catch {
      // Best effort (the write already succeeded).
    }
  }
}

/** Whether the scheduler may run the job (enabled, not paused, not finished). */
export function isRunnable(job: CronJob): boolean {
  return job.enabled !== false && job.state !== "paused" && !job.paused_at && job.state !== "completed";
}

/** The job's next run in ms, or undefined when it has none. */
export function nextRunMs(job: CronJob): number | undefined {
  return readStoredTime(job.next_run_at);
}

/** The store methods `CronJobs` exposes (without `update`, which a backend adds). */
export const CRON_METHODS = [
  "list",
  "find",
  "create",
  "edit",
  "pause",
  "resume",
  "markDue",
  "remove",
  "saveOutput",
  "listOutputs",
  "readOutput",
] as const;

/**
 * Cron jobs and their run output as a backend other than `cron/jobs.json` provides them
 * (asynchronous, see async-view.ts); `cronJobs` puts `CronStore` behind it. `update` is the
 * scheduler's read-modify-write of every job at once (a transaction over locked rows elsewhere).
 */
export type CronJobs = Asynchronous<Pick<CronStore, (typeof CRON_METHODS)[number]>> & {
  /** The zone schedules are read in and times written in. */
  readonly timezone: string;
  /** A time as jobs record it (ISO with the zone's offset); now when `ms` is absent. */
  iso(ms?: number): string;
  /** Runs `fn` on every job, locked, then saves what it leaves; nothing is saved when it throws. */
  update<T>(fn: (jobs: CronJob[]) => T | Promise<T>): Promise<T>;
};

export function cronJobs(store: CronStore): CronJobs {
  return {
    ...asyncView(store, CRON_METHODS),
    timezone: store.timezone,
    iso: (ms) => store.iso(ms),
    update: (fn) => store.update(fn),
  };
}
