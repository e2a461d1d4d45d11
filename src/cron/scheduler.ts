/**
 * The cron ticker: runs due jobs of one Hermes home, at most once each, whichever processes tick.
 *
 * A tick holds `cron/.tick.lock` (non-blocking: a second process gets "busy" and does nothing), then
 * claims the due jobs in jobs.json (under the jobs lock) before running any: `last_run_at`, the
 * next `next_run_at`, `repeat.completed` and a `running_since` marker are saved first, so a crash
 * or a second process can never run the same occurrence twice. A marker found on a later tick
 * means the run was cut off; the job is marked failed then (and is not re-run).
 *
 * Missed runs (nothing ticked at the time) are caught up once when the tick is within the job's
 * window of the missed time (default Hermes's grace: half the period, 2 min – 2 h; 2 min for
 * one-shots); later than that the occurrence is skipped, counted in `missed_runs` and
 * `last_missed_at`, and the job moves on to its next time.
 */
import { join } from "node:path";
import { catchUpWindowFor, isCronSchedule, nextRunAfter } from "../knowledge/cron/schedule.js";
import { type CronJobs, CronStore, cronJobs, isRunnable, nextRunMs } from "../knowledge/cron/store.js";
import type { CronJob } from "../knowledge/cron/types.js";
import type { Coordinator } from "../state/coordination.js";
import { FileLockTimeoutError, withFileLock } from "../util/file-lock.js";
import { createDeliverer, type DeliverFn } from "./delivery.js";
import { type SharedCronSlots, sharedCronSlots } from "./slot-claims.js";

/** What running a job produced. `ok: false` is a failure: it is always delivered. */
export interface CronRunResult {
  output: string;
  ok: boolean;
  error?: string;
  /** Nothing to deliver (an empty script output, a `wakeAgent: false` gate), as `[SILENT]` is. */
  silent?: boolean;
}

/**
 * Runs one job (a fresh agent in production; tests pass their own function). May throw: that is a failure.
 * `signal` aborts when the ticker stops past its drain bound: the run must stop its script's
 * process group and its agent, and return (or throw) soon after.
 */
export type RunJobFn = (job: CronJob, signal?: AbortSignal) => Promise<CronRunResult>;

export interface TickOptions {
  home: string;
  runJob: RunJobFn;
  /** Default: local only; other targets report that their platform is not connected. */
  deliver?: DeliverFn;
  /** Clock in ms. */
  now?: () => number;
  /** Fixed catch-up window in ms for every job; default per schedule (see the module comment). */
  catchUpWindowMs?: number;
  /** config.yaml `timezone`. */
  timezone?: string;
  /** The jobs (the state backend's); default `cron/jobs.json` of `home` in `timezone` on `now`. */
  jobs?: CronJobs;
  /** Consider only these job ids (`hermes cron run ID`). */
  only?: readonly string[];
  /** Outputs kept per job (config `cron.output_retention`). */
  outputRetention?: number;
  /** Progress notes ("running daily-news…"), for stderr or a log. */
  onProgress?: (message: string) => void;
  /** Stops running jobs (handed to `runJob`); a job it stops is recorded as failed, saying why. */
  signal?: AbortSignal;
  /**
   * Several instances over one database: each due slot is claimed through it (slot-claims.ts)
   * and the home's tick lock is not needed. The one-process coordinator changes nothing.
   */
  coordinator?: Coordinator;
  /** A claimed slot's lease, renewed while the job runs (default: the coordinator's). */
  slotLeaseMs?: number;
}

export interface RanJob {
  id: string;
  name: string;
  ok: boolean;
  error?: string;
  outputPath: string;
  /** The output was `[SILENT]`, so nothing was delivered. */
  silent: boolean;
  delivered: string[];
  deliveryErrors: string[];
}

export interface SkippedJob {
  id: string;
  name: string;
  /** The occurrence that was missed, as stored. */
  missedAt: string;
}

export type TickOutcome =
  | { status: "busy" }
  | { status: "done"; ran: RanJob[]; skipped: SkippedJob[]; interrupted: string[] };

/** Whether an answer asks not to be delivered (`[SILENT]`, Hermes's marker). */
export function isSilent(output: string): boolean {
  return output.trim().toUpperCase().startsWith("[SILENT]");
}

/** Why a run stopped by the ticker's `stop()` failed. */
export const STOPPED_RUN =
  "The run was stopped because the gateway (or its cron ticker) stopped before it finished; it runs again at its next time.";

export function tickLockPath(home: string): string {
  return join(home, "cron", ".tick.lock");
}

/** Whether another process is ticking this home now (holds `cron/.tick.lock`). */
export async function isTickLockHeld(home: string): Promise<boolean> {
  const lockPath = tickLockPath(home);
  try {
    await withFileLock(lockPath, () => undefined, { lockPath, timeoutMs: 0 });
    return false;
  } catch (error) {
    if (error instanceof FileLockTimeoutError) return true;
    throw error;
  }
}

