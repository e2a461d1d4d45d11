/**
 * A process that joins a PostgreSQL-coordinated group and holds one thing until it is killed
 * (for the fail-over tests): a lease, a chat claim or a cron slot. Prints one JSON line
 * `{"instanceId": …, "held": true}` on stdout once it holds it (or `"held": false`).
 * Usage: node --import tsx coordinator-worker.ts URL lease|chat|slot NAME [TIMING_JSON]
 */
import { openPgCoordinator } from "../../src/state/postgres/coordination.js";
import { openPgDatabase } from "../../src/state/postgres/database.js";

const [url = "", kind = "lease", name = "x", timingArg = "{}"] = process.argv.slice(2);
const timing = JSON.parse(timingArg) as Record<string, number>;
const db = await openPgDatabase(url, { max: 3 });
const coordinator = await openPgCoordinator(db, { host: "worker", pid: process.pid }, timing);
let held = false;
if (kind === "lease") held = (await coordinator.tryLease(name)) !== null;
else if (kind === "chat") held = "claimed" in (await coordinator.claimChat(name));
else {
  const [jobId = "job", slot = "2026-11-27T00:00:00.000Z"] = name.split("@");
  // The coordinator's own default lease unless the timing names one.
  const leaseMs = timing["cronLeaseMs"];
  held = (await coordinator.claimCronSlot(jobId, slot, leaseMs ? { leaseMs } : {})) !== null;
}
process.stdout.write(`${JSON.stringify({ instanceId: coordinator.instanceId, held })}\n`);
// Hold on until killed.
setInterval(() => {}, 60_000);
