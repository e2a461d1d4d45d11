/**
 * Runs a gateway store's contract against its file store and its PostgreSQL store. One real
 * PostgreSQL server per test file (started only when PostgreSQL is installed), a fresh migrated
 * database per test, and every pool closed after each test. `instances(n)` of a backend share one
 * storage: several stores on one home (file) or several pools on one database (PostgreSQL), the
 * way several gateway processes would.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll } from "vitest";
import { openPgDatabase, type PgDatabase } from "../../../../src/state/postgres/database.js";
import { migrate } from "../../../../src/state/postgres/migrate.js";
import { MIGRATIONS } from "../../../../src/state/postgres/migrations/index.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../../../support/postgres.js";

export type BackendName = "file" | "postgres";

/** The backends this machine can run: PostgreSQL only when it is installed. */
export const BACKENDS: BackendName[] = postgresSkipReason ? ["file"] : ["file", "postgres"];

/** One storage (a home, or a database) on which instances of a store can be opened. */
export interface Storage {
  kind: BackendName;
  /** The home directory (file stores; also made for PostgreSQL, unused there). */
  home: string;
  /** Another pool on the database (PostgreSQL only). */
  pool(): Promise<PgDatabase>;
}

/** Registers the file's PostgreSQL server and answers a function that makes a storage per test. */
export function useStorages(): (kind: BackendName) => Promise<Storage> {
  let pg: PostgresFixture | undefined;
  let open: PgDatabase[] = [];
  beforeAll(async () => {
    if (!postgresSkipReason) pg = await startPostgres();
  }, 60_000);
  afterEach(async () => {
    await Promise.all(open.map((db) => db.close()));
    open = [];
  });
  afterAll(async () => {
    await pg?.dispose();
  });
  return async (kind) => {
    const home = mkdtempSync(join(tmpdir(), "hermes-gw-store-"));
    if (kind === "file") {
      return {
        kind,
        home,
        pool: () => Promise.reject(new Error("a file storage has no database")),
      };
    }
    if (!pg) throw new Error("PostgreSQL did not start");
    const url = await pg.createDatabase();
    const first = await openPgDatabase(url, { max: 4 });
    open.push(first);
    await migrate(first, MIGRATIONS);
    let handedFirst = false;
    return {
      kind,
      home,
      async pool() {
        if (!handedFirst) {
          handedFirst = true;
          return first;
        }
        const db = await openPgDatabase(url, { max: 4 });
        open.push(db);
        return db;
      },
    };
  };
}
