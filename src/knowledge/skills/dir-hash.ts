/**
 * The content hash of a skill folder that `.bundled_manifest` records, computed exactly as Python
 * Hermes computes it (tools/skills_sync.py): MD5 over every file below the folder, in Python's
 * path order, each contributing its relative path and then its bytes. Generated runtime caches
 * (`__pycache__` and friends, `.pyc` next to its `.py`) are left out. Matching the algorithm lets
 * a home seeded by Python be recognised as unmodified here, and the reverse.
 */
import { createHash } from "node:crypto";
import { type Dirent, existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, sep } from "node:path";

const RUNTIME_CACHE_DIRS = new Set(["__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"]);

interface FileEntry {
  /** Path segments relative to the hashed folder. */
  parts: string[];
  abs: string;
  size: number;
  mtimeMs: number;
}

/** Python compares paths part by part, each part by code point. */
function comparePaths(a: readonly string[], b: readonly string[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[i] as string;
    const y = b[i] as string;
    if (x !== y) return compareCodePoints(x, y);
  }
  return a.length - b.length;
}

function compareCodePoints(a: string, b: string): number {
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  for (;;) {
    const x = ia.next();
    const y = ib.next();
    if (x.done || y.done) return x.done ? (y.done ? 0 : -1) : 1;
    const cx = x.value.codePointAt(0) as number;
    const cy = y.value.codePointAt(0) as number;
    if (cx !== cy) return cx - cy;
  }
}

/** Every regular file below `dir` (symlinked files followed, symlinked folders not), unsorted. */
function listFiles(dir: string): FileEntry[] {
  const out: FileEntry[] = [];
  const walk = (abs: string, parts: string[]) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(abs, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const childAbs = join(abs, entry.name);
      const childParts = [...parts, entry.name];
      if (entry.isDirectory()) {
        if (!RUNTIME_CACHE_DIRS.has(entry.name)) walk(childAbs, childParts);
        continue;
      }
      if (!entry.isFile() && !entry.isSymbolicLink()) continue;
      let stats: ReturnType<typeof statSync>;
      try {
        stats = statSync(childAbs);
      } catch {
        continue;
      }
      if (!stats.isFile()) continue;
      if (/\.py[co]$/.test(entry.name) && existsSync(join(abs, entry.name.replace(/\.py[co]$/, ".py")))) {
        continue;
      }
      out.push({ parts: childParts, abs: childAbs, size: stats.size, mtimeMs: stats.mtimeMs });
    }
  };
  walk(dir, []);
  return out.sort((a, b) => comparePaths(a.parts, b.parts));
}

function hashEntries(entries: readonly FileEntry[]): string {
  const md5 = createHash("md5");
  for (const entry of entries) {
    md5.update(entry.parts.join(sep), "utf8");
    try {
      md5.update(readFileSync(entry.abs));
    } catch {
      // A file that vanished mid-walk: hash what is left, as Python's suppress(OSError) does.
    }
  }
  return md5.digest("hex");
}

/** The manifest hash of `dir` ("d41d8cd98f00b204e9800998ecf8427e", MD5 of nothing, when empty or missing). */
export function skillDirHash(dir: string): string {
  return hashEntries(listFiles(dir));
}

const memo = new Map<string, { signature: string; hash: string }>();

/**
 * {@link skillDirHash}, re-reading file contents only when a file was added, removed, resized or
 * touched since the last call for the same folder in this process (stat is far cheaper than
 * reading every file at each discovery).
 */
export function skillDirHashCached(dir: string): string {
  const entries = listFiles(dir);
  const signature = entries.map((e) => `${e.parts.join("/")}\0${e.size}\0${e.mtimeMs}`).join("\n");
  const hit = memo.get(dir);
  if (hit && hit.signature === signature) return hit.hash;
  const hash = hashEntries(entries);
  memo.set(dir, { signature, hash });
  return hash;
}
