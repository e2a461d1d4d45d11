/**
 * Cron exactly once across instances (issue 27 §3). With a shared coordinator (several gateway
 * instances over one PostgreSQL database) every due slot of every job is claimed through
 * `coordinator.claimCronSlot` before it runs; the slot is the job's due time in UTC, so every
 * instance names it alike. A claim carries a lease renewed while the job runs: if the runner
 * dies mid-job, the lease lapses and `reclaim` hands the unfinished slot to one surviving
 * instance, which runs it again. A missed slot past its catch-up window is claimed too, so only
 * one instance records the miss. Catch-up after every instance was down is the same path: the
 * first instance up finds the job due (the job's missed-run policy decides whether it runs) and
 * the claim makes it the only one.
 *
 * With the one-process coordinator (SQLite homes) `sharedCronSlots` answers undefined and the
 * scheduler behaves exactly as before: its tick lock and `running_since` marker already make a
 * slot run at most once.
 */
import { nextRunAfter } from "../knowledge/cron/schedule.js";
import { nextRunMs } from "../knowledge/cron/store.js";
import type { CronJob } from "../knowledge/cron/types.js";
import type { Coordinator, CronSlotClaim } from "../state/coordination.js";

/** The slice of the cron store the take-over path needs (read-modify-write under its lock). */
export interface SlotJobStore {
  readonly timezone: string;
  iso(ms?: number): string;
  update<T>(fn: (jobs: CronJob[]) => T | Promise<T>): Promise<T>;
}

export interface SharedCronSlots {
  /** Claims the job's due slot; false when another instance ran it or runs it now. */
  claimDue(job: CronJob): Promise<boolean>;
  /** Claims and closes the job's missed slot; false when another instance recorded it. */
  claimMissed(job: CronJob): Promise<boolean>;
  /**
   * Unfinished slots whose runner died, claimed here, each with its job as it should run (the
   * record updated as a run of that slot; a job since removed closes its slot and is left out).
   */
  takeOver(store: SlotJobStore, now: number, only?: readonly string[]): Promise<CronJob[]>;
  /** The signal a run of `jobId` must stop on: the caller's, or the slot's lease being lost. */
  signalFor(jobId: string, base?: AbortSignal): AbortSignal | undefined;
  /** Gives back every slot claimed and not yet finished (the claiming tick failed). */
  releaseAll(): Promise<void>;
  /** Records the run's outcome with its slot (never run again). */
  finish(jobId: string, outcome: { ok: boolean; summary?: string }): Promise<void>;
}

/** The due time of a job's next run as a slot name (ISO 8601, UTC), or undefined. */
export function slotOf(job: CronJob): string | undefined {
  const ms = nextRunMs(job);
  return ms === undefined ? undefined : new Date(ms).toISOString();
}

/** Slot claims for a shared coordinator; undefined for none or the one-process one. */
export function sharedCronSlots(
  coordinator: Coordinator | undefined,
  options: { leaseMs?: number } = {},
): SharedCronSlots | undefined {
  if (!coordinator?.shared) return undefined;
  const claims = new Map<string, CronSlotClaim>();
  const lease = options.leaseMs ? { leaseMs: options.leaseMs } : {};
  const claim = async (job: CronJob) => {
    const slot = slotOf(job);
    return slot === undefined ? null : coordinator.claimCronSlot(job.id, slot, lease);
  };
  return {
    async claimDue(job) {
      const claimed = await claim(job);
      if (claimed) claims.set(job.id, claimed);
      return claimed !== null;
    },
    async claimMissed(job) {
      const claimed = await claim(job);
      await claimed?.finish({ ok: false, summary: "missed: past its catch-up window" });
      return claimed !== null;
    },
    async takeOver(store, now, only) {
      const orphans = await coordinator.reclaimCronSlots({ ...lease, ...(only ? { jobIds: only } : {}) });
      if (orphans.length === 0) return [];
      return store.update((jobs) => {
        const out: CronJob[] = [];
        for (const orphan of orphans) {
          const job = jobs.find((j) => j.id === orphan.jobId);
          if (!job) {
            void orphan.finish({ ok: false, summary: "the job was removed before its slot could run again" });
            continue;
          }
          if (slotOf(job) === orphan.slot) advancePastSlot(job, store, now);
          job["running_since"] = store.iso(now);
          claims.set(job.id, orphan);
          out.push(structuredClone(job));
        }
        return out;
      });
    },
    async releaseAll() {
      const open = [...claims.values()];
      claims.clear();
      await Promise.all(open.map((c) => c.release().catch(() => {})));
    },
    signalFor(jobId, base) {
      const lost = claims.get(jobId)?.lost;
      if (!lost) return base;
      return base ? AbortSignal.any([base, lost]) : lost;
    },
    async finish(jobId, outcome) {
      const claimed = claims.get(jobId);
      claims.delete(jobId);
      await claimed?.finish(outcome);
    },
  };
}

/**
 * The bookkeeping of a run for a slot whose runner died before writing it (the record still
 * shows the slot as next): count the run and move `next_run_at` on, as the scheduler's claim does.
 */
function advancePastSlot(job: CronJob, store: SlotJobStore, now: number): void {
  delete job["run_requested_at"];
  const completed = Number(job.repeat?.completed ?? 0) + 1;
  job.repeat = { times: job.repeat?.times ?? null, completed };
  job.last_run_at = store.iso(now);
  const done = job.schedule.kind === "once" || (job.repeat.times !== null && completed >= job.repeat.times);
  const next = done ? null : nextRunAfter(job.schedule, now, store.timezone);
  job.next_run_at = next === null ? null : store.iso(next);
}