/** Runs the due jobs once. Resolves `{status: "busy"}` when another process is ticking. */
export async function tick(options: TickOptions): Promise<TickOutcome> {
  if (options.coordinator?.shared) return tickLocked(options);
  const lockPath = tickLockPath(options.home);
  try {
    return await withFileLock(lockPath, () => tickLocked(options), { lockPath, timeoutMs: 0 });
  } catch (error) {
    if (error instanceof FileLockTimeoutError && error.lockPath === lockPath) return { status: "busy" };
    throw error;
  }
}

async function tickLocked(options: TickOptions): Promise<TickOutcome> {
  const now = options.now ?? Date.now;
  const store =
    options.jobs ??
    cronJobs(
      new CronStore({
        home: options.home,
        now,
        ...(options.timezone ? { timezone: options.timezone } : {}),
      }),
    );
  const deliver = options.deliver ?? createDeliverer();
  const skipped: SkippedJob[] = [];
  const interrupted: string[] = [];
  const slots = sharedCronSlots(options.coordinator, {
    ...(options.slotLeaseMs ? { leaseMs: options.slotLeaseMs } : {}),
  });

  const claiming = store.update(async (jobs) => {
    const at = now();
    const out: CronJob[] = [];
    for (const job of jobs) {
      if (options.only && !options.only.includes(job.id)) continue;
      // Shared: another instance may be running it; a dead runner's slot comes back by `takeOver`.
      if (job["running_since"] && !slots) {
        // We hold the tick lock, so nobody is running it: the process that was has died.
        interrupted.push(job.id);
        finishRecord(job, {
          ok: false,
          error: `The run started at ${String(job["running_since"])} was cut off (the process running it stopped).`,
          deliveryErrors: [],
        });
      }
      if (!isRunnable(job) || !isCronSchedule(job.schedule)) continue;
      const due = nextRunMs(job);
      if (due === undefined || due > at) continue;
      const window = options.catchUpWindowMs ?? catchUpWindowFor(job.schedule, at, store.timezone);
      if (at - due > window && !job["run_requested_at"]) {
        if (slots && !(await slots.claimMissed(job))) continue;
        skipped.push({ id: job.id, name: job.name, missedAt: String(job.next_run_at) });
        job["missed_runs"] = Number(job["missed_runs"] ?? 0) + 1;
        job["last_missed_at"] = job.next_run_at;
        if (job.schedule.kind === "once") {
          job.last_status = "missed";
          job.last_error = `Missed its time ${job.next_run_at}: nothing was running then, and it is past the catch-up window.`;
          complete(job);
        } else {
          const next = nextRunAfter(job.schedule, at, store.timezone);
          job.next_run_at = next === null ? null : store.iso(next);
        }
        continue;
      }
      if (slots && !(await slots.claimDue(job))) continue;
      delete job["run_requested_at"];
      const completed = Number(job.repeat?.completed ?? 0) + 1;
      job.repeat = { times: job.repeat?.times ?? null, completed };
      job.last_run_at = store.iso(at);
      job["running_since"] = store.iso(at);
      const done =
        job.schedule.kind === "once" || (job.repeat.times !== null && completed >= job.repeat.times);
      const next = done ? null : nextRunAfter(job.schedule, at, store.timezone);
      job.next_run_at = next === null ? null : store.iso(next);
      out.push(structuredClone(job));
    }
    return out;
  });
  const claimed = await claiming.catch(async (error: unknown) => {
    await slots?.releaseAll();
    throw error;
  });

  if (slots) claimed.push(...(await slots.takeOver(store, now(), options.only)));
  const ran: RanJob[] = [];
  for (const job of claimed) ran.push(await runClaimed(job, store, deliver, options, now, slots));
  return { status: "done", ran, skipped, interrupted };
}

async function runClaimed(
  job: CronJob,
  store: CronJobs,
  deliver: DeliverFn,
  tickOptions: TickOptions,
  now: () => number,
  slots?: SharedCronSlots,
): Promise<RanJob> {
  const signal = slots?.signalFor(job.id, tickOptions.signal) ?? tickOptions.signal;
  const options: TickOptions = { ...tickOptions, ...(signal ? { signal } : {}) };
  const started = now();
  options.onProgress?.(`running cron job ${job.id} (${job.name})…`);
  let result: CronRunResult;
  try {
    result = await options.runJob(job, options.signal);
    if (options.signal?.aborted && result.ok) {
      // Stopped part-way, whatever the runner made of it: the answer may be cut short.
      result = { ...result, ok: false, error: STOPPED_RUN };
    }
  } catch (error) {
    result = { ok: false, output: "", error: error instanceof Error ? error.message : String(error) };
  }
  const error = result.ok
    ? undefined
    : options.signal?.aborted
      ? `${STOPPED_RUN}${result.error && result.error !== STOPPED_RUN ? ` (${result.error})` : ""}`
      : result.error || "The run failed without saying why.";
  const outputPath = await store.saveOutput(
    job.id,
    renderOutput(job, store.iso(started), result, error),
    started,
    options.outputRetention,
  );
  const silent = result.ok && (result.silent === true || isSilent(result.output));
  let delivery = { delivered: [] as string[], errors: [] as string[] };
  if (!silent) {
    const text = result.ok
      ? result.output
      : `⚠️ Cron job "${job.name}" (${job.id}) failed: ${error}\n\nOutput: ${outputPath}`;
    try {
      delivery = await deliver({ job, text, ok: result.ok, outputPath });
    } catch (e) {
      delivery = { delivered: [], errors: [e instanceof Error ? e.message : String(e)] };
    }
  }
  await store.update((jobs) => {
    const record = jobs.find((j) => j.id === job.id);
    if (record) {
      finishRecord(record, { ok: result.ok, ...(error ? { error } : {}), deliveryErrors: delivery.errors });
    }
  });
  await slots?.finish(job.id, { ok: result.ok, ...(error ? { summary: error.slice(0, 500) } : {}) });
  return {
    id: job.id,
    name: job.name,
    ok: result.ok,
    ...(error ? { error } : {}),
    outputPath,
    silent,
    delivered: delivery.delivered,
    deliveryErrors: delivery.errors,
  };
}

