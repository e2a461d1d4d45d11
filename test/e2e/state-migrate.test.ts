/**
 * `hermes state migrate --to postgres` and `hermes state export` as a user runs them: a home with
 * a Python-written state.db moved into a real PostgreSQL (Debian's package, test/support/postgres.ts)
 * and written back out as a file home that `hermes sessions search` reads; then a home with every
 * part (memories, a skill with a script, cron with an output, pairing, webhooks) moved and
 * exported, the new home answering the CLI's read commands as the old one did.
 */
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { pgMemoryRecords } from "../../src/knowledge/postgres/memory-records.js";
import { openPgDatabase } from "../../src/state/postgres/database.js";
import { runHermes, tempHome } from "../support/cli.js";
import { createFullHome, MEMORY_ENTRIES } from "../support/full-home.js";
import { postgresSkipReason } from "../support/postgres.js";
import { postgresForSuite } from "../support/postgres-suite.js";
import { createPythonStateDb } from "../support/python-state-db.js";

describe.skipIf(postgresSkipReason)("hermes state", () => {
  const pg = postgresForSuite();

  it("migrates a Python-written home into PostgreSQL, resumes, and exports it back", async () => {
    const { home, cwd } = tempHome();
    const { sessionIds } = createPythonStateDb(join(home, "state.db"));
    // A password in the URL (trust auth ignores it) must never be printed.
    const url = (await pg().createDatabase()).replace("postgres@", "postgres:s3cret-pw@");

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

  it("moves every part of a home and exports one that answers the same", async () => {
    const { home, cwd } = tempHome();
    const { pendingCode, cronJobId } = await createFullHome(home);
    const url = (await pg().createDatabase()).replace("postgres@", "postgres:s3cret-pw@");

    const first = await runHermes(["state", "migrate", "--to", "postgres", url], { home, cwd });
    expect(first.code, first.stderr).toBe(0);
    for (const row of [
      /state\.db: sessions\s+4\s+4\s+0\s+0\s+✓/,
      /gateway: pairing approved\s+1\s+1\s+0\s+0\s+✓/,
      /gateway: webhook subscriptions\s+1\s+1\s+0\s+0\s+✓/,
      /gateway: chat index\s+1\s+1\s+0\s+0\s+✓/,
      /memories: MEMORY\.md\s+2\s+2\s+0\s+0\s+✓/,
      /memories: USER\.md\s+1\s+1\s+0\s+0\s+✓/,
      /skills: folders\s+2\s+1\s+0\s+1\s+✓/,
      /skills: usage\s+1\s+1\s+0\s+0\s+✓/,
      /cron: jobs\s+1\s+1\s+0\s+0\s+✓/,
      /cron: outputs\s+1\s+1\s+0\s+0\s+✓/,
    ]) {
      expect(first.stdout).toMatch(row);
    }
    expect(first.stderr).toContain("skill seeded-helper left out: a bundled skill");
    const secrets = ["s3cret-pw", pendingCode, "whsec-do-not-print"];
    for (const secret of secrets) expect(first.stdout + first.stderr).not.toContain(secret);

    const again = await runHermes(["state", "migrate", "--to", "postgres", url], { home, cwd });
    expect(again.code, again.stderr).toBe(0);
    const copiedAgain = again.stdout
      .split("\n")
      .filter((line) => line.includes(":") && line.includes("✓"))
      .map((line) => line.trim().split(/\s{2,}/)[2]);
    expect(copiedAgain.length).toBeGreaterThanOrEqual(14);
    expect(new Set(copiedAgain)).toEqual(new Set(["0"]));
    expect(again.stdout).not.toContain("✗");

    const out = join(cwd, "exported-full-home");
    const exported = await runHermes(["state", "export", out, "--from", url], { home, cwd });
    expect(exported.code, exported.stderr).toBe(0);
    for (const secret of secrets) expect(exported.stdout + exported.stderr).not.toContain(secret);

    const ask = async (where: string, args: string[]) => {
      const r = await runHermes(args, { home: where, cwd });
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(0);
      return JSON.parse(r.stdout.split(where).join("<home>"));
    };
    // Each command, with something of the fixture its answer must hold.
    for (const [args, marker] of [
      [["sessions", "search", "parser", "--json"], "Refactor the parser"],
      [["cron", "list", "--json"], "Summarise the night"],
      [["pairing", "list", "--json"], "alice"],
      [["webhook", "list", "--json"], "github-push"],
    ] as const) {
      const answer = await ask(out, [...args]);
      expect(JSON.stringify(answer)).toContain(marker);
      expect(answer).toEqual(await ask(home, [...args]));
    }
    const cronJobs = await ask(out, ["cron", "list", "--json"]);
    expect(JSON.stringify(cronJobs)).toContain(cronJobId);
    const userSkills = async (where: string) =>
      (await ask(where, ["skills", "list", "--json"])).filter(
        (s: { name: string }) => s.name === "deploy-check",
      );
    expect(await userSkills(out)).toHaveLength(1);
    expect(await userSkills(out)).toEqual(await userSkills(home));
    expect(readFileSync(join(out, "memories", "MEMORY.md"), "utf8")).toBe(MEMORY_ENTRIES.join("\n§\n"));
    expect(statSync(join(out, "skills", "devops", "deploy-check", "scripts", "check.sh")).mode & 0o777).toBe(
      0o755,
    );

    // The database changed since (an instance removed a memory): a new run does not put it back,
    // says which part no longer matches the home, and fails.
    const db = await openPgDatabase(url, { max: 1 });
    try {
      await pgMemoryRecords(db).remove("memory", "Fridays");
    } finally {
      await db.close();
    }
    const changed = await runHermes(["state", "migrate", "--to", "postgres", url], { home, cwd });
    expect(changed.code).toBe(1);
    expect(changed.stdout).toMatch(/memories: MEMORY\.md\s+2\s+0\s+1\s+0\s+✗/);
    expect(changed.stderr).toContain(
      "✗ memories: MEMORY.md: 1 of the home's 2 entries are not in the database",
    );
    expect(changed.stdout).not.toContain("Done.");
  }, 120_000);

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
