/** A migrated database per test on the file's PostgreSQL server; every pool closed at the end. */
import { afterAll, afterEach, beforeAll } from "vitest";
import { openPgDatabase, type PgDatabase } from "../../../../src/state/postgres/database.js";
import { migrate } from "../../../../src/state/postgres/migrate.js";
import { MIGRATIONS } from "../../../../src/state/postgres/migrations/index.js";
import { type PostgresFixture, startPostgres } from "../../../support/postgres.js";

export class Databases {
  private readonly open: PgDatabase[] = [];
  private server: PostgresFixture | undefined;
  private readonly pg: () => PostgresFixture;
  /** `pg`: the server the test started itself; without it, the one `serveEachTest` starts. */
  constructor(pg?: () => PostgresFixture) {
    this.pg =
      pg ??
      (() => {
        if (!this.server) throw new Error("no PostgreSQL server: call serveEachTest() in the describe block");
        return this.server;
      });
  }

  /**
   * In the calling describe block: starts a PostgreSQL server before its tests, closes the pools
   * each test opened after it, and stops the server after the last one.
   */
  serveEachTest(): void {
    beforeAll(async () => {
      this.server = await startPostgres();
    }, 60_000);
    afterEach(() => this.closeAll());
    afterAll(async () => {
      await this.server?.dispose();
    });
  }

  /** A new database with the whole schema; `instances` pools on it (one per simulated instance). */
  async fresh(instances = 1): Promise<PgDatabase[]> {
    const url = await this.pg().createDatabase();
    const dbs = await Promise.all(Array.from({ length: instances }, () => openPgDatabase(url, { max: 4 })));
    await migrate(dbs[0] as PgDatabase, MIGRATIONS);
    this.open.push(...dbs);
    return dbs;
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.open.splice(0).map((db) => db.close()));
  }
}
