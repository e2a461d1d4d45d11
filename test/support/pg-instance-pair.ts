/**
 * Two instances' PostgreSQL coordinators over one fresh, migrated database, with short timings,
 * for tests where instance A loses its database (to itself alone) while B goes on:
 *
 *   const pairs = pgInstancePairs();
 *   const { link, a, b, aLog } = await pairs.open(pg);   // A's statements go through `link`
 *   link.cut();                                           // A's statements wait from now on
 *   link.restore();                                       // ...and run again
 *   await pairs.close();                                  // coordinators, then connections
 */
import { expect } from "vitest";
import { type ChatClaim, ChatClaimLostError, type Coordinator } from "../../src/state/coordination.js";
import { openPgCoordinator, type PgCoordinatorTiming } from "../../src/state/postgres/coordination.js";
import { openPgDatabase, type PgDatabase } from "../../src/state/postgres/database.js";
import { migrate } from "../../src/state/postgres/migrate.js";
import { MIGRATIONS } from "../../src/state/postgres/migrations/index.js";
import type { PostgresFixture } from "./postgres.js";

/** Heartbeats, TTLs and polls short enough that a take-over happens within a second or two. */
export const FAST_COORDINATION: PgCoordinatorTiming = {
  heartbeatMs: 100,
  instanceTtlMs: 800,
  claimMarginMs: 200,
  leaseTtlMs: 800,
  pollMs: 50,
  maxReconnectMs: 300,
};

export interface CuttableDb {
  db: PgDatabase;
  /** From now on, statements wait (a database lost to this instance only). */
  cut(): void;
  /** Waiting statements run, and new ones go through again. */
  restore(): void;
}

/** `db` whose statements wait while `cut` is on (a database lost to this instance only). */
export function cuttable(db: PgDatabase): CuttableDb {
  let on = false;
  const waiters: Array<() => void> = [];
  const wrapped = new Proxy(db, {
    get(target, prop) {
      if (prop === "query")
        return async (sql: string, params?: unknown[]) => {
          while (on) await new Promise<void>((r) => waiters.push(r));
          return target.query(sql, params);
        };
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return {
    db: wrapped,
    cut: () => {
      on = true;
    },
    restore: () => {
      on = false;
      for (const w of waiters.splice(0)) w();
    },
  };
}

export interface PgInstancePair {
  /** A's connection, which the test cuts and restores. */
  link: CuttableDb;
  /** Instance "a" (over `link`) and instance "b". */
  a: Coordinator;
  b: Coordinator;
  /** What A's coordinator logged. */
  aLog: string[];
}

/** Opens pairs and closes every coordinator and connection it opened. */
export function pgInstancePairs() {
  const dbs: PgDatabase[] = [];
  const coordinators: Coordinator[] = [];
  return {
    async open(pg: PostgresFixture): Promise<PgInstancePair> {
      const url = await pg.createDatabase();
      const admin = await openPgDatabase(url, { max: 2 });
      dbs.push(admin);
      await migrate(admin, MIGRATIONS);
      const aDb = await openPgDatabase(url, { max: 4 });
      const bDb = await openPgDatabase(url, { max: 4 });
      dbs.push(aDb, bDb);
      const link = cuttable(aDb);
      const aLog: string[] = [];
      const a = await openPgCoordinator(
        link.db,
        { host: "a", pid: 1, instanceId: "a" },
        { ...FAST_COORDINATION, log: (l) => aLog.push(l) },
      );
      const b = await openPgCoordinator(bDb, { host: "b", pid: 2, instanceId: "b" }, FAST_COORDINATION);
      coordinators.push(a, b);
      return { link, a, b, aLog };
    },
    async close(): Promise<void> {
      for (const c of coordinators.splice(0)) await c.close().catch(() => {});
      for (const db of dbs.splice(0)) await db.close();
    },
  };
}

/** `key` claimed by `c`, asking again until a holder's claim lapsed (or `timeoutMs` passed). */
export async function claimOf(c: Coordinator, key: string, timeoutMs = 10_000): Promise<ChatClaim> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const result = await c.claimChat(key);
    if ("claimed" in result) return result.claimed;
    if (Date.now() > end) throw new Error(`${key} still held by ${result.heldBy}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The `ChatClaimLostError` that `p` rejects with (the test fails when it resolves or throws another). */
export async function claimLost(p: Promise<unknown>): Promise<ChatClaimLostError> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ChatClaimLostError);
  return error as ChatClaimLostError;
}
