/**
 * One PostgreSQL server for the tests of the calling describe block (or file):
 *
 *   describe.skipIf(postgresSkipReason)("…", () => {
 *     const pg = postgresForSuite();
 *     it("…", async () => {
 *       const url = await pg().createDatabase();
 *     });
 *   });
 */
import { afterAll, beforeAll } from "vitest";
import { type PostgresFixture, startPostgres } from "./postgres.js";

/** Starts the server before the block's first test and stops it after its last; `pg()` is it. */
export function postgresForSuite(): () => PostgresFixture {
  let pg: PostgresFixture | undefined;
  beforeAll(async () => {
    pg = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await pg?.dispose();
  });
  return () => {
    if (!pg) throw new Error("PostgreSQL is not started for this block");
    return pg;
  };
}
