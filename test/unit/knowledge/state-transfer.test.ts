/**
 * Moving a whole home into PostgreSQL and back (`migrateHome`, `exportHome`) with a real
 * PostgreSQL: every part verifies, a second run copies nothing, a run cut off mid-way (the
 * database "goes away" after some statements) completes on the next one, and the exported home
 * holds the same memories, skills (modes kept), usage, cron jobs and outputs, and gateway stores.
 */
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CronStore } from "../../../src/knowledge/cron/store.js";
import { MemoryStore } from "../../../src/knowledge/memory/store.js";
import { pgMemoryRecords } from "../../../src/knowledge/postgres/memory-records.js";
import { readUsage } from "../../../src/knowledge/skills/provenance.js";
import { exportHome, type HomeTransferReport, migrateHome } from "../../../src/knowledge/state-transfer.js";
import { openPgDatabase, type PgDatabase, type PgQueryable } from "../../../src/state/postgres/database.js";
import { migrate } from "../../../src/state/postgres/migrate.js";
import { MIGRATIONS } from "../../../src/state/postgres/migrations/index.js";
import {
  CRON_OUTPUT,
  createFullHome,
  MEMORY_ENTRIES,
  SKILL_MD,
  SKILL_SCRIPT,
  USER_ENTRIES,
} from "../../support/full-home.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../../support/postgres.js";

/** `part: item` → [source, copied, already there, skipped, verified]. */
function table(report: HomeTransferReport): Record<string, [number, number, number, number, boolean]> {
  const out: Record<string, [number, number, number, number, boolean]> = {};
  for (const p of report.parts) {
    for (const r of p.rows)
      out[`${p.part}: ${r.item}`] = [r.source, r.copied, r.present, r.skipped, r.verified];
  }
  return out;
}

/**
 * A view of `db` whose statements fail after `budget` of them, as if the connection dropped;
 * `used()` answers how many it ran.
 */
function failingAfter(db: PgDatabase, budget: number): PgDatabase & { used(): number } {
  let used = 0;
  const spend = () => {
    if (++used > budget) throw new Error("connection terminated unexpectedly");
  };
  const wrap = <T extends PgQueryable>(c: T): T =>
    new Proxy(c, {
      get(target, key, receiver) {
        if (key !== "query") return Reflect.get(target, key, receiver);
        return async (sql: string, params?: readonly unknown[]) => {
          spend();
          return target.query(sql, params);
        };
      },
    });
  return new Proxy(db as PgDatabase & { used(): number }, {
    get(target, key, receiver) {
      if (key === "used") return () => used;
      if (key === "query") return wrap(target).query;
      if (key === "tx") {
        return <T>(fn: (c: PgQueryable & { raw: unknown }) => Promise<T>) =>
          target.tx((client) => fn(wrap(client)));
      }
      return Reflect.get(target, key, receiver);
    },
  });
}

