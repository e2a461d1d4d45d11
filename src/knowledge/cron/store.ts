/**
 * `cron/jobs.json`, shared with Python Hermes: `{"jobs": [...], "updated_at": ISO}`, two-space
 * indented, mode 600. Every read-modify-write holds the flock Python takes (`cron/.jobs.lock`) and
 * re-reads the file under it, and the file is replaced atomically. Fields this code does not know
 * are written back unchanged. A file that does not parse is never overwritten: every call fails
 * with an error naming it until a person fixes or moves it.
 */
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { type Asynchronous, asyncView } from "../../state/async-view.js";
import { atomicWriteFile } from "../../util/atomic-write.js";
import { withFileLock } from "../../util/file-lock.js";
import { redactText } from "../../util/redact.js";
import { type CronOutputEntry, type CronOutputText, listOutputFiles, readOutputFile } from "./outputs.js";
import { CronScheduleError, isCronSchedule, nextRunAfter, parseSchedule } from "./schedule.js";
import { CronScriptPathError, normalizeScriptPath } from "./script-path.js";
import { formatIso, readStoredTime, systemTimezone } from "./time.js";
import type { CronJob, CronJobPatch, NewCronJob } from "./types.js";

/** jobs.json exists but cannot be used; nothing was written. */
export class CronStoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CronStoreError";
  }
}

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

