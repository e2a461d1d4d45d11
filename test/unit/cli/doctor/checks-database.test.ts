import { describe, expect, it } from "vitest";
import { databaseChecks, searchLine } from "../../../../src/cli/doctor/checks-database.js";
import { openPgDatabase } from "../../../../src/state/postgres/database.js";
import { migrate } from "../../../../src/state/postgres/migrate.js";
import { MIGRATIONS } from "../../../../src/state/postgres/migrations/index.js";
import { SEARCH_REPAIR_SQL } from "../../../../src/state/postgres/migrations/search.js";
import { postgresSkipReason } from "../../../support/postgres.js";
import { postgresForSuite } from "../../../support/postgres-suite.js";

const pgState = (url: string) =>
  ({ state: { backend: "postgres", url, pool_size: 2, durability: "normal" } }) as never;

describe("doctor: the state backend", () => {
  it("adds nothing for a SQLite home and names a misconfigured postgres backend", async () => {
    expect(await databaseChecks({ state: { backend: "sqlite" } } as never, {})).toEqual([]);
    const lines = await databaseChecks({ state: { backend: "postgres", url: "" } } as never, {});
    expect(lines).toMatchObject([{ name: "state backend", status: "fail" }]);
    expect(lines[0]!.detail).toMatch(/HERMES_DATABASE_URL/);
  });

  it("says an unreachable server does not answer, without its password", async () => {
    const lines = await databaseChecks(
      pgState("postgres://hermes:s3cret-pw@127.0.0.1:1/hermes"),
      {},
      {
        connectTimeoutMs: 2_000,
      },
    );
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ group: "Database", name: "PostgreSQL", status: "fail" });
    expect(lines[0]!.detail).toContain("postgres://hermes:***@127.0.0.1:1/hermes does not answer");
    expect(JSON.stringify(lines)).not.toContain("s3cret-pw");
  });
});

