/**
 * The last per-home pieces of a postgres home, through two real backends on one database (two
 * instances with their own homes): the opt-out lists of bundled skills, writes staged for approval
 * and the curator's reports are each seen and decided from the other instance; `state migrate`
 * copies them in once (a second run copies nothing) and `state export` writes them back out as
 * the files a file home reads. Rows written around the checks write nothing outside the home.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultConfig, type HermesConfig } from "../../../../src/config/defaults.js";
import { collectHomeJourney } from "../../../../src/knowledge/journey.js";
import { pgOptOuts } from "../../../../src/knowledge/postgres/home-extras.js";
import { seedBundledSkills } from "../../../../src/knowledge/skills/bundled.js";
import { readSuppressed } from "../../../../src/knowledge/skills/bundled-opt-out.js";
import { setOptedOutShared, setSuppressedShared } from "../../../../src/knowledge/skills/opt-out-shared.js";
import { openStateBackend, type StateBackend } from "../../../../src/knowledge/state-backend.js";
import { HOME_EXTRA_PARTS } from "../../../../src/knowledge/state-home-extras-parts.js";
import { exportHome, migrateHome } from "../../../../src/knowledge/state-transfer.js";
import { knowledgeStores } from "../../../../src/knowledge/stores.js";
import { stagePending } from "../../../../src/knowledge/write-approval/pending.js";
import {
  claimWrite,
  listWrites,
  readWrite,
  stageWrite,
} from "../../../../src/knowledge/write-approval/pending-shared.js";
import { openPgDatabase, type PgDatabase } from "../../../../src/state/postgres/database.js";
import { approvePending, rejectPending } from "../../../../src/tools/write-approval/apply.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../../../support/postgres.js";
import { Databases } from "./databases.js";

function home(): string {
  const h = mkdtempSync(join(tmpdir(), "hermes-pg-extras-"));
  mkdirSync(join(h, "skills"), { recursive: true });
  return h;
}

const config = () => ({ ...defaultConfig(), state: { backend: "postgres" } }) as HermesConfig;

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Every file below `dir`, relative. */
function tree(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, rel: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(join(d, e.name), r);
      else out.push(r);
    }
  };
  walk(dir, "");
  return out.sort();
}

const memoryWrite = { action: "add", target: "memory", content: "The deploy host is blue-7." };

