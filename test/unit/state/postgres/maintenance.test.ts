/**
 * PostgreSQL pruning against SQLite's on the same rows: the same sessions are prunable (ended,
 * and started, ended and last active before the cutoff; never-ended ones kept), the same counts
 * are deleted, children keep living with their parent cleared; auto-prune runs once across
 * instances starting together and respects its interval.
 */
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPgDatabase, type PgDatabase } from "../../../../src/state/postgres/database.js";
import { pgAutoPrune, pgPrunable, pgPrune } from "../../../../src/state/postgres/maintenance.js";
import { migrate } from "../../../../src/state/postgres/migrate.js";
import { MIGRATIONS } from "../../../../src/state/postgres/migrations/index.js";
import { openSqliteStore } from "../../../../src/state/sqlite-store.js";
import { copySqliteStateToPg } from "../../../support/pg-copy-state.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../../../support/postgres.js";
import { manualClock } from "../helpers.js";

const DAY = 86_400;
const START = 1_700_000_000;

/** Sessions of every prune shape; the clock ends 100 days after START. */
function build(path: string): { now: number; ids: Record<string, string> } {
  const clock = manualClock(START);
  const store = openSqliteStore(path, { now: clock.now });
  const ids: Record<string, string> = {};
  const session = (key: string, source: string, extra: { parent?: string } = {}) => {
    const s = store.createSession({
      source,
      title: `t ${key}`,
      ...(extra.parent ? { parentSessionId: extra.parent } : {}),
    });
    ids[key] = s.id;
    store.appendMessages(s.id, [
      { role: "user", content: `hello from ${key}` },
      { role: "assistant", content: "hi" },
    ]);
    return s.id;
  };
  session("oldEnded", "cli");
  store.endSession(ids["oldEnded"]!, "user_exit");
  session("oldOpen", "cli");
  session("oldTelegram", "telegram");
  store.endSession(ids["oldTelegram"]!, "idle");
  session("child", "cli", { parent: ids["oldEnded"]! });
  clock.advance(10 * DAY);
  session("resumed", "cli");
  store.endSession(ids["resumed"]!, "user_exit");
  clock.advance(80 * DAY);
  // Ended long ago, but a message arrived recently (resumed without reopening).
  store.appendMessage(ids["resumed"]!, { role: "user", content: "back again" });
  session("recent", "cli");
  store.endSession(ids["recent"]!, "user_exit");
  clock.advance(10 * DAY);
  store.close();
  return { now: clock.now(), ids };
}