describe("doctor: the search extensions", () => {
  const ext = (name: string, installed: boolean, available: boolean) => ({ name, installed, available });

  it("names an extension the server lacks and what to install, before one only not created", () => {
    const line = searchLine([ext("pg_trgm", true, true), ext("unaccent", false, false)], true, false);
    expect(line.status).toBe("fail");
    // The missing configuration follows from the missing extension: one cause, one line.
    expect(line.detail).toBe("unaccent not installed on the server");
    expect(line.fix).toMatch(/contrib extensions \(unaccent\) on the database server/);
    expect(line.fix).toMatch(/postgresql-contrib/);
    expect(line.fix).toMatch(/hermes doctor --fix/);
  });

  it("an extension available but not created: doctor --fix and who may create it", () => {
    const line = searchLine([ext("pg_trgm", false, true), ext("unaccent", true, true)], true, true);
    expect(line).toMatchObject({ status: "fail", detail: "pg_trgm not created" });
    expect(line.fix).toMatch(/CREATE EXTENSION pg_trgm needs the database's owner or a superuser/);
  });

  it("everything present is ok; a lost accent configuration alone is named", () => {
    const all = [ext("pg_trgm", true, true), ext("unaccent", true, true)];
    expect(searchLine(all, true, true)).toMatchObject({
      status: "ok",
      detail: "tsvector column, accent folding and pg_trgm, unaccent present",
    });
    expect(searchLine(all, true, false)).toMatchObject({
      status: "fail",
      detail: "no accent-folding configuration (hermes_words)",
    });
  });
});

describe.skipIf(postgresSkipReason)("doctor: a PostgreSQL database", () => {
  const pg = postgresForSuite();

  it("finds an empty database, migrates it with --fix, and checks full-text search", async () => {
    const url = await pg().createDatabase();
    const before = await databaseChecks(pgState(url), {});
    expect(before.map((l) => [l.name, l.status])).toEqual([
      ["PostgreSQL", "ok"],
      ["schema", "warn"],
      ["full-text search", "fail"],
      ["instances", "ok"],
    ]);
    expect(before[0]!.detail).toMatch(/answers \(server \d+/);
    expect(before[2]!.detail).toBe(
      "pg_trgm not created; unaccent not created; messages has no tsvector column",
    );
    expect(before[2]!.fix).toMatch(/CREATE EXTENSION pg_trgm, CREATE EXTENSION unaccent/);
    const repaired = await before[1]!.repair!();
    expect(repaired).toMatch(/applied \d+ migration/);
    // What the search migrations add (their own area), made here by hand.
    const db = await openPgDatabase(url);
    await db.query("CREATE EXTENSION IF NOT EXISTS pg_trgm");
    await db.query("ALTER TABLE messages ADD COLUMN IF NOT EXISTS search_doc tsvector");
    const after = await databaseChecks(pgState(url), {});
    expect(after.map((l) => [l.name, l.status])).toEqual([
      ["PostgreSQL", "ok"],
      ["schema", "ok"],
      ["full-text search", "ok"],
      ["instances", "ok"],
    ]);
    expect(after[1]!.detail).toBe(`migrated to ${MIGRATIONS.at(-1)!.version}`);
    // Half-migrated, and migrated by a newer Hermes.
    await db.query("DELETE FROM hermes_migrations WHERE version = $1", [MIGRATIONS.at(-1)!.version]);
    expect((await databaseChecks(pgState(url), {}))[1]).toMatchObject({
      status: "fail",
      detail: expect.stringMatching(/missing/),
    });
    await migrate(db, MIGRATIONS).catch(() => {});
    await db.query("INSERT INTO hermes_migrations (version, name) VALUES (99999, 'future')");
    expect((await databaseChecks(pgState(url), {}))[1]).toMatchObject({
      status: "fail",
      detail: expect.stringMatching(/newer Hermes/),
    });
    await db.close();
  });

  it("a migrated database whose unaccent extension was dropped is told to create it again", async () => {
    const url = await pg().createDatabase();
    const db = await openPgDatabase(url);
    await migrate(db, MIGRATIONS);
    expect((await databaseChecks(pgState(url), {}))[2]).toMatchObject({ status: "ok" });
    await db.query("DROP EXTENSION unaccent CASCADE");
    const line = (await databaseChecks(pgState(url), {}))[2]!;
    expect(line).toMatchObject({ name: "full-text search", status: "fail" });
    expect(line.detail).toMatch(/^unaccent not created/);
    expect(line.fix).toMatch(/CREATE EXTENSION unaccent/);
    // pg_trgm dropped too (its index goes with it): --fix puts every piece back, rows kept.
    await db.query("INSERT INTO sessions (id, source, started_at) VALUES ('s1', 'cli', 1)");
    await db.query(
      "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s1', 'user', '今天天气很好 café', 1)",
    );
    await db.query("DROP EXTENSION pg_trgm CASCADE");
    const both = (await databaseChecks(pgState(url), {}))[2]!;
    expect(both.detail).toMatch(/pg_trgm not created; unaccent not created; messages has no tsvector column/);
    expect(await both.repair!()).toBe("re-created what full-text search needs");
    expect((await databaseChecks(pgState(url), {}))[2]).toMatchObject({ status: "ok" });
    const indexes = await db.query<{ indexname: string }>(
      "SELECT indexname FROM pg_indexes WHERE tablename = 'messages' AND indexname LIKE 'idx_messages_search%' ORDER BY 1",
    );
    expect(indexes.map((i) => i.indexname)).toEqual([
      "idx_messages_search_trgm",
      "idx_messages_search_vector",
    ]);
    const found = await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM messages WHERE search_vector @@ to_tsquery('hermes_words', 'cafe')",
    );
    expect(found[0]?.n).toBe(1);
    // Run again, it changes nothing and fails on nothing.
    await db.query(SEARCH_REPAIR_SQL);
    await db.close();
  });
});