describe.skipIf(postgresSkipReason)("per-home pieces shared on PostgreSQL", () => {
  let pg: PostgresFixture;
  let url: string;
  let ha: string;
  let hb: string;
  let a: StateBackend;
  let b: StateBackend;
  const dbs = new Databases(() => pg);

  beforeAll(async () => {
    pg = await startPostgres();
    url = await pg.createDatabase();
    [ha, hb] = [home(), home()];
    // A had opted out of one bundled skill before its lists were shared: that "no" is kept.
    writeFileSync(join(ha, "skills", ".curator_suppressed"), "old-helper\n");
    const env = { HERMES_DATABASE_URL: url };
    a = await openStateBackend(ha, config(), { env, onWarning: () => undefined });
    b = await openStateBackend(hb, config(), { env, onWarning: () => undefined });
  }, 60_000);
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await dbs.closeAll();
    await pg?.dispose();
  });

  it("an opt-out made on one instance is in the other's files, and A's earlier one is kept", async () => {
    expect(await setSuppressedShared(ha, "tidy-notes", true)).toBe(true);
    await until(() => readSuppressed(hb).has("tidy-notes"), "B's .curator_suppressed");
    expect([...readSuppressed(hb)].sort()).toEqual(["old-helper", "tidy-notes"]);
    // B's seeding honours it: the skill is not copied in there.
    const shipped = mkdtempSync(join(tmpdir(), "hermes-bundled-"));
    mkdirSync(join(shipped, "notes", "tidy-notes"), { recursive: true });
    writeFileSync(
      join(shipped, "notes", "tidy-notes", "SKILL.md"),
      "---\nname: tidy-notes\ndescription: Tidy.\n---\n\nTidy.\n",
    );
    expect(seedBundledSkills(hb, shipped).suppressed).toEqual(["tidy-notes"]);
    expect(existsSync(join(hb, "skills", "notes", "tidy-notes"))).toBe(false);
    expect(await setOptedOutShared(hb, true)).toBe(true);
    await until(() => existsSync(join(ha, ".no-bundled-skills")), "A's marker");
    // A second identical change changes nothing; opting in on A reaches B.
    expect(await setOptedOutShared(hb, true)).toBe(false);
    await setOptedOutShared(ha, false);
    await setSuppressedShared(ha, "tidy-notes", false);
    await until(
      () => !existsSync(join(hb, ".no-bundled-skills")) && !readSuppressed(hb).has("tidy-notes"),
      "B to opt in",
    );
    expect(await a.optOuts?.read()).toEqual({ all: false, skills: ["old-helper"] });
  });

  it("refuses a suppressed name that would add lines, and drops such names from rows written around it", async () => {
    await expect(setSuppressedShared(ha, "x\n../../escape", true)).rejects.toThrow(/not a skill name/);
    await expect(setSuppressedShared(ha, "# comment", true)).rejects.toThrow(/not a skill name/);
    const db = await openPgDatabase(url);
    try {
      await db.query("UPDATE skill_opt_outs SET suppressed = $1", [
        JSON.stringify(["ok-name", "a\nb", "#x", 7, "../up"]),
      ]);
      await pgOptOuts(db, hb, { channel: "unused" }).materialize();
      // One line per name, the bad ones gone; a name like "../up" is only ever a line of the file.
      expect(readFileSync(join(hb, "skills", ".curator_suppressed"), "utf8")).toBe("../up\nok-name\n");
      expect(existsSync(join(hb, "up"))).toBe(false);
      await db.query("UPDATE skill_opt_outs SET suppressed = $1", [JSON.stringify(["old-helper"])]);
    } finally {
      await db.close();
    }
  });

  it("a memory write staged on A is listed on B, approved there into the shared memory, and gone on A", async () => {
    const staged = await stageWrite(ha, "memory", { payload: memoryWrite, summary: "add deploy host" });
    expect(existsSync(join(ha, "pending"))).toBe(false); // Nothing on A's disk: the database holds it.
    const onB = await listWrites(hb, "memory");
    expect(onB.map((r) => (r.ok ? r.record.summary : r.error))).toEqual(["add deploy host"]);
    const [outcome] = await approvePending({ home: hb, config: {} }, "memory", staged.id);
    expect(outcome).toMatchObject({ ok: true });
    expect(await knowledgeStores(ha).memory().entries("memory")).toContain("The deploy host is blue-7.");
    expect(await listWrites(ha, "memory")).toEqual([]);
    expect(await readWrite(ha, "memory", staged.id)).toBeUndefined();
  });

  it("a write claimed by one instance cannot be applied or rejected by another; a rejected one is gone", async () => {
    const staged = await stageWrite(hb, "memory", { payload: memoryWrite, summary: "again" });
    const claim = await claimWrite(ha, "memory", staged.id);
    expect(claim).toBeDefined();
    expect(await claimWrite(hb, "memory", staged.id)).toBeUndefined();
    expect((await rejectPending({ home: hb, config: {} }, "memory", staged.id))[0]).toMatchObject({
      ok: false,
    });
    await claim?.release();
    expect((await rejectPending({ home: hb, config: {} }, "memory", staged.id))[0]).toMatchObject({
      ok: true,
    });
    expect(await listWrites(ha, "memory")).toEqual([]);
  });

  it("ids that are paths find nothing, and a row whose record names another id is reported unreadable", async () => {
    for (const id of ["../x", "a/b", "", "..", "x.json"]) {
      expect(await readWrite(ha, "memory", id)).toBeUndefined();
      expect(await claimWrite(ha, "memory", id)).toBeUndefined();
    }
    const db = await openPgDatabase(url);
    try {
      await expect(
        db.query(
          "INSERT INTO pending_writes (subsystem, id, record, created_at) VALUES ('memory', '../x', '{}', 1)",
        ),
      ).rejects.toThrow();
      await db.query(
        "INSERT INTO pending_writes (subsystem, id, record, created_at) VALUES ('memory', 'forged', $1, 1)",
        [JSON.stringify({ id: "other", payload: memoryWrite })],
      );
      const listed = await listWrites(hb, "memory");
      expect(listed).toEqual([{ ok: false, id: "forged", error: 'its id field says "other"' }]);
      expect((await approvePending({ home: hb, config: {} }, "memory", "forged"))[0]?.ok).toBe(false);
      expect((await rejectPending({ home: hb, config: {} }, "memory", "forged"))[0]?.ok).toBe(true);
    } finally {
      await db.close();
    }
  });

  it("a curator report recorded on A is in B's journey; two runs in one second keep both", async () => {
    const run = {
      started_at: "2026-11-27T03:00:00.000Z",
      archived: ["stale-one"],
      consolidated: [],
      added: [],
    };
    const first = await knowledgeStores(ha).curatorReports?.add("20261127-030000", run);
    const second = await knowledgeStores(hb).curatorReports?.add("20261127-030000", {
      ...run,
      archived: ["other"],
    });
    expect([first, second]).toEqual(["20261127-030000", "20261127-030000-2"]);
    const events = await collectHomeJourney(hb);
    const archived = events.filter((e) => e.action === "archived").map((e) => e.subject);
    expect(archived.sort()).toEqual(["other", "stale-one"]);
    await expect(knowledgeStores(ha).curatorReports?.add("../../etc", run)).rejects.toThrow(
      /not a curator report/,
    );
  });
});

