/**
 * The local copy of the database's skills that one instance keeps (its scripts run from disk;
 * no instance reads another's disk). `.hermes-mirror.json` in the mirror folder records which
 * skill folders the mirror wrote and at which version, so a refresh touches only what changed and
 * leaves alone what it did not write (bundled seeds, a user's own folders).
 *
 * Each skill changes atomically: its new folder is written completely in `.hermes-mirror-tmp/`
 * (modes set), then swapped in with two renames, so a reader sees the old folder or the new one,
 * never a half-written mix. A folder of the same name the mirror did not write is moved to
 * `.hermes-mirror-replaced/`, never deleted. Every file is checked again here (`checkSkill`), so
 * rows written by anyone cannot put a file outside its skill folder.
 */
import { randomBytes } from "node:crypto";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { atomicWriteFile } from "../../util/atomic-write.js";
import { withFileLock } from "../../util/file-lock.js";
import { isInside } from "../skills/paths.js";
import { checkSkill, readSkillFolder, type StoredSkill, skillHash } from "./skill-files.js";

export const MIRROR_MANIFEST = ".hermes-mirror.json";
const TMP = ".hermes-mirror-tmp";
const REPLACED = ".hermes-mirror-replaced";

/** What the mirror wrote: skill name → its folder (relative, `/`) and the version it holds. */
export interface MirrorManifest {
  skills: Record<string, { dir: string; version: number; hash: string }>;
}

/** One skill as the database lists it, with a loader for its files. */
export interface MirrorSource {
  name: string;
  category: string | null;
  version: number;
  hash: string;
  load(): Promise<StoredSkill | undefined>;
}

export interface RefreshReport {
  added: string[];
  updated: string[];
  removed: string[];
  unchanged: number;
  /** Skills that could not be written (a bad row, a disk error), with why; the rest went on. */
  failed: Array<{ name: string; error: string }>;
}

export function readManifest(mirrorDir: string): MirrorManifest {
  try {
    const data = JSON.parse(readFileSync(join(mirrorDir, MIRROR_MANIFEST), "utf8")) as MirrorManifest;
    return data && typeof data.skills === "object" && data.skills ? data : { skills: {} };
  } catch {
    return { skills: {} };
  }
}

/** The digest of the skill folder on disk now, or undefined when it is missing or unreadable. */
function folderHash(path: string, name: string, category: string | null): string | undefined {
  try {
    return skillHash(checkSkill({ name, category, files: readSkillFolder(path) }));
  } catch {
    return undefined;
  }
}

function relDir(category: string | null, name: string): string {
  return category ? `${category}/${name}` : name;
}

/** `mirrorDir/rel`, refusing a path that a link in the mirror would carry elsewhere. */
function inside(root: string, rel: string): string {
  const target = join(root, ...rel.split("/"));
  let probe = dirname(target);
  while (!existsSync(probe)) probe = dirname(probe);
  if (!isInside(root, realpathSync(probe))) throw new Error(`${rel} resolves outside the mirror folder`);
  return target;
}

function moveAway(root: string, path: string, into: string): void {
  if (!existsSync(path)) return;
  const holder = join(root, into);
  mkdirSync(holder, { recursive: true, mode: 0o700 });
  const aside = join(
    holder,
    `${path.slice(root.length + 1).replaceAll("/", "__")}-${Date.now()}-${randomBytes(3).toString("hex")}`,
  );
  renameSync(path, aside);
  if (into === TMP) rmSync(aside, { recursive: true, force: true });
}

/** Drops category folders the change left empty (never the mirror folder itself). */
function pruneEmpty(root: string, from: string): void {
  let dir = from;
  while (dir !== root && isInside(root, dir)) {
    try {
      if (readdirSync(dir).length > 0) return;
      rmdirSync(dir);
    } catch {
      return;
    }
    dir = dirname(dir);
  }
}

/** Writes `skill` into a fresh folder under the mirror's tmp area; answers that folder. */
function stage(root: string, skill: StoredSkill): string {
  const checked = checkSkill(skill);
  const base = join(root, TMP, `${checked.name}-${randomBytes(6).toString("hex")}`);
  mkdirSync(base, { recursive: true, mode: 0o755 });
  for (const file of checked.files) {
    const target = join(base, ...file.path.split("/"));
    if (!isInside(base, target) || target === base) throw new Error(`"${file.path}" leaves the skill folder`);
    mkdirSync(dirname(target), { recursive: true, mode: 0o755 });
    writeFileSync(target, file.content, { mode: file.mode, flag: "wx" });
    chmodSync(target, file.mode);
  }
  return base;
}

export interface RefreshOptions {
  /**
   * Apply only what changed in the database since the mirror last recorded it (new, changed and
   * deleted skills), leaving alone a folder whose stored version is the one the mirror holds even
   * when its files differ. For refreshes on notifications, which may arrive while this process's
   * own write is between the folder and the database. Default: also put back folders changed
   * outside the tools (the refresh at start-up, and after a refused write).
   */
  onlyChanged?: boolean;
}

