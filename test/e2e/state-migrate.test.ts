/**
 * `hermes state migrate --to postgres` and `hermes state export` as a user runs them: a home with
 * a Python-written state.db moved into a real PostgreSQL (Debian's package, test/support/postgres.ts)
 * and written back out as a file home that `hermes sessions search` reads.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runHermes, tempHome } from "../support/cli.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../support/postgres.js";
import { createPythonStateDb } from "../support/python-state-db.js";

describe.skipIf(postgresSkipReason)("hermes state", () => {
  let pg: PostgresFixture;
  beforeAll(async () => {
    pg = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await pg?.dispose();
  });

  it("migrates a Python-written home into PostgreSQL, resumes, and exports it back", async () => {
    const { home, cwd } = tempHome();
    const { sessionIds } = createPythonStateDb(join(home, "state.db"));
    // A password in the URL (trust auth ignores it) must never be printed.
    const url = (await pg.createDatabase()).replace("postgres@", "postgres:s3cret-pw@");

    const first = await runHermes(["state", "migrate", "--to", "postgres", url], { home, cwd });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/state\.db: sessions\s+4\s+4\s+0\s+0\s+✓/);
    expect(first.stdout).toContain("hermes config set state.backend postgres");
    expect(first.stdout + first.stderr).not.toContain("s3cret-pw");

    const again = await runHermes(["state", "migrate", "--to", "postgres", url], { home, cwd });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/state\.db: sessions\s+4\s+0\s+4\s+0\s+✓/);

    // The home switched to PostgreSQL finds the same sessions as its state.db did.
    const queries = ["今天天气", "parser", "read_file", "refactor*"];
    const onSqlite = await Promise.all(
      queries.map((q) => runHermes(["sessions", "search", q, "--json"], { home, cwd })),
    );
    writeFileSync(join(home, "config.yaml"), "state:\n  backend: postgres\n");
    const onPostgres = await Promise.all(
      queries.map((q) =>
        runHermes(["sessions", "search", q, "--json"], { home, cwd, env: { HERMES_DATABASE_URL: url } }),
      ),
    );
    const found = (r: { stdout: string }) =>
      [...new Set(JSON.parse(r.stdout).map((h: { sessionId: string }) => h.sessionId))].sort();
    for (const [i, q] of queries.entries()) {
      expect(onPostgres[i]!.code, onPostgres[i]!.stderr).toBe(0);
      expect([q, found(onPostgres[i]!)]).toEqual([q, found(onSqlite[i]!)]);
    }
    expect(found(onSqlite[0]!)).toEqual([sessionIds[2]]);

    const out = join(cwd, "exported-home");
    const exported = await runHermes(["state", "export", out, "--from", url], { home, cwd });
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stdout + exported.stderr).not.toContain("s3cret-pw");

    const back = await runHermes(["sessions", "search", "今天天气", "--json"], { home: out, cwd });
    expect(back.code, back.stderr).toBe(0);
    expect(found(back)).toEqual([sessionIds[2]]);
  }, 60_000);

  it("refuses bad input with a clear message and exit 2", async () => {
    const { home, cwd } = tempHome();
    const noDb = await runHermes(["state", "migrate", "--to", "postgres", "postgres://x@127.0.0.1:1/db"], {
      home,
      cwd,
    });
    expect(noDb.code).toBe(2);
    expect(noDb.stderr).toContain("does not exist: there is nothing to migrate");

    createPythonStateDb(join(home, "state.db"));
    const wrongTarget = await runHermes(["state", "migrate", "--to", "mysql"], { home, cwd });
    expect(wrongTarget.code).toBe(2);
    expect(wrongTarget.stderr).toContain("the only backend to migrate to is postgres");

    const noUrl = await runHermes(["state", "migrate", "--to", "postgres"], { home, cwd });
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr).toContain("HERMES_DATABASE_URL");

    const notPg = await runHermes(["state", "migrate", "--to", "postgres", "mysql://u:hunter2@h/db"], {
      home,
      cwd,
    });
    expect(notPg.code).toBe(2);
    expect(notPg.stderr).toContain("is not a postgres:// URL");
    expect(notPg.stderr).not.toContain("hunter2");

    const down = await runHermes(
      ["state", "migrate", "--to", "postgres", "postgres://u:hunter2@127.0.0.1:1/db"],
      { home, cwd },
    );
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(
      /could not prepare postgres:\/\/u:\S+@127\.0\.0\.1:1\/db: nothing answers at that address/,
    );
    expect(down.stderr).not.toContain("hunter2");
  }, 60_000);
});
