/**
 * Bundled-skill updates and curator rollbacks for the skills a postgres home keeps in its
 * database, through real backends on one database (instances with their own homes): a newer
 * bundled version replaces the database's unedited copy once for every instance, never an edited
 * one, and an instance still on the older build never puts its copy back; a rollback leaves the
 * live skills and the curator's archive agreeing on every instance.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultConfig, type HermesConfig } from "../../../../src/config/defaults.js";
import { archiveSkill, restoreSkill } from "../../../../src/knowledge/curator/archive.js";
import { rollbackSkills, snapshotSkills } from "../../../../src/knowledge/curator/backup.js";
import { pgSkillLibrary } from "../../../../src/knowledge/postgres/skill-library.js";
import { seedBundledSkills } from "../../../../src/knowledge/skills/bundled.js";
import { createSkill } from "../../../../src/knowledge/skills/manage.js";
import { shareSkillChanges } from "../../../../src/knowledge/skills/share.js";
import { openStateBackend, type StateBackend } from "../../../../src/knowledge/state-backend.js";
import { openPgDatabase } from "../../../../src/state/postgres/database.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../../../support/postgres.js";

const md = (name: string, body: string) =>
  `---\nname: ${name}\ndescription: The ${name} steps.\n---\n\n${body}\n`;
const config = () => ({ ...defaultConfig(), state: { backend: "postgres" } }) as HermesConfig;

function home(): string {
  const h = mkdtempSync(join(tmpdir(), "hermes-pg-bundled-"));
  mkdirSync(join(h, "skills"), { recursive: true });
  return h;
}

/** A bundled skills folder shipping `tidy-notes` with `body` (one Hermes version). */
function bundledVersion(body: string): string {
  const dir = mkdtempSync(join(tmpdir(), "hermes-bundled-"));
  mkdirSync(join(dir, "devops", "tidy-notes"), { recursive: true });
  writeFileSync(join(dir, "devops", "tidy-notes", "SKILL.md"), md("tidy-notes", body));
  return dir;
}

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const tidy = (h: string) => readFileSync(join(h, "skills", "devops", "tidy-notes", "SKILL.md"), "utf8");

