import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CoordinationMessage, Coordinator } from "../../../../src/state/coordination.js";
import {
  listPgInstances,
  openPgCoordinator,
  type PgCoordinatorTiming,
} from "../../../../src/state/postgres/coordination.js";
import { openPgDatabase, type PgDatabase } from "../../../../src/state/postgres/database.js";
import { migrate } from "../../../../src/state/postgres/migrate.js";
import { MIGRATIONS } from "../../../../src/state/postgres/migrations/index.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../../../support/postgres.js";

const FAST: PgCoordinatorTiming = {
  heartbeatMs: 200,
  instanceTtlMs: 1_000,
  leaseTtlMs: 1_000,
  cronLeaseMs: 1_000,
  pollMs: 100,
  maxReconnectMs: 300,
};

async function until<T>(probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.skipIf(postgresSkipReason)("PostgreSQL coordinator", () => {
  let pg: PostgresFixture;
  const open: { db: PgDatabase; coordinators: Coordinator[] }[] = [];
  beforeAll(async () => {
    pg = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    for (const { db, coordinators } of open) {
      for (const c of coordinators) await c.close().catch(() => {});
      await db.close();
    }
    await pg?.dispose();
  });

  /** A fresh migrated database with `n` coordinators on it (each with its own pool). */
  async function group(n: number, timing: PgCoordinatorTiming = FAST) {
    const url = await pg.createDatabase();
    const admin = await openPgDatabase(url);
    await migrate(admin, MIGRATIONS);
    const coordinators: Coordinator[] = [];
    for (let i = 0; i < n; i++) {
      const db = await openPgDatabase(url, { max: 4 });
      const c = await openPgCoordinator(db, { host: `host${i}`, pid: 1000 + i, instanceId: `i${i}` }, timing);
      coordinators.push(c);
      open.push({ db, coordinators: [c] });
    }
    open.push({ db: admin, coordinators: [] });
    return { admin, coordinators, url };
  }

  it("gives a lease to one instance at a time and hands it over at once when released", async () => {
    const { coordinators } = await group(2);
    const [a, b] = coordinators as [Coordinator, Coordinator];
    const lease = await a.tryLease("telegram");
    expect(lease?.name).toBe("telegram");
    expect(await b.tryLease("telegram")).toBeNull();
    expect(await a.tryLease("telegram")).toBeNull();
    const waiting = b.waitLease("telegram", { ttlMs: 60_000 });
    // Held well past its TTL: renewals keep it.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(lease!.lost.aborted).toBe(false);
    const released = Date.now();
    await lease!.release();
    const next = await waiting;
    // The release is announced, so the waiter does not wait for its next poll (and never a TTL).
    expect(Date.now() - released).toBeLessThan(1_000);
    expect(next.name).toBe("telegram");
    expect(await a.tryLease("telegram")).toBeNull();
    const ac = new AbortController();
    const aborted = a.waitLease("telegram", { signal: ac.signal });
    ac.abort(new Error("stopping"));
    await expect(aborted).rejects.toThrow("stopping");
    await next.release();
  });

  it("lets one instance run a chat's turn, names the holder to the others, and frees it on release", async () => {
    const { coordinators } = await group(2);
    const [a, b] = coordinators as [Coordinator, Coordinator];
    const first = await a.claimChat("telegram:42");
    expect("claimed" in first).toBe(true);
    expect(await b.claimChat("telegram:42")).toEqual({ heldBy: "i0" });
    expect(await a.claimChat("telegram:42")).toEqual({ heldBy: "i0" });
    expect("claimed" in (await b.claimChat("telegram:43"))).toBe(true);
    if (!("claimed" in first)) throw new Error("unreachable");
    await first.claimed.release();
    await first.claimed.release();
    const second = await b.claimChat("telegram:42");
    expect("claimed" in second).toBe(true);
    // An old claim's release cannot free the new holder's claim.
    await first.claimed.release();
    expect(await a.claimChat("telegram:42")).toEqual({ heldBy: "i1" });
  });

  it("takes over the chats of an instance whose heartbeat stopped", async () => {
    const { coordinators, admin } = await group(2);
    const [a, b] = coordinators as [Coordinator, Coordinator];
    expect("claimed" in (await a.claimChat("slack:C1"))).toBe(true);
    // Freeze a's heartbeat (and its confirmations of the claim) the way a hung or partitioned
    // process would look.
    await admin.query(
      "UPDATE coord_instances SET last_seen_at = clock_timestamp() - interval '1 hour' WHERE id = 'i0'",
    );
    expect(await b.claimChat("slack:C1")).toEqual({ heldBy: "i0" });
    await admin.query(
      "UPDATE coord_chat_claims SET seen_at = clock_timestamp() - interval '1 hour' WHERE holder = 'i0'",
    );
    expect("claimed" in (await b.claimChat("slack:C1"))).toBe(true);
  });

  it("runs a cron slot once: finished slots never again, a dead runner's slot again after its lease", async () => {
    const { coordinators } = await group(2);
    const [a, b] = coordinators as [Coordinator, Coordinator];
    const slot = "2026-11-27T08:00:00.000Z";
    const claim = await a.claimCronSlot("news", slot, { leaseMs: 800 });
    expect(claim).toMatchObject({ jobId: "news", slot, attempt: 1 });
    expect(await b.claimCronSlot("news", slot)).toBeNull();
    // Renewed while the job runs, well past the lease.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await b.claimCronSlot("news", slot)).toBeNull();
    expect(claim!.lost.aborted).toBe(false);
    await claim!.finish({ ok: true, summary: "sent" });
    expect(await b.claimCronSlot("news", slot)).toBeNull();
    expect(await b.reclaimCronSlots()).toEqual([]);

    // A runner that stops renewing (closed mid-run) leaves the slot to the others.
    const cut = await a.claimCronSlot("news", "2026-11-27T09:00:00.000Z");
    expect(cut).not.toBeNull();
    await a.close();
    const again = await b.reclaimCronSlots();
    expect(again.map((c) => [c.jobId, c.slot, c.attempt])).toEqual([["news", "2026-11-27T09:00:00.000Z", 2]]);
    expect(await b.reclaimCronSlots()).toEqual([]);
    await again[0]!.finish({ ok: false, summary: "boom" });
  });

  it("claims each of 200 slots exactly once when two instances race for them", async () => {
    const { coordinators, admin } = await group(2);
    const slots = Array.from({ length: 200 }, (_, i) => new Date(Date.UTC(2026, 10, 27, 0, i)).toISOString());
    const wins = await Promise.all(
      coordinators.map(async (c) => {
        const mine: string[] = [];
        await Promise.all(
          slots.map(async (slot) => {
            const claim = await c.claimCronSlot("race", slot);
            if (claim) {
              mine.push(slot);
              await claim.finish({ ok: true });
            }
          }),
        );
        return mine;
      }),
    );
    const all = wins.flat().sort();
    expect(all).toEqual([...slots].sort());
    expect(new Set(all).size).toBe(200);
    expect(wins[0]!.length).toBeGreaterThan(0);
    const rows = await admin.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM coord_cron_slots WHERE job_id = 'race' AND status = 'done' AND attempts = 1",
    );
    expect(rows[0]!.n).toBe(200);
  });

  it("delivers directed messages to their instance only and broadcasts to all, large ones by row", async () => {
    const { coordinators, admin } = await group(3);
    const got: CoordinationMessage[][] = coordinators.map(() => []);
    for (const [i, c] of coordinators.entries()) c.subscribe((m) => got[i]!.push(m));
    await coordinators[0]!.send("i1", "turn.stop", { chat: "telegram:1" });
    await coordinators[2]!.publish("reload.skills", { reason: "edit" });
    const big = "ä".repeat(20_000);
    await coordinators[1]!.send("i2", "chat.input", { text: big });
    await until(() => got[2]!.length === 2 && got[1]!.length === 2 && got[0]!.length === 1);
    expect(got[0]).toEqual([{ topic: "reload.skills", from: "i2", payload: { reason: "edit" } }]);
    expect(got[1]).toEqual([
      { topic: "turn.stop", from: "i0", payload: { chat: "telegram:1" } },
      { topic: "reload.skills", from: "i2", payload: { reason: "edit" } },
    ]);
    expect(got[2]![1]).toEqual({ topic: "chat.input", from: "i1", payload: { text: big } });
    expect((await admin.query<{ n: number }>("SELECT count(*)::int AS n FROM coord_messages"))[0]!.n).toBe(3);
    // A handler that throws does not stop the others.
    const after: string[] = [];
    coordinators[0]!.subscribe(() => {
      throw new Error("handler bug");
    });
    const off = coordinators[0]!.subscribe((m) => after.push(m.topic));
    await coordinators[0]!.send("i0", "approval.answer", { ok: true });
    await until(() => after.length === 1);
    off();
    await expect(coordinators[0]!.send("i1", "bad", { n: 10n })).rejects.toThrow(/BigInt/);
  });

  it("lists live instances with what each holds, shows draining, and forgets closed ones", async () => {
    const { coordinators, admin } = await group(2);
    const [a, b] = coordinators as [Coordinator, Coordinator];
    await a.tryLease("discord:shard0");
    await a.claimChat("api:1");
    await b.claimCronSlot("digest", "2026-11-27T10:00:00.000Z");
    await b.drain();
    const list = await listPgInstances(admin, { instanceTtlMs: 1_000 });
    expect(list.map((i) => [i.id, i.host, i.pid, i.holds, i.chats, i.draining])).toEqual([
      ["i0", "host0", 1000, ["discord:shard0"], 1, false],
      ["i1", "host1", 1001, ["cron:digest"], 0, true],
    ]);
    expect(await a.instances()).toEqual(list);
    // Draining: no new lease or slot; a chat still runs.
    expect(await b.tryLease("signal")).toBeNull();
    await expect(b.waitLease("signal")).rejects.toThrow(/draining/);
    expect(await b.claimCronSlot("digest", "2026-11-27T11:00:00.000Z")).toBeNull();
    expect("claimed" in (await b.claimChat("api:2"))).toBe(true);
    await a.close();
    expect((await b.instances()).map((i) => i.id)).toEqual(["i1"]);
    // What a closed instance held is free at once.
    expect(await admin.query("SELECT name FROM coord_leases")).toEqual([]);
    expect(await admin.query("SELECT key FROM coord_chat_claims WHERE holder = 'i0'")).toEqual([]);
  });

  it("gives a lease up when the database is unreachable, and listens again once it is back", async () => {
    const { coordinators } = await group(2);
    const [a, b] = coordinators as [Coordinator, Coordinator];
    const takenAt = Date.now();
    const lease = await a.tryLease("imap", { ttlMs: 3_000 });
    let lostAt = 0;
    lease!.lost.addEventListener("abort", () => {
      lostAt = Date.now();
    });
    const got: string[] = [];
    b.subscribe((m) => got.push(String(m.payload)));
    await pg.kill();
    await until(() => lease!.lost.aborted, 8_000);
    expect(String(lease!.lost.reason)).toMatch(/lease "imap" was lost: not renewed/);
    await pg.start();
    // The listener reconnects by itself; publish until b hears one.
    await until(async () => {
      await a.publish("reload.memory", "after-restart").catch(() => {});
      return got.includes("after-restart");
    }, 20_000);
    // Given up before the database could hand it to someone else (TTL 3 s, minus a margin).
    expect(lostAt - takenAt).toBeLessThan(3_000);
    // The lapsed lease can be taken again once it expired in the database too.
    const again = await until(() => b.tryLease("imap").catch(() => null), 10_000);
    expect(again!.name).toBe("imap");
  }, 60_000);
});
