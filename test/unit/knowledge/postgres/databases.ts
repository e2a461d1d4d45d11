/** A migrated database per test on the file's PostgreSQL server; every pool closed at the end. */
import { openPgDatabase, type PgDatabase } from "../../../../src/state/postgres/database.js";
import { migrate } from "../../../../src/state/postgres/migrate.js";
import { MIGRATIONS } from "../../../../src/state/postgres/migrations/index.js";
import type { PostgresFixture } from "../../../support/postgres.js";

export class Databases {
  private readonly open: PgDatabase[] = [];
  constructor(private readonly pg: () => PostgresFixture) {}

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
