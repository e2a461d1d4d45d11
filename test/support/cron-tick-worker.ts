/**
 * A process that ticks a Hermes home once (for the cross-process test): each run appends
 * "<job id> <pid>" to `<home>/runs.log`. Prints the tick's status on stdout.
 * Usage: node --import tsx cron-tick-worker.ts HOME NOW_MS
 */
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { tick } from "../../src/cron/scheduler.js";

const [home = "", nowArg = "0"] = process.argv.slice(2);
const now = Number(nowArg);
const outcome = await tick({
  home,
  now: () => now,
  timezone: "UTC",
  runJob: async (job) => {
    appendFileSync(join(home, "runs.log"), `${job.id} ${process.pid}\n`);
    return { ok: true, output: `ran ${job.id}` };
  },
});
process.stdout.write(`${outcome.status}\n`);
