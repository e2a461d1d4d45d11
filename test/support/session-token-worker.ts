/**
 * A gateway-like process whose session writes pass their gate and then wait for the database
 * (its one store connection busy), for the fencing-token tests: the parent stops it (SIGSTOP)
 * right then, lets another instance take the chat over, and continues it (SIGCONT), so the writes
 * reach the database after the take-over. Prints `{ready, sessionId}` once it holds the chat and
 * stored a first message; on a line on stdin makes three writes (append, update, end), prints
 * `{queued, validAtCall}`, and once they settled `{results, lost}`.
 * MODE `fenced` passes the claim to the store (the database checks its token), `gated` does not
 * (the local gates only, as before the token).
 * Usage: node --import tsx session-token-worker.ts URL KEY TIMING_JSON MODE
 */
import { createInterface } from "node:readline";
import { claimGate, fenceParts } from "../../src/gateway/coordination/chat-fence.js";
import { openPgCoordinator } from "../../src/state/postgres/coordination.js";
import { openPgDatabase } from "../../src/state/postgres/database.js";
import { openPgSessionStore } from "../../src/state/postgres/session-store.js";

const [url = "", key = "chat", timingArg = "{}", mode = "fenced"] = process.argv.slice(2);
const coordDb = await openPgDatabase(url, { max: 3 });
const storeDb = await openPgDatabase(url, { max: 1 });
const coordinator = await openPgCoordinator(
  coordDb,
  { host: "stopped", pid: process.pid },
  JSON.parse(timingArg),
);
const result = await coordinator.claimChat(key);
if (!("claimed" in result)) throw new Error(`could not claim ${key}`);
const claim = result.claimed;
const base = await openPgSessionStore(storeDb);
const store = fenceParts({ store: base }, claimGate(claim), mode === "fenced" ? () => claim : undefined)
  .store!;
const session = await store.createSession({ source: "telegram" });
await store.appendMessage(session.id, { role: "user", content: "before" });
const say = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);
say({ ready: true, sessionId: session.id, instanceId: coordinator.instanceId });
createInterface({ input: process.stdin }).once("line", async () => {
  // The store's one connection is busy for a second: the writes below wait for it.
  const busy = storeDb.query("SELECT pg_sleep(1)");
  const validAtCall = claim.valid();
  const writes = [
    store.appendMessage(session.id, { role: "assistant", content: "late answer" }),
    store.updateSession(session.id, { model: "late-model" }),
    store.endSession(session.id, "late_end"),
  ];
  say({ queued: true, validAtCall });
  await busy;
  const settled = await Promise.allSettled(writes);
  say({
    results: settled.map((r) => (r.status === "fulfilled" ? "ok" : (r.reason as Error).name)),
    lost: claim.lost.aborted,
  });
});
setInterval(() => {}, 60_000);
