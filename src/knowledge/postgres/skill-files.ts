/**
 * A skill as the PostgreSQL library stores it: its name, category and every file (relative path,
 * mode, bytes). The checks here run on every write to the database and again on every file the
 * mirror materialises, so a row written by a confused model, a broken import or another instance
 * can never put a file outside its skill folder or fill a disk: names and categories are single
 * folder names, paths relative without `.`/`..`/NUL/absolute forms, sizes within the skill tools'
 * limits (SKILL.md 100,000 characters, any other file 1 MiB) plus a cap on files per skill.
 */
import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  EXCLUDED_DIRS,
  MAX_SKILL_MD_CHARS,
  MAX_SUPPORT_FILE_BYTES,
  nameProblem,
  splitRelativePath,
} from "../skills/paths.js";
import { SkillManageError } from "../skills/validate.js";

export interface StoredSkillFile {
  /** Relative to the skill folder, `/`-separated (`SKILL.md`, `scripts/run.sh`). */
  path: string;
  /** Permission bits (`0o755` for a script); group and other write bits are never kept, owner read always is. */
  mode: number;
  content: Buffer;
}

export interface StoredSkill {
  name: string;
  /** The category folder, or null for a skill at the top of the skills folder. */
  category: string | null;
  files: StoredSkillFile[];
}

/** Files one skill may hold. */
export const MAX_SKILL_FILES = 500;
/** Bytes one skill may hold in all. */
export const MAX_SKILL_TOTAL_BYTES = 32 * 1024 * 1024;

function fail(message: string): never {
  throw new SkillManageError(message);
}

/** The mode kept for a file: its permission bits without group/other write, always owner-readable. */
export function keptMode(mode: number): number {
  return (mode & 0o755) | 0o400;
}

/**
 * `skill` with its paths normalised (`/`-separated) and sorted, or a thrown `SkillManageError`
 * naming the first rule it breaks (nothing is written then).
 */
export function checkSkill(skill: StoredSkill): StoredSkill {
  const nameIssue = nameProblem(skill.name, "skill name");
  if (nameIssue) fail(nameIssue);
  if (skill.category !== null) {
    const categoryIssue = nameProblem(skill.category, "category");
    if (categoryIssue) fail(categoryIssue);
  }
  if (skill.files.length > MAX_SKILL_FILES) {
    fail(`Skill "${skill.name}" has ${skill.files.length} files; the limit is ${MAX_SKILL_FILES}.`);
  }
  const seen = new Set<string>();
  let total = 0;
  const files: StoredSkillFile[] = [];
  for (const file of skill.files) {
    const parts = splitRelativePath(file.path);
    if (!Array.isArray(parts)) fail(`Skill "${skill.name}": ${parts.error}`);
    const path = parts.join("/");
    if (seen.has(path)) fail(`Skill "${skill.name}" lists "${path}" twice.`);
    // A file and a folder of the same name cannot both exist on disk.
    for (let i = 1; i < parts.length; i++) {
      if (seen.has(parts.slice(0, i).join("/"))) fail(`Skill "${skill.name}": "${path}" is below a file.`);
    }
    for (const other of seen) {
      if (other.startsWith(`${path}/`)) fail(`Skill "${skill.name}": "${path}" is also a folder.`);
    }
    seen.add(path);
    const bytes = file.content.length;
    if (path === "SKILL.md") {
      const chars = file.content.toString("utf8").length;
      if (chars > MAX_SKILL_MD_CHARS) {
        fail(
          `SKILL.md of "${skill.name}" is ${chars.toLocaleString("en-US")} characters; the limit is ` +
            `${MAX_SKILL_MD_CHARS.toLocaleString("en-US")}.`,
        );
      }
    } else if (bytes > MAX_SUPPORT_FILE_BYTES) {
      fail(
        `${path} of "${skill.name}" is ${bytes.toLocaleString("en-US")} bytes; the limit is 1 MiB per file.`,
      );
    }
    total += bytes;
    files.push({ path, mode: keptMode(file.mode), content: file.content });
  }
  if (!seen.has("SKILL.md")) fail(`Skill "${skill.name}" has no SKILL.md.`);
  if (total > MAX_SKILL_TOTAL_BYTES) {
    fail(
      `Skill "${skill.name}" holds ${total.toLocaleString("en-US")} bytes; the limit is 32 MiB per skill.`,
    );
  }
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { name: skill.name, category: skill.category, files };
}

/** A digest of a checked skill's category, paths, modes and bytes: equal digests, equal skills. */
export function skillHash(skill: StoredSkill): string {
  const hash = createHash("sha256");
  hash.update(`category\0${skill.category ?? ""}\0`);
  for (const file of skill.files) {
    hash.update(`${file.path}\0${file.mode.toString(8)}\0${file.content.length}\0`);
    hash.update(file.content);
  }
  return hash.digest("hex");
}

/**
 * Every regular file below `dir` (a skill folder), for storing it. Symbolic links and special
 * files are refused, not followed: a skill stored for every instance must not carry a pointer to
 * one machine's files. Folders discovery skips (`node_modules`, `__pycache__`, …) are left out.
 */
export function readSkillFolder(dir: string): StoredSkillFile[] {
  const files: StoredSkillFile[] = [];
  const walk = (abs: string, rel: string) => {
    for (const entry of readdirSync(abs, { withFileTypes: true })) {
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      const full = join(abs, entry.name);
      const stat = lstatSync(full);
      if (stat.isSymbolicLink()) fail(`"${path}" is a symbolic link; skills are stored without links.`);
      if (stat.isDirectory()) {
        if (!EXCLUDED_DIRS.has(entry.name)) walk(full, path);
        continue;
      }
      if (!stat.isFile()) fail(`"${path}" is not a regular file.`);
      if (stat.size > Math.max(MAX_SUPPORT_FILE_BYTES, MAX_SKILL_MD_CHARS * 4)) {
        fail(`${path} is ${stat.size.toLocaleString("en-US")} bytes; the limit is 1 MiB per file.`);
      }
      files.push({ path, mode: stat.mode & 0o777, content: readFileSync(full) });
      if (files.length > MAX_SKILL_FILES) fail(`The skill has more than ${MAX_SKILL_FILES} files.`);
    }
  };
  walk(dir, "");
  return files;
}