describe.skipIf(postgresSkipReason)("bundled updates and rollbacks of database-held skills", () => {
  let pg: PostgresFixture;
  let url: string;
  const open: StateBackend[] = [];
  const v1 = bundledVersion("version one");
  const v2 = bundledVersion("version two");
  const v3 = bundledVersion("version three");
  let ha: string;
  let hb: string;

  const start = async (h: string, bundled: string) => {
    const backend = await openStateBackend(h, config(), {
      env: { HERMES_DATABASE_URL: url, HERMES_BUNDLED_SKILLS: bundled },
      onWarning: () => undefined,
    });
    open.push(backend);
    return backend;
  };
  const stop = async (backend: StateBackend) => {
    open.splice(open.indexOf(backend), 1);
    await backend.close();
  };
  const held = async () => {
    const db = await openPgDatabase(url);
    try {
      const rows = await db.query<{ content: Buffer }>(
        "SELECT content FROM skill_files WHERE skill = 'tidy-notes' AND path = 'SKILL.md'",
      );
      return rows[0]?.content.toString("utf8") ?? "";
    } finally {
      await db.close();
    }
  };

  beforeAll(async () => {
    pg = await startPostgres();
    url = await pg.createDatabase();
    [ha, hb] = [home(), home()];
  }, 60_000);
  afterAll(async () => {
    for (const backend of open.splice(0)) await backend.close();
    await pg?.dispose();
  });

  it("updates the database's unedited copy once for every instance; an older build leaves it", async () => {
    // The skill reached the database before it was bundled (installed from elsewhere), byte for
    // byte what v1 ships: adopted as the shipped copy.
    const a = await start(ha, v1);
    await createSkill(
      { home: ha },
      {
        name: "tidy-notes",
        category: "devops",
        content: readFileSync(join(v1, "devops", "tidy-notes", "SKILL.md"), "utf8"),
      },
    );
    const b = await start(hb, v1);
    expect(tidy(hb)).toContain("version one");
    await stop(a);
    await start(ha, v1);
    // B's own seeding leaves the database's copy to the shared pass.
    expect(seedBundledSkills(hb, v2).updated).toEqual([]);
    expect(tidy(hb)).toContain("version one");

    // A new Hermes on A: the shared copy is updated, and B (still running) follows by its watch.
    const a2 = open.at(-1) as StateBackend;
    await stop(a2);
    await start(ha, v2);
    expect(await held()).toContain("version two");
    await until(() => tidy(hb).includes("version two"), "B's copy of the update");
    expect(tidy(ha)).toContain("version two");

    // B restarts on the older build: the newer copy stays.
    await stop(b);
    await start(hb, v1);
    expect(await held()).toContain("version two");
    expect(tidy(hb)).toContain("version two");
  });

  it("instances starting together on a newer build update it once", async () => {
    const db = await openPgDatabase(url);
    const client = await db.connect();
    const puts: string[] = [];
    client.on("notification", (n) => {
      const payload = JSON.parse(n.payload ?? "{}") as { name?: string; op?: string };
      if (payload.name === "tidy-notes" && payload.op === "put") puts.push(n.payload ?? "");
    });
    try {
      await client.query("LISTEN hermes_skills_changed");
      await Promise.all([start(home(), v3), start(home(), v3), start(home(), v3)]);
      expect(await held()).toContain("version three");
      await until(() => tidy(ha).includes("version three"), "A's copy");
      expect(puts).toHaveLength(1);
    } finally {
      client.release();
      await db.close();
    }
  });

  it("keeps a copy the user edited in the database", async () => {
    // An edit stored by another instance (the skill tools there, or a hub update).
    const db = await openPgDatabase(url);
    try {
      await pgSkillLibrary(db, join(home(), "skills")).put({
        name: "tidy-notes",
        category: "devops",
        files: [
          { path: "SKILL.md", mode: 0o644, content: Buffer.from(md("tidy-notes", "edited elsewhere")) },
        ],
      });
    } finally {
      await db.close();
    }
    await start(home(), bundledVersion("version four"));
    expect(await held()).toContain("edited elsewhere");
  });

  it("a database row placed to leave the home (category, mirror record) writes nothing outside it", async () => {
    const parent = mkdtempSync(join(tmpdir(), "hermes-pg-bundled-escape-"));
    const hx = join(parent, "home");
    mkdirSync(join(hx, "skills"), { recursive: true });
    const db = await openPgDatabase(url);
    try {
      // A forged row for a bundled name whose category climbs out, and a mirror record pointing out.
      await db.query(
        `INSERT INTO skills (name, category, version, hash, total_bytes, updated_at)
         VALUES ('escape-notes', '../../..', nextval('skill_change_seq'), 'forged', 1, 1)`,
      );
      await db.query(
        "INSERT INTO skill_files (skill, path, mode, content) VALUES ('escape-notes', 'SKILL.md', 420, 'x')",
      );
      const shipped = bundledVersion("version one");
      mkdirSync(join(shipped, "escape-notes"), { recursive: true });
      writeFileSync(join(shipped, "escape-notes", "SKILL.md"), md("escape-notes", "shipped"));
      const warnings: string[] = [];
      const backend = await openStateBackend(hx, config(), {
        env: { HERMES_DATABASE_URL: url, HERMES_BUNDLED_SKILLS: shipped },
        onWarning: (line) => warnings.push(line),
      });
      open.push(backend);
      expect(warnings.join("\n")).toMatch(/escape-notes/);
      const outside = readdirSync(parent).filter((n) => n !== "home");
      expect(outside).toEqual([]);
      const row = await db.query<{ category: string }>(
        "SELECT category FROM skills WHERE name = 'escape-notes'",
      );
      expect(row[0]?.category).toBe("../../..");
      await db.query("DELETE FROM skills WHERE name = 'escape-notes'");
    } finally {
      await db.close();
    }
  });

  it("a rollback to before an archive makes the skill live again and drops its archive entry, everywhere", async () => {
    await createSkill({ home: ha }, { name: "keeper", content: md("keeper", "keep me") });
    await until(() => existsSync(join(hb, "skills", "keeper", "SKILL.md")), "B's copy");
    await snapshotSkills(ha, { reason: "test", keep: 5, now: new Date("2026-11-27T01:00:00Z") });
    await archiveSkill(ha, "keeper");
    await until(() => existsSync(join(hb, "skills", ".archive", "keeper", "SKILL.md")), "B's archive");

    await rollbackSkills(ha, { id: "2026-11-27T01-00-00Z", keep: 5, now: new Date("2026-11-27T02:00:00Z") });
    const shared = await shareSkillChanges(ha, { includeNew: true, tree: true });
    expect(shared?.failed).toEqual([]);
    expect(shared?.stored).toContain("keeper");
    const db = await openPgDatabase(url);
    try {
      expect(await db.query("SELECT name FROM skills WHERE name = 'keeper'")).toHaveLength(1);
      expect(await db.query("SELECT folder FROM skill_archive WHERE name = 'keeper'")).toEqual([]);
    } finally {
      await db.close();
    }
    await until(
      () =>
        existsSync(join(hb, "skills", "keeper", "SKILL.md")) &&
        !existsSync(join(hb, "skills", ".archive", "keeper")),
      "B to have it live and not archived",
    );
    expect(existsSync(join(ha, "skills", ".archive", "keeper"))).toBe(false);
  });

  it("a rollback to while a skill was archived archives it again, everywhere, in one step", async () => {
    await createSkill({ home: ha }, { name: "sleeper", content: md("sleeper", "zzz") });
    await archiveSkill(ha, "sleeper");
    await snapshotSkills(ha, { reason: "test", keep: 5, now: new Date("2026-11-27T03:00:00Z") });
    await restoreSkill(ha, "sleeper");
    await until(() => existsSync(join(hb, "skills", "sleeper", "SKILL.md")), "B's live copy");

    await rollbackSkills(ha, { id: "2026-11-27T03-00-00Z", keep: 5, now: new Date("2026-11-27T04:00:00Z") });
    const shared = await shareSkillChanges(ha, { includeNew: true, tree: true });
    expect(shared?.failed).toEqual([]);
    expect(shared?.deleted).toContain("sleeper");
    const db = await openPgDatabase(url);
    try {
      expect(await db.query("SELECT name FROM skills WHERE name = 'sleeper'")).toEqual([]);
      expect(
        (await db.query<{ name: string }>("SELECT name FROM skill_archive WHERE folder = 'sleeper'"))[0]
          ?.name,
      ).toBe("sleeper");
    } finally {
      await db.close();
    }
    await until(
      () =>
        !existsSync(join(hb, "skills", "sleeper")) &&
        existsSync(join(hb, "skills", ".archive", "sleeper", "SKILL.md")),
      "B to have it archived only",
    );
  });

  it("a restored tree with a folder that breaks the rules stores nothing and says which", async () => {
    const before = await held();
    await createSkill({ home: ha }, { name: "fine-one", content: md("fine-one", "ok") });
    await snapshotSkills(ha, { reason: "test", keep: 5, now: new Date("2026-11-27T05:00:00Z") });
    await rollbackSkills(ha, { id: "2026-11-27T05-00-00Z", keep: 5, now: new Date("2026-11-27T06:00:00Z") });
    // A folder the rules refuse (a name with a space) in the restored tree.
    mkdirSync(join(ha, "skills", "bad name"), { recursive: true });
    writeFileSync(join(ha, "skills", "bad name", "SKILL.md"), md("bad", "x"));
    writeFileSync(join(ha, "skills", "fine-one", "SKILL.md"), md("fine-one", "changed"));
    const shared = await shareSkillChanges(ha, { includeNew: true, tree: true });
    expect(shared?.failed.map((f) => f.name)).toEqual(["bad name"]);
    expect(shared?.stored).toEqual([]);
    const db = await openPgDatabase(url);
    try {
      const rows = await db.query<{ content: Buffer }>(
        "SELECT content FROM skill_files WHERE skill = 'fine-one' AND path = 'SKILL.md'",
      );
      expect(rows[0]?.content.toString("utf8")).toContain("ok");
    } finally {
      await db.close();
    }
    expect(await held()).toBe(before);
  });
});
