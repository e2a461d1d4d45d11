/**
 * The database-side fencing token on session writes (PostgreSQL): a store view fenced by a chat
 * claim (`PgSessionStore.fencedBy(claim.fence)`) writes only while that claim is the chat's current
 * one in `coord_chat_claims`. Real coordinators on a real server: a holder whose claim was taken
 * over while it was cut off has every write refused (nothing lands, its claim is lost at once) while
 * the new holder's writes land; writes racing a take-over never commit after it; fenced writes on a
 * live claim behave exactly as unfenced ones.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChatClaimLostError, type Coordinator } from "../../../../src/state/coordination.js";
import { openPgCoordinator } from "../../../../src/state/postgres/coordination.js";
import { openPgDatabase, type PgDatabase } from "../../../../src/state/postgres/database.js";
import { migrate } from "../../../../src/state/postgres/migrate.js";
import { MIGRATIONS } from "../../../../src/state/postgres/migrations/index.js";
import { openPgSessionStore } from "../../../../src/state/postgres/session-store.js";
import {
  claimLost,
  claimOf,
  cuttable,
  FAST_COORDINATION as FAST,
} from "../../../support/pg-instance-pair.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../../../support/postgres.js";

const TTL = FAST.instanceTtlMs ?? 800;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const user = (text: string) => ({ role: "user" as const, content: text });
const assistant = (text: string) => ({ role: "assistant" as const, content: text });

describe.skipIf(postgresSkipReason)("PostgreSQL session writes fenced by a chat claim", () => {
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

  /** Instances a (whose coordinator can be cut off) and b, each with its own pool and session store. */
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
    const aStore = await openPgSessionStore(await open(url, 8));
    const bStore = await openPgSessionStore(await open(url));
    return { admin, a, b, aCoordDb, aLines, aStore, bStore };
  }

  async function snapshot(admin: PgDatabase) {
    const sessions = await admin.query("SELECT * FROM sessions ORDER BY id");
    const messages = await admin.query(
      "SELECT id, session_id, role, content, active FROM messages ORDER BY id",
    );
    return { sessions, messages };
  }

  it("fenced writes on a current claim land as unfenced ones do, and hold no lock afterwards", async () => {
    const { admin, a, aStore } = await cluster();
    const claim = await claimOf(a, "telegram:1");
    expect(claim.fence?.key).toBe("telegram:1");
    expect(claim.fence?.token).toEqual(expect.any(String));
    const store = aStore.fencedBy(claim.fence!);
    const s = await store.createSession({ source: "telegram", title: "fenced" });
    const first = await store.appendMessage(s.id, user("hi"), {
      usage: { inputTokens: 5, outputTokens: 1, apiCalls: 1 },
    });
    expect(first).toBeGreaterThan(0);
    await store.appendMessages(s.id, [assistant("hello"), user("again")]);
    await store.updateSession(s.id, { model: "m-1" });
    await store.recordUsage(s.id, { inputTokens: 2, outputTokens: 3, apiCalls: 1 });
    await store.setTitle(s.id, "fenced two");
    await store.undoTurns(s.id, 1);
    const child = await store.branchSession(s.id, { title: "fenced branch" });
    await store.endSession(s.id, "user_exit");
    await store.reopenSession(s.id);
    const cont = await store.continueSession(s.id, { source: "telegram", parentSessionId: s.id }, [
      user("x"),
    ]);
    const started = await store.startSession({ source: "telegram" }, user("new one"));
    expect(started).toBeGreaterThan(first);
    expect(await store.deleteSession(child.id)).toEqual({ messages: 2 });
    const got = await aStore.getSession(s.id);
    expect(got).toMatchObject({ title: "fenced two", model: "m-1", messageCount: 2, inputTokens: 7 });
    expect((await aStore.getMessages(cont.id)).map((m) => m.content)).toEqual(["x"]);
    // Reads through the view are the store's own; closing the view leaves the store open.
    expect((await store.getMessages(s.id)).map((m) => m.content)).toEqual(["hi", "hello"]);
    await store.close();
    expect(await aStore.getSession(s.id)).not.toBeNull();
    // No row lock outlives a write: the holder's renewal and release go through at once.
    await claim.ensure();
    const locks = await admin.query(
      "SELECT count(*)::int AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'coord_chat_claims' AND l.granted AND l.pid <> pg_backend_pid()",
    );
    expect(locks[0]?.["n"]).toBe(0);
    await claim.release();
    expect(claim.lost.aborted).toBe(false);
  });

  it("a holder whose claim was taken over while it was cut off: every write is refused, nothing lands, the new holder's do", async () => {
    const { admin, a, b, aCoordDb, aLines, aStore, bStore } = await cluster();
    const claim = await claimOf(a, "slack:C9");
    const stale = aStore.fencedBy(claim.fence!);
    const s = await stale.createSession({ source: "slack", title: "before the stall" });
    await stale.appendMessage(s.id, user("question"));
    const other = await stale.createSession({ source: "slack" });
    // a stalls: its heartbeat and renewals no longer reach the database, and b takes the chat over.
    aCoordDb.cut();
    const taken = await claimOf(b, "slack:C9");
    expect(taken.fence?.token).not.toBe(claim.fence?.token);
    // a's claim still looks usable to a's own coordinator (it has not heard back yet)...
    expect(claim.lost.aborted).toBe(false);
    const before = await snapshot(admin);
    // ...but every write a's turn makes now is refused by the database, and none lands.
    const attempts: Array<[string, () => Promise<unknown>]> = [
      [
        "appendMessage",
        () =>
          stale.appendMessage(s.id, assistant("late answer"), {
            usage: { inputTokens: 1, outputTokens: 1, apiCalls: 1 },
          }),
      ],
      ["appendMessages", () => stale.appendMessages(s.id, [assistant("late"), user("late too")])],
      ["updateSession", () => stale.updateSession(s.id, { model: "late-model", systemPrompt: "late" })],
      ["recordUsage", () => stale.recordUsage(s.id, { inputTokens: 100, outputTokens: 1, apiCalls: 1 })],
      ["setTitle", () => stale.setTitle(s.id, "late title")],
      ["endSession", () => stale.endSession(s.id, "turn_finished")],
      ["reopenSession", () => stale.reopenSession(s.id)],
      ["undoTurns", () => stale.undoTurns(s.id, 1)],
      ["branchSession", () => stale.branchSession(s.id, { title: "late branch" })],
      [
        "continueSession",
        () => stale.continueSession(s.id, { source: "slack", parentSessionId: s.id }, [user("late")]),
      ],
      ["createSession", () => stale.createSession({ source: "slack", title: "late session" })],
      ["startSession", () => stale.startSession({ source: "slack" }, user("late start"))],
      ["deleteSession", () => stale.deleteSession(other.id)],
    ];
    for (const [name, attempt] of attempts) {
      const error = await claimLost(attempt());
      expect(error.key, name).toBe("slack:C9");
      expect(error.message, name).toMatch(
        /no longer holds chat slack:C9: the database refused a session write/,
      );
    }
    expect(await snapshot(admin)).toEqual(before);
    // The refusal lost the claim here at once, before a's coordinator could hear from the database.
    expect(claim.lost.aborted).toBe(true);
    expect(claim.lost.reason).toBeInstanceOf(ChatClaimLostError);
    expect(claim.valid()).toBe(false);
    expect(aLines.join("\n")).toMatch(/lost chat slack:C9: the database refused a session write/);
    // The new holder's writes land.
    const fresh = bStore.fencedBy(taken.fence!);
    await fresh.appendMessage(s.id, assistant("answer from b"));
    await fresh.updateSession(s.id, { model: "b-model" });
    await fresh.endSession(s.id, "turn_finished");
    expect((await bStore.getMessages(s.id)).map((m) => m.content)).toEqual(["question", "answer from b"]);
    expect(await bStore.getSession(s.id)).toMatchObject({ model: "b-model", endReason: "turn_finished" });
    // a wakes: its coordinator agrees, and b keeps the chat.
    aCoordDb.restore();
    await expect(claim.ensure()).rejects.toBeInstanceOf(ChatClaimLostError);
    await sleep(3 * FAST.heartbeatMs!);
    expect(taken.valid()).toBe(true);
    await fresh.appendMessage(s.id, user("next"));
    expect(await a.claimChat("slack:C9")).toEqual({ heldBy: "b" });
  });

  it("one instance alone that stalled past the TTL keeps writing when nobody took its chat", async () => {
    const { admin, a, aCoordDb, aStore } = await cluster();
    const claim = await claimOf(a, "telegram:8");
    const store = aStore.fencedBy(claim.fence!);
    const s = await store.createSession({ source: "telegram" });
    aCoordDb.cut();
    await sleep(TTL + 300);
    // The claim row is old (nobody confirmed it past the TTL), but still this claim's: writes land.
    const age = await admin.query<{ ms: number }>(
      "SELECT (extract(epoch FROM clock_timestamp() - seen_at) * 1000)::int AS ms FROM coord_chat_claims WHERE key = 'telegram:8'",
    );
    expect(age[0]!.ms).toBeGreaterThan(TTL);
    await store.appendMessage(s.id, user("still here"));
    await store.updateSession(s.id, { model: "m" });
    aCoordDb.restore();
    await claim.ensure();
    expect(claim.lost.aborted).toBe(false);
    expect((await aStore.getMessages(s.id)).map((m) => m.content)).toEqual(["still here"]);
  });

  it("a write made under a claim released since is refused; one made with no claim is not fenced", async () => {
    const { admin, a, aStore } = await cluster();
    const claim = await claimOf(a, "discord:3");
    const fenced = aStore.fencedBy(claim.fence!);
    const s = await fenced.createSession({ source: "discord" });
    await claim.release();
    await claimLost(fenced.appendMessage(s.id, user("after release")));
    expect(await admin.query("SELECT 1 FROM messages WHERE session_id = $1", [s.id])).toEqual([]);
    await aStore.appendMessage(s.id, user("the CLI writes unfenced"));
    expect((await aStore.getMessages(s.id)).map((m) => m.content)).toEqual(["the CLI writes unfenced"]);
  });

  it("writes racing a take-over never commit after it (many rounds, appends, usage and updates at once)", async () => {
    const { admin, a, aStore } = await cluster();
    let landedSome = 0;
    let refusedSome = 0;
    for (let round = 0; round < 30; round++) {
      const key = `race:${round}`;
      const claim = await claimOf(a, key);
      const store = aStore.fencedBy(claim.fence!);
      const s = await store.createSession({ source: "telegram" });
      const done = { appends: 0, usage: 0, updates: 0 };
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
        loop(() => store.appendMessage(s.id, user(`m${n++}`)), "appends"),
        loop(() => store.appendMessages(s.id, [assistant(`r${n++}`)]), "appends"),
        loop(() => store.recordUsage(s.id, { inputTokens: 1, outputTokens: 0, apiCalls: 1 }), "usage"),
        loop(() => store.updateSession(s.id, { model: `m-${n++}` }), "updates"),
      ]);
      // The take-over comes in the middle of the stream: after the first writes landed.
      for (let t = 0; t < 2_000 && done.appends + done.usage + done.updates === 0; t++) await sleep(1);
      await sleep(round % 10);
      // The take-over, as the coordinator makes it (a new holder and token on the claim row), with
      // what had committed by then read inside it, just before it commits.
      const seen = await admin.tx(async (q) => {
        await q.query(
          "UPDATE coord_chat_claims SET holder = 'b', token = $2, seen_at = clock_timestamp() WHERE key = $1",
          [key, `taken-${round}`],
        );
        await q.query("SELECT pg_sleep(0.005)");
        const rows = await q.query<{ messages: number; calls: number; model: string | null }>(
          "SELECT (SELECT count(*)::int FROM messages WHERE session_id = $1) AS messages, (SELECT api_call_count FROM sessions WHERE id = $1)::int AS calls, (SELECT model FROM sessions WHERE id = $1) AS model",
          [s.id],
        );
        return rows[0]!;
      });
      const ends = await Promise.race([writers, sleep(5_000).then(() => "hung")]);
      stop = true;
      expect(ends).toEqual(["refused", "refused", "refused", "refused"]);
      const after = await admin.query<{ messages: number; calls: number; model: string | null }>(
        "SELECT (SELECT count(*)::int FROM messages WHERE session_id = $1) AS messages, (SELECT api_call_count FROM sessions WHERE id = $1)::int AS calls, (SELECT model FROM sessions WHERE id = $1) AS model",
        [s.id],
      );
      // Nothing committed after the take-over, and every write reported as done had committed before it.
      expect(after[0]).toEqual(seen);
      expect(seen).toMatchObject({ messages: done.appends, calls: done.usage });
      expect(claim.lost.aborted).toBe(true);
      if (done.appends + done.usage + done.updates > 0) landedSome++;
      refusedSome++;
    }
    // The races were real: writes landed before the take-over in every round, and all were then refused.
    expect(landedSome).toBe(30);
    expect(refusedSome).toBe(30);
  }, 120_000);
});
