/**
 * The knowledge parts of a home for `hermes state migrate` / `export` (see `state-transfer.ts`):
 * memories (`memories/MEMORY.md`, `USER.md`), skills (the folders under `skills/`, file modes
 * kept), skill usage (`skills/.usage.json`) and cron (`cron/jobs.json`, `cron/output/<id>/*.md`).
 * The database side is the PostgreSQL stores' own import/read calls; the file side is the file
 * stores' readers and writers (`MemoryStore`, `CronStore`, `mutateUsage`), so an exported home is
 * what a file-backed Hermes writes itself.
 *
 * Copy in never overwrites what the database already holds, except skills: a skill folder that
 * differs from the database's copy is stored again (the home's folder wins, as
 * `importDirectory` does). Memory targets, usage records, jobs and outputs are copied only when
 * the database has none under that key, so a second run does not roll back what changed since.
 */
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import type { PgDatabase } from "../state/postgres/database.js";
import { atomicWriteFile } from "../util/atomic-write.js";
import { withFileLock } from "../util/file-lock.js";
import { cronRunHistory } from "./cron/history.js";
import { CronStore } from "./cron/store.js";
import { FILE_NAMES, serializeEntries } from "./memory/format.js";
import { MemoryStore } from "./memory/store.js";
import type { MemoryTarget } from "./memory/types.js";
import { pgCronJobs } from "./postgres/cron-jobs.js";
import { pgMemoryRecords } from "./postgres/memory-records.js";
import { checkSkill, readSkillFolder, type StoredSkill, skillHash } from "./postgres/skill-files.js";
import { pgSkillLibrary } from "./postgres/skill-library.js";
import { pgSkillUsageRecords } from "./postgres/skill-usage.js";
import { mutateUsage, readUsage } from "./skills/provenance.js";
import { HUB_LOCK_PART } from "./state-hub-lock-part.js";
import { type HomePart, type PartReport, countedRow as row } from "./state-transfer-types.js";

const TARGETS: readonly MemoryTarget[] = ["memory", "user"];

function report(part: string): PartReport {
  return { part, rows: [], problems: [], notes: [] };
}

/** Whether the database has a row for the memory target (an empty list counts: it was copied). */
async function hasTarget(db: PgDatabase, target: MemoryTarget): Promise<boolean> {
  return (await db.query("SELECT 1 FROM memory_targets WHERE target = $1", [target])).length > 0;
}

function missingOf(want: readonly string[], have: readonly string[]): string[] {
  const there = new Set(have);
  return want.filter((e) => !there.has(e));
}

const MEMORY_PART: HomePart = {
  name: "memories",
  async copyIn({ home, db }) {
    const out = report("memories");
    const files = MemoryStore.forHome(home);
    const records = pgMemoryRecords(db);
    for (const target of TARGETS) {
      const entries = files.entries(target);
      const copy = !(await hasTarget(db, target));
      if (copy) await records.importEntries(target, entries);
      const missing = missingOf(entries, await records.entries(target));
      if (missing.length > 0) {
        out.problems.push(
          `${FILE_NAMES[target]}: ${missing.length} of the home's ${entries.length} entries are not in the ` +
            "database (copied by an earlier run and changed in the database since)",
        );
      }
      const n = entries.length;
      out.rows.push(
        row(
          FILE_NAMES[target],
          { source: n, copied: copy ? n : 0, present: copy ? 0 : n - missing.length, skipped: 0 },
          missing.length === 0,
        ),
      );
    }
    return out;
  },
  async copyOut({ home, db }) {
    const out = report("memories");
    const files = MemoryStore.forHome(home);
    const records = pgMemoryRecords(db);
    for (const target of TARGETS) {
      const entries = await records.entries(target);
      const same = JSON.stringify(files.entries(target)) === JSON.stringify(entries);
      if (!same) {
        mkdirSync(files.dir, { recursive: true, mode: 0o700 });
        const path = files.path(target);
        // Under the lock the file store and Python take; a different file already there is kept aside.
        await withFileLock(path, async () => {
          if (existsSync(path)) {
            const backup = `${path}.bak.${Math.floor(Date.now() / 1000)}`;
            copyFileSync(path, backup);
            out.notes.push(`${FILE_NAMES[target]} held other entries; kept as ${backup}`);
          }
          await atomicWriteFile(path, serializeEntries(entries));
        });
      }
      const ok = JSON.stringify(files.entries(target)) === JSON.stringify(entries);
      if (!ok)
        out.problems.push(
          `${FILE_NAMES[target]}: the written file does not read back as the database's entries`,
        );
      const n = entries.length;
      out.rows.push(
        row(FILE_NAMES[target], { source: n, copied: same ? 0 : n, present: same ? n : 0, skipped: 0 }, ok),
      );
    }
    return out;
  },
};

