/**
 * Names and paths inside a skills tree: where the home's skills live, which folders discovery
 * skips, and the checks that keep a file path given by the model inside its skill folder.
 */
import { lstatSync, realpathSync } from "node:fs";
import { isAbsolute, join, relative, sep } from "node:path";

/** `<home>/skills`, as Python Hermes lays it out. */
export const skillsRoot = (home: string): string => join(home, "skills");

/** Supporting folders of a skill, read through `skill_view(name, file_path)`. */
export const SUPPORT_DIRS: readonly string[] = ["references", "templates", "scripts", "assets"];

/** Folders never scanned for skills (dot-folders such as `.hub` and `.archive` are skipped too). */
export const EXCLUDED_DIRS: ReadonlySet<string> = new Set([
  "node_modules",
  "venv",
  "site-packages",
  "__pycache__",
]);

export const MAX_NAME_LENGTH = 64;
export const MAX_DESCRIPTION_LENGTH = 1024;
export const MAX_SKILL_MD_CHARS = 100_000;
export const MAX_SUPPORT_FILE_BYTES = 1_048_576;

const NAME_RE = /^[a-z0-9][a-z0-9._-]*$/;

/** Why `value` is not a valid skill (or category) name, or undefined when it is. */
export function nameProblem(value: string, what: "skill name" | "category"): string | undefined {
  if (!value) return `The ${what} is empty.`;
  if (value.length > MAX_NAME_LENGTH) {
    return `The ${what} "${value.slice(0, 80)}…" is ${value.length} characters; the limit is ${MAX_NAME_LENGTH}.`;
  }
  if (!NAME_RE.test(value)) {
    return (
      `Invalid ${what} "${value}": use lowercase letters, digits, "-", "_" and "." only, starting with a ` +
      `letter or digit (one folder name, no "/"), e.g. "deploy-checklist".`
    );
  }
  return undefined;
}

/**
 * The segments of a file path relative to a skill folder, or an error message. Refuses empty,
 * absolute and drive paths, `..` and `.` segments, NUL bytes; `\` counts as a separator.
 */
export function splitRelativePath(filePath: string): string[] | { error: string } {
  const trimmed = filePath.trim();
  if (!trimmed)
    return { error: "file_path is empty. Give a path inside the skill, e.g. references/notes.md." };
  if (trimmed.includes("\0")) return { error: "file_path contains a NUL byte." };
  if (
    isAbsolute(trimmed) ||
    trimmed.startsWith("/") ||
    trimmed.startsWith("\\") ||
    /^[A-Za-z]:/.test(trimmed)
  ) {
    return {
      error: `file_path "${trimmed}" is absolute; give a path relative to the skill folder, e.g. references/notes.md.`,
    };
  }
  const parts = trimmed.split(/[\\/]+/).filter((p) => p !== "");
  if (parts.some((p) => p === ".." || p === ".")) {
    return { error: `file_path "${trimmed}" leaves the skill folder ("." and ".." are not allowed).` };
  }
  return parts;
}

/** Whether `child` is `parent` itself or lies below it (both absolute, already resolved). */
export function isInside(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}

/**
 * Resolves `parts` below `skillDir`, refusing a result that a symlink would carry outside the
 * skill folder: the deepest existing ancestor is resolved with realpath and must stay inside,
 * and an existing target must not itself be a symlink that points outside.
 */
export function resolveInsideSkill(skillDir: string, parts: readonly string[]): string | { error: string } {
  let root: string;
  try {
    root = realpathSync(skillDir);
  } catch {
    return { error: `The skill folder ${skillDir} cannot be read.` };
  }
  const target = join(skillDir, ...parts);
  const shown = parts.join("/");
  // Walk down from the skill folder; every existing component must resolve inside it.
  let current = skillDir;
  for (const part of parts) {
    current = join(current, part);
    let exists = true;
    try {
      lstatSync(current);
    } catch {
      exists = false;
    }
    if (!exists) break;
    let real: string;
    try {
      real = realpathSync(current);
    } catch {
      return { error: `"${shown}" is a broken link inside the skill; remove it or pick another path.` };
    }
    if (!isInside(root, real)) {
      return {
        error: `"${shown}" resolves outside the skill folder (through a symbolic link), so it is refused.`,
      };
    }
  }
  return target;
}

/** A path relative to `base` with "/" separators, for results shown to the model. */
export function posixRelative(base: string, path: string): string {
  const rel = relative(base, path);
  return sep === "/" ? rel : rel.split(sep).join("/");
}