describe.skipIf(postgresSkipReason)("PostgreSQL pruning equals SQLite's", () => {
  const dir = mkdtempSync(join(tmpdir(), "hermes-pg-prune-"));
  let pg: PostgresFixture;
  let built: ReturnType<typeof build>;
  let file: string;

  beforeAll(async () => {
    pg = await startPostgres();
    file = join(dir, "state.db");
    built = build(file);
  }, 60_000);
  afterAll(async () => {
    await pg?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  const fresh = async (): Promise<PgDatabase> => {
    const db = await openPgDatabase(await pg.createDatabase());
    await migrate(db, MIGRATIONS);
    await copySqliteStateToPg(file, db);
    return db;
  };
  const liteCopy = (name: string) => {
    const copy = join(dir, `${name}.db`);
    rmSync(copy, { force: true });
    copyFileSync(file, copy);
    return openSqliteStore(copy, { now: () => built.now });
  };

  it.each([
    [{ olderThanDays: 30 }],
    [{ olderThanDays: 30, source: "telegram" }],
    [{ olderThanDays: 200 }],
    [{ olderThanDays: 0 }],
  ] as Array<[{ olderThanDays: number; source?: string }]>)("prunable and prune %j", async (options) => {
    const db = await fresh();
    const lite = liteCopy(`p${Math.random()}`);
    try {
      const expected = lite.prunable(options);
      const actual = await pgPrunable(db, options, built.now);
      expect(actual).toEqual(expected);
      const liteResult = lite.prune(options);
      const pgResult = await pgPrune(db, options, built.now);
      expect(pgResult).toEqual(liteResult);
      const left = await db.query<{ id: string; parent_session_id: string | null }>(
        "SELECT id, parent_session_id FROM sessions ORDER BY id",
      );
      const liteLeft = lite.listSessions({ limit: 100, includeArchived: true });
      expect(left.map((r) => r.id).sort()).toEqual(liteLeft.map((s) => s.id).sort());
      for (const row of left) {
        expect(row.parent_session_id).toBe(liteLeft.find((s) => s.id === row.id)?.parentSessionId ?? null);
      }
      const [{ n }] = (await db.query<{ n: string }>("SELECT COUNT(*) AS n FROM messages")) as [
        { n: string },
      ];
      expect(Number(n)).toBe(liteLeft.reduce((sum, s) => sum + s.messageCount, 0));
    } finally {
      lite.close();
      await db.close();
    }
  });

  it("keeps never-ended and recently active sessions, and clears a pruned parent from its child", async () => {
    const db = await fresh();
    const names = async () =>
      (await pgPrunable(db, { olderThanDays: 30 }, built.now)).map(
        (s) => Object.entries(built.ids).find(([, id]) => id === s.id)?.[0],
      );
    expect((await names()).sort()).toEqual(["oldEnded", "oldTelegram"]);
    const [first] = await pgPrunable(db, { olderThanDays: 30 }, built.now);
    expect(first?.preview).toMatch(/^hello from old/);
    expect(await pgPrune(db, { olderThanDays: 30 }, built.now)).toEqual({ sessions: 2, messages: 4 });
    const [child] = await db.query("SELECT parent_session_id FROM sessions WHERE id = $1", [
      built.ids["child"],
    ]);
    expect(child).toEqual({ parent_session_id: null });
    await expect(pgPrune(db, { olderThanDays: -1 }, built.now)).rejects.toMatchObject({ code: "invalid" });
    await expect(pgPrunable(db, { olderThanDays: Number.NaN }, built.now)).rejects.toThrow(/olderThanDays/);
    await db.close();
  });

  it("auto-prunes once across instances starting together, then waits out its interval", async () => {
    const url = await pg.createDatabase();
    const setup = await openPgDatabase(url);
    await migrate(setup, MIGRATIONS);
    await copySqliteStateToPg(file, setup);
    const instances = await Promise.all([1, 2, 3].map(() => openPgDatabase(url)));
    const options = { retentionDays: 30, minIntervalHours: 24, vacuum: true };
    const results = await Promise.all(instances.map((db) => pgAutoPrune(db, options, built.now)));
    expect(results.filter((r) => !r.skipped)).toEqual([{ skipped: false, sessions: 2, vacuumed: true }]);
    expect(results.filter((r) => r.skipped)).toHaveLength(2);
    const [marker] = await setup.query("SELECT value FROM state_meta WHERE key = 'last_auto_prune'");
    expect(Number(marker?.["value"])).toBe(built.now);
    expect((await pgAutoPrune(setup, options, built.now + 3600)).skipped).toBe(true);
    const later = await pgAutoPrune(setup, options, built.now + 25 * 3600);
    expect(later).toEqual({ skipped: false, sessions: 0, vacuumed: false });
    // A marker someone garbled does not stop pruning for good.
    await setup.query("UPDATE state_meta SET value = 'garbage' WHERE key = 'last_auto_prune'");
    expect((await pgAutoPrune(setup, options, built.now + 26 * 3600)).skipped).toBe(false);
    await Promise.all([setup, ...instances].map((db) => db.close()));
  });

  it("a session that gets a message while a prune waits for its lock is kept", async () => {
    const db = await fresh();
    const id = built.ids["oldEnded"]!;
    const client = await db.connect();
    try {
      await client.query("BEGIN");
      await client.query("SELECT 1 FROM sessions WHERE id = $1 FOR KEY SHARE", [id]);
      const pruning = pgPrune(db, { olderThanDays: 30, source: "cli" }, built.now);
      await new Promise((r) => setTimeout(r, 200));
      await client.query(
        "INSERT INTO messages (session_id, role, content, timestamp) VALUES ($1, 'user', 'still here', $2)",
        [id, built.now],
      );
      await client.query("COMMIT");
      expect(await pruning).toEqual({ sessions: 0, messages: 0 });
      const [row] = await db.query("SELECT COUNT(*)::int AS n FROM sessions WHERE id = $1", [id]);
      expect(row).toEqual({ n: 1 });
    } finally {
      client.release();
      await db.close();
    }
  });
});