/** The digest of a skill folder on disk, or undefined when it is missing or unreadable. */
export function folderHash(
  dir: string,
  skill: { name: string; category: string | null },
): string | undefined {
  try {
    return skillHash(checkSkill({ ...skill, files: readSkillFolder(dir) }));
  } catch {
    return undefined;
  }
}

/**
 * Writes a skill folder whole: built beside it, then swapped in. A different folder already there
 * is moved to `skills/.export-replaced/<name>.<seconds>` (discovery skips dot folders), never
 * deleted; answers where it went.
 */
export function writeSkillFolder(skillsDir: string, dir: string, skill: StoredSkill): string | undefined {
  const checked = checkSkill(skill);
  const building = join(dirname(dir), `.${checked.name}.export-${process.pid}`);
  rmSync(building, { recursive: true, force: true });
  for (const file of checked.files) {
    const path = join(building, ...file.path.split("/"));
    mkdirSync(dirname(path), { recursive: true, mode: 0o755 });
    writeFileSync(path, file.content, { mode: file.mode });
    chmodSync(path, file.mode);
  }
  let aside: string | undefined;
  if (existsSync(dir)) {
    mkdirSync(join(skillsDir, ".export-replaced"), { recursive: true, mode: 0o700 });
    aside = join(skillsDir, ".export-replaced", `${checked.name}.${Math.floor(Date.now() / 1000)}`);
    rmSync(aside, { recursive: true, force: true });
    renameSync(dir, aside);
  }
  renameSync(building, dir);
  return aside;
}

