/**
 * Skill writes beside the skill tools on a PostgreSQL home, through two real backends on one
 * database (two instances with their own homes): the curator's writes, hub installs with their
 * provenance (lock.json), snapshot imports, a rollback and bundled resets all reach the database,
 * and the other instance's copy follows by itself (its LISTEN watch), including after its
 * listening connection was killed. Stale copies are refused and nothing is half done.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultConfig, type HermesConfig } from "../../../../src/config/defaults.js";
import { archiveSkill, listArchived, restoreSkill } from "../../../../src/knowledge/curator/archive.js";
import { rollbackSkills, snapshotSkills } from "../../../../src/knowledge/curator/backup.js";
import type { SkillBundle } from "../../../../src/knowledge/skills/hub/bundle.js";
import { installBundle, uninstallSkill } from "../../../../src/knowledge/skills/hub/install.js";
import { listInstalledSkills } from "../../../../src/knowledge/skills/hub/installed.js";
import { lockPath, readLock } from "../../../../src/knowledge/skills/hub/lock.js";
import { createSkill, editSkill } from "../../../../src/knowledge/skills/manage.js";
import { shareSkillChanges } from "../../../../src/knowledge/skills/share.js";
import { importSnapshot, parseSnapshot } from "../../../../src/knowledge/skills/snapshot.js";
import { openStateBackend, type StateBackend } from "../../../../src/knowledge/state-backend.js";
import { HUB_LOCK_PART } from "../../../../src/knowledge/state-hub-lock-part.js";
import { exportHome, migrateHome } from "../../../../src/knowledge/state-transfer.js";
import { openPgDatabase } from "../../../../src/state/postgres/database.js";
import { migrate } from "../../../../src/state/postgres/migrate.js";
import { MIGRATIONS } from "../../../../src/state/postgres/migrations/index.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../../../support/postgres.js";
import { postgresForSuite } from "../../../support/postgres-suite.js";
import { bundleFiles, skillMd } from "../skills/hub/helpers.js";

const md = (name: string, body = "1. Build.\n2. Push.\n") =>
  `---\nname: ${name}\ndescription: The ${name} steps.\n---\n\n${body}`;
const now = () => 1_700_000_000;

function home(): string {
  const h = mkdtempSync(join(tmpdir(), "hermes-pg-skillwrites-"));
  mkdirSync(join(h, "skills"), { recursive: true });
  return h;
}

function config(): HermesConfig {
  return { ...defaultConfig(), state: { backend: "postgres" } } as HermesConfig;
}

/** Waits for `check` to hold (the other instance's watch refreshing), failing after 10 s. */
async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function bundle(name: string, extra: Record<string, string> = {}): SkillBundle {
  return {
    name,
    files: bundleFiles({ "SKILL.md": skillMd(name, `The ${name} skill.`, "category: devops\n"), ...extra }),
    source: "local",
    identifier: `/src/${name}`,
    metadata: {},
    warnings: [],
  };
}

const read = (h: string, rel: string) => readFileSync(join(h, "skills", ...rel.split("/")), "utf8");

