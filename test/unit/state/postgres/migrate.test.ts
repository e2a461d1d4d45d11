import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPgDatabase } from "../../../../src/state/postgres/database.js";
import { appliedVersions, MigrationError, migrate } from "../../../../src/state/postgres/migrate.js";
import { MIGRATIONS } from "../../../../src/state/postgres/migrations/index.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../../../support/postgres.js";

describe.skipIf(postgresSkipReason)("PostgreSQL migrations", () => {
  let pg: PostgresFixture;
  beforeAll(async () => {
    pg = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await pg?.dispose();
  });

  it("applies each step once, even with several instances starting together", async () => {
    const url = await pg.createDatabase();
    const steps = [
      { version: 100, name: "table", up: "CREATE TABLE t (x int)" },
      { version: 101, name: "row", up: "INSERT INTO t VALUES (1)" },
    ];
    const dbs = await Promise.all([1, 2, 3].map(() => openPgDatabase(url)));
    const reports = await Promise.all(dbs.map((db) => migrate(db, steps)));
    expect(reports.map((r) => r.applied.length).sort()).toEqual([0, 0, 2]);
    expect(await dbs[0]!.query("SELECT count(*)::int AS n FROM t")).toEqual([{ n: 1 }]);
    expect(await appliedVersions(dbs[0]!)).toEqual([100, 101]);
    await Promise.all(dbs.map((db) => db.close()));
  });

  it("rolls a failing step back whole and refuses a schema from a newer Hermes", async () => {
    const url = await pg.createDatabase();
    const db = await openPgDatabase(url);
    await expect(
      migrate(db, [{ version: 100, name: "broken", up: "CREATE TABLE u (x int); SELECT nope" }]),
    ).rejects.toThrow(/migration 100 \(broken\) failed/);
    expect(await db.query("SELECT to_regclass('u') AS t")).toEqual([{ t: null }]);
    await migrate(db, [{ version: 100, name: "ok", up: "CREATE TABLE u (x int)" }]);
    await expect(migrate(db, [])).rejects.toThrow(MigrationError);
    await expect(migrate(db, [])).rejects.toThrow(/newer Hermes/);
    await db.close();
  });

  it("builds the whole Hermes schema on an empty database", async () => {
    const db = await openPgDatabase(await pg.createDatabase());
    const report = await migrate(db, MIGRATIONS);
    expect(report.applied.length).toBe(MIGRATIONS.length);
    const tables = await db.query<{ t: string }>(
      "SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' ORDER BY 1",
    );
    expect(tables.map((r) => r.t)).toEqual(expect.arrayContaining(["messages", "sessions"]));
    expect((await migrate(db, MIGRATIONS)).applied).toEqual([]);
    await db.close();
  });

  it("keeps committed rows across a killed server", async () => {
    const url = await pg.createDatabase();
    const db = await openPgDatabase(url);
    await migrate(db, [{ version: 100, name: "t", up: "CREATE TABLE t (x int); INSERT INTO t VALUES (7)" }]);
    await db.close();
    await pg.kill();
    await pg.start();
    const again = await openPgDatabase(url);
    expect(await again.query("SELECT x FROM t")).toEqual([{ x: 7 }]);
    expect(again.label).toBe(url);
    await again.close();
  }, 60_000);
});