const SKILLS_PART: HomePart = {
  name: "skills",
  async copyIn({ home, db }) {
    const out = report("skills");
    const skillsDir = join(home, "skills");
    const library = pgSkillLibrary(db, skillsDir);
    const result = await library.importDirectory(skillsDir);
    for (const s of result.skipped) out.notes.push(`skill ${s.path} left out: ${s.reason}`);
    const stored = new Set((await library.list()).map((s) => s.name));
    const missing = [...result.imported, ...result.unchanged].filter((name) => !stored.has(name));
    if (missing.length > 0) out.problems.push(`skills not in the database: ${missing.join(", ")}`);
    const source = result.imported.length + result.unchanged.length + result.skipped.length;
    out.rows.push(
      row(
        "folders",
        {
          source,
          copied: result.imported.length,
          present: result.unchanged.length,
          skipped: result.skipped.length,
        },
        missing.length === 0,
      ),
    );
    return out;
  },
  async copyOut({ home, db }) {
    const out = report("skills");
    const skillsDir = join(home, "skills");
    const library = pgSkillLibrary(db, skillsDir);
    const list = await library.list();
    let copied = 0;
    let present = 0;
    for (const info of list) {
      try {
        // Checked before anything is written: a row naming a path outside its folder writes nothing.
        const skill = await library.read(info.name);
        const checked = skill && checkSkill(skill);
        if (!checked || !skill) continue;
        const dir = checked.category
          ? join(skillsDir, checked.category, checked.name)
          : join(skillsDir, checked.name);
        if (folderHash(dir, checked) === skill.hash) {
          present++;
          continue;
        }
        mkdirSync(dirname(dir), { recursive: true, mode: 0o755 });
        const aside = writeSkillFolder(skillsDir, dir, checked);
        if (aside) out.notes.push(`skill ${checked.name}: the folder already there was moved to ${aside}`);
        if (folderHash(dir, checked) === skill.hash) copied++;
        else out.problems.push(`skill ${info.name}: the written folder does not match the database's copy`);
      } catch (error) {
        out.problems.push(`skill ${info.name}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    out.rows.push(
      row("folders", { source: list.length, copied, present, skipped: 0 }, copied + present === list.length),
    );
    return out;
  },
};

const USAGE_PART: HomePart = {
  name: "skills",
  async copyIn({ home, db }) {
    const out = report("skills");
    const records = pgSkillUsageRecords(db, { home });
    const file = readUsage(home);
    const before = await records.read();
    const fresh = Object.fromEntries(Object.entries(file).filter(([name]) => !(name in before)));
    const copied = await records.importRecords(fresh);
    const after = await records.read();
    const names = Object.keys(file);
    const missing = names.filter((name) => !(name in after));
    if (missing.length > 0) out.problems.push(`usage records not in the database: ${missing.join(", ")}`);
    out.rows.push(
      row(
        "usage",
        { source: names.length, copied, present: names.length - copied - missing.length, skipped: 0 },
        missing.length === 0,
      ),
    );
    return out;
  },
  async copyOut({ home, db }) {
    const out = report("skills");
    const records = await pgSkillUsageRecords(db, { home }).read();
    const names = Object.keys(records);
    let copied = 0;
    if (names.length > 0 || existsSync(join(home, "skills", ".usage.json"))) {
      await mutateUsage(home, (data) => {
        for (const name of names) {
          if (JSON.stringify(data[name]) === JSON.stringify(records[name])) continue;
          data[name] = records[name] as (typeof data)[string];
          copied++;
        }
        return copied > 0;
      });
    }
    const written = readUsage(home);
    const missing = names.filter((n) => JSON.stringify(written[n]) !== JSON.stringify(records[n]));
    if (missing.length > 0) out.problems.push(`usage records not written: ${missing.join(", ")}`);
    out.rows.push(
      row(
        "usage",
        { source: names.length, copied, present: names.length - copied, skipped: 0 },
        missing.length === 0,
      ),
    );
    return out;
  },
};

/** The saved outputs of a file home's cron job: name, text and when written (ms). */
async function fileOutputs(
  store: CronStore,
  id: string,
): Promise<Array<{ name: string; text: string; at: number }>> {
  const history = cronRunHistory(store);
  const out: Array<{ name: string; text: string; at: number }> = [];
  for (const info of await history.listOutputs(id)) {
    const body = await history.readOutput(id, info.name, info.size);
    if (body) out.push({ name: info.name, text: body.text, at: Date.parse(info.modified_at) });
  }
  return out;
}

const CRON_PART: HomePart = {
  name: "cron",
  async copyIn({ home, db, timezone }) {
    const out = report("cron");
    const files = new CronStore({ home, timezone });
    const jobs = files.list();
    const pg = pgCronJobs(db, { home, timezone });
    const { imported, present } = await pg.importJobs(jobs);
    const stored = new Set((await pg.list()).map((j) => j.id));
    const missing = jobs.filter((j) => !stored.has(j.id)).map((j) => j.id);
    if (missing.length > 0) out.problems.push(`cron jobs not in the database: ${missing.join(", ")}`);
    out.rows.push(
      row("jobs", { source: jobs.length, copied: imported, present, skipped: 0 }, missing.length === 0),
    );
    const counts = { source: 0, copied: 0, present: 0, skipped: 0 };
    let lost = 0;
    for (const job of jobs) {
      const outputs = await fileOutputs(files, job.id);
      for (const o of outputs) {
        counts.source++;
        if (await pg.importOutput(job.id, o.name, o.text, o.at)) counts.copied++;
        else counts.present++;
      }
      const there = new Set((await pg.listOutputs(job.id)).map((o) => o.name));
      lost += outputs.filter((o) => !there.has(o.name)).length;
    }
    if (lost > 0) out.problems.push(`${lost} cron outputs are not in the database`);
    out.rows.push(row("outputs", counts, lost === 0));
    return out;
  },
  async copyOut({ home, db, timezone }) {
    const out = report("cron");
    const pg = pgCronJobs(db, { home, timezone });
    const jobs = await pg.list();
    const files = new CronStore({ home, timezone });
    let present = 0;
    if (jobs.length > 0 || existsSync(files.path)) {
      present = await files.update((onDisk) => {
        let already = 0;
        for (const job of jobs) {
          if (onDisk.some((j) => j.id === job.id)) already++;
          else onDisk.push(structuredClone(job));
        }
        return already;
      });
    }
    const written = new Set(files.list().map((j) => j.id));
    const missing = jobs.filter((j) => !written.has(j.id)).map((j) => j.id);
    if (missing.length > 0) out.problems.push(`cron jobs not written: ${missing.join(", ")}`);
    out.rows.push(
      row(
        "jobs",
        { source: jobs.length, copied: jobs.length - present, present, skipped: 0 },
        missing.length === 0,
      ),
    );
    const counts = { source: 0, copied: 0, present: 0, skipped: 0 };
    let lost = 0;
    for (const job of jobs) {
      const dir = files.outputDir(job.id);
      if (!dir) continue;
      const have = new Set(existsSync(dir) ? readdirSync(dir) : []);
      for (const info of await pg.listOutputs(job.id)) {
        counts.source++;
        if (have.has(info.name)) {
          counts.present++;
          continue;
        }
        const body = await pg.readOutput(job.id, info.name, info.size);
        if (!body) {
          lost++;
          continue;
        }
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        const path = join(dir, info.name);
        await atomicWriteFile(path, body.text, { mode: 0o600 });
        const at = new Date(info.modified_at);
        utimesSync(path, at, at);
        counts.copied++;
      }
    }
    if (lost > 0) out.problems.push(`${lost} cron outputs could not be read from the database`);
    out.rows.push(row("outputs", counts, lost === 0));
    return out;
  },
};

/** The knowledge parts in copy order (skills before their usage records). */
export const KNOWLEDGE_PARTS: readonly HomePart[] = [
  MEMORY_PART,
  SKILLS_PART,
  HUB_LOCK_PART,
  USAGE_PART,
  CRON_PART,
];
