/**
 * The curator's archive in PostgreSQL (`skill_archive`, `skill_archive_files`): each archived
 * folder of `skills/.archive/` with its files, so a skill archived on one instance is listed and
 * restorable on every instance (each mirrors the archive into its own `skills/.archive/`).
 *
 * Archiving and restoring each move a skill in ONE transaction (the skill's row and the archive's
 * row change together, under the skill's advisory lock, with the same version checks as any skill
 * write), so no instance ever sees a skill both live and archived, or neither.
 */
import type { PgDatabase, PgQueryable } from "../../state/postgres/database.js";
import { type StoredSkill, skillHash } from "./skill-files.js";
import type { MirrorSource } from "./skill-mirror.js";
import { checkExpected, currentVersion, nextVersion } from "./skill-versions.js";

export interface ArchivedRow {
  folder: string;
  name: string;
  version: number;
  hash: string;
}

/**
 * Moves live skill `name` into the archive as `folder` (its files as archived: `files.name` is the
 * folder). `expectedVersion`: the version this instance's copy had. Answers the archive's version.
 */
export async function archiveWith(
  client: PgQueryable,
  change: { name: string; expectedVersion: number; archived: StoredSkill; nowSeconds: number },
  notify: (client: PgQueryable, name: string, version: number, op: string) => Promise<unknown>,
): Promise<number> {
  const { name, archived } = change;
  await client.query("SELECT pg_advisory_xact_lock(hashtext('hermes-skill:' || $1))", [name]);
  checkExpected(name, change.expectedVersion, await currentVersion(client, name));
  const version = await nextVersion(client);
  await putArchiveWith(client, { name, archived, version, nowSeconds: change.nowSeconds });
  await client.query("DELETE FROM skills WHERE name = $1", [name]);
  await notify(client, name, version, "archive");
  return version;
}

/** Stores archived folder `archived.name` (of live skill `name`) with its files, at `version`. */
export async function putArchiveWith(
  client: PgQueryable,
  row: { name: string; archived: StoredSkill; version: number; nowSeconds: number },
): Promise<void> {
  const { archived } = row;
  const total = archived.files.reduce((n, f) => n + f.content.length, 0);
  await client.query(
    `INSERT INTO skill_archive (folder, name, version, hash, total_bytes, archived_at) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (folder) DO UPDATE SET name = EXCLUDED.name, version = EXCLUDED.version, hash = EXCLUDED.hash,
       total_bytes = EXCLUDED.total_bytes, archived_at = EXCLUDED.archived_at`,
    [archived.name, row.name, row.version, skillHash(archived), total, row.nowSeconds],
  );
  await client.query("DELETE FROM skill_archive_files WHERE folder = $1", [archived.name]);
  for (const file of archived.files) {
    await client.query(
      "INSERT INTO skill_archive_files (folder, path, mode, content) VALUES ($1, $2, $3, $4)",
      [archived.name, file.path, file.mode, file.content],
    );
  }
}

/** Drops archived `folder` (its skill was just stored live again in the same transaction). */
export async function unarchiveWith(client: PgQueryable, folder: string): Promise<void> {
  await client.query("DELETE FROM skill_archive WHERE folder = $1", [folder]);
}

export async function listArchive(db: PgQueryable): Promise<ArchivedRow[]> {
  const rows = await db.query<{ folder: string; name: string; version: string; hash: string }>(
    `SELECT folder, name, version, hash FROM skill_archive ORDER BY folder COLLATE "C"`,
  );
  return rows.map((r) => ({ folder: r.folder, name: r.name, version: Number(r.version), hash: r.hash }));
}

/** The archive as mirror sources: each folder a top-level "skill" of `skills/.archive/`. */
export async function archiveSources(db: PgDatabase): Promise<MirrorSource[]> {
  return (await listArchive(db)).map((row) => ({
    name: row.folder,
    category: null,
    version: row.version,
    hash: row.hash,
    async load() {
      const files = await db.query<{ path: string; mode: number; content: Buffer }>(
        `SELECT path, mode, content FROM skill_archive_files WHERE folder = $1 ORDER BY path COLLATE "C"`,
        [row.folder],
      );
      if (files.length === 0) return undefined;
      return {
        name: row.folder,
        category: null,
        files: files.map((f) => ({ path: f.path, mode: Number(f.mode), content: f.content })),
      };
    },
  }));
}
