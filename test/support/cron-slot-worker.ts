/**
 * An instance that ticks cron with a PostgreSQL coordinator and whose job never finishes (for the
 * killed-mid-run test): it appends "start <pid>" to LOG when the job starts, then hangs until
 * the process is killed.
 * Usage: node --import tsx cron-slot-worker.ts DATABASE_URL HOME NOW_MS LOG SLOT_LEASE_MS
 */
import { appendFileSync } from "node:fs";
import { tick } from "../../src/cron/scheduler.js";
import { openPgCoordinator } from "../../src/state/postgres/coordination.js";
import { openPgDatabase } from "../../src/state/postgres/database.js";

const [url = "", home = "", nowArg = "0", log = "", leaseArg = "1500"] = process.argv.slice(2);
const db = await openPgDatabase(url, { max: 3 });
const coordinator = await openPgCoordinator(
  db,
  { host: "cron-worker", pid: process.pid },
  { heartbeatMs: 250 },
);
setInterval(() => {}, 60_000);
await tick({
  home,
  now: () => Number(nowArg),
  timezone: "UTC",
  coordinator,
  slotLeaseMs: Number(leaseArg),
  deliver: async () => ({ delivered: [], errors: [] }),
  runJob: async () => {
    appendFileSync(log, `start ${process.pid} ${Date.now()}\n`);
    return new Promise(() => {});
  },
});
