/**
 * Skills in PostgreSQL, the source of truth when the state backend is postgres: each skill's row
 * (`skills`: name, category, version, digest) and its files (`skill_files`: path, mode, bytes).
 * Every instance keeps a mirror folder of them (`skill-mirror.ts`) that the skill tools read and
 * write and whose scripts run from disk; `refresh()` brings it to the database's state.
 *
 * Writes: `put`/`remove` check the skill (`skill-files.ts`), take the skill's row lock, bump its
 * version from one sequence (so versions order every change) and `pg_notify` the
 * {@link SKILLS_CHANGED_CHANNEL} in the same transaction, which listeners see once it commits.
 * An expected version makes a write conditional: an instance whose copy is stale is refused
 * instead of overwriting a newer change. `sink()` is the seam the skill tools take
 * (`SkillWriteSink`): after they changed the mirror folder, the folder is stored; when another
 * instance changed the skill first, the folder is put back as the database holds it.
 */
import { existsSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { basename, dirname, join, relative, sep } from "node:path";
import type { PgDatabase, PgQueryable } from "../../state/postgres/database.js";
import { EXCLUDED_DIRS, isInside } from "../skills/paths.js";
import type { ReconcileOptions, SkillReconcileReport, SkillWriteSink } from "../skills/types.js";
import { checkSkill, readSkillFolder, type StoredSkill, skillHash } from "./skill-files.js";
import { checkExpected, currentVersion, nextVersion, SkillConflictError } from "./skill-versions.js";

export { SkillConflictError } from "./skill-versions.js";

import { archiveSources, archiveWith, unarchiveWith } from "./skill-archive.js";
import {
  MIRROR_MANIFEST,
  type MirrorSource,
  noteMirrored,
  type RefreshOptions,
  type RefreshReport,
  readManifest,
  refreshMirror,
} from "./skill-mirror.js";
import { storeRestoredTree } from "./skill-tree.js";

/** The NOTIFY channel a skill change is announced on (payload: `{"name","version","op"}`). */
export const SKILLS_CHANGED_CHANNEL = "hermes_skills_changed";

export interface StoredSkillInfo {
  name: string;
  category: string | null;
  version: number;
  hash: string;
  totalBytes: number;
  fileCount: number;
  updatedAt: number;
}

export interface PutOptions {
  /** null: the skill must not exist yet; a number: the version it must have; absent: any. */
  expectedVersion?: number | null;
}

export interface ImportReport {
  imported: string[];
  unchanged: string[];
  skipped: Array<{ path: string; reason: string }>;
}

export interface PgSkillLibrary {
  readonly channel: string;
  readonly mirrorDir: string;
  list(): Promise<StoredSkillInfo[]>;
  read(name: string): Promise<(StoredSkill & { version: number; hash: string }) | undefined>;
  /** Stores a skill (checked first); answers its new version. */
  put(skill: StoredSkill, options?: PutOptions): Promise<number>;
  /** Deletes a skill; false when there was none. */
  remove(name: string, options?: PutOptions): Promise<boolean>;
  /** Stores every skill folder of a skills directory (`<home>/skills`) that differs from the database. */
  importDirectory(skillsDir: string): Promise<ImportReport>;
  /** Brings the mirror folder to the database's state (new, changed and deleted skills). */
  refresh(options?: RefreshOptions): Promise<RefreshReport>;
  /** The skill tools' seam: store what they changed in the mirror folder (see the file comment). */
  sink(): SkillWriteSink;
  /** Stores a checked skill on `client`, inside the caller's transaction (locks, versions, notify). */
  putIn(client: PgQueryable, skill: StoredSkill, options?: PutOptions): Promise<number>;
}

function toInfo(row: Record<string, unknown>): StoredSkillInfo {
  return {
    name: String(row["name"]),
    category: (row["category"] as string | null) ?? null,
    version: Number(row["version"]),
    hash: String(row["hash"]),
    totalBytes: Number(row["total_bytes"]),
    fileCount: Number(row["file_count"] ?? 0),
    updatedAt: Number(row["updated_at"]),
  };
}

/** Names in the skills folder's `.bundled_manifest` (`name:hash` lines). */
function bundledNames(skillsDir: string): Set<string> {
  try {
    const text = readFileSync(join(skillsDir, ".bundled_manifest"), "utf8");
    return new Set(
      text
        .split(/\r?\n/)
        .map((line) => line.split(":")[0]?.trim() ?? "")
        .filter(Boolean),
    );
  } catch {
    return new Set();
  }
}

export function pgSkillLibrary(
  db: PgDatabase,
  mirrorDir: string,
  options: { now?: () => number } = {},
): PgSkillLibrary {
  const now = options.now ?? Date.now;
  const archiveDir = join(mirrorDir, ".archive");

  const notify = (client: PgQueryable, name: string, version: number, op: string) =>
    client.query("SELECT pg_notify($1, $2)", [SKILLS_CHANGED_CHANNEL, JSON.stringify({ name, version, op })]);

  async function read(name: string) {
    const head = await db.query("SELECT name, category, version, hash FROM skills WHERE name = $1", [name]);
    const row = head[0];
    if (!row) return undefined;
    const files = await db.query<{ path: string; mode: number; content: Buffer }>(
      `SELECT path, mode, content FROM skill_files WHERE skill = $1 ORDER BY path COLLATE "C"`,
      [name],
    );
    return {
      name,
      category: (row["category"] as string | null) ?? null,
      version: Number(row["version"]),
      hash: String(row["hash"]),
      files: files.map((f) => ({ path: f.path, mode: Number(f.mode), content: f.content })),
    };
  }

  /** Stores a checked skill on `client` (inside the caller's transaction); answers its new version. */
  async function putWith(client: PgQueryable, checked: StoredSkill, putOptions: PutOptions): Promise<number> {
    const hash = skillHash(checked);
    const total = checked.files.reduce((n, f) => n + f.content.length, 0);
    // Creating a skill locks its name even before the row exists.
    await client.query("SELECT pg_advisory_xact_lock(hashtext('hermes-skill:' || $1))", [checked.name]);
    checkExpected(checked.name, putOptions.expectedVersion, await currentVersion(client, checked.name));
    const version = await nextVersion(client);
    await client.query(
      `INSERT INTO skills (name, category, version, hash, total_bytes, updated_at) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (name) DO UPDATE SET category = EXCLUDED.category, version = EXCLUDED.version,
         hash = EXCLUDED.hash, total_bytes = EXCLUDED.total_bytes, updated_at = EXCLUDED.updated_at`,
      [checked.name, checked.category, version, hash, total, now() / 1000],
    );
    await client.query("DELETE FROM skill_files WHERE skill = $1", [checked.name]);
    for (const file of checked.files) {
      await client.query("INSERT INTO skill_files (skill, path, mode, content) VALUES ($1, $2, $3, $4)", [
        checked.name,
        file.path,
        file.mode,
        file.content,
      ]);
    }
    await notify(client, checked.name, version, "put");
    return version;
  }

  async function put(skill: StoredSkill, putOptions: PutOptions = {}): Promise<number> {
    const checked = checkSkill(skill);
    return db.tx((client) => putWith(client, checked, putOptions));
  }

  async function remove(name: string, putOptions: PutOptions = {}): Promise<boolean> {
    return db.tx(async (client) => {
      await client.query("SELECT pg_advisory_xact_lock(hashtext('hermes-skill:' || $1))", [name]);
      const current = await currentVersion(client, name);
      checkExpected(name, putOptions.expectedVersion, current);
      if (current === null) return false;
      await client.query("DELETE FROM skills WHERE name = $1", [name]);
      await notify(client, name, await nextVersion(client), "delete");
      return true;
    });
  }

  async function list(): Promise<StoredSkillInfo[]> {
    const rows = await db.query(
      `SELECT s.name, s.category, s.version, s.hash, s.total_bytes, s.updated_at,
              (SELECT count(*) FROM skill_files f WHERE f.skill = s.name) AS file_count
       FROM skills s ORDER BY s.name`,
    );
    return rows.map(toInfo);
  }

  async function refresh(options: RefreshOptions = {}): Promise<RefreshReport> {
    const sources = async (): Promise<MirrorSource[]> =>
      (await list()).map((info) => ({ ...info, load: () => read(info.name) }));
    const report = await refreshMirror(mirrorDir, sources, options);
    // The archive mirrors into skills/.archive/ the same way (only once there is one to mirror).
    const archived = await archiveSources(db);
    if (archived.length > 0 || existsSync(join(archiveDir, MIRROR_MANIFEST))) {
      const more = await refreshMirror(archiveDir, () => archiveSources(db), options);
      report.failed.push(...more.failed.map((f) => ({ ...f, name: `.archive/${f.name}` })));
    }
    return report;
  }

  /** The skill's category and name as its folder sits in the mirror, or undefined outside it. */
  function placeInMirror(dir: string): { category: string | null } | undefined {
    let root: string;
    let real: string;
    try {
      root = realpathSync(mirrorDir);
      real = realpathSync(dir);
    } catch {
      return undefined;
    }
    if (!isInside(root, real) || root === real) return undefined;
    const parts = relative(root, real).split(sep);
    if (parts.length === 1) return { category: null };
    if (parts.length === 2) return { category: parts[0] as string };
    return undefined;
  }

  /** Puts the mirror back as the database holds it (after a refused write). */
  const restore = () =>
    refresh().then(
      () => undefined,
      () => undefined,
    );

  /** Whether a deleted folder `path` was in the mirror folder (its nearest existing ancestor is). */
  function wasInMirror(path: string): boolean {
    let probe = dirname(path);
    while (!existsSync(probe) && dirname(probe) !== probe) probe = dirname(probe);
    try {
      return isInside(realpathSync(mirrorDir), realpathSync(probe));
    } catch {
      return false;
    }
  }

  function sink(): SkillWriteSink {
    return {
      async saved({ name, dir, created }) {
        const place = placeInMirror(dir);
        if (!place) return; // An external skills folder: this instance's own, not the library's.
        const expected = created ? null : (readManifest(mirrorDir).skills[name]?.version ?? null);
        const skill = checkSkill({ name, category: place.category, files: readSkillFolder(dir) });
        try {
          const version = await put(skill, { expectedVersion: expected });
          await noteMirrored(mirrorDir, { name, category: place.category, version, hash: skillHash(skill) });
        } catch (error) {
          if (error instanceof SkillConflictError) await restore();
          throw error;
        }
      },
      async archived({ name, to }) {
        const expected = readManifest(mirrorDir).skills[name]?.version;
        if (expected === undefined) return; // Not a skill the database holds: this home's own.
        const archived = checkSkill({ name: basename(to), category: null, files: readSkillFolder(to) });
        const version = await db.tx((client) =>
          archiveWith(
            client,
            { name, expectedVersion: expected, archived, nowSeconds: now() / 1000 },
            notify,
          ),
        );
        await noteMirrored(mirrorDir, { name, removed: true });
        await noteMirrored(archiveDir, {
          name: archived.name,
          category: null,
          version,
          hash: skillHash(archived),
        });
      },
      async restored({ name, from, to }) {
        const place = placeInMirror(to);
        if (!place) return;
        const skill = checkSkill({ name, category: place.category, files: readSkillFolder(to) });
        const folder = basename(from);
        const version = await db.tx(async (client) => {
          const v = await putWith(client, skill, { expectedVersion: null });
          await unarchiveWith(client, folder);
          return v;
        });
        await noteMirrored(mirrorDir, { name, category: place.category, version, hash: skillHash(skill) });
        if (existsSync(archiveDir)) await noteMirrored(archiveDir, { name: folder, removed: true });
      },
      reconcile: (options = {}) => reconcile(options),
      async deleted({ name, dir }) {
        const expected = readManifest(mirrorDir).skills[name]?.version;
        if (expected === undefined && !wasInMirror(dir)) return; // An external folder: not the library's.
        try {
          await remove(name, expected === undefined ? {} : { expectedVersion: expected });
          await noteMirrored(mirrorDir, { name, removed: true });
        } catch (error) {
          if (error instanceof SkillConflictError) await restore();
          throw error;
        }
      },
    };
  }

  /** Skill folders of the mirror (`<name>` or `<category>/<name>` holding a SKILL.md), by name. */
  function foldersOnDisk(): Map<string, { dir: string; category: string | null }> {
    const found = new Map<string, { dir: string; category: string | null }>();
    const visible = (dir: string) => {
      try {
        return readdirSync(dir, { withFileTypes: true }).filter(
          (e) => e.isDirectory() && !e.name.startsWith(".") && !EXCLUDED_DIRS.has(e.name),
        );
      } catch {
        return [];
      }
    };
    for (const top of visible(mirrorDir)) {
      const dir = join(mirrorDir, top.name);
      if (existsSync(join(dir, "SKILL.md"))) {
        found.set(top.name, { dir, category: null });
        continue;
      }
      for (const inner of visible(dir)) {
        const sub = join(dir, inner.name);
        if (existsSync(join(sub, "SKILL.md")) && !found.has(inner.name)) {
          found.set(inner.name, { dir: sub, category: top.name });
        }
      }
    }
    return found;
  }

  async function reconcile(options: ReconcileOptions) {
    if (options.tree) {
      const report = await storeRestoredTree({
        db,
        mirrorDir,
        onDisk: foldersOnDisk(),
        mirrored: new Set(Object.keys(readManifest(mirrorDir).skills)),
        bundled: bundledNames(mirrorDir),
        putIn: (client, skill, putOptions) => putWith(client, checkSkill(skill), putOptions),
        notify,
        now,
      });
      if (report.failed.length === 0) {
        dropLocalArchive(report.unarchived);
        await refresh();
      }
      return report;
    }
    const report: SkillReconcileReport = { stored: [], deleted: [], failed: [] };
    const manifest = readManifest(mirrorDir).skills;
    const onDisk = foldersOnDisk();
    const bundled = bundledNames(mirrorDir);
    const names =
      options.names ??
      [...new Set([...Object.keys(manifest), ...(options.includeNew ? onDisk.keys() : [])])].sort();
    for (const name of names) {
      const had = manifest[name];
      const folder = onDisk.get(name);
      try {
        if (!had) {
          if (!options.includeNew || !folder || bundled.has(name)) continue;
          const skill = checkSkill({ name, category: folder.category, files: readSkillFolder(folder.dir) });
          const version = await put(skill, { expectedVersion: null });
          await noteMirrored(mirrorDir, { name, category: folder.category, version, hash: skillHash(skill) });
          report.stored.push(name);
        } else if (!folder) {
          await remove(name, { expectedVersion: had.version });
          await noteMirrored(mirrorDir, { name, removed: true });
          report.deleted.push(name);
        } else {
          const skill = checkSkill({ name, category: folder.category, files: readSkillFolder(folder.dir) });
          const hash = skillHash(skill);
          if (hash === had.hash && had.dir === (folder.category ? `${folder.category}/${name}` : name))
            continue;
          const version = await put(skill, { expectedVersion: had.version });
          await noteMirrored(mirrorDir, { name, category: folder.category, version, hash });
          report.stored.push(name);
        }
      } catch (error) {
        report.failed.push({ name, error: error instanceof Error ? error.message : String(error) });
      }
    }
    return report;
  }

  async function importDirectory(skillsDir: string): Promise<ImportReport> {
    const report: ImportReport = { imported: [], unchanged: [], skipped: [] };
    const bundled = bundledNames(skillsDir);
    const known = new Map((await list()).map((s) => [s.name, s.hash]));
    const visit = async (dir: string, rel: string[]) => {
      if (existsSync(join(dir, "SKILL.md"))) {
        const name = rel.at(-1) as string;
        const where = rel.join("/");
        if (bundled.has(name)) {
          report.skipped.push({ path: where, reason: "a bundled skill (every instance seeds its own copy)" });
          return;
        }
        if (rel.length > 2) {
          report.skipped.push({ path: where, reason: "nested deeper than <category>/<name>" });
          return;
        }
        try {
          const skill = checkSkill({
            name,
            category: rel.length === 2 ? (rel[0] as string) : null,
            files: readSkillFolder(dir),
          });
          if (known.get(name) === skillHash(skill)) report.unchanged.push(name);
          else {
            await put(skill);
            known.set(name, skillHash(skill));
            report.imported.push(name);
          }
        } catch (error) {
          report.skipped.push({
            path: where,
            reason: error instanceof Error ? error.message : String(error),
          });
        }
        return;
      }
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (!entry.isDirectory() || entry.name.startsWith(".") || EXCLUDED_DIRS.has(entry.name)) continue;
        await visit(join(dir, entry.name), [...rel, entry.name]);
      }
    };
    if (existsSync(skillsDir)) await visit(skillsDir, []);
    return report;
  }

  /** Removes this instance's `.archive/<folder>` of entries the tree change dropped (names from disk). */
  function dropLocalArchive(folders: readonly string[]): void {
    const onDisk = new Set(existsSync(archiveDir) ? readdirSync(archiveDir) : []);
    for (const folder of folders) {
      if (!onDisk.has(folder) || folder.startsWith(".")) continue;
      const path = join(archiveDir, folder);
      if (dirname(path) === archiveDir) rmSync(path, { recursive: true, force: true });
    }
  }

  return {
    channel: SKILLS_CHANGED_CHANNEL,
    mirrorDir,
    putIn: (client, skill, putOptions = {}) => putWith(client, checkSkill(skill), putOptions),
    list,
    read,
    put,
    remove,
    importDirectory,
    refresh,
    sink,
  };
}
