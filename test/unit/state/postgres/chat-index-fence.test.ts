/**
 * The database-side fencing token on chat → session index writes (PostgreSQL): an index view
 * fenced by a chat claim (`pgChatSessionIndex(db).fencedBy(claim.fence)`) writes only while that
 * claim is the chat's current one in `coord_chat_claims`. Real coordinators on a real server: a
 * holder whose claim was taken over while it was cut off cannot point the chat back at its own
 * (stale) session, nor mark, take or touch the entry; its claim is lost at once; the new holder's
 * writes land; index writes racing a take-over never commit after it; a lone instance and writes
 * under no claim are unaffected.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChatClaimLostError, type Coordinator } from "../../../../src/state/coordination.js";
import type { IndexedSource } from "../../../../src/state/gateway/session-index.js";
import { openPgCoordinator } from "../../../../src/state/postgres/coordination.js";
import { openPgDatabase, type PgDatabase } from "../../../../src/state/postgres/database.js";
import { pgChatSessionIndex } from "../../../../src/state/postgres/gateway-stores.js";
import { migrate } from "../../../../src/state/postgres/migrate.js";
import { MIGRATIONS } from "../../../../src/state/postgres/migrations/index.js";
import {
  claimLost,
  claimOf,
  cuttable,
  FAST_COORDINATION as FAST,
} from "../../../support/pg-instance-pair.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../../../support/postgres.js";

const TTL = FAST.instanceTtlMs ?? 800;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const source: IndexedSource = { platform: "telegram", chatType: "dm", chatId: "100", userId: "7" };
const T1 = new Date("2026-11-27T01:00:00.000Z");
const T2 = new Date("2026-11-27T02:00:00.000Z");

describe.skipIf(postgresSkipReason)("PostgreSQL chat → session index writes fenced by a chat claim", () => {
  let pg: PostgresFixture;
  const dbs: PgDatabase[] = [];
  const coordinators: Coordinator[] = [];
  beforeAll(async () => {
    pg = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    for (const c of coordinators) await c.close().catch(() => {});
    for (const db of dbs) await db.close().catch(() => {});
    await pg?.dispose();
  });

  async function open(url: string, max = 4): Promise<PgDatabase> {
    const db = await openPgDatabase(url, { max });
    dbs.push(db);
    return db;
  }

  /** Instances a (whose coordinator can be cut off) and b, each with its own pool and index. */
  async function cluster() {
    const url = await pg.createDatabase();
    const admin = await open(url, 2);
    await migrate(admin, MIGRATIONS);
    const aCoordDb = cuttable(await open(url));
    const aLines: string[] = [];
    const a = await openPgCoordinator(
      aCoordDb.db,
      { host: "a", pid: 1, instanceId: "a" },
      { ...FAST, log: (l) => aLines.push(l) },
    );
    const b = await openPgCoordinator(await open(url), { host: "b", pid: 2, instanceId: "b" }, FAST);
    coordinators.push(a, b);
    const aIndex = pgChatSessionIndex(await open(url, 8));
    const bIndex = pgChatSessionIndex(await open(url));
    return { admin, a, b, aCoordDb, aLines, aIndex, bIndex };
  }

  const rows = (admin: PgDatabase) =>
    admin.query("SELECT key_digest, session_key, session_id, entry, updated_at FROM gateway_chat_index");

  it("fenced writes on a current claim land as unfenced ones do, and hold no lock afterwards", async () => {
    const { admin, a, aIndex } = await cluster();
    const key = "agent:main:telegram:dm:1";
    const claim = await claimOf(a, key);
    const index = aIndex.fencedBy(claim.fence!);
    const first = await index.set(key, "s1", source, T1);
    expect(first).toMatchObject({ session_key: key, session_id: "s1", created_at: T1.toISOString() });
    // An existing entry: the second path of `set` (the row locked and rewritten).
    expect(await index.set(key, "s2", source, T2)).toMatchObject({
      session_id: "s2",
      updated_at: T2.toISOString(),
    });
    await index.markInterrupted(key, "restart_interrupted", T2);
    expect(await index.takeInterrupted(key)).toEqual({ reason: "restart_interrupted", at: T2 });
    expect(await index.takeInterrupted(key)).toBeUndefined();
    const later = new Date("2026-11-27T03:00:00.000Z");
    await index.touch(key, later);
    expect(await aIndex.get(key)).toMatchObject({ session_id: "s2", updated_at: later.toISOString() });
    expect((await index.get(key))?.resume_pending).toBeUndefined();
    // Nothing else is reachable through the view but the index calls (and its own fencedBy).
    expect(Object.keys(index).sort()).toEqual(
      ["fencedBy", "get", "markInterrupted", "set", "takeInterrupted", "touch"].sort(),
    );
    // No row lock outlives a write: the holder's renewal and release go through at once.
    await claim.ensure();
    const locks = await admin.query(
      "SELECT count(*)::int AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'coord_chat_claims' AND l.granted AND l.pid <> pg_backend_pid()",
    );
    expect(locks[0]?.["n"]).toBe(0);
    await claim.release();
    expect(claim.lost.aborted).toBe(false);
  });

  it("a holder whose claim was taken over while it was cut off cannot point the chat at its stale session", async () => {
    const { admin, a, b, aCoordDb, aLines, aIndex, bIndex } = await cluster();
    const key = "agent:main:slack:group:C9";
    const claim = await claimOf(a, key);
    const stale = aIndex.fencedBy(claim.fence!);
    await stale.set(key, "session-a", source, T1);
    await stale.markInterrupted(key, "restart_interrupted", T1);
    // a stalls: its heartbeat no longer reaches the database, and b takes the chat over and moves
    // it to a session of its own (taking the restart mark as its turn does).
    aCoordDb.cut();
    const taken = await claimOf(b, key);
    expect(taken.fence?.token).not.toBe(claim.fence?.token);
    const fresh = bIndex.fencedBy(taken.fence!);
    expect(await fresh.takeInterrupted(key)).toMatchObject({ reason: "restart_interrupted" });
    await fresh.set(key, "session-b", source, T2);
    expect(claim.lost.aborted).toBe(false);
    const before = await rows(admin);
    // Every index write a's turn makes now is refused by the database, and none lands: the chat
    // still points at b's session, with no mark a's stale turn left.
    const attempts: Array<[string, () => Promise<unknown>]> = [
      ["set", () => stale.set(key, "session-a", source, new Date())],
      ["markInterrupted", () => stale.markInterrupted(key, "restart_interrupted", new Date())],
      ["takeInterrupted", () => stale.takeInterrupted(key)],
      ["touch", () => stale.touch(key, new Date())],
      // A new chat's first entry (the insert path) under the lost claim is refused too.
      ["set (first entry)", () => stale.set(`${key}:thread`, "session-a", source, new Date())],
    ];
    for (const [name, attempt] of attempts) {
      const error = await claimLost(attempt());
      expect(error.key, name).toBe(key);
      expect(error.message, name).toMatch(/no longer holds chat .*: the database refused a chat index write/);
    }
    expect(await rows(admin)).toEqual(before);
    expect(await bIndex.get(key)).toMatchObject({ session_id: "session-b" });
    // The refusal lost the claim here at once, before a's coordinator could hear from the database.
    expect(claim.lost.aborted).toBe(true);
    expect(claim.valid()).toBe(false);
    expect(aLines.join("\n")).toMatch(/lost chat .*C9: the database refused a chat index write/);
    // The new holder's writes land; a wakes, its coordinator agrees, and b keeps the chat.
    await fresh.touch(key, new Date("2026-11-27T04:00:00.000Z"));
    aCoordDb.restore();
    await expect(claim.ensure()).rejects.toBeInstanceOf(ChatClaimLostError);
    expect(await bIndex.get(key)).toMatchObject({
      session_id: "session-b",
      updated_at: "2026-11-27T04:00:00.000Z",
    });
    expect(await a.claimChat(key)).toEqual({ heldBy: "b" });
  });

  it("one instance alone that stalled past the TTL keeps writing when nobody took its chat", async () => {
    const { admin, a, aCoordDb, aIndex } = await cluster();
    const key = "agent:main:telegram:dm:8";
    const claim = await claimOf(a, key);
    const index = aIndex.fencedBy(claim.fence!);
    await index.set(key, "s1", source, T1);
    aCoordDb.cut();
    await sleep(TTL + 300);
    const age = await admin.query<{ ms: number }>(
      "SELECT (extract(epoch FROM clock_timestamp() - seen_at) * 1000)::int AS ms FROM coord_chat_claims WHERE key = $1",
      [key],
    );
    expect(age[0]!.ms).toBeGreaterThan(TTL);
    // The claim row is old but still this claim's: writes land.
    await index.set(key, "s2", source, T2);
    await index.touch(key, T2);
    aCoordDb.restore();
    await claim.ensure();
    expect(claim.lost.aborted).toBe(false);
    expect(await aIndex.get(key)).toMatchObject({ session_id: "s2", updated_at: T2.toISOString() });
  });

  it("a write made under a claim released since is refused; one made with no claim (CLI, commands) is not fenced", async () => {
    const { a, aIndex } = await cluster();
    const key = "agent:main:discord:dm:3";
    const claim = await claimOf(a, key);
    const fenced = aIndex.fencedBy(claim.fence!);
    await fenced.set(key, "s1", source, T1);
    await claim.release();
    await claimLost(fenced.set(key, "late", source, T2));
    expect(await aIndex.get(key)).toMatchObject({ session_id: "s1" });
    // The plain index writes without any claim row at all.
    await aIndex.set(key, "from-cli", source, T2);
    await aIndex.set("agent:main:cli:dm:none", "s9", source, T2);
    expect(await aIndex.get(key)).toMatchObject({ session_id: "from-cli" });
    expect(await aIndex.get("agent:main:cli:dm:none")).toMatchObject({ session_id: "s9" });
  });

  it("index writes racing a take-over never commit after it (many rounds, sets, marks and touches at once)", async () => {
    const { admin, a, aIndex } = await cluster();
    let landedSome = 0;
    for (let round = 0; round < 30; round++) {
      const key = `race:${round}`;
      const claim = await claimOf(a, key);
      const index = aIndex.fencedBy(claim.fence!);
      await index.set(key, "start", source, T1);
      const done = { sets: 0, other: 0 };
      let last = "start";
      let stop = false;
      const loop = async (step: () => Promise<unknown>, count: keyof typeof done) => {
        while (!stop) {
          try {
            await step();
            done[count]++;
          } catch (error) {
            expect(error).toBeInstanceOf(ChatClaimLostError);
            return "refused";
          }
        }
        return "stopped";
      };
      let n = 0;
      const writers = Promise.all([
        loop(async () => {
          const id = `a-${n++}`;
          await index.set(key, id, source, new Date());
          last = id;
        }, "sets"),
        loop(() => index.markInterrupted(key, "restart_interrupted", new Date()), "other"),
        loop(() => index.takeInterrupted(key), "other"),
        loop(() => index.touch(key, new Date()), "other"),
      ]);
      for (let t = 0; t < 2_000 && done.sets + done.other === 0; t++) await sleep(1);
      await sleep(round % 10);
      // The take-over as the coordinator makes it (a new holder and token on the claim row), with
      // the entry as committed by then read inside it, just before it commits.
      const seen = await admin.tx(async (q) => {
        await q.query(
          "UPDATE coord_chat_claims SET holder = 'b', token = $2, seen_at = clock_timestamp() WHERE key = $1",
          [key, `taken-${round}`],
        );
        await q.query("SELECT pg_sleep(0.005)");
        const got = await q.query<{ entry: string }>(
          "SELECT entry FROM gateway_chat_index WHERE session_key = $1",
          [key],
        );
        return got[0]?.entry;
      });
      const ends = await Promise.race([writers, sleep(5_000).then(() => "hung")]);
      stop = true;
      expect(ends).toEqual(["refused", "refused", "refused", "refused"]);
      const after = await admin.query<{ entry: string }>(
        "SELECT entry FROM gateway_chat_index WHERE session_key = $1",
        [key],
      );
      // Nothing committed after the take-over; the last set reported done had committed before it.
      expect(after[0]?.entry).toBe(seen);
      expect(JSON.parse(seen!).session_id).toBe(last);
      expect(claim.lost.aborted).toBe(true);
      if (done.sets + done.other > 0) landedSome++;
    }
    // The races were real: writes landed before the take-over in every round, then all were refused.
    expect(landedSome).toBe(30);
  }, 120_000);
});
