/**
 * The cron job rules every backend applies, as functions over job records: building a new job
 * (schedule parsed, script kept inside `scripts/`, something to run), applying an edit, pausing,
 * resuming and marking a job due, finding a job by id or name. `CronStore` (jobs.json) and the
 * PostgreSQL store (`knowledge/postgres/`) run them inside their own locked read-modify-write, so
 * both answer the same calls with the same records and errors.
 */
import { randomBytes } from "node:crypto";
import { CronScheduleError, isCronSchedule, nextRunAfter, parseSchedule } from "./schedule.js";
import { CronScriptPathError, normalizeScriptPath } from "./script-path.js";
import { formatIso } from "./time.js";
import type { CronJob, CronJobPatch, NewCronJob } from "./types.js";

/** A cron change refused (unknown job, nothing to run, a broken jobs.json); nothing was written. */
export class CronStoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CronStoreError";
  }
}

/** What the rules need from the store: the home (scripts/), the zone and the clock. */
export interface CronRules {
  home: string;
  timezone: string;
  now: () => number;
  userHome?: string | undefined;
}

/** A job id that can name a folder or a row key: letters, digits, `-` and `_`. */
export const SAFE_JOB_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** `ms` as Hermes writes times (ISO with offset in the configured zone). */
export function cronIso(rules: CronRules, ms: number = rules.now()): string {
  return formatIso(ms, rules.timezone);
}

/**
 * A new job from `input`, validated; `known()` lists the jobs `context_from` may name (called
 * only when it names some). Throws `CronScheduleError` or `CronStoreError`; nothing is written.
 */
export function buildJob(rules: CronRules, input: NewCronJob, known: () => CronJob[]): CronJob {
  const now = rules.now();
  const schedule = parseSchedule(input.schedule, { now, timezone: rules.timezone });
  const prompt = (input.prompt ?? "").trim();
  const skills = uniqueStrings(input.skills ?? []);
  const script = scriptOf(rules, input.script);
  const noAgent = input.no_agent === true;
  const contextFrom = uniqueStrings(input.context_from ?? []);
  checkRunnable({ prompt, skills, script, noAgent });
  const jobs = contextFrom.length > 0 ? known() : [];
  for (const id of contextFrom) checkContextSource(id, jobs);
  const next = nextRunAfter(schedule, now, rules.timezone);
  if (schedule.kind === "once" && (next === null || next < now - 120_000)) {
    throw new CronScheduleError(
      `The time "${input.schedule}" is in the past; a one-shot job must be scheduled for later.`,
    );
  }
  let times = normalizeRepeat(input.repeat);
  if (schedule.kind === "once" && times === null) times = 1;
  const created = cronIso(rules, now);
  return {
    id: randomBytes(6).toString("hex"),
    name:
      (input.name?.trim() || (prompt || skills[0] || script || "cron job").slice(0, 50).trim()) ?? "cron job",
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
    next_run_at: next === null ? null : cronIso(rules, next),
    last_run_at: null,
    last_status: null,
    last_error: null,
    last_delivery_error: null,
    deliver: input.deliver?.trim() || (input.origin ? "origin" : "local"),
    origin: input.origin ?? null,
    enabled_toolsets: input.enabled_toolsets?.length ? [...input.enabled_toolsets] : null,
    workdir: input.workdir ?? null,
  };
}

/**
 * The change `patch` makes, as a function applied to the job under the store's lock. The new
 * schedule, script and `context_from` are checked here first (`known()` as for `buildJob`).
 */
export function prepareEdit(
  rules: CronRules,
  patch: CronJobPatch,
  known: () => CronJob[],
): (job: CronJob) => void {
  const now = rules.now();
  const schedule =
    patch.schedule !== undefined
      ? parseSchedule(patch.schedule, { now, timezone: rules.timezone })
      : undefined;
  const script = patch.script !== undefined ? scriptOf(rules, patch.script) : undefined;
  const contextFrom = patch.context_from !== undefined ? uniqueStrings(patch.context_from ?? []) : undefined;
  const jobs = contextFrom?.length ? known() : [];
  for (const id of contextFrom ?? []) checkContextSource(id, jobs);
  return (job) => {
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
      const next = nextRunAfter(schedule, now, rules.timezone);
      job.next_run_at = next === null ? null : cronIso(rules, next);
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
  };
}

/** Stops a job from running until `resumeJob`. */
export function pauseJob(rules: CronRules, job: CronJob, reason?: string): void {
  job.enabled = false;
  job.state = "paused";
  job.paused_at = cronIso(rules);
  job.paused_reason = reason?.trim() || null;
}

/** Lets a paused job run again from its next scheduled time (a missed time is not caught up). */
export function resumeJob(rules: CronRules, job: CronJob): void {
  job.enabled = true;
  job.state = "scheduled";
  job.paused_at = null;
  job.paused_reason = null;
  if (isCronSchedule(job.schedule) && job.schedule.kind !== "once") {
    const next = nextRunAfter(job.schedule, rules.now(), rules.timezone);
    job.next_run_at = next === null ? null : cronIso(rules, next);
  }
}

/** Makes a job due now (run once at the next tick); refused for a completed or paused job. */
export function markJobDue(rules: CronRules, job: CronJob): void {
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
  job.next_run_at = cronIso(rules);
  job["run_requested_at"] = cronIso(rules);
}

/** A script as stored (relative to scripts/), null for none; throws for a path outside scripts/. */
function scriptOf(rules: CronRules, script: string | null | undefined): string | null {
  if (script === undefined || script === null || !script.trim()) return null;
  if (!rules.home) {
    throw new CronStoreError(
      `The script "${script}" cannot be checked: this cron store was opened without a Hermes home (its scripts/ folder).`,
    );
  }
  try {
    return normalizeScriptPath(rules.home, script, rules.userHome);
  } catch (error) {
    if (error instanceof CronScriptPathError) throw new CronStoreError(error.message);
    throw error;
  }
}

/** Fills in fields older or hand-edited records lack, without dropping any that are there. */
export function normalizeJob(raw: Record<string, unknown>): CronJob {
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
  if (!SAFE_JOB_ID.test(id)) {
    throw new CronStoreError(`context_from "${id}" is not a job id (letters, digits, - and _).`);
  }
  if (!jobs.some((j) => j.id === id)) throw jobNotFound(id, jobs);
}

function normalizeRepeat(value: number | null | undefined): number | null {
  if (value === undefined || value === null) return null;
  const n = Math.floor(Number(value));
  return Number.isFinite(n) && n > 0 ? n : null;
}

/** Index of the job with id `idOrName`, else the first with that exact name; -1 when none. */
export function jobIndex(jobs: readonly CronJob[], idOrName: string): number {
  const byId = jobs.findIndex((j) => j.id === idOrName);
  return byId >= 0 ? byId : jobs.findIndex((j) => j.name === idOrName);
}

export function jobNotFound(idOrName: string, jobs: readonly CronJob[]): CronStoreError {
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

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
