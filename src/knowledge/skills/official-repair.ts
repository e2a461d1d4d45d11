/**
 * `hermes skills repair-official`: the optional skills this package ships (`optional-skills/`,
 * installed as `official/<category>/<name>`) and their record in the hub lock, as in Python Hermes.
 *
 * - Backfill (always): a home copy at `<category>/<name>` that is byte-identical to the shipped
 *   optional skill, with no lock entry, gets one (source `official`, trust `builtin`, verdict
 *   `backfilled`), so updates and `skills list` know where it came from. Edited copies are left.
 * - `restore`: the shipped copy is put back at its canonical place; a differing copy there is moved
 *   to `skills/.restore-backups/official-optional-<time>/` first, never deleted. Symbolic links are
 *   left alone.
 */
import { cpSync, existsSync, lstatSync, mkdirSync, renameSync } from "node:fs";
import { dirname, join } from "node:path";
import { optionalSkillsDir } from "./bundled.js";
import { contentHash, readFrontmatter } from "./hub/bundle.js";
import { pythonIsoTime, updateLock } from "./hub/lock.js";
import { readTree } from "./hub/maintenance.js";
import { skillDirsUnder } from "./lint.js";

export { optionalSkillsDir };

import { nameProblem, posixRelative, skillsRoot } from "./paths.js";

interface OfficialSkill {
  folder: string;
  name: string;
  /** `<category>/<name>` below optional-skills/ and below the home's skills/. */
  installPath: string;
  src: string;
}

async function officialIndex(optionalDir: string): Promise<OfficialSkill[]> {
  const out: OfficialSkill[] = [];
  for (const { dir } of skillDirsUnder(optionalDir)) {
    const files = await readTree(dir);
    const fm = readFrontmatter(files.get("SKILL.md")?.toString("utf8") ?? "");
    const folder = dir.split(/[\\/]/).pop() ?? "";
    out.push({ folder, name: fm.name ?? folder, installPath: posixRelative(optionalDir, dir), src: dir });
  }
  return out;
}

export interface RepairResult {
  restored: string[];
  backfilled: string[];
  backedUp: string[];
  skipped: Array<{ name: string; reason: string }>;
  backupDir?: string;
}

export class OfficialRepairError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
    this.name = "OfficialRepairError";
  }
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

async function treeHash(dir: string): Promise<string> {
  return contentHash(await readTree(dir));
}

export async function repairOfficial(
  home: string,
  env: Readonly<Record<string, string | undefined>>,
  target: string,
  options: { restore?: boolean; nowSeconds: number },
): Promise<RepairResult> {
  if (target !== "all") {
    const problem = nameProblem(target, "skill name");
    if (problem) throw new OfficialRepairError(problem, 2);
  }
  const optionalDir = optionalSkillsDir(env);
  if (!optionalDir)
    throw new OfficialRepairError("this install ships no optional skills (optional-skills/).");
  const index = await officialIndex(optionalDir);
  const targets = target === "all" ? index : index.filter((s) => s.folder === target || s.name === target);
  if (targets.length === 0) {
    throw new OfficialRepairError(
      `"${target}" is not an official optional skill (hermes skills search --source official).`,
    );
  }
  const root = skillsRoot(home);
  const result: RepairResult = { restored: [], backfilled: [], backedUp: [], skipped: [] };
  const stamp = new Date(options.nowSeconds * 1000).toISOString().replace(/[-:]/g, "").slice(0, 15);
  const backupRoot = join(root, ".restore-backups", `official-optional-${stamp}`);
  if (options.restore) {
    for (const skill of targets) {
      const dest = join(root, ...skill.installPath.split("/"));
      if (isLink(dest) || isLink(dirname(dest))) {
        result.skipped.push({ name: skill.folder, reason: "a symbolic link; left alone" });
        continue;
      }
      if (existsSync(dest)) {
        if ((await treeHash(dest)) === (await treeHash(skill.src))) continue;
        const backup = join(backupRoot, ...skill.installPath.split("/"));
        mkdirSync(dirname(backup), { recursive: true });
        renameSync(dest, backup);
        result.backedUp.push(skill.installPath);
        result.backupDir = backupRoot;
      }
      mkdirSync(dirname(dest), { recursive: true });
      cpSync(skill.src, dest, { recursive: true, verbatimSymlinks: true, filter: (p) => !isLink(p) });
      result.restored.push(skill.folder);
    }
  }
  // Backfill every shipped optional skill whose home copy is exactly the shipped one.
  const candidates: Array<{ skill: OfficialSkill; hash: string; files: string[] }> = [];
  for (const skill of index) {
    const dest = join(root, ...skill.installPath.split("/"));
    if (!existsSync(dest) || isLink(dest)) continue;
    const files = await readTree(dest);
    const hash = contentHash(files);
    if (hash === (await treeHash(skill.src)))
      candidates.push({ skill, hash, files: [...files.keys()].sort() });
  }
  if (candidates.length > 0) {
    await updateLock(home, (lock) => {
      const paths = new Set(Object.values(lock.installed).map((e) => e.install_path));
      const now = pythonIsoTime(options.nowSeconds);
      for (const { skill, hash, files } of candidates) {
        if (lock.installed[skill.folder] || paths.has(skill.installPath)) continue;
        lock.installed[skill.folder] = {
          source: "official",
          identifier: `official/${skill.installPath}`,
          trust_level: "builtin",
          scan_verdict: "backfilled",
          content_hash: hash,
          install_path: skill.installPath,
          files,
          metadata: { backfilled_from: "optional-skills" },
          installed_at: now,
          updated_at: now,
        };
        result.backfilled.push(skill.folder);
      }
    });
  }
  return result;
}
