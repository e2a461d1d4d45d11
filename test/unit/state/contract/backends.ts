/**
 * The shared session-store contract: each case runs against SQLite (`openSessionStore` on a
 * temp file), against SQLite through the recording store the CLI and the gateway use
 * (`openRecordingStore`: the write queue and group commits, writes collected until the loop's
 * check phase and committed together) and against PostgreSQL (`openPgSessionStore` on a fresh database of the file's
 * server). `second()` opens another store on the same data (another process's file handle, another
 * instance's pool), for concurrency cases. `raw(sql)` runs one statement directly, the way another
 * program would touch the data (for health-check cases).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe } from "vitest";
import { openPgDatabase, type PgDatabase } from "../../../../src/state/postgres/database.js";
import { migrate } from "../../../../src/state/postgres/migrate.js";
import { MIGRATIONS } from "../../../../src/state/postgres/migrations/index.js";
import { openPgSessionStore } from "../../../../src/state/postgres/session-store.js";
import { openRecordingStore } from "../../../../src/state/recording-store.js";
import { openSessionStore } from "../../../../src/state/sqlite-store.js";
import type { SessionStore } from "../../../../src/state/types.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../../../support/postgres.js";
import { rawDb } from "../helpers.js";

export interface Clock {
  t: number;
  now: () => number;
  /** Moves the clock on by `seconds` (default 1) and answers the new time. */
  tick(seconds?: number): number;
}

export interface Harness {
  kind: "sqlite" | "postgres";
  store: SessionStore;
  clock: Clock;
  second(): Promise<SessionStore>;
  raw(sql: string): Promise<void>;
}

/** 2026-06-01 10:00:00 UTC. */
export const T0 = 1_780_308_000;

function makeClock(): Clock {
  const clock: Clock = {
    t: T0,
    now: () => clock.t,
    tick(seconds = 1) {
      clock.t += seconds;
      return clock.t;
    },
  };
  return clock;
}

export function contract(title: string, body: (h: () => Harness) => void): void {
  sqliteContract(title, "sqlite", body, (path, now) => openSessionStore(path, { now, durability: "normal" }));
  sqliteContract(title, "sqlite, recording", body, (path, now) =>
    openRecordingStore(dirname(path), {
      notify: () => {},
      // Tests running on several cores at once: a lock held by `second()` is waited for, as by a direct store.
      writeWaitMs: 10_000,
      now,
      open: { now, durability: "normal" },
    }),
  );
  postgresContract(title, body);
}

function sqliteContract(
  title: string,
  label: string,
  body: (h: () => Harness) => void,
  openStore: (path: string, now: () => number) => SessionStore,
): void {
  describe(`${title} [${label}]`, () => {
    let h: Harness;
    let dir: string;
    const open: SessionStore[] = [];
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), "hermes-contract-"));
      const path = join(dir, "state.db");
      const clock = makeClock();
      const store = openStore(path, clock.now);
      open.push(store);
      h = {
        kind: "sqlite",
        store,
        clock,
        async second() {
          const s = openStore(path, clock.now);
          open.push(s);
          return s;
        },
        async raw(sql) {
          const db = rawDb(path);
          try {
            db.exec(sql);
          } finally {
            db.close();
          }
        },
      };
    });
    afterEach(async () => {
      for (const s of open.splice(0)) await s.close().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    });
    body(() => h);
  });
}

function postgresContract(title: string, body: (h: () => Harness) => void): void {
  describe.skipIf(postgresSkipReason)(`${title} [postgres]`, () => {
    let pg: PostgresFixture;
    let h: Harness;
    const dbs: PgDatabase[] = [];
    beforeAll(async () => {
      pg = await startPostgres();
    }, 60_000);
    afterAll(async () => {
      await pg?.dispose();
    });
    beforeEach(async () => {
      const url = await pg.createDatabase();
      const db = await openPgDatabase(url, { max: 4 });
      dbs.push(db);
      await migrate(db, MIGRATIONS);
      const clock = makeClock();
      h = {
        kind: "postgres",
        store: await openPgSessionStore(db, { now: clock.now }),
        clock,
        async second() {
          const other = await openPgDatabase(url, { max: 4 });
          dbs.push(other);
          return openPgSessionStore(other, { now: clock.now });
        },
        async raw(sql) {
          await db.query(sql);
        },
      };
    }, 30_000);
    afterEach(async () => {
      for (const db of dbs.splice(0)) await db.close().catch(() => {});
    });
    body(() => h);
  });
}