describe.skipIf(postgresSkipReason)("state migrate / export of the per-home pieces", () => {
  let pg: PostgresFixture;
  const dbs = new Databases(() => pg);
  beforeAll(async () => {
    pg = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await dbs.closeAll();
    await pg?.dispose();
  });

  /** A file home with one of each piece. */
  async function fileHome(): Promise<string> {
    const h = home();
    writeFileSync(join(h, ".no-bundled-skills"), "opted out\n");
    writeFileSync(join(h, "skills", ".curator_suppressed"), "tidy-notes\n");
    await stagePending(h, "memory", { payload: memoryWrite, summary: "staged on the file home" });
    mkdirSync(join(h, "pending", "skills"), { recursive: true });
    writeFileSync(join(h, "pending", "skills", "broken.json"), "{not json");
    const run = join(h, "logs", "curator", "20261126-120000");
    mkdirSync(run, { recursive: true });
    writeFileSync(
      join(run, "run.json"),
      `${JSON.stringify({ started_at: "2026-11-26T12:00:00Z", archived: ["x"] })}\n`,
    );
    const archived = join(h, "skills", ".archive", "old-runbook");
    mkdirSync(archived, { recursive: true });
    writeFileSync(join(archived, "SKILL.md"), "---\nname: old-runbook\ndescription: Old.\n---\n\nSteps.\n");
    return h;
  }

  it("copies each piece in once, verified, and exports the same files back", async () => {
    const [db] = (await dbs.fresh()) as [PgDatabase];
    const src = await fileHome();
    const first = await migrateHome({ home: src, db }, HOME_EXTRA_PARTS);
    expect(first.verified).toBe(true);
    const rows = first.parts.flatMap((p) =>
      p.rows.map((r) => [p.part, r.item, r.source, r.copied, r.present, r.skipped]),
    );
    expect(rows).toEqual([
      ["bundled opt-outs", "opt-outs", 2, 2, 0, 0],
      ["pending writes", "staged writes", 2, 1, 0, 1],
      ["curator reports", "runs", 1, 1, 0, 0],
      ["skill archive", "archived", 1, 1, 0, 0],
    ]);
    expect(first.parts[1]?.notes.join("\n")).toContain("broken");
    // Resumable and idempotent: a second run copies nothing and still verifies.
    const again = await migrateHome({ home: src, db }, HOME_EXTRA_PARTS);
    expect(again.verified).toBe(true);
    expect(again.parts.flatMap((p) => p.rows.map((r) => r.copied))).toEqual([0, 0, 0, 0]);

    const out = home();
    const exported = await exportHome({ home: out, db }, HOME_EXTRA_PARTS);
    expect(exported.verified).toBe(true);
    expect(existsSync(join(out, ".no-bundled-skills"))).toBe(true);
    expect(readFileSync(join(out, "skills", ".curator_suppressed"), "utf8")).toBe("tidy-notes\n");
    const staged = readdirSync(join(src, "pending", "memory"));
    expect(readdirSync(join(out, "pending", "memory"))).toEqual(staged);
    expect(readFileSync(join(out, "pending", "memory", staged[0] as string), "utf8")).toBe(
      readFileSync(join(src, "pending", "memory", staged[0] as string), "utf8"),
    );
    expect(
      JSON.parse(readFileSync(join(out, "logs", "curator", "20261126-120000", "run.json"), "utf8")),
    ).toEqual(JSON.parse(readFileSync(join(src, "logs", "curator", "20261126-120000", "run.json"), "utf8")));
    expect(existsSync(join(out, "logs", "curator", "20261126-120000", "REPORT.md"))).toBe(true);
    expect(readFileSync(join(out, "skills", ".archive", "old-runbook", "SKILL.md"), "utf8")).toContain(
      "Steps.",
    );
  });

  it("rows written around the checks (archive folders and names that leave the home) write nothing outside it", async () => {
    const [db] = (await dbs.fresh()) as [PgDatabase];
    const parent = mkdtempSync(join(tmpdir(), "hermes-pg-extras-escape-"));
    const out = join(parent, "home");
    mkdirSync(join(out, "skills"), { recursive: true });
    for (const folder of ["../../escaped", "..", "a/b", ".hidden"]) {
      await db.query(
        "INSERT INTO skill_archive (folder, name, version, hash, total_bytes, archived_at) VALUES ($1, 'x', 1, 'h', 1, 1)",
        [folder],
      );
      await db.query(
        "INSERT INTO skill_archive_files (folder, path, mode, content) VALUES ($1, 'SKILL.md', 420, $2)",
        [folder, Buffer.from("---\nname: x\ndescription: x\n---\n")],
      );
    }
    await db.query(
      "INSERT INTO skill_archive (folder, name, version, hash, total_bytes, archived_at) VALUES ('fine', 'fine', 1, 'h', 1, 1)",
    );
    await db.query(
      "INSERT INTO skill_archive_files (folder, path, mode, content) VALUES ('fine', '../../../outside.txt', 420, 'x')",
    );
    await expect(
      db.query(
        "INSERT INTO curator_reports (id, started_at, record, created_at) VALUES ('../x', '', '{}', 1)",
      ),
    ).rejects.toThrow();
    const exported = await exportHome({ home: out, db }, HOME_EXTRA_PARTS);
    expect(exported.verified).toBe(false);
    expect(tree(parent).filter((p) => !p.startsWith("home/"))).toEqual([]);
    expect(existsSync(join(out, "skills", ".archive"))).toBe(false);
  });
});
