/**
 * A process that claims one chat and then stalls its own event loop (a synchronous wait, as a
 * long GC pause or a blocking call would), for the fenced-claim tests. Prints one JSON line once
 * it holds the chat (`{"instanceId": …}`), stalls for STALL_MS when a line arrives on stdin, and
 * then prints what the first callback after the stall saw: whether the claim was still valid
 * without asking the database, how `ensure()` ended, and whether `lost` fired.
 * Usage: node --import tsx chat-fence-worker.ts URL KEY TIMING_JSON STALL_MS
 */
import { createInterface } from "node:readline";
import { openPgCoordinator } from "../../src/state/postgres/coordination.js";
import { openPgDatabase } from "../../src/state/postgres/database.js";

const [url = "", key = "chat", timingArg = "{}", stallArg = "0"] = process.argv.slice(2);
const db = await openPgDatabase(url, { max: 3 });
const coordinator = await openPgCoordinator(
  db,
  { host: "stalling", pid: process.pid },
  JSON.parse(timingArg),
);
const result = await coordinator.claimChat(key);
if (!("claimed" in result)) throw new Error(`could not claim ${key}`);
const claim = result.claimed;
const say = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);
say({ instanceId: coordinator.instanceId, validBefore: claim.valid() });
createInterface({ input: process.stdin }).once("line", () => {
  // The first callback after the stall, ahead of the heartbeat's overdue timer (the check phase
  // of this loop turn runs before the next turn's timers): what a stream chunk would meet.
  setImmediate(async () => {
    const validAtWake = claim.valid();
    const lostAtWake = claim.lost.aborted;
    let ensured = "resolved";
    try {
      await claim.ensure();
    } catch (error) {
      ensured = error instanceof Error ? error.name : String(error);
    }
    say({ validAtWake, lostAtWake, ensured, lost: claim.lost.aborted, validAfter: claim.valid() });
  });
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(stallArg));
});
setInterval(() => {}, 60_000);
