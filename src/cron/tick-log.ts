/**
 * How a finished cron tick is reported: one line per job that ran, failed or missed its run, in
 * the log files (component `cron`) and, through `print`, on the surface's stderr. Shared by the
 * gateway's ticker and `hermes cron tick|run`.
 */
import type { Logger } from "../util/log.js";
import type { TickOutcome } from "./scheduler.js";

/** A finished cron tick: one line per job run or missed, in the log and on stderr. */
export function logTick(outcome: TickOutcome, clog: Logger, print: (line: string) => void): void {
  if (outcome.status !== "done") {
    clog.debug("tick skipped: another process is ticking");
    return;
  }
  const counts = {
    ran: outcome.ran.length,
    skipped: outcome.skipped.length,
    interrupted: outcome.interrupted.length,
  };
  // An idle tick every minute would bury everything else at INFO.
  if (counts.ran + counts.skipped + counts.interrupted > 0) clog.info("tick", counts);
  else clog.debug("tick", counts);
  for (const job of outcome.ran) {
    print(`cron: ${job.name} (${job.id}) ${job.ok ? "ran" : `failed: ${job.error ?? "unknown error"}`}`);
    const extras = {
      job: job.id,
      name: job.name,
      silent: job.silent,
      delivered: job.delivered.join(",") || undefined,
    };
    if (job.ok) clog.info("job ran", extras);
    else clog.error("job failed", { ...extras, error: job.error ?? "unknown error" });
    for (const problem of job.deliveryErrors)
      clog.warning("delivery failed", { job: job.id, error: problem });
  }
  for (const job of outcome.skipped) {
    print(`cron: ${job.name} (${job.id}) missed its run at ${job.missedAt}`);
    clog.warning("job missed its run", { job: job.id, name: job.name, missed_at: job.missedAt });
  }
  for (const id of outcome.interrupted) clog.warning("job was cut off by an earlier crash", { job: id });
}