const SAFE_ID = /^[A-Za-z0-9_-]{1,64}$/;

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
    return formatIso(ms, this.timezone);
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
    const now = this.now();
    const schedule = parseSchedule(input.schedule, { now, timezone: this.timezone });
    const prompt = (input.prompt ?? "").trim();
    const skills = uniqueStrings(input.skills ?? []);
    const script = this.scriptOf(input.script);
    const noAgent = input.no_agent === true;
    const contextFrom = uniqueStrings(input.context_from ?? []);
    checkRunnable({ prompt, skills, script, noAgent });
    const known = contextFrom.length > 0 ? this.list() : [];
    for (const id of contextFrom) checkContextSource(id, known);
    const next = nextRunAfter(schedule, now, this.timezone);
    if (schedule.kind === "once" && (next === null || next < now - 120_000)) {
      throw new CronScheduleError(
        `The time "${input.schedule}" is in the past; a one-shot job must be scheduled for later.`,
      );
    }
    let times = normalizeRepeat(input.repeat);
    if (schedule.kind === "once" && times === null) times = 1;
    const created = this.iso(now);
    const job: CronJob = {
      id: randomBytes(6).toString("hex"),
      name:
        (input.name?.trim() || (prompt || skills[0] || script || "cron job").slice(0, 50).trim()) ??
        "cron job",
      prompt,
      skills,
      skill: skills[0] ?? null,
      model: input.model ?? null,
      provider: input.provider ?? null,
      base_url: null,
      script,
      no_agent: noAgent,
      context_from: contextFrom.length > 0 ? contextFrom : null,
      schedule,
      schedule_display: schedule.display,
      repeat: { times, completed: 0 },
      enabled: true,
      state: "scheduled",
      paused_at: null,
      paused_reason: null,
      created_at: created,
      next_run_at: next === null ? null : this.iso(next),
      last_run_at: null,
      last_status: null,
      last_error: null,
      last_delivery_error: null,
      deliver: input.deliver?.trim() || (input.origin ? "origin" : "local"),
      origin: input.origin ?? null,
      enabled_toolsets: input.enabled_toolsets?.length ? [...input.enabled_toolsets] : null,
      workdir: input.workdir ?? null,
    };
    await this.update((jobs) => {
      jobs.push(job);
    });
    return job;
  }

  /** Changes a job; a new schedule is parsed first and recomputes `next_run_at`. */
  async edit(idOrName: string, patch: CronJobPatch): Promise<CronJob> {
    const now = this.now();
    const schedule =
      patch.schedule !== undefined
        ? parseSchedule(patch.schedule, { now, timezone: this.timezone })
        : undefined;
    const script = patch.script !== undefined ? this.scriptOf(patch.script) : undefined;
    const contextFrom =
      patch.context_from !== undefined ? uniqueStrings(patch.context_from ?? []) : undefined;
    const known = contextFrom?.length ? this.list() : [];
    for (const id of contextFrom ?? []) checkContextSource(id, known);
    return this.withJob(idOrName, (job) => {
      if (script !== undefined) job.script = script;
      if (patch.no_agent !== undefined) job.no_agent = patch.no_agent;
      if (contextFrom !== undefined) job.context_from = contextFrom.length > 0 ? contextFrom : null;
      if (patch.prompt !== undefined) job.prompt = patch.prompt.trim();
      if (patch.name?.trim()) job.name = patch.name.trim();
      if (patch.skills !== undefined) {
        job.skills = uniqueStrings(patch.skills);
        job.skill = job.skills[0] ?? null;
      }
      if (patch.deliver !== undefined) job.deliver = patch.deliver.trim() || "local";
      if (patch.enabled_toolsets !== undefined)
        job.enabled_toolsets = patch.enabled_toolsets?.length ? patch.enabled_toolsets : null;
      if (patch.model !== undefined) job.model = patch.model;
      if (patch.repeat !== undefined) {
        job.repeat = { times: normalizeRepeat(patch.repeat), completed: job.repeat?.completed ?? 0 };
      }
      if (schedule) {
        job.schedule = schedule;
        job.schedule_display = schedule.display;
        const next = nextRunAfter(schedule, now, this.timezone);
        job.next_run_at = next === null ? null : this.iso(next);
        if (job.state === "completed") {
          job.state = "scheduled";
          job.enabled = true;
          job.repeat = { times: schedule.kind === "once" ? 1 : (job.repeat?.times ?? null), completed: 0 };
        }
      }
      checkRunnable({
        prompt: job.prompt,
        skills: job.skills ?? [],
        script: typeof job.script === "string" && job.script ? job.script : null,
        noAgent: job.no_agent === true,
      });
    });
  }

  /** A script as stored (relative to scripts/), null for none; throws for a path outside scripts/. */
  private scriptOf(script: string | null | undefined): string | null {
    if (script === undefined || script === null || !script.trim()) return null;
    try {
      return normalizeScriptPath(this.home, script, this.userHome);
    } catch (error) {
      if (error instanceof CronScriptPathError) throw new CronStoreError(error.message);
      throw error;
    }
  }

  /** Stops a job from running until `resume`. */
  pause(idOrName: string, reason?: string): Promise<CronJob> {
    return this.withJob(idOrName, (job) => {
      job.enabled = false;
      job.state = "paused";
      job.paused_at = this.iso();
      job.paused_reason = reason?.trim() || null;
    });
  }

  /** Lets a paused job run again from its next scheduled time (a missed time is not caught up). */
  resume(idOrName: string): Promise<CronJob> {
    const now = this.now();
    return this.withJob(idOrName, (job) => {
      job.enabled = true;
      job.state = "scheduled";
      job.paused_at = null;
      job.paused_reason = null;
      if (isCronSchedule(job.schedule) && job.schedule.kind !== "once") {
        const next = nextRunAfter(job.schedule, now, this.timezone);
        job.next_run_at = next === null ? null : this.iso(next);
      }
    });
  }

  /** Makes a job due now; the next tick runs it (once), then its schedule goes on as before. */
  markDue(idOrName: string): Promise<CronJob> {
    return this.withJob(idOrName, (job) => {
      if (job.state === "completed") {
        throw new CronStoreError(
          `Job "${job.name}" (${job.id}) has completed; edit its schedule to run it again.`,
        );
      }
      if (!job.enabled) {
        throw new CronStoreError(
          `Job "${job.name}" (${job.id}) is paused; resume it first (hermes cron resume ${job.id}).`,
        );
      }
      job.next_run_at = this.iso();
      job["run_requested_at"] = this.iso();
    });
  }

  /** Deletes a job and its saved outputs; returns the removed record. */
  async remove(idOrName: string): Promise<CronJob> {
    const removed = await this.update((jobs) => {
      const at = indexOf(jobs, idOrName);
      if (at < 0) throw notFound(idOrName, jobs);
      return jobs.splice(at, 1)[0] as CronJob;
    });
    const dir = this.outputDir(removed.id);
    if (dir) rmSync(dir, { recursive: true, force: true });
    return removed;
  }

  /** `cron/output/<id>`, or undefined when the id could escape that folder. */
  outputDir(id: string): string | undefined {
    return SAFE_ID.test(id) ? join(this.dir, "output", id) : undefined;
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
      const at = indexOf(jobs, idOrName);
      if (at < 0) throw notFound(idOrName, jobs);
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

/** Fills in fields older or hand-edited records lack, without dropping any that are there. */
function normalizeJob(raw: Record<string, unknown>): CronJob {
  const job = raw as CronJob;
  const skills = Array.isArray(raw["skills"])
    ? uniqueStrings(raw["skills"].map(String))
    : typeof raw["skill"] === "string" && raw["skill"]
      ? [raw["skill"]]
      : [];
  job.id = String(raw["id"] ?? "");
  job.prompt = typeof raw["prompt"] === "string" ? raw["prompt"] : "";
  job.skills = skills;
  job.skill = skills[0] ?? null;
  if (typeof raw["name"] !== "string" || !raw["name"].trim()) {
    job.name = (job.prompt || skills[0] || job.id || "cron job").slice(0, 50).trim();
  }
  if (typeof raw["enabled"] !== "boolean") job.enabled = true;
  if (!isRecord(raw["repeat"])) job.repeat = { times: null, completed: 0 };
  if (typeof raw["deliver"] !== "string" || !raw["deliver"]) job.deliver = "local";
  return job;
}

/** Whether the scheduler may run the job (enabled, not paused, not finished). */
export function isRunnable(job: CronJob): boolean {
  return job.enabled !== false && job.state !== "paused" && !job.paused_at && job.state !== "completed";
}

/** The job's next run in ms, or undefined when it has none. */
export function nextRunMs(job: CronJob): number | undefined {
  return readStoredTime(job.next_run_at);
}

/** Throws when the job would have nothing to run, or `no_agent` without a script. */
function checkRunnable(job: {
  prompt: string;
  skills: string[];
  script: string | null;
  noAgent: boolean;
}): void {
  if (job.noAgent && !job.script) {
    throw new CronStoreError("no_agent needs a script: the script's output is what the job delivers.");
  }
  if (!job.prompt && job.skills.length === 0 && !job.script) {
    throw new CronStoreError("A cron job needs a prompt, a skill or a script: there is nothing to run.");
  }
}

/** `context_from` names jobs by id (`self` for the job's own last output). */
function checkContextSource(id: string, jobs: CronJob[]): void {
  if (id === "self") return;
  if (!SAFE_ID.test(id)) {
    throw new CronStoreError(`context_from "${id}" is not a job id (letters, digits, - and _).`);
  }
  if (!jobs.some((j) => j.id === id)) throw notFound(id, jobs);
}

function normalizeRepeat(value: number | null | undefined): number | null {
  if (value === undefined || value === null) return null;
  const n = Math.floor(Number(value));
  return Number.isFinite(n) && n > 0 ? n : null;
}

function indexOf(jobs: CronJob[], idOrName: string): number {
  const byId = jobs.findIndex((j) => j.id === idOrName);
  return byId >= 0 ? byId : jobs.findIndex((j) => j.name === idOrName);
}

function notFound(idOrName: string, jobs: CronJob[]): CronStoreError {
  const known =
    jobs.length > 0 ? ` Jobs: ${jobs.map((j) => `${j.id} (${j.name})`).join(", ")}.` : " There are no jobs.";
  return new CronStoreError(`No cron job with id or name "${idOrName}".${known}`);
}

function uniqueStrings(items: readonly string[]): string[] {
  const out: string[] = [];
  for (const item of items) {
    const t = String(item ?? "").trim();
    if (t && !out.includes(t)) out.push(t);
  }
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const CRON_METHODS = [
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
