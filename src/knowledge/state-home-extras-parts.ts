/**
 * The last per-home pieces for `hermes state migrate` / `export` (see `state-transfer.ts`): the
 * opt-out lists of bundled skills, writes staged for approval, the curator's run reports and its
 * archive (`skills/.archive/`). Each part gives one counted row; copy in never overwrites what the
 * database already holds (a second run copies nothing and still verifies), copy out writes the
 * files a file-backed Hermes reads. Every name from a row is checked before it becomes a path (a
 * pending id, a report folder, an archive folder), so rows written by anyone write nothing outside
 * the home.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { atomicWriteFile } from "../util/atomic-write.js";
import { curatorLogsRoot, type RunReport, renderReport } from "./curator/report.js";
import { isCuratorReportId, pgCuratorReports, pgOptOuts, pgPendingWrites } from "./postgres/home-extras.js";
import { archiveSources, putArchiveWith } from "./postgres/skill-archive.js";
import { checkSkill, readSkillFolder, type StoredSkill, skillHash } from "./postgres/skill-files.js";
import { SKILLS_CHANGED_CHANNEL } from "./postgres/skill-library.js";
import { nextVersion } from "./postgres/skill-versions.js";
import { isOptedOut, readSuppressed } from "./skills/bundled-opt-out.js";
import { folderHash, writeSkillFolder } from "./state-knowledge-parts.js";
import { type HomePart, type PartReport, countedRow as row } from "./state-transfer-types.js";
import { isPendingId, listPending, pendingDir, SUBSYSTEMS } from "./write-approval/pending.js";

/** What a run record lacks is rendered as empty (a report written by an older Hermes). */
const EMPTY_RUN: RunReport = {
  started_at: "",
  duration_seconds: 0,
  dry_run: false,
  trigger: "",
  model: "",
  provider: "",
  backup: null,
  auto_transitions: {},
  counts: {},
  archived: [],
  consolidated: [],
  pruned: [],
  added: [],
  state_transitions: [],
  proposals: [],
  rejected: [],
  llm_summary: "",
  llm_error: null,
};

const report = (part: string): PartReport => ({ part, rows: [], problems: [], notes: [] });
const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

const OPT_OUT_PART: HomePart = {
  name: "bundled opt-outs",
  async copyIn({ home, db }) {
    const out = report("bundled opt-outs");
    const files = { all: isOptedOut(home), skills: [...readSuppressed(home)].sort() };
    const source = (files.all ? 1 : 0) + files.skills.length;
    const lists = pgOptOuts(db, home, { channel: SKILLS_CHANGED_CHANNEL });
    const before = await lists.read();
    if (!before && source > 0) {
      // The first change starts from this home's files: the whole-home marker, then each name.
      if (files.all) await lists.setAll(true);
      for (const name of files.skills) await lists.setSkill(name, true);
    }
    const after = (await lists.read()) ?? { all: false, skills: [] };
    const missing = files.skills.filter((n) => !after.skills.includes(n));
    const ok = (!files.all || after.all) && missing.length === 0;
    if (!ok) out.problems.push("bundled opt-outs: the database's lists were changed since an earlier run");
    if (source > 0)
      out.rows.push(
        row(
          "opt-outs",
          { source, copied: before ? 0 : source, present: before ? source : 0, skipped: 0 },
          ok,
        ),
      );
    return out;
  },
  async copyOut({ home, db }) {
    const out = report("bundled opt-outs");
    const lists = pgOptOuts(db, home, { channel: SKILLS_CHANGED_CHANNEL });
    const held = await lists.read();
    if (!held) return out;
    await lists.materialize();
    const source = (held.all ? 1 : 0) + held.skills.length;
    const onDisk = readSuppressed(home);
    const ok =
      isOptedOut(home) === held.all &&
      held.skills.every((n) => onDisk.has(n)) &&
      onDisk.size === held.skills.length;
    if (!ok)
      out.problems.push("bundled opt-outs: the written files do not read back as the database's lists");
    out.rows.push(row("opt-outs", { source, copied: source, present: 0, skipped: 0 }, ok));
    return out;
  },
};