function finishRecord(job: CronJob, run: { ok: boolean; error?: string; deliveryErrors: string[] }): void {
  delete job["running_since"];
  job.last_status = run.ok ? "ok" : "error";
  job.last_error = run.ok ? null : (run.error ?? null);
  job.last_delivery_error = run.deliveryErrors.length > 0 ? run.deliveryErrors.join("; ") : null;
  const times = job.repeat?.times ?? null;
  const once = isCronSchedule(job.schedule) && job.schedule.kind === "once";
  if (once || (times !== null && Number(job.repeat?.completed ?? 0) >= times)) complete(job);
}

/** Retires a job as Hermes does: the record stays (for `list`), it never runs again. */
function complete(job: CronJob): void {
  job.enabled = false;
  job.state = "completed";
  job.next_run_at = null;
}

function renderOutput(job: CronJob, at: string, result: CronRunResult, error: string | undefined): string {
  const lines = [
    `# Cron Job: ${job.name}`,
    "",
    `**Job ID:** ${job.id}`,
    `**Run Time:** ${at}`,
    `**Schedule:** ${job.schedule_display || (isCronSchedule(job.schedule) ? job.schedule.display : "?")}`,
    `**Status:** ${result.ok ? (result.silent ? "ok (silent: nothing to report)" : "ok") : "error"}`,
    ...(job["no_agent"] === true ? ["**Mode:** no_agent (script)"] : []),
    ...(typeof job["script"] === "string" && job["script"] ? [`**Script:** ${job["script"]}`] : []),
    "",
    "## Prompt",
    "",
    job.prompt || "(none)",
    "",
    "## Response",
    "",
    result.output || "(no output)",
  ];
  if (error) lines.push("", "## Error", "", error);
  return `${lines.join("\n")}\n`;
}

export interface TickerOptions extends TickOptions {
  /** Default 60 s. */
  intervalMs?: number;
  /** Called after each tick (including "busy"). */
  onTick?: (outcome: TickOutcome) => void;
  /** A tick that threw (a broken jobs.json): reported, and the ticker keeps going. */
  onError?: (error: unknown) => void;
}

export interface TickerStopOptions {
  /**
   * How long a running job may go on finishing before it is stopped (its script's process group
   * killed, its agent interrupted); default: wait for it (no bound).
   */
  graceMs?: number;
}

/**
 * Ticks now and then every `intervalMs`, never two ticks at once in this process. For the
 * gateway. `stop()` resolves once a tick in progress has finished; with `graceMs`, a job still
 * running after that long is stopped (see {@link TickerStopOptions}).
 */
export function startTicker(options: TickerOptions): {
  stop(stopOptions?: TickerStopOptions): Promise<void>;
} {
  const interval = options.intervalMs ?? 60_000;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();
  const abort = new AbortController();
  // The caller's own signal stops runs too.
  options.signal?.addEventListener("abort", () => abort.abort(), { once: true });
  const tickOptions: TickOptions = { ...options, signal: abort.signal };
  const loop = () => {
    current = tick(tickOptions)
      .then((outcome) => options.onTick?.(outcome))
      .catch((error: unknown) => options.onError?.(error))
      .finally(() => {
        if (!stopped) timer = setTimeout(loop, interval);
      });
  };
  loop();
  return {
    async stop(stopOptions: TickerStopOptions = {}) {
      stopped = true;
      if (timer) clearTimeout(timer);
      const grace = stopOptions.graceMs;
      if (grace !== undefined && Number.isFinite(grace)) {
        let bound: NodeJS.Timeout | undefined;
        const finished = await Promise.race([
          current.then(() => true),
          new Promise<false>((resolve) => {
            bound = setTimeout(() => resolve(false), Math.max(0, grace));
          }),
        ]);
        clearTimeout(bound);
        if (!finished) abort.abort();
      }
      await current;
    },
  };
}
