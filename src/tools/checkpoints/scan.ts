/**
 * One walk of the working directory before a snapshot: how many files it holds (stopping as soon as
 * the cap is passed, so a home directory costs no more than the cap) and which files are over the
 * per-file size limit. Symlinks are counted but never followed; excluded directories (node_modules,
 * .git, build output…) are not entered.
 */
import { type Dirent, lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { EXCLUDED_DIRS } from "./store.js";

export interface ScanResult {
  /** Files counted (at most `maxFiles + 1`: the walk stops there). */
  files: number;
  /** More files than `maxFiles`. */
  tooMany: boolean;
  /** Paths relative to the root (with `/`) of regular files larger than the size limit. */
  oversize: string[];
}

export interface ScanLimits {
  maxFiles: number;
  /** Bytes; 0 or less: no per-file limit. */
  maxFileBytes: number;
}

export function scanWorkdir(root: string, limits: ScanLimits): ScanResult {
  const oversize: string[] = [];
  let files = 0;
  const pending: string[] = [""];
  while (pending.length > 0) {
    const rel = pending.pop() as string;
    let entries: Dirent[];
    try {
      entries = readdirSync(join(root, rel), { withFileTypes: true });
    } catch {
      // An unreadable folder is left to git, which skips it the same way.
      continue;
    }
    for (const entry of entries) {
      const child = rel === "" ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!EXCLUDED_DIRS.has(entry.name)) pending.push(child);
        continue;
      }
      files++;
      if (files > limits.maxFiles) return { files, tooMany: true, oversize };
      if (limits.maxFileBytes > 0 && entry.isFile()) {
        try {
          if (lstatSync(join(root, child)).size > limits.maxFileBytes) oversize.push(child);
        } catch {
          // Gone since the listing: nothing to leave out.
        }
      }
    }
  }
  return { files, tooMany: false, oversize };
}

/**
 * Escapes a relative path as one anchored gitignore pattern that matches only that path; undefined
 * for a name a pattern line cannot hold (a newline), which the snapshot drops from the index instead.
 */
export function excludePattern(rel: string): string | undefined {
  if (/[\r\n]/.test(rel)) return undefined;
  return `/${rel.replace(/[\\*?[\]!# ]/g, (c) => `\\${c}`)}`;
}
