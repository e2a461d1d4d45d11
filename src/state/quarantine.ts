/**
 * Moving an unreadable `state.db` aside instead of replacing or ignoring it. The file keeps every
 * byte, under `state.db.corrupt-<UTC time>`, with its `-wal` and `-shm` renamed alongside (SQLite
 * finds `<name>-wal` next to `<name>`, so pages still in the WAL stay readable), and
 * `hermes sessions repair --from <that file>` brings back what can be read.
 */
import { existsSync, renameSync, statSync } from "node:fs";

/** `20250102T030405Z`: sortable, no characters a shell or Windows would trip on. */
export function quarantineStamp(at: Date): string {
  return at
    .toISOString()
    .replace(/\.\d+Z$/, "Z")
    .replace(/[-:]/g, "");
}

/**
 * The name a damaged file moves to: `<path>.corrupt-<stamp>`, or `…-<stamp>-2`, `-3`… when that
 * name (or its `-wal`) is already taken. Pure apart from the existence checks.
 */
export function quarantineName(path: string, at: Date, exists: (p: string) => boolean = existsSync): string {
  const base = `${path}.corrupt-${quarantineStamp(at)}`;
  for (let n = 1; ; n++) {
    const candidate = n === 1 ? base : `${base}-${n}`;
    if (!exists(candidate) && !exists(`${candidate}-wal`) && !exists(`${candidate}-shm`)) return candidate;
  }
}

export interface Quarantined {
  /** Where the database file went. */
  movedTo: string;
  /** Every file moved, the database first (`-wal`, `-shm`, `-journal` when present). */
  files: string[];
}

/**
 * Renames `path` and its side files to `quarantineName(path, at)`. Renames never copy, so this is
 * atomic per file and cannot lose data; throws (nothing else moved) when the main file cannot be
 * renamed.
 */
export function quarantineFile(path: string, at: Date = new Date()): Quarantined {
  const target = quarantineName(path, at);
  renameSync(path, target);
  const files = [target];
  for (const suffix of ["-wal", "-shm", "-journal"]) {
    if (!existsSync(path + suffix)) continue;
    try {
      renameSync(path + suffix, target + suffix);
      files.push(target + suffix);
    } catch {
      // A side file that cannot move stays; the main file (what matters) has moved.
    }
  }
  return { movedTo: target, files };
}

/**
 * How long a 0-byte `state.db` is presumed to be another process's brand-new file (it creates the
 * file, then opens it a moment later) rather than a damaged one.
 */
export const FRESH_EMPTY_FILE_MS = 2000;

/** True when `path` exists, is empty, and was not just created (see FRESH_EMPTY_FILE_MS). */
export function isStaleEmptyFile(path: string, nowMs: number = Date.now()): boolean {
  try {
    const st = statSync(path);
    return st.isFile() && st.size === 0 && nowMs - st.mtimeMs > FRESH_EMPTY_FILE_MS;
  } catch {
    return false;
  }
}
