/**
 * Fail-over when a holder dies for real: a child process takes a lease, a chat claim or a cron
 * slot and is killed with SIGKILL (no clean-up of any kind); an instance in this process takes
 * the thing over within the bound.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Coordinator } from "../../../../src/state/coordination.js";
import {
  CRON_SLOT_LEASE_MS,
  openPgCoordinator,
  type PgCoordinatorTiming,
} from "../../../../src/state/postgres/coordination.js";
import { openPgDatabase, type PgDatabase } from "../../../../src/state/postgres/database.js";
import { migrate } from "../../../../src/state/postgres/migrate.js";
import { MIGRATIONS } from "../../../../src/state/postgres/migrations/index.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../../../support/postgres.js";

const WORKER = resolve(import.meta.dirname, "../../../support/coordinator-worker.ts");
const FAST: PgCoordinatorTiming = { heartbeatMs: 250, instanceTtlMs: 1_500, leaseTtlMs: 1_500, pollMs: 100 };

function startWorker(url: string, kind: string, name: string, timing: PgCoordinatorTiming) {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", WORKER, url, kind, name, JSON.stringify(timing)],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const ready = new Promise<{ instanceId: string; held: boolean }>((resolveReady, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once("line", (line) => resolveReady(JSON.parse(line)));
    child.once("exit", (code) => reject(new Error(`worker exited (${code}) before holding ${kind}`)));
  });
  return { child, ready };
}

function killHard(child: ChildProcess): Promise<number> {
  return new Promise((resolveKill) => {
    child.once("exit", () => resolveKill(Date.now()));
    child.kill("SIGKILL");
  });
}

describe.skipIf(postgresSkipReason)("PostgreSQL coordinator: a holder killed with SIGKILL", () => {
  let pg: PostgresFixture;
  const dbs: PgDatabase[] = [];
  const coordinators: Coordinator[] = [];
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    pg = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
    for (const c of coordinators) await c.close().catch(() => {});
    for (const db of dbs) await db.close();
    await pg?.dispose();
  });

  async function setUp(timing: PgCoordinatorTiming) {
    const url = await pg.createDatabase();
    const db = await openPgDatabase(url, { max: 4 });
    dbs.push(db);
    await migrate(db, MIGRATIONS);
    const survivor = await openPgCoordinator(db, { host: "survivor", pid: process.pid }, timing);
    coordinators.push(survivor);
    return { url, survivor };
  }

  it("hands a lease over within 15 s with the default timings", async () => {
    const { url, survivor } = await setUp({});
    const worker = startWorker(url, "lease", "telegram", {});
    children.push(worker.child);
    const { instanceId, held } = await worker.ready;
    expect(held).toBe(true);
    expect((await survivor.instances()).find((i) => i.id === instanceId)?.holds).toEqual(["telegram"]);
    expect(await survivor.tryLease("telegram")).toBeNull();
    const killedAt = await killHard(worker.child);
    const lease = await survivor.waitLease("telegram");
    const took = Date.now() - killedAt;
    expect(took).toBeLessThan(15_000);
    expect(lease.lost.aborted).toBe(false);
    // The dead instance drops off the list once its heartbeat is stale.
    expect((await survivor.instances()).map((i) => i.id)).toEqual([survivor.instanceId]);
    await lease.release();
  }, 40_000);

  it("takes over a chat whose holder was killed once its heartbeat is stale", async () => {
    const { url, survivor } = await setUp(FAST);
    const worker = startWorker(url, "chat", "telegram:777", FAST);
    children.push(worker.child);
    const { instanceId } = await worker.ready;
    expect(await survivor.claimChat("telegram:777")).toEqual({ heldBy: instanceId });
    const killedAt = await killHard(worker.child);
    let claimed = false;
    while (!claimed) {
      claimed = "claimed" in (await survivor.claimChat("telegram:777"));
      if (!claimed) await new Promise((r) => setTimeout(r, 100));
    }
    expect(Date.now() - killedAt).toBeLessThan(FAST.instanceTtlMs! + 2_000);
  }, 30_000);

  it("runs a killed runner's cron slot again after its lease, never while it is alive", async () => {
    const { url, survivor } = await setUp(FAST);
    const slot = "2026-11-27T06:00:00.000Z";
    const worker = startWorker(url, "slot", `digest@${slot}`, { ...FAST, cronLeaseMs: 1_500 });
    children.push(worker.child);
    expect((await worker.ready).held).toBe(true);
    // Alive and renewing: nobody else gets it, however long it runs.
    await new Promise((r) => setTimeout(r, 2_000));
    expect(await survivor.claimCronSlot("digest", slot)).toBeNull();
    expect(await survivor.reclaimCronSlots()).toEqual([]);
    const killedAt = await killHard(worker.child);
    let claims: Awaited<ReturnType<Coordinator["reclaimCronSlots"]>> = [];
    while (claims.length === 0) {
      claims = await survivor.reclaimCronSlots();
      if (claims.length === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(Date.now() - killedAt).toBeLessThan(1_500 + 2_000);
    expect(claims.map((c) => [c.jobId, c.slot, c.attempt])).toEqual([["digest", slot, 2]]);
    await claims[0]!.finish({ ok: true });
    expect(await survivor.claimCronSlot("digest", slot)).toBeNull();
    expect(await survivor.reclaimCronSlots()).toEqual([]);
  }, 30_000);

  it("renews a cron slot's default lease while its job runs, and runs the slot again within 15 s of a kill -9", async () => {
    const { url, survivor } = await setUp({});
    const admin = dbs[dbs.length - 1]!;
    const slot = "2026-11-27T07:00:00.000Z";
    const worker = startWorker(url, "slot", `report@${slot}`, {});
    children.push(worker.child);
    expect((await worker.ready).held).toBe(true);
    const leaseLeft = async () =>
      (
        await admin.query<{ ms: number }>(
          "SELECT (extract(epoch FROM lease_until - clock_timestamp()) * 1000)::float8 AS ms FROM coord_cron_slots",
        )
      )[0]!.ms;
    const first = await leaseLeft();
    expect(first).toBeLessThanOrEqual(CRON_SLOT_LEASE_MS);
    expect(CRON_SLOT_LEASE_MS).toBe(15_000);
    // A heartbeat every quarter of the lease: the expiry moves on while the runner lives.
    const readAt = Date.now();
    await new Promise((r) => setTimeout(r, CRON_SLOT_LEASE_MS / 4 + 1_500));
    const unrenewed = first - (Date.now() - readAt);
    expect(await leaseLeft()).toBeGreaterThan(unrenewed + 2_000);
    expect(await survivor.reclaimCronSlots()).toEqual([]);
    const killedAt = await killHard(worker.child);
    let claims: Awaited<ReturnType<Coordinator["reclaimCronSlots"]>> = [];
    while (claims.length === 0) {
      claims = await survivor.reclaimCronSlots();
      if (claims.length === 0) await new Promise((r) => setTimeout(r, 200));
    }
    expect(Date.now() - killedAt).toBeLessThan(15_000 + 1_000);
    expect(claims.map((c) => [c.slot, c.attempt])).toEqual([[slot, 2]]);
    await claims[0]!.finish({ ok: true });
  }, 45_000);
});
