/**
 * Looking after installed skills: `check` re-fetches hub skills from the source recorded in
 * lock.json and compares content hashes; `audit` re-scans what is on disk now.
 */
import { lstat, readdir, readFile } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { contentHash, HubError, type SkillBundle } from "./bundle.js";
import { resolveInstallDir } from "./install.js";
import { type InstalledSkill, listInstalledSkills } from "./installed.js";
import { type LockData, readLock } from "./lock.js";
import { type ScanFinding, scanSkillBundle, type Verdict } from "./scan.js";
import { type FetchOptions, fetchSkill, specFromLock } from "./sources.js";

export type CheckStatus = "up_to_date" | "update_available" | "unreachable" | "missing";

export interface CheckRow {
  name: string;
  source: string;
  identifier: string;
  status: CheckStatus;
  /** Hash recorded at install time. */
  installedHash: string;
  /** Hash of what the source serves now (absent when unreachable). */
  latestHash?: string;
  /** Why the source could not be read. */
  error?: string;
  /** The fetched bundle, for applying an update. */
  bundle?: SkillBundle;
}

/**
 * One row per hub skill (or just `name`). Never throws for a source that fails: that row is
 * `unreachable` with the reason. Throws {@link HubError} when `name` is not a hub skill.
 */
export async function checkForUpdates(
  home: string,
  name: string | undefined,
  options: FetchOptions = {},
): Promise<CheckRow[]> {
  const lock = await readLock(home);
  const entries = Object.entries(lock.installed).filter(([n]) => name === undefined || n === name);
  if (name !== undefined && entries.length === 0) {
    throw new HubError(`no hub-installed skill named "${name}". See: hermes skills list --source hub`);
  }
  const rows: CheckRow[] = [];
  for (const [skill, entry] of entries.sort(([a], [b]) => (a < b ? -1 : 1))) {
    const row: CheckRow = {
      name: skill,
      source: entry.source,
      identifier: entry.identifier,
      status: "unreachable",
      installedHash: entry.content_hash,
    };
    let dir: string;
    try {
      dir = resolveInstallDir(home, entry.install_path, skill);
    } catch (error) {
      rows.push({ ...row, status: "missing", error: (error as Error).message });
      continue;
    }
    if (!(await lstat(dir).catch(() => undefined))?.isDirectory()) {
      rows.push({ ...row, status: "missing", error: `skills/${entry.install_path} is gone` });
      continue;
    }
    try {
      const bundle = await fetchSkill(specFromLock(entry.source, entry.identifier), {
        ...options,
        home: options.home ?? home,
        select: skill,
      });
      const latest = contentHash(bundle.files);
      rows.push({
        ...row,
        status: latest === entry.content_hash ? "up_to_date" : "update_available",
        latestHash: latest,
        bundle,
      });
    } catch (error) {
      rows.push({ ...row, error: error instanceof Error ? error.message : String(error) });
    }
  }
  return rows;
}

export interface AuditRow {
  name: string;
  relPath: string;
  origin: InstalledSkill["origin"];
  verdict: Verdict;
  findings: ScanFinding[];
  /** For hub skills: whether the files on disk differ from what was installed. */
  modified?: boolean;
  /** Set when the folder could not be read. */
  error?: string;
}

/**
 * Re-scans installed skills: hub skills by default, every skill with `all`, or the one `name`.
 * Throws {@link HubError} when `name` matches no installed skill.
 */
export async function auditInstalled(
  home: string,
  options: { name?: string; all?: boolean } = {},
): Promise<AuditRow[]> {
  const lock = await readLock(home);
  const skills = (await listInstalledSkills(home, lock)).filter((s) =>
    options.name !== undefined
      ? s.name === options.name || s.dirName === options.name
      : options.all === true || s.origin === "hub",
  );
  if (options.name !== undefined && skills.length === 0) {
    throw new HubError(`no installed skill named "${options.name}". See: hermes skills list`);
  }
  const rows: AuditRow[] = [];
  for (const skill of skills) {
    try {
      const files = await readTree(skill.dir);
      const report = scanSkillBundle(files);
      const row: AuditRow = { name: skill.name, relPath: skill.relPath, origin: skill.origin, ...report };
      const entry = hubEntryFor(lock, skill);
      if (entry) row.modified = contentHash(files) !== entry.content_hash;
      rows.push(row);
    } catch (error) {
      rows.push({
        name: skill.name,
        relPath: skill.relPath,
        origin: skill.origin,
        verdict: "caution",
        findings: [],
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
  return rows;
}

function hubEntryFor(lock: LockData, skill: InstalledSkill) {
  return Object.values(lock.installed).find((e) => e.install_path === skill.relPath);
}

const MAX_TREE_FILES = 1000;
const SKIP_TREE = new Set([".git", "node_modules", "__pycache__", ".DS_Store", "Thumbs.db"]);

/** Every regular file under `dir` (symlinks and VCS folders skipped), for scanning and hashing. */
export async function readTree(dir: string): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  const walk = async (current: string): Promise<void> => {
    for (const entry of await readdir(current, { withFileTypes: true })) {
      if (files.size >= MAX_TREE_FILES) return;
      const full = join(current, entry.name);
      if (entry.isDirectory()) {
        if (!SKIP_TREE.has(entry.name)) await walk(full);
      } else if (entry.isFile() && !SKIP_TREE.has(entry.name)) {
        files.set(relative(dir, full).split(sep).join("/"), await readFile(full));
      }
    }
  };
  await walk(dir);
  return files;
}
