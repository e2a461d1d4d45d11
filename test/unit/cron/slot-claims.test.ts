/**
 * Cron exactly once across instances over a real PostgreSQL: each instance has its own copy of
 * the jobs (so nothing but the coordinator keeps them from running a slot twice) and its own
 * coordinator on one database.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tick } from "../../../src/cron/scheduler.js";
import { sharedCronSlots, slotOf } from "../../../src/cron/slot-claims.js";
import { CronStore } from "../../../src/knowledge/cron/store.js";
import { type Coordinator, localCoordinator } from "../../../src/state/coordination.js";
import { openPgCoordinator } from "../../../src/state/postgres/coordination.js";
import { openPgDatabase, type PgDatabase } from "../../../src/state/postgres/database.js";
import { migrate } from "../../../src/state/postgres/migrate.js";
import { MIGRATIONS } from "../../../src/state/postgres/migrations/index.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../../support/postgres.js";

const T0 = Date.parse("2026-03-01T08:00:00Z");
const MIN = 60_000;
const WORKER = resolve(import.meta.dirname, "../../support/cron-slot-worker.ts");

describe("slot names", () => {
  it("names a slot by its due time in UTC whatever zone the job was stored in, and stays out of SQLite homes", () => {
    const job = { id: "j", next_run_at: "2026-03-01T09:30:00+01:00" } as never;
    expect(slotOf(job)).toBe("2026-03-01T08:30:00.000Z");
    expect(slotOf({ id: "j", next_run_at: null } as never)).toBeUndefined();
    expect(sharedCronSlots(undefined)).toBeUndefined();
    expect(sharedCronSlots(localCoordinator())).toBeUndefined();
  });
});

describe.skipIf(postgresSkipReason)("cron exactly once across instances (PostgreSQL)", () => {
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

  /** A job in one home, copied into `n` homes; a coordinator per home on one fresh database. */
  async function instances(n: number, schedule: string) {
    const url = await pg.createDatabase();
    const root = mkdtempSync(join(tmpdir(), "hermes-cron-shared-"));
    const homes = Array.from({ length: n }, (_, i) => join(root, `home${i}`));
    const store = new CronStore({ home: homes[0]!, now: () => T0, timezone: "UTC" });
    const job = await store.create({ schedule, prompt: "report" });
    for (const home of homes.slice(1)) {
      mkdirSync(join(home, "cron"), { recursive: true });
      copyFileSync(store.path, join(home, "cron", "jobs.json"));
    }
    const admin = await openPgDatabase(url, { max: 2 });
    dbs.push(admin);
    await migrate(admin, MIGRATIONS);
    const coords: Coordinator[] = [];
    for (let i = 0; i < n; i++) {
      const db = await openPgDatabase(url, { max: 3 });
      dbs.push(db);
      const c = await openPgCoordinator(db, { host: `h${i}`, pid: i }, { heartbeatMs: 250 });
      coordinators.push(c);
      coords.push(c);
    }
    const runs: string[] = [];
    const tickAll = (now: number, only = homes.map((_, i) => i)) =>
      Promise.all(
        only.map((i) =>
          tick({
            home: homes[i]!,
            now: () => now,
            timezone: "UTC",
            coordinator: coords[i]!,
            slotLeaseMs: 1_500,
            deliver: async () => ({ delivered: [], errors: [] }),
            runJob: async (j) => {
              runs.push(`${j.id}@home${i}`);
              return { ok: true, output: "done" };
            },
          }),
        ),
      );
    return { url, root, homes, job, admin, runs, tickAll };
  }

  it("runs a due job once with three instances ticking together, again and again", async () => {
    const t = await instances(3, "every 30m");
    for (let round = 0; round < 3; round++) await t.tickAll(T0 + 30 * MIN);
    expect(t.runs).toHaveLength(1);
    expect(t.runs[0]).toMatch(new RegExp(`^${t.job.id}@home[012]$`));
    await t.tickAll(T0 + 60 * MIN);
    expect(t.runs).toHaveLength(2);
    const slots = await t.admin.query<{ slot: string; status: string; ok: boolean; attempts: number }>(
      "SELECT slot, status, ok, attempts FROM coord_cron_slots ORDER BY slot",
    );
    expect(slots).toEqual([
      { slot: "2026-03-01T08:30:00.000Z", status: "done", ok: true, attempts: 1 },
      { slot: "2026-03-01T09:00:00.000Z", status: "done", ok: true, attempts: 1 },
    ]);
  });

  it("catches up once after every instance was down, and records a slot past its window as missed once", async () => {
    const t = await instances(3, "every 1h");
    // Everyone was down at 09:00; back at 09:10, inside the half-period window.
    await t.tickAll(T0 + 70 * MIN);
    expect(t.runs).toHaveLength(1);
    // An interval counts from the run: the next slot (10:10) is missed entirely, everyone back at
    // 10:45, past the window.
    const missed = await t.tickAll(T0 + 165 * MIN);
    const skipped = missed.flatMap((o) => (o.status === "done" ? o.skipped : []));
    expect(t.runs).toHaveLength(1);
    expect(skipped.map((s) => s.id)).toEqual([t.job.id]);
    const rows = await t.admin.query<{ slot: string; ok: boolean; summary: string | null }>(
      "SELECT slot, ok, summary FROM coord_cron_slots ORDER BY slot",
    );
    expect(rows).toEqual([
      { slot: "2026-03-01T09:00:00.000Z", ok: true, summary: null },
      { slot: "2026-03-01T10:10:00.000Z", ok: false, summary: "missed: past its catch-up window" },
    ]);
  });

  it("runs the slot exactly once more after its runner is killed -9 mid-run, never while it lives", async () => {
    const t = await instances(3, "every 30m");
    const log = join(t.root, "runs.log");
    const now = T0 + 30 * MIN;
    const child = spawn(
      process.execPath,
      ["--import", "tsx", WORKER, t.url, t.homes[0]!, String(now), log, "1500"],
      {
        stdio: ["ignore", "ignore", "inherit"],
      },
    );
    children.push(child);
    const deadline = Date.now() + 20_000;
    while (!existsSync(log) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(readFileSync(log, "utf8")).toMatch(/^start \d+/);
    // The runner lives and renews its lease: the others tick for twice the lease and run nothing.
    const aliveUntil = Date.now() + 3_000;
    while (Date.now() < aliveUntil) {
      await t.tickAll(now, [1, 2]);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(t.runs).toEqual([]);
    const killedAt = await new Promise<number>((resolveKill) => {
      child.once("exit", () => resolveKill(Date.now()));
      child.kill("SIGKILL");
    });
    let rerunAt = 0;
    while (t.runs.length === 0 && Date.now() < killedAt + 15_000) {
      await t.tickAll(now, [1, 2]);
      if (t.runs.length > 0) rerunAt = Date.now();
      else await new Promise((r) => setTimeout(r, 100));
    }
    expect(t.runs).toHaveLength(1);
    expect(rerunAt).toBeGreaterThan(killedAt);
    expect(rerunAt - killedAt).toBeLessThan(1_500 + 3_000);
    // And never again, however often the instances tick.
    for (let round = 0; round < 5; round++) await t.tickAll(now, [1, 2]);
    expect(t.runs).toHaveLength(1);
    expect(readFileSync(log, "utf8").trim().split("\n")).toHaveLength(1);
    const rows = await t.admin.query<{ status: string; ok: boolean; attempts: number }>(
      "SELECT status, ok, attempts FROM coord_cron_slots",
    );
    expect(rows).toEqual([{ status: "done", ok: true, attempts: 2 }]);
  }, 60_000);
  it("over one shared job store, a survivor takes a killed runner's slot over and closes its record", async () => {
    const t = await instances(2, "every 30m");
    const shared = t.homes[0]!;
    const log = join(t.root, "runs.log");
    const now = T0 + 30 * MIN;
    const child = spawn(
      process.execPath,
      ["--import", "tsx", WORKER, t.url, shared, String(now), log, "1000"],
      {
        stdio: ["ignore", "ignore", "inherit"],
      },
    );
    children.push(child);
    const deadline = Date.now() + 20_000;
    while (!existsSync(log) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const store = new CronStore({ home: shared, timezone: "UTC" });
    // The dead-to-be runner wrote its bookkeeping: the job is no longer due, it is running.
    expect(store.find(t.job.id)).toMatchObject({ next_run_at: "2026-03-01T09:00:00+00:00" });
    expect(store.find(t.job.id)?.["running_since"]).toBeTruthy();
    child.kill("SIGKILL");
    const ran = [] as string[];
    const until = Date.now() + 15_000;
    while (ran.length === 0 && Date.now() < until) {
      const outcome = await tick({
        home: shared,
        now: () => now + 5_000,
        timezone: "UTC",
        coordinator: coordinators.at(-1)!,
        slotLeaseMs: 1_000,
        deliver: async () => ({ delivered: [], errors: [] }),
        runJob: async (j) => {
          ran.push(j.id);
          return { ok: true, output: "second try" };
        },
      });
      if (outcome.status === "done" && outcome.ran.length === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(ran).toEqual([t.job.id]);
    const record = store.find(t.job.id);
    expect(record).toMatchObject({
      last_status: "ok",
      repeat: { completed: 1 },
      next_run_at: "2026-03-01T09:00:00+00:00",
    });
    expect(record?.["running_since"]).toBeUndefined();
  }, 60_000);
});