describe.skipIf(postgresSkipReason)("moving a whole home into PostgreSQL and back", () => {
  let pg: PostgresFixture;
  const dirs: string[] = [];
  let open: PgDatabase[] = [];
  const temp = () => {
    const d = mkdtempSync(join(tmpdir(), "hermes-home-transfer-"));
    dirs.push(d);
    return d;
  };
  beforeAll(async () => {
    pg = await startPostgres();
  }, 60_000);
  afterEach(async () => {
    await Promise.all(open.map((db) => db.close()));
    open = [];
  });
  afterAll(async () => {
    await pg?.dispose();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  async function freshDb(): Promise<PgDatabase> {
    const db = await openPgDatabase(await pg.createDatabase(), { max: 2 });
    open.push(db);
    await migrate(db, MIGRATIONS);
    return db;
  }

  it("copies every part, verifies it, copies nothing the second time, and exports a home that reads the same", async () => {
    const home = temp();
    const { cronJobId, pendingCode } = await createFullHome(home);
    const db = await freshDb();

    const first = await migrateHome({ home, db, timezone: "UTC" });
    expect(first.parts.flatMap((p) => p.problems)).toEqual([]);
    expect(first.verified).toBe(true);
    const rows = table(first);
    expect(rows["state.db: sessions"]).toEqual([4, 4, 0, 0, true]);
    expect(rows["gateway: pairing approved"]).toEqual([1, 1, 0, 0, true]);
    expect(rows["gateway: pairing pending"]).toEqual([1, 1, 0, 0, true]);
    expect(rows["gateway: chat index"]).toEqual([1, 1, 0, 0, true]);
    expect(rows["gateway: webhook subscriptions"]).toEqual([1, 1, 0, 0, true]);
    expect(rows["gateway: responses"]).toEqual([1, 1, 0, 0, true]);
    expect(rows["gateway: conversations"]).toEqual([1, 1, 0, 0, true]);
    expect(rows["gateway: command allowlist"]).toEqual([1, 1, 0, 0, true]);
    expect(rows["memories: MEMORY.md"]).toEqual([2, 2, 0, 0, true]);
    expect(rows["memories: USER.md"]).toEqual([1, 1, 0, 0, true]);
    // The bundled skill is left out (and said so); the user's skill is copied.
    expect(rows["skills: folders"]).toEqual([2, 1, 0, 1, true]);
    expect(first.parts.flatMap((p) => p.notes)).toContain(
      "skill seeded-helper left out: a bundled skill (every instance seeds its own copy)",
    );
    expect(rows["skills: usage"]).toEqual([1, 1, 0, 0, true]);
    expect(rows["cron: jobs"]).toEqual([1, 1, 0, 0, true]);
    expect(rows["cron: outputs"]).toEqual([1, 1, 0, 0, true]);
    // Nothing secret in what the command prints from.
    const printed = JSON.stringify(first);
    expect(printed).not.toContain(pendingCode);
    expect(printed).not.toContain("whsec-do-not-print");

    const again = await migrateHome({ home, db, timezone: "UTC" });
    expect(again.verified).toBe(true);
    for (const [item, [source, copied, present, skipped]] of Object.entries(table(again))) {
      expect({ item, copied }).toEqual({ item, copied: 0 });
      expect({ item, total: present + skipped }).toEqual({ item, total: source });
    }

    const out = temp();
    const exported = await exportHome({ home: out, db, timezone: "UTC" });
    expect(exported.parts.flatMap((p) => p.problems)).toEqual([]);
    expect(exported.verified).toBe(true);
    expect(table(exported)["skills: folders"]).toEqual([1, 1, 0, 0, true]);
    expect(table(exported)["cron: outputs"]).toEqual([1, 1, 0, 0, true]);

    // The files, as the file stores read them.
    expect(MemoryStore.forHome(out).entries("memory")).toEqual(MEMORY_ENTRIES);
    expect(MemoryStore.forHome(out).entries("user")).toEqual(USER_ENTRIES);
    expect(readFileSync(join(out, "memories", "MEMORY.md"))).toEqual(
      readFileSync(join(home, "memories", "MEMORY.md")),
    );
    const skill = join(out, "skills", "devops", "deploy-check");
    expect(readFileSync(join(skill, "SKILL.md"), "utf8")).toBe(SKILL_MD);
    expect(readFileSync(join(skill, "scripts", "check.sh"), "utf8")).toBe(SKILL_SCRIPT);
    expect(statSync(join(skill, "scripts", "check.sh")).mode & 0o777).toBe(0o755);
    expect(() => statSync(join(out, "skills", "seeded-helper"))).toThrow();
    expect(readUsage(out)).toEqual(readUsage(home));
    const jobs = new CronStore({ home: out, timezone: "UTC" }).list();
    expect(jobs.map((j) => [j.id, j.name, j.prompt])).toEqual([
      [cronJobId, "nightly", "Summarise the night"],
    ]);
    expect(readFileSync(join(out, "cron", "output", cronJobId, "2026-11-26_06-00-00.md"), "utf8")).toBe(
      CRON_OUTPUT,
    );
    expect(JSON.parse(readFileSync(join(out, "pairing", "telegram-approved.json"), "utf8"))).toMatchObject({
      "7": { user_name: "alice" },
    });

    // Exporting again writes no knowledge part again (the gateway files are rewritten whole).
    const twice = table(await exportHome({ home: out, db, timezone: "UTC" }));
    for (const item of [
      "memories: MEMORY.md",
      "skills: folders",
      "skills: usage",
      "cron: jobs",
      "cron: outputs",
    ]) {
      expect({ item, copied: twice[item]?.[1] }).toEqual({ item, copied: 0 });
    }
  }, 60_000);

  it("completes on the next run after being cut off at any point", async () => {
    const home = temp();
    await createFullHome(home);
    const counting = failingAfter(await freshDb(), Number.POSITIVE_INFINITY);
    const full = table(await migrateHome({ home, db: counting, timezone: "UTC" }));
    const statements = counting.used();
    expect(statements).toBeGreaterThan(20);
    // Cut points spread over the whole run, so every part is cut off in some run.
    for (const budget of [1, 2, 3, 4, 5, 6, 7, 8, 9].map((k) => Math.floor((statements * k) / 10))) {
      const db = await freshDb();
      await expect(migrateHome({ home, db: failingAfter(db, budget), timezone: "UTC" })).rejects.toThrow(
        "connection terminated unexpectedly",
      );
      const resumed = await migrateHome({ home, db, timezone: "UTC" });
      expect({ budget, problems: resumed.parts.flatMap((p) => p.problems) }).toEqual({
        budget,
        problems: [],
      });
      expect(resumed.verified).toBe(true);
      for (const [item, [source, copied, present, skipped]] of Object.entries(table(resumed))) {
        expect({ budget, item, source, total: copied + present + skipped }).toEqual({
          budget,
          item,
          source: full[item]?.[0],
          total: source,
        });
      }
    }
  }, 120_000);

  it("reports, without overwriting, a database changed since an earlier run", async () => {
    const home = temp();
    await createFullHome(home);
    const db = await freshDb();
    expect((await migrateHome({ home, db })).verified).toBe(true);
    // An instance on PostgreSQL removed an entry since: migrating again must not put it back.
    await pgMemoryRecords(db).remove("memory", "Fridays");
    const again = await migrateHome({ home, db });
    expect(again.verified).toBe(false);
    expect(again.parts.flatMap((p) => p.problems)).toEqual([
      "MEMORY.md: 1 of the home's 2 entries are not in the database (copied by an earlier run and changed in the database since)",
    ]);
    expect(await pgMemoryRecords(db).entries("memory")).toEqual([MEMORY_ENTRIES[1]]);
  }, 60_000);

  it("exports no file outside the home for rows a confused writer put in the database", async () => {
    const home = temp();
    await createFullHome(home);
    const db = await freshDb();
    expect((await migrateHome({ home, db })).verified).toBe(true);
    // Rows written around the stores' checks: a skill file path and a cron output name that climb out.
    await db.query(
      "INSERT INTO skills (name, category, version, hash, total_bytes, updated_at) VALUES ('evil', NULL, 99, 'x', 1, 0)",
    );
    await db.query(
      "INSERT INTO skill_files (skill, path, mode, content) VALUES ('evil', 'SKILL.md', 420, 'a'), ('evil', '../../escaped.sh', 493, 'b')",
    );
    const [job] = await db.query<{ id: string }>("SELECT id FROM cron_jobs");
    await db.query(
      "INSERT INTO cron_outputs (job_id, name, created_at, body) VALUES ($1, '../../../escaped.md', 0, 'c')",
      [job?.id],
    );
    const parent = temp();
    const out = join(parent, "home");
    const report = await exportHome({ home: out, db });
    expect(report.verified).toBe(false);
    const problems = report.parts.flatMap((p) => p.problems);
    expect(problems.some((p) => p.startsWith("skill evil:"))).toBe(true);
    expect(problems).toContain("1 cron outputs could not be read from the database");
    for (const path of [join(parent, "escaped.sh"), join(out, "escaped.sh"), join(parent, "escaped.md")]) {
      expect(() => statSync(path)).toThrow();
    }
    expect(() => statSync(join(out, "skills", "evil"))).toThrow();
    // Everything else still came out.
    expect(readFileSync(join(out, "skills", "devops", "deploy-check", "SKILL.md"), "utf8")).toBe(SKILL_MD);
  }, 60_000);

  it("leaves out, and names, skill folders that carry a link or an oversized file; the rest verifies", async () => {
    const home = temp();
    await createFullHome(home);
    const linked = join(home, "skills", "linked");
    mkdirSync(linked, { recursive: true });
    writeFileSync(join(linked, "SKILL.md"), "---\nname: linked\ndescription: d\n---\nx\n");
    symlinkSync("/etc/passwd", join(linked, "passwd"));
    const big = join(home, "skills", "big");
    mkdirSync(big, { recursive: true });
    writeFileSync(join(big, "SKILL.md"), "---\nname: big\ndescription: d\n---\nx\n");
    writeFileSync(join(big, "blob.bin"), Buffer.alloc(5 * 1024 * 1024));
    const db = await freshDb();
    const report = await migrateHome({ home, db });
    expect(report.verified).toBe(true);
    expect(table(report)["skills: folders"]).toEqual([4, 1, 0, 3, true]);
    const notes = report.parts.flatMap((p) => p.notes);
    expect(notes.some((n) => n.startsWith("skill linked left out:") && n.includes("symbolic link"))).toBe(
      true,
    );
    expect(notes.some((n) => n.startsWith("skill big left out:") && n.includes("1 MiB"))).toBe(true);
    const stored = await db.query<{ name: string }>("SELECT name FROM skills ORDER BY name");
    expect(stored.map((r) => r.name)).toEqual(["deploy-check"]);
  }, 60_000);

  it("keeps a different MEMORY.md or skill folder already in the export folder aside instead of losing it", async () => {
    const home = temp();
    await createFullHome(home);
    const db = await freshDb();
    await migrateHome({ home, db });
    const out = temp();
    mkdirSync(join(out, "memories"));
    writeFileSync(join(out, "memories", "MEMORY.md"), "Written by hand in the target.");
    const oldSkill = join(out, "skills", "devops", "deploy-check");
    mkdirSync(oldSkill, { recursive: true });
    writeFileSync(join(oldSkill, "SKILL.md"), "an older copy");
    const report = await exportHome({ home: out, db });
    expect(report.verified).toBe(true);
    expect(MemoryStore.forHome(out).entries("memory")).toEqual(MEMORY_ENTRIES);
    const backups = readdirSync(join(out, "memories")).filter((f) => f.startsWith("MEMORY.md.bak."));
    expect(backups).toHaveLength(1);
    expect(readFileSync(join(out, "memories", backups[0] as string), "utf8")).toBe(
      "Written by hand in the target.",
    );
    expect(
      report.parts.flatMap((p) => p.notes).some((n) => n.startsWith("MEMORY.md held other entries; kept as")),
    ).toBe(true);
    expect(readFileSync(join(oldSkill, "SKILL.md"), "utf8")).toBe(SKILL_MD);
    const replaced = readdirSync(join(out, "skills", ".export-replaced"));
    expect(replaced).toHaveLength(1);
    expect(
      readFileSync(join(out, "skills", ".export-replaced", replaced[0] as string, "SKILL.md"), "utf8"),
    ).toBe("an older copy");
  }, 60_000);
});