const PENDING_PART: HomePart = {
  name: "pending writes",
  async copyIn({ home, db }) {
    const out = report("pending writes");
    const store = pgPendingWrites(db);
    let source = 0;
    let copied = 0;
    let present = 0;
    let skipped = 0;
    for (const subsystem of SUBSYSTEMS) {
      for (const read of listPending(home, subsystem)) {
        source++;
        if (!read.ok) {
          skipped++;
          out.notes.push(`pending ${subsystem} write ${read.id} left out: ${read.error}`);
          continue;
        }
        const had = await db.query("SELECT 1 FROM pending_writes WHERE subsystem = $1 AND id = $2", [
          subsystem,
          read.record.id,
        ]);
        if (had.length > 0) present++;
        else {
          await store.add(read.record);
          copied++;
        }
      }
    }
    if (source > 0)
      out.rows.push(
        row("staged writes", { source, copied, present, skipped }, copied + present + skipped === source),
      );
    return out;
  },
  async copyOut({ home, db }) {
    const out = report("pending writes");
    const rows = await db.query<{ subsystem: "memory" | "skills"; id: string; record: string }>(
      "SELECT subsystem, id, record FROM pending_writes ORDER BY created_at, id",
    );
    let copied = 0;
    let skipped = 0;
    for (const r of rows) {
      if (!isPendingId(r.id) || !SUBSYSTEMS.includes(r.subsystem)) {
        skipped++;
        out.notes.push(`a pending write row with the id "${r.id.slice(0, 40)}" left out: not an id`);
        continue;
      }
      const dir = pendingDir(home, r.subsystem);
      mkdirSync(dir, { recursive: true });
      await atomicWriteFile(join(dir, `${r.id}.json`), r.record);
      copied++;
    }
    const onDisk = SUBSYSTEMS.reduce((n, s) => n + listPending(home, s).length, 0);
    if (rows.length > 0)
      out.rows.push(
        row("staged writes", { source: rows.length, copied, present: 0, skipped }, onDisk >= copied),
      );
    return out;
  },
};

const REPORTS_PART: HomePart = {
  name: "curator reports",
  async copyIn({ home, db }) {
    const out = report("curator reports");
    const root = curatorLogsRoot(home);
    const dirs = existsSync(root) ? readdirSync(root).filter(isCuratorReportId).sort() : [];
    let copied = 0;
    let present = 0;
    let skipped = 0;
    for (const id of dirs) {
      let text: string;
      try {
        text = readFileSync(join(root, id, "run.json"), "utf8");
        const parsed = JSON.parse(text) as unknown;
        if (!parsed || typeof parsed !== "object" || Array.isArray(parsed))
          throw new Error("not a JSON object");
      } catch (error) {
        skipped++;
        out.notes.push(`curator report ${id} left out: ${message(error)}`);
        continue;
      }
      const started = String((JSON.parse(text) as Record<string, unknown>)["started_at"] ?? "");
      const added = await db.query(
        `INSERT INTO curator_reports (id, started_at, record, created_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (id) DO NOTHING RETURNING id`,
        [id, started, text, Date.now() / 1000],
      );
      if (added.length > 0) copied++;
      else present++;
    }
    if (dirs.length > 0)
      out.rows.push(
        row(
          "runs",
          { source: dirs.length, copied, present, skipped },
          copied + present + skipped === dirs.length,
        ),
      );
    return out;
  },
  async copyOut({ home, db }) {
    const out = report("curator reports");
    const entries = await pgCuratorReports(db).list();
    const root = curatorLogsRoot(home);
    let copied = 0;
    for (const entry of entries) {
      const dir = join(root, entry.id);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, "run.json"), `${JSON.stringify(entry.report, null, 2)}\n`);
      try {
        writeFileSync(join(dir, "REPORT.md"), renderReport({ ...EMPTY_RUN, ...entry.report } as RunReport));
      } catch {
        out.notes.push(`curator report ${entry.id}: REPORT.md not rendered (run.json written)`);
      }
      copied++;
    }
    if (entries.length > 0)
      out.rows.push(
        row("runs", { source: entries.length, copied, present: 0, skipped: 0 }, copied === entries.length),
      );
    return out;
  },
};