describe.skipIf(postgresSkipReason)("skill writes beside the skill tools, on PostgreSQL", () => {
  let pg: PostgresFixture;
  let url: string;
  let ha: string;
  let hb: string;
  let a: StateBackend;
  let b: StateBackend;
  const warnings: string[] = [];

  beforeAll(async () => {
    pg = await startPostgres();
    url = await pg.createDatabase();
    [ha, hb] = [home(), home()];
    const env = { HERMES_DATABASE_URL: url };
    a = await openStateBackend(ha, config(), { env, onWarning: (l) => warnings.push(l) });
    b = await openStateBackend(hb, config(), { env, onWarning: (l) => warnings.push(l) });
  }, 60_000);
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await pg?.dispose();
  });

  it("a skill written with no sink passed (the backend's) reaches the other instance by itself", async () => {
    await createSkill({ home: ha }, { name: "deploy-notes", content: md("deploy-notes") });
    await until(() => existsSync(join(hb, "skills", "deploy-notes", "SKILL.md")), "B's copy");
    expect(read(hb, "deploy-notes/SKILL.md")).toContain("The deploy-notes steps.");
  });

  it("hub installs carry their provenance to every instance; an uninstall removes both", async () => {
    await installBundle({ home: ha, bundle: bundle("kubectl-help", { "scripts/run.sh": "echo ok\n" }), now });
    await until(
      async () =>
        existsSync(join(hb, "skills", "devops", "kubectl-help", "SKILL.md")) &&
        (await readLock(hb)).installed["kubectl-help"] !== undefined,
      "B's copy and lock entry",
    );
    const entry = (await readLock(hb)).installed["kubectl-help"];
    expect(entry).toMatchObject({ source: "local", identifier: "/src/kubectl-help" });
    expect(entry?.install_path).toBe("devops/kubectl-help");
    // B sees it as a hub skill, not as the user's own.
    const onB = (await listInstalledSkills(hb, await readLock(hb))).find((s) => s.name === "kubectl-help");
    expect(onB?.origin).toBe("hub");

    // Uninstalling on B (where it arrived by the mirror) removes it on A too, folder and entry.
    await uninstallSkill(hb, "kubectl-help", now);
    await until(
      async () =>
        !existsSync(join(ha, "skills", "devops", "kubectl-help")) &&
        (await readLock(ha)).installed["kubectl-help"] === undefined,
      "A to drop it",
    );
    expect(JSON.parse(readFileSync(lockPath(ha), "utf8")).installed).not.toHaveProperty("kubectl-help");
  });

  it("the curator's archive and restore move a skill for every instance, in one step each", async () => {
    await createSkill({ home: ha }, { name: "old-runbook", content: md("old-runbook") });
    await until(() => existsSync(join(hb, "skills", "old-runbook")), "B's copy");

    const archived = await archiveSkill(ha, "old-runbook");
    expect(archived.to).toBe(join(ha, "skills", ".archive", "old-runbook"));
    await until(
      () =>
        !existsSync(join(hb, "skills", "old-runbook")) &&
        existsSync(join(hb, "skills", ".archive", "old-runbook", "SKILL.md")),
      "B to archive it",
    );
    // B lists it among the archived (its bookkeeping folders are not listed) and restores it.
    expect(listArchived(hb).map((s) => s.name)).toEqual(["old-runbook"]);
    await restoreSkill(hb, "old-runbook");
    await until(
      () =>
        existsSync(join(ha, "skills", "old-runbook", "SKILL.md")) &&
        !existsSync(join(ha, "skills", ".archive", "old-runbook")),
      "A to get it back",
    );
    expect(listArchived(ha)).toEqual([]);
    const db = await openPgDatabase(url);
    try {
      expect(await db.query("SELECT folder FROM skill_archive")).toEqual([]);
      expect(await db.query("SELECT name FROM skills WHERE name = 'old-runbook'")).toHaveLength(1);
    } finally {
      await db.close();
    }
  });

  it("archiving a copy another instance changed meanwhile is refused and puts the folder back", async () => {
    await createSkill({ home: ha }, { name: "racy", content: md("racy") });
    await until(() => existsSync(join(hb, "skills", "racy")), "B's copy");
    // B changes it; A archives before its watch has caught up (its version is stale).
    await b.close();
    const db = await openPgDatabase(url);
    try {
      await db.query("UPDATE skills SET version = version + 1000 WHERE name = 'racy'");
    } finally {
      await db.close();
    }
    await expect(archiveSkill(ha, "racy")).rejects.toThrow(/"racy" was not archived: .*another instance/);
    expect(existsSync(join(ha, "skills", "racy", "SKILL.md"))).toBe(true);
    expect(existsSync(join(ha, "skills", ".archive", "racy"))).toBe(false);
    b = await openStateBackend(hb, config(), { env: { HERMES_DATABASE_URL: url } });
    expect(existsSync(join(hb, "skills", "racy", "SKILL.md"))).toBe(true);
  });

  it("a snapshot import on one instance installs the skills for all", async () => {
    const snapshot = parseSnapshot(
      JSON.stringify({
        format: "hermes-skills-snapshot",
        hermes_version: "0.1.0",
        exported_at: "2026-11-27T00:00:00+00:00",
        skills: [],
        skill_files: [
          {
            name: "imported-one",
            category: "ops",
            origin: "user",
            files: { "SKILL.md": { content: md("imported-one") } },
          },
        ],
      }),
      "snap.json",
    );
    const result = await importSnapshot(ha, snapshot, { nowSeconds: now() });
    expect(result.rows.map((r) => [r.name, r.status])).toEqual([["imported-one", "installed"]]);
    await until(() => existsSync(join(hb, "skills", "ops", "imported-one", "SKILL.md")), "B's copy");
  });

  it("a rollback's restored tree is stored for every instance", async () => {
    await createSkill({ home: ha }, { name: "rolled", content: md("rolled", "version one\n") });
    await snapshotSkills(ha, { reason: "test", keep: 5, now: new Date("2026-11-27T01:00:00Z") });
    await editSkill({ home: ha }, { name: "rolled", content: md("rolled", "version two\n") });
    await until(
      () => existsSync(join(hb, "skills", "rolled")) && read(hb, "rolled/SKILL.md").includes("two"),
      "v2 on B",
    );
    await rollbackSkills(ha, { keep: 5, now: new Date("2026-11-27T02:00:00Z") });
    expect(read(ha, "rolled/SKILL.md")).toContain("version one");
    const shared = await shareSkillChanges(ha, { includeNew: true });
    expect(shared?.failed).toEqual([]);
    expect(shared?.stored).toContain("rolled");
    await until(() => read(hb, "rolled/SKILL.md").includes("version one"), "B to roll back");
  });

  it("after its listening connection is killed, an instance catches up on what changed meanwhile", async () => {
    const db = await openPgDatabase(url);
    try {
      // Kill every connection LISTENing on the skills channel (both instances' watches).
      await db.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE pid <> pg_backend_pid() AND query ILIKE 'LISTEN%'`,
      );
      await createSkill({ home: ha }, { name: "while-down", content: md("while-down") });
      await until(() => existsSync(join(hb, "skills", "while-down", "SKILL.md")), "B to catch up");
    } finally {
      await db.close();
    }
    expect(warnings.every((w) => !/password/i.test(w))).toBe(true);
  });

  it("leaves B's own folders (never stored) and the archive's bookkeeping out of its listings", () => {
    mkdirSync(join(hb, "skills", "local-only"));
    writeFileSync(join(hb, "skills", "local-only", "SKILL.md"), md("local-only"));
    const names = readdirSync(join(hb, "skills")).filter((n) => !n.startsWith("."));
    expect(names).toContain("local-only");
    expect(listArchived(hb).every((s) => !s.name.startsWith("."))).toBe(true);
  });
});

describe.skipIf(postgresSkipReason)("rows written around the checks, on a fresh instance", () => {
  const pg = postgresForSuite();

  it("an archive row named to escape or a lock entry pointing outside writes nothing outside the home", async () => {
    const url = await pg().createDatabase();
    const first = home();
    const opened = await openStateBackend(first, config(), { env: { HERMES_DATABASE_URL: url } });
    await opened.close();
    const db = await openPgDatabase(url);
    const outside = mkdtempSync(join(tmpdir(), "hermes-pg-outside-"));
    try {
      for (const folder of ["../../escape", ".hidden", "ok-archived"]) {
        await db.query(
          `INSERT INTO skill_archive (folder, name, version, hash, total_bytes, archived_at)
           VALUES ($1, 'x', nextval('skill_change_seq'), 'h', 1, 0)`,
          [folder],
        );
        await db.query(
          "INSERT INTO skill_archive_files (folder, path, mode, content) VALUES ($1, 'SKILL.md', 420, $2)",
          [folder, Buffer.from(md("x"))],
        );
      }
      await db.query(
        "INSERT INTO skill_archive_files (folder, path, mode, content) VALUES ('ok-archived', '../../../pwned', 420, 'x')",
      );
      await db.query(
        `INSERT INTO skill_hub_lock (name, entry, updated_at) VALUES
           ('evil', $1, 0), ('broken', 'not json', 0)`,
        [JSON.stringify({ source: "x", install_path: `../../${outside.slice(1)}` })],
      );
    } finally {
      await db.close();
    }
    const h = home();
    const backend = await openStateBackend(h, config(), { env: { HERMES_DATABASE_URL: url } });
    try {
      // No archive row became a folder: one escapes, one is hidden, one carries a path that escapes.
      expect(listArchived(h)).toEqual([]);
      expect(existsSync(join(h, "escape"))).toBe(false);
      expect(existsSync(join(h, "pwned"))).toBe(false);
      // The lock entries are provenance only: the bad path is recorded, never followed or created.
      const lock = await readLock(h);
      expect(Object.keys(lock.installed)).toEqual(["evil"]);
      expect(readdirSync(outside)).toEqual([]);
      // The hub refuses to act on it (uninstall names the unsafe path and touches nothing).
      await expect(uninstallSkill(h, "evil", now)).rejects.toThrow(/unsafe install path/);
    } finally {
      await backend.close();
    }
  });
});

describe.skipIf(postgresSkipReason)("moving a home's hub provenance into PostgreSQL and back", () => {
  const pg = postgresForSuite();

  it("copies lock.json's entries in once (never overwriting one), leaves the file alone, and writes them out", async () => {
    const url = await pg().createDatabase();
    const source = home();
    await installBundle({ home: source, bundle: bundle("helm-notes"), now });
    const before = readFileSync(lockPath(source), "utf8");
    const db = await openPgDatabase(url);
    try {
      await migrate(db, MIGRATIONS);
      const first = await migrateHome({ home: source, db, timezone: "UTC" }, [HUB_LOCK_PART]);
      expect(first.parts[0]?.rows).toEqual([
        { item: "hub provenance", source: 1, copied: 1, present: 0, skipped: 0, verified: true },
      ]);
      const again = await migrateHome({ home: source, db, timezone: "UTC" }, [HUB_LOCK_PART]);
      expect(again.parts[0]?.rows[0]).toMatchObject({ copied: 0, present: 1, verified: true });
      expect(readFileSync(lockPath(source), "utf8")).toBe(before);

      const out = home();
      const exported = await exportHome({ home: out, db, timezone: "UTC" }, [HUB_LOCK_PART]);
      expect(exported.verified).toBe(true);
      expect((await readLock(out)).installed["helm-notes"]).toMatchObject({
        source: "local",
        install_path: "devops/helm-notes",
      });
    } finally {
      await db.close();
    }
  });
});
