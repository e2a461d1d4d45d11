/**
 * At-least-once feed delivery on a real PostgreSQL (migration 555): an update taken with its
 * payload stays undone until `done`; when its taker dies (its heartbeat in `coord_instances` goes
 * stale) the next holder reclaims it and hands it on again, exactly one instance per update however
 * they race; done updates never come back; and the ids are kept and pruned as before.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FeedLedger } from "../../../../src/state/coordination.js";
import { openPgCoordinator } from "../../../../src/state/postgres/coordination.js";
import {
  FEED_MAX_ATTEMPTS,
  pgFeedLedger,
  pruneFeeds,
} from "../../../../src/state/postgres/coordination-feeds.js";
import { openPgDatabase, type PgDatabase } from "../../../../src/state/postgres/database.js";
import { migrate } from "../../../../src/state/postgres/migrate.js";
import { MIGRATIONS } from "../../../../src/state/postgres/migrations/index.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../../../support/postgres.js";

const FEED = "telegram:4242";

describe.skipIf(postgresSkipReason)("PostgreSQL feed ledger: re-delivery of updates whose taker died", () => {
  let pg: PostgresFixture;
  const pools: PgDatabase[] = [];
  beforeAll(async () => {
    pg = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    for (const db of pools) await db.close().catch(() => undefined);
    await pg?.dispose();
  });

  async function database(max = 4): Promise<PgDatabase> {
    const db = await openPgDatabase(await pg.createDatabase(), { max });
    pools.push(db);
    await migrate(db, MIGRATIONS);
    return db;
  }

  /** An instance row as the coordinator's heartbeat writes it, `ageMs` old. */
  async function alive(db: PgDatabase, id: string, ageMs = 0): Promise<void> {
    await db.query(
      `INSERT INTO coord_instances (id, host, pid, last_seen_at)
       VALUES ($1, 'h', 1, clock_timestamp() - ($2::double precision * interval '1 millisecond'))
       ON CONFLICT (id) DO UPDATE SET last_seen_at = EXCLUDED.last_seen_at`,
      [id, ageMs],
    );
  }

  const ledger = (db: PgDatabase, instance: string): Required<FeedLedger> =>
    pgFeedLedger(db, FEED, instance, { instanceTtlMs: 2_000 }) as Required<FeedLedger>;
  const payloads = (ids: number[]) =>
    new Map(ids.map((id) => [id, { update_id: id, message: { text: `m${id}` } }]));

  it("a taker that dies before done: another instance re-delivers each update once, with its payload", async () => {
    const db = await database();
    await alive(db, "a");
    await alive(db, "b");
    const a = ledger(db, "a");
    const b = ledger(db, "b");
    expect(await a.take([10, 11, 12], 13, payloads([10, 11, 12]))).toEqual([10, 11, 12]);
    await a.done([11]);
    // While the taker is alive, nothing is taken from it.
    expect(await b.reclaim()).toEqual([]);
    // Its heartbeat goes stale (killed -9): the two undone updates come back, the done one not.
    await alive(db, "a", 10_000);
    const again = await b.reclaim();
    expect(again.map((u) => u.id)).toEqual([10, 12]);
    expect(again[0]?.payload).toEqual({ update_id: 10, message: { text: "m10" } });
    expect(again.every((u) => u.attempts === 2 && u.takenAt instanceof Date)).toBe(true);
    // Claimed by b now (alive): neither b again nor a third instance gets them.
    expect(await b.reclaim()).toEqual([]);
    await alive(db, "c");
    expect(await ledger(db, "c").reclaim()).toEqual([]);
    // b finishes one and dies too: only the unfinished one goes to c.
    await b.done([10]);
    await alive(db, "b", 10_000);
    const third = await ledger(db, "c").reclaim();
    expect(third.map((u) => [u.id, u.attempts])).toEqual([[12, 3]]);
    // The position is Telegram's as before.
    expect(await b.resumeAt()).toBe(13);
  });

  it("a taker that restarted under a new id (its old row gone) counts as dead", async () => {
    const db = await database();
    await alive(db, "new");
    await ledger(db, "old").take([5], 6, payloads([5]));
    const back = await ledger(db, "new").reclaim();
    expect(back.map((u) => u.id)).toEqual([5]);
  });

  it("instances racing to re-deliver: every update goes to exactly one of them", async () => {
    const db = await database(12);
    const ids = Array.from({ length: 300 }, (_, i) => 1_000 + i);
    await ledger(db, "dead").take(ids, 1_300, payloads(ids));
    const racers = ["r1", "r2", "r3", "r4"];
    for (const id of racers) await alive(db, id);
    const got = new Map<string, number[]>();
    await Promise.all(
      racers.map(async (id) => {
        const mine: number[] = [];
        for (;;) {
          const batch = await ledger(db, id).reclaim();
          if (batch.length === 0) break;
          mine.push(...batch.map((u) => u.id));
        }
        got.set(id, mine);
      }),
    );
    const all = [...got.values()].flat();
    expect(all.sort((x, y) => x - y)).toEqual(ids);
    expect(new Set(all).size).toBe(ids.length);
  });

  it("done updates, updates taken without a payload and rows from before the migration never come back", async () => {
    const db = await openPgDatabase(await pg.createDatabase(), { max: 2 });
    pools.push(db);
    // A database at the previous version with an update taken by an instance that then died.
    await migrate(
      db,
      MIGRATIONS.filter((m) => m.version < 555),
    );
    await db.query("INSERT INTO coord_feed_seen (name, update_id, taken_by) VALUES ($1, 1, 'gone')", [FEED]);
    await migrate(db, MIGRATIONS);
    await alive(db, "b");
    const b = ledger(db, "b");
    // Without a payload an update is done when taken: at most once, as a dedupe-only ledger.
    await ledger(db, "gone").take([2], 3);
    await ledger(db, "gone").take([3], 4, payloads([3]));
    await ledger(db, "gone").done([3]);
    expect(await b.reclaim()).toEqual([]);
    // Taking an id again still answers nothing (it was taken), done or not.
    expect(await b.take([1, 2, 3, 4], 5, payloads([1, 2, 3, 4]))).toEqual([4]);
  });

  it("release gives undone updates to the holder; a message that keeps killing its takers stops coming back", async () => {
    const db = await database();
    await alive(db, "a");
    await alive(db, "b");
    const a = ledger(db, "a");
    const b = ledger(db, "b");
    await a.take([7, 8], 9, payloads([7, 8]));
    // b cannot release a's updates; a releases one of its own (it stopped receiving first).
    await b.release([7, 8]);
    expect(await b.reclaim()).toEqual([]);
    await a.release([7]);
    expect((await b.reclaim()).map((u) => u.id)).toEqual([7]);
    // 8 is handed on by a, then by two more instances that all die before done: then it stops.
    const takers = ["x", "y"];
    await alive(db, "a", 10_000);
    for (const t of takers) {
      await alive(db, t);
      expect((await ledger(db, t).reclaim()).map((u) => u.id)).toEqual([8]);
      await alive(db, t, 10_000);
    }
    await alive(db, "z");
    expect(await ledger(db, "z").reclaim()).toEqual([]);
    const [row] = await db.query<{ attempts: number }>(
      "SELECT attempts FROM coord_feed_seen WHERE name = $1 AND update_id = 8",
      [FEED],
    );
    expect(row?.attempts).toBe(FEED_MAX_ATTEMPTS);
    await expect(b.done([1.5])).rejects.toThrow(/integers/);
  });

  it("keeps ids two days and re-delivers only within a day; the coordinator's ledger uses its heartbeat", async () => {
    const db = await database();
    await alive(db, "b");
    await ledger(db, "dead").take([1, 2, 3], 4, payloads([1, 2, 3]));
    await db.query(
      "UPDATE coord_feed_seen SET taken_at = clock_timestamp() - interval '30 hours' WHERE update_id = 1",
    );
    await db.query(
      "UPDATE coord_feed_seen SET taken_at = clock_timestamp() - interval '3 days' WHERE update_id = 2",
    );
    await pruneFeeds(db);
    const ids = (
      await db.query<{ id: string }>("SELECT update_id::text AS id FROM coord_feed_seen ORDER BY 1")
    ).map((r) => Number(r.id));
    expect(ids).toEqual([1, 3]);
    expect((await ledger(db, "b").reclaim()).map((u) => u.id)).toEqual([3]);

    // Through the coordinator: an instance that closed (or was killed) hands its undone ones on.
    const timing = { heartbeatMs: 100, instanceTtlMs: 600 };
    const one = await openPgCoordinator(db, { host: "h", pid: 1, instanceId: "one" }, timing);
    const two = await openPgCoordinator(db, { host: "h", pid: 2, instanceId: "two" }, timing);
    await one.feedLedger!("signal:x").take([42], undefined, new Map([[42, { envelope: { timestamp: 42 } }]]));
    expect(await two.feedLedger!("signal:x").reclaim!()).toEqual([]);
    await one.close();
    await db.query(
      "UPDATE coord_instances SET last_seen_at = clock_timestamp() - interval '1 minute' WHERE id = 'one'",
    );
    const back = await two.feedLedger!("signal:x").reclaim!();
    expect(back.map((u) => [u.id, u.payload])).toEqual([[42, { envelope: { timestamp: 42 } }]]);
    // A feed without a position (signal-cli) records none.
    expect(await two.feedLedger!("signal:x").resumeAt()).toBeUndefined();
    await two.close();
  });
});