const ARCHIVE_PART: HomePart = {
  name: "skill archive",
  async copyIn({ home, db }) {
    const out = report("skill archive");
    const archiveDir = join(home, "skills", ".archive");
    const folders = existsSync(archiveDir)
      ? readdirSync(archiveDir, { withFileTypes: true }).filter(
          (e) =>
            e.isDirectory() && !e.name.startsWith(".") && existsSync(join(archiveDir, e.name, "SKILL.md")),
        )
      : [];
    let copied = 0;
    let present = 0;
    let skipped = 0;
    for (const folder of folders) {
      let skill: StoredSkill;
      try {
        skill = checkSkill({
          name: folder.name,
          category: null,
          files: readSkillFolder(join(archiveDir, folder.name)),
        });
      } catch (error) {
        skipped++;
        out.notes.push(`archived skill ${folder.name} left out: ${message(error)}`);
        continue;
      }
      const had = await db.query("SELECT 1 FROM skill_archive WHERE folder = $1", [folder.name]);
      if (had.length > 0) {
        present++;
        continue;
      }
      const name = /^name:\s*(.+)$/m
        .exec(skill.files.find((f) => f.path === "SKILL.md")?.content.toString("utf8") ?? "")?.[1]
        ?.trim();
      await db.tx(async (client) => {
        const version = await nextVersion(client);
        await putArchiveWith(client, {
          name: name || folder.name,
          archived: skill,
          version,
          nowSeconds: Date.now() / 1000,
        });
        await client.query("SELECT pg_notify($1, $2)", [
          SKILLS_CHANGED_CHANNEL,
          JSON.stringify({ name: folder.name, version, op: "archive" }),
        ]);
      });
      copied++;
    }
    if (folders.length > 0)
      out.rows.push(
        row(
          "archived",
          { source: folders.length, copied, present, skipped },
          copied + present + skipped === folders.length,
        ),
      );
    return out;
  },
  async copyOut({ home, db }) {
    const out = report("skill archive");
    const archiveDir = join(home, "skills", ".archive");
    const sources = await archiveSources(db);
    let copied = 0;
    let present = 0;
    for (const source of sources) {
      try {
        // Checked before anything is written: a row naming a path outside its folder writes nothing.
        const loaded = await source.load();
        const checked = loaded && checkSkill(loaded);
        if (!checked) continue;
        const dir = join(archiveDir, checked.name);
        if (folderHash(dir, checked) === skillHash(checked)) {
          present++;
          continue;
        }
        mkdirSync(archiveDir, { recursive: true, mode: 0o755 });
        writeSkillFolder(archiveDir, dir, checked);
        if (folderHash(dir, checked) === skillHash(checked)) copied++;
        else
          out.problems.push(
            `archived skill ${checked.name}: the written folder does not match the database's copy`,
          );
      } catch (error) {
        out.problems.push(`archived skill ${source.name.slice(0, 60)}: ${message(error)}`);
      }
    }
    if (sources.length > 0)
      out.rows.push(
        row(
          "archived",
          { source: sources.length, copied, present, skipped: 0 },
          copied + present === sources.length,
        ),
      );
    return out;
  },
};

/** The parts, in the order they are copied (after the skills, whose archive this completes). */
export const HOME_EXTRA_PARTS: readonly HomePart[] = [OPT_OUT_PART, PENDING_PART, REPORTS_PART, ARCHIVE_PART];
