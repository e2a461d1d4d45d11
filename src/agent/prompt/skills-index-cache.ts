/**
 * The session prompt's skills index, reused by the next session while nothing it was made from
 * changed. A server that starts a session per request (the API server) otherwise walks, reads and
 * ranks every skill for each one: ~2.4 ms of CPU per session with 100 installed skills.
 *
 * What the index is made from: the skill folders under the skills roots (each folder's entries,
 * each SKILL.md), `.usage.json`, `.bundled_manifest` and `.hub/lock.json`, the listing of the
 * working directory (project signals), the `skills:` config, which environment variables are set,
 * the platform, and the clock (ranking by recent use). On a backend that keeps usage in a database
 * (PostgreSQL) the usage file is not part of the stamp: the database's usage version is part of the
 * key instead (`cachedSkillsIndexAsync`). The stamp covers the files with one `stat`
 * each (inode, mtime and ctime in ns, size) over a walk of the roots that includes every folder discovery
 * visits; the rest is the key, with the clock to the minute. A stamp with a time in the last 2 s
 * is not trusted (a same-size rewrite within one tick keeps it), so a tree being edited is
 * rebuilt every time until it has been quiet that long.
 */
import { type BigIntStats, type Dirent, readdirSync, realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import { EXCLUDED_DIRS, SUPPORT_DIRS } from "../../knowledge/skills/paths.js";

const RACY_MS = 2000;
/** Deeper than discovery walks (5 below a root), so the stamp covers every folder it visits. */
const STAMP_DEPTH = 6;
const MAX_KEPT = 16;

export interface SkillsIndexValue {
  index: string;
  warnings: string[];
}

const kept = new Map<string, { stamp: string; value: SkillsIndexValue }>();

interface Listing {
  /** The folder holds a SKILL.md. */
  skill: boolean;
  /** The sub-folders (and links) discovery would walk into. */
  children: Array<{ name: string; link: boolean }>;
}

/**
 * A folder's listing, kept while the folder's own stamp stays (adding, removing or renaming an
 * entry changes its mtime), so a quiet tree costs a `stat` per folder and per SKILL.md, no reads.
 * `stamp` "" (changed in the last 2 s): listed and not kept.
 */
const listings = new Map<string, { stamp: string; listing: Listing }>();
const MAX_LISTINGS = 4096;

function listFolder(dir: string, stamp: string): Listing | undefined {
  const hit = listings.get(dir);
  if (stamp !== "" && hit?.stamp === stamp) return hit.listing;
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    listings.delete(dir);
    return undefined;
  }
  const skill = entries.some((e) => e.name === "SKILL.md");
  const children: Listing["children"] = [];
  for (const entry of entries) {
    if (!entry.isDirectory() && !entry.isSymbolicLink()) continue;
    if (entry.name === "SKILL.md" || entry.name.startsWith(".") || EXCLUDED_DIRS.has(entry.name)) continue;
    // A skill's own support folders are not skills (discovery skips them too).
    if (skill && SUPPORT_DIRS.includes(entry.name)) continue;
    children.push({ name: entry.name, link: entry.isSymbolicLink() });
  }
  const listing = { skill, children };
  listings.delete(dir);
  if (stamp !== "") {
    listings.set(dir, { stamp, listing });
    if (listings.size > MAX_LISTINGS) {
      const oldest = listings.keys().next().value;
      if (oldest !== undefined) listings.delete(oldest);
    }
  }
  return listing;
}

/**
 * The index for `key` made by `build`, or the one made earlier for the same key when the stamp of
 * `roots` and `files` is unchanged. `roots` are walked; `files` (and folders) are stat'ed.
 */
export function cachedSkillsIndex(
  key: string,
  roots: readonly string[],
  files: readonly string[],
  build: () => SkillsIndexValue,
  now: () => number = Date.now,
): SkillsIndexValue {
  const slot = lookup(key, roots, files, now);
  return slot.hit ?? slot.keep(build());
}

/**
 * `cachedSkillsIndex` for a `build` that must wait (the usage records of a database). The stamp is
 * taken before `build` starts, so a change made while it runs shows as a new stamp next time and
 * never hides behind this value. `key` carries any stamp that is not a file (a usage version).
 */
export async function cachedSkillsIndexAsync(
  key: string,
  roots: readonly string[],
  files: readonly string[],
  build: () => Promise<SkillsIndexValue>,
  now: () => number = Date.now,
): Promise<SkillsIndexValue> {
  const slot = lookup(key, roots, files, now);
  return slot.hit ?? slot.keep(await build());
}

function lookup(
  key: string,
  roots: readonly string[],
  files: readonly string[],
  now: () => number,
): { hit?: SkillsIndexValue; keep(value: SkillsIndexValue): SkillsIndexValue } {
  const stamp = treeStamp(roots, files, now());
  const fullKey = `${key}\u0000${Math.floor(now() / 60_000)}`;
  const found = kept.get(fullKey);
  const keep = (value: SkillsIndexValue) => {
    kept.delete(fullKey);
    if (stamp !== undefined) {
      kept.set(fullKey, { stamp, value: copy(value) });
      if (kept.size > MAX_KEPT) {
        const oldest = kept.keys().next().value;
        if (oldest !== undefined) kept.delete(oldest);
      }
    }
    return value;
  };
  if (stamp !== undefined && found && found.stamp === stamp) return { hit: copy(found.value), keep };
  return { keep };
}

function copy(value: SkillsIndexValue): SkillsIndexValue {
  return { index: value.index, warnings: [...value.warnings] };
}

/** One line per file and folder; undefined when anything changed in the last 2 s. */
export function treeStamp(
  roots: readonly string[],
  files: readonly string[],
  nowMs: number,
): string | undefined {
  const parts: string[] = [];
  let racy = false;
  /** Adds the path's stamp; returns it for a folder (undefined for a file or nothing there). */
  const note = (path: string): string | undefined => {
    let st: BigIntStats | undefined;
    try {
      st = statSync(path, { bigint: true, throwIfNoEntry: false });
    } catch {
      // ENOTDIR and the like: as absent.
      st = undefined;
    }
    if (!st) {
      parts.push(`${path}|-`);
      return undefined;
    }
    const fresh = nowMs - Number(st.mtimeNs / 1_000_000n) < RACY_MS;
    if (fresh) racy = true;
    const stamp = `${st.ino}:${st.mtimeNs}:${st.ctimeNs}:${st.size}`;
    parts.push(`${path}|${stamp}:${st.isDirectory() ? "d" : "f"}`);
    return st.isDirectory() ? (fresh ? "" : stamp) : undefined;
  };
  for (const file of files) note(file);
  for (const root of roots) {
    // Only a symlinked folder can lead back into the tree (as in discovery).
    const visited = new Set<string>();
    const walk = (dir: string, depth: number, link: boolean) => {
      const stamp = note(dir);
      if (stamp === undefined) return;
      if (link) {
        let real: string;
        try {
          real = realpathSync.native(dir);
        } catch {
          return;
        }
        if (visited.has(real)) return;
        visited.add(real);
      }
      const listing = listFolder(dir, stamp);
      if (!listing) {
        parts.push(`${dir}|unreadable`);
        return;
      }
      if (listing.skill) note(join(dir, "SKILL.md"));
      if (depth >= STAMP_DEPTH) return;
      for (const child of listing.children) walk(join(dir, child.name), depth + 1, child.link);
    };
    walk(root, 0, true);
  }
  return racy ? undefined : parts.join("\n");
}
