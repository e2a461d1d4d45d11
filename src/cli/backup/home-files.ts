/**
 * Which files of a home a backup holds, and which members of an archive an import may write:
 * the rules upstream's `hermes backup` / `hermes import` keep, as pure functions of a relative
 * path, plus the walk that applies them.
 */
import { lstatSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";

/** Directory names skipped wherever they appear: regenerable, or credential stores. */
const EXCLUDED_DIRS = new Set([
  "__pycache__",
  ".git",
  "node_modules",
  // Live browser profiles: locked SQLite files, and with a real profile, the user's cookies.
  "browser-profiles",
  "browser-profile",
  ".venv",
  "venv",
  "site-packages",
  ".cache",
  ".pytest_cache",
  ".mypy_cache",
  ".ruff_cache",
]);
/**
 * Skipped only at a home's root (the root home or `profiles/NAME/`): installed code and runtimes,
 * and earlier backups, snapshots and checkpoints (inside the backup they would grow it without
 * end). Deeper down the same names are the user's: the bundled skill `devops/backups`, a skill's
 * `models/`, a project's `checkpoints/`.
 */
const EXCLUDED_ROOT_DIRS = new Set([
  "hermes-agent",
  "models",
  "runtimes",
  "node",
  "bin",
  ".worktrees",
  "backups",
  "state-snapshots",
  "checkpoints",
]);
/** Under `cache/` only what nothing can rebuild: media sent or received, kept. */
const KEPT_CACHE_DIRS = new Set(["images", "audio", "videos", "documents", "screenshots", "citations"]);
/** Runtime files that mean nothing on another machine. */
const EXCLUDED_NAMES = new Set([".backup.lock", "gateway.pid", "cron.pid"]);
/**
 * A `.db` is archived as a consistent snapshot; its live WAL, shared memory or journal beside it
 * would describe a different image and corrupt the restored file on its next open.
 */
const SQLITE_SIDECARS = ["-wal", "-shm", "-journal"];

/** Files an import never writes: runtime state of the machine the backup came from. */
const IMPORT_SKIPPED_NAMES = new Set([
  "gateway_state.json",
  "gateway.pid",
  "cron.pid",
  "gateway.lock",
  "processes.json",
]);

/** Files restored owner-only (zip extraction does not carry modes reliably). */
export const SECRET_FILE_NAMES: ReadonlySet<string> = new Set([
  ".env",
  "auth.json",
  "state.db",
  "vault.key",
  "vault.json.enc",
]);

/** The path relative to the home it belongs to (`profiles/NAME/x` → `x`), for the root-only rules. */
function withinHome(parts: readonly string[]): readonly string[] {
  return parts.length >= 3 && parts[0] === "profiles" ? parts.slice(2) : parts;
}

/** Whether the directory at `parts` (relative to the archived root) is left out of a backup. */
export function excludedDir(parts: readonly string[]): boolean {
  const name = parts[parts.length - 1] ?? "";
  if (EXCLUDED_DIRS.has(name)) return true;
  const inHome = withinHome(parts);
  if (inHome.length === 1 && EXCLUDED_ROOT_DIRS.has(name)) return true;
  return inHome.length === 2 && inHome[0] === "cache" && !KEPT_CACHE_DIRS.has(name);
}

/** Whether the file at `parts` (relative to the archived root) is left out of a backup. */
export function excludedFile(parts: readonly string[]): boolean {
  const name = parts[parts.length - 1] ?? "";
  if (EXCLUDED_NAMES.has(name) || name.endsWith(".pyc") || name.endsWith(".partial")) return true;
  if (SQLITE_SIDECARS.some((suffix) => name.endsWith(`.db${suffix}`))) return true;
  // Quarantined and emergency copies of state.db are recovery material for this machine only.
  return name.startsWith("state.db.corrupt-") || name.startsWith("state-unsaved-");
}

/** Whether a file is an SQLite database to snapshot rather than copy. */
export const isDatabase = (name: string): boolean => name.endsWith(".db");

export interface HomeFile {
  /** Absolute path. */
  path: string;
  /** `/`-separated path inside the archive. */
  name: string;
}

/**
 * Every regular file under `root` a backup holds, in a stable order, never following a symlink
 * (a link could pull in files from outside the home) and never the archive being written.
 * `skippedDirs` collects the excluded directories, to tell the user.
 */
export function walkHome(root: string, outputPath: string, skippedDirs: string[]): HomeFile[] {
  const files: HomeFile[] = [];
  const output = resolve(outputPath);
  const walk = (dir: string, parts: string[]): void => {
    let entries: import("node:fs").Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(dir, entry.name);
      const rel = [...parts, entry.name];
      if (entry.isDirectory()) {
        if (excludedDir(rel)) skippedDirs.push(rel.join("/"));
        else walk(path, rel);
      } else if (entry.isFile() && !excludedFile(rel) && resolve(path) !== output) {
        files.push({ path, name: rel.join("/") });
      }
    }
  };
  walk(root, []);
  return files;
}

export type MemberVerdict =
  | { kind: "write"; parts: string[] }
  | { kind: "skip-runtime" }
  | { kind: "blocked"; reason: string }
  | { kind: "directory" };

/**
 * What an import does with the archive member `name` (after its prefix is removed): write it at
 * `parts` under the home, skip it as the source machine's runtime state, or block it because it
 * would land outside the home (absolute, `..`, a drive letter, a backslash path, a NUL).
 */
export function judgeMember(name: string): MemberVerdict {
  if (name.endsWith("/")) return { kind: "directory" };
  if (name.includes("\0")) return { kind: "blocked", reason: "NUL in the name" };
  if (name.includes("\\")) return { kind: "blocked", reason: "backslash in the name" };
  if (name.startsWith("/") || /^[A-Za-z]:/.test(name)) return { kind: "blocked", reason: "absolute path" };
  const parts = name.split("/").filter((part) => part !== "" && part !== ".");
  if (parts.length === 0) return { kind: "directory" };
  if (parts.includes("..")) return { kind: "blocked", reason: "path traversal" };
  const last = parts[parts.length - 1] ?? "";
  if (IMPORT_SKIPPED_NAMES.has(last) || SQLITE_SIDECARS.some((suffix) => last.endsWith(`.db${suffix}`))) {
    return { kind: "skip-runtime" };
  }
  return { kind: "write", parts };
}

/**
 * The prefix every member shares when an archive wraps the home in one directory (`hermes/…`,
 * `.hermes/…`), detected by that directory holding the home's marker files; "" otherwise.
 */
export function archivePrefix(names: readonly string[]): string {
  const markers = ["config.yaml", ".env", "state.db", "SOUL.md", "auth.json"];
  if (names.some((name) => markers.includes(name))) return "";
  const tops = new Set(names.map((name) => name.split("/")[0] ?? ""));
  if (tops.size !== 1) return "";
  const [top] = [...tops];
  return top && names.some((name) => markers.includes(name.slice(top.length + 1))) ? `${top}/` : "";
}

/** Whether an archive looks like a Hermes home (one of its marker files at the root or under a prefix). */
export function looksLikeHome(names: readonly string[]): boolean {
  const prefix = archivePrefix(names);
  const markers = ["config.yaml", ".env", "state.db", "SOUL.md", "auth.json", "memories/MEMORY.md"];
  return names.some((name) => name.startsWith(prefix) && markers.includes(name.slice(prefix.length)));
}

/** Whether `path` is a symlink (an import never writes through one). */
export function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}