/**
 * Brings `mirrorDir` to the state of `listed` (the database's skills, or how to list them once the
 * mirror's lock is held): new and changed skills written, skills the database no longer has removed. Several processes sharing one mirror
 * folder take turns (`.hermes-mirror.lock`).
 */
export async function refreshMirror(
  mirrorDir: string,
  listed: readonly MirrorSource[] | (() => Promise<readonly MirrorSource[]>),
  options: RefreshOptions = {},
): Promise<RefreshReport> {
  mkdirSync(mirrorDir, { recursive: true });
  const root = realpathSync(mirrorDir);
  const lockPath = join(root, ".hermes-mirror.lock");
  return withFileLock(
    lockPath,
    async () => {
      // Listed under the lock: a write recorded (noteMirrored) before this refresh took the lock
      // committed before it, so a listing taken now has it and it is never taken for deleted.
      const sources = typeof listed === "function" ? await listed() : listed;
      const manifest = readManifest(root);
      const report: RefreshReport = { added: [], updated: [], removed: [], unchanged: 0, failed: [] };
      const wanted = new Set(sources.map((s) => s.name));
      for (const source of sources) {
        const had = manifest.skills[source.name];
        const rel = relDir(source.category, source.name);
        if (options.onlyChanged && had && had.version === source.version && had.dir === rel) {
          // The database did not change it since it was mirrored: a write of this process may be
          // between its folder and its database row, and is left to finish.
          report.unchanged++;
          continue;
        }
        // What is on disk, not only what the manifest says: a change made outside the skill tools
        // (or one the database refused) is not the database's state and does not stay.
        const onDisk = folderHash(join(root, ...rel.split("/")), source.name, source.category);
        if (onDisk === source.hash && (!had || had.dir === rel)) {
          // Already what the database holds (unchanged, or written by this instance's own tools
          // or by hand to the same bytes): adopt it without touching the folder.
          manifest.skills[source.name] = { dir: rel, version: source.version, hash: source.hash };
          report.unchanged++;
          continue;
        }
        let staged: string | undefined;
        try {
          const skill = await source.load();
          if (!skill) continue; // Deleted between the listing and the load: the next refresh sees it.
          staged = stage(root, skill);
          const target = inside(root, rel);
          // The mirror's own older copy goes; anything else of that name (a folder the mirror did not
          // write, or its own folder changed on disk since) is kept aside.
          moveAway(root, target, had?.dir === rel && onDisk === had.hash ? TMP : REPLACED);
          if (had && had.dir !== rel) {
            const old = inside(root, had.dir);
            moveAway(root, old, TMP);
            pruneEmpty(root, dirname(old));
          }
          mkdirSync(dirname(target), { recursive: true, mode: 0o755 });
          renameSync(staged, target);
          staged = undefined;
          manifest.skills[source.name] = { dir: rel, version: source.version, hash: source.hash };
          (had ? report.updated : report.added).push(source.name);
        } catch (error) {
          report.failed.push({
            name: source.name,
            error: error instanceof Error ? error.message : String(error),
          });
        } finally {
          if (staged) rmSync(staged, { recursive: true, force: true });
        }
      }
      for (const [name, had] of Object.entries(manifest.skills)) {
        if (wanted.has(name)) continue;
        try {
          const path = inside(root, had.dir);
          const category = had.dir.includes("/") ? (had.dir.split("/")[0] as string) : null;
          moveAway(root, path, folderHash(path, name, category) === had.hash ? TMP : REPLACED);
          pruneEmpty(root, dirname(path));
          delete manifest.skills[name];
          report.removed.push(name);
        } catch (error) {
          report.failed.push({ name, error: error instanceof Error ? error.message : String(error) });
        }
      }
      rmSync(join(root, TMP), { recursive: true, force: true });
      await atomicWriteFile(join(root, MIRROR_MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
      return report;
    },
    { lockPath, timeoutMs: 30_000 },
  );
}

/** Records in the manifest that the mirror's folder of `name` now holds `version` (after a local write was stored). */
export async function noteMirrored(
  mirrorDir: string,
  entry:
    | { name: string; category: string | null; version: number; hash: string }
    | { name: string; removed: true },
): Promise<void> {
  const root = realpathSync(mirrorDir);
  const lockPath = join(root, ".hermes-mirror.lock");
  await withFileLock(
    lockPath,
    async () => {
      const manifest = readManifest(root);
      if ("removed" in entry) delete manifest.skills[entry.name];
      else
        manifest.skills[entry.name] = {
          dir: relDir(entry.category, entry.name),
          version: entry.version,
          hash: entry.hash,
        };
      await atomicWriteFile(join(root, MIRROR_MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
    },
    { lockPath, timeoutMs: 30_000 },
  );
}
