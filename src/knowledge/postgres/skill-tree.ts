/**
 * Storing a whole restored skills tree (a curator rollback) in ONE transaction: the live skills
 * (`skills`) and the curator's archive (`skill_archive`) both become what the restored folder
 * holds, so no instance ever sees the rollback half applied, and the two tables agree with each
 * other: an archived entry whose skill is live again is dropped (the live copy wins), and a skill
 * the restored tree holds only in `.archive/` is no longer live.
 *
 * Every folder is read and checked (`checkSkill`) before the transaction starts; one that fails
 * fails the whole change and nothing is stored (the report names it). Names come from folder
 * names that pass the same rules as any skill name, so a row written here never names a path.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { PgDatabase, PgQueryable } from "../../state/postgres/database.js";
import { parseSkillMarkdown } from "../skills/frontmatter.js";
import { EXCLUDED_DIRS } from "../skills/paths.js";
import type { SkillReconcileReport } from "../skills/types.js";
import { putArchiveWith } from "./skill-archive.js";
import { checkSkill, readSkillFolder, type StoredSkill, skillHash } from "./skill-files.js";
import { nextVersion } from "./skill-versions.js";

export interface TreeReport extends SkillReconcileReport {
  /** Archive folders stored or updated. */
  archived: string[];
  /** Archive folders dropped (gone from the tree, or their skill is live). */
  unarchived: string[];
}

export interface TreeDeps {
  db: PgDatabase;
  /** `<home>/skills`. */
  mirrorDir: string;
  /** The live skill folders on disk, by name. */
  onDisk: Map<string, { dir: string; category: string | null }>;
  /** Skills this instance's mirror holds (its manifest): the only ones a missing folder deletes. */
  mirrored: ReadonlySet<string>;
  /** Bundled skills seeded locally (never stored unless the database already holds them). */
  bundled: ReadonlySet<string>;
  putIn(
    client: PgQueryable,
    skill: StoredSkill,
    options: { expectedVersion?: number | null },
  ): Promise<number>;
  notify(client: PgQueryable, name: string, version: number, op: string): Promise<unknown>;
  now?: () => number;
}

/** Archive folders of `skills/.archive/` (each a folder holding SKILL.md), with the skill each holds. */
function archiveOnDisk(archiveDir: string): Map<string, { dir: string; name: string }> {
  const found = new Map<string, { dir: string; name: string }>();
  let entries: import("node:fs").Dirent[];
  try {
    entries = readdirSync(archiveDir, { withFileTypes: true });
  } catch {
    return found;
  }
  for (const entry of entries) {
    if (!entry.isDirectory() || entry.name.startsWith(".") || EXCLUDED_DIRS.has(entry.name)) continue;
    const dir = join(archiveDir, entry.name);
    const file = join(dir, "SKILL.md");
    if (!existsSync(file)) continue;
    let name = entry.name;
    try {
      name = parseSkillMarkdown(readFileSync(file, "utf8"), undefined, { fallbackName: entry.name })
        .frontmatter.name;
    } catch {
      // The folder's name stands for the skill's.
    }
    found.set(entry.name, { dir, name });
  }
  return found;
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** Stores the restored tree (see the file comment); the report lists what changed or what refused. */
export async function storeRestoredTree(deps: TreeDeps): Promise<TreeReport> {
  const report: TreeReport = { stored: [], deleted: [], failed: [], archived: [], unarchived: [] };
  const nowSeconds = (deps.now ?? Date.now)() / 1000;
  // Read and check everything first: a bad folder refuses the whole change before anything is written.
  const live = new Map<string, StoredSkill>();
  for (const [name, folder] of deps.onDisk) {
    try {
      live.set(name, checkSkill({ name, category: folder.category, files: readSkillFolder(folder.dir) }));
    } catch (error) {
      report.failed.push({ name, error: message(error) });
    }
  }
  const archive = new Map<string, { name: string; skill: StoredSkill }>();
  for (const [folder, found] of archiveOnDisk(join(deps.mirrorDir, ".archive"))) {
    try {
      archive.set(folder, {
        name: found.name,
        skill: checkSkill({ name: folder, category: null, files: readSkillFolder(found.dir) }),
      });
    } catch (error) {
      report.failed.push({ name: `.archive/${folder}`, error: message(error) });
    }
  }
  if (report.failed.length > 0) return report;

  await deps.db.tx(async (client) => {
    await client.query("SELECT pg_advisory_xact_lock(hashtext('hermes-skill-tree'))");
    const held = new Map(
      (await client.query<{ name: string; hash: string }>("SELECT name, hash FROM skills FOR UPDATE")).map(
        (r) => [r.name, r.hash],
      ),
    );
    const rows = new Map(
      (
        await client.query<{ folder: string; hash: string }>(
          "SELECT folder, hash FROM skill_archive FOR UPDATE",
        )
      ).map((r) => [r.folder, r.hash]),
    );
    const archivedNames = new Set([...archive.values()].map((a) => a.name));
    for (const [name, skill] of live) {
      const hash = held.get(name);
      if (hash === skillHash(skill)) continue;
      // A bundled seed the database never held stays this instance's own.
      if (hash === undefined && deps.bundled.has(name) && !deps.mirrored.has(name)) continue;
      await deps.putIn(client, skill, {});
      report.stored.push(name);
    }
    for (const name of held.keys()) {
      if (live.has(name) || !(deps.mirrored.has(name) || archivedNames.has(name))) continue;
      await client.query("SELECT pg_advisory_xact_lock(hashtext('hermes-skill:' || $1))", [name]);
      await client.query("DELETE FROM skills WHERE name = $1", [name]);
      await deps.notify(client, name, await nextVersion(client), "delete");
      report.deleted.push(name);
    }
    for (const [folder, found] of archive) {
      if (live.has(found.name)) continue; // Live again: dropped below if the database has it.
      if (rows.get(folder) === skillHash(found.skill)) continue;
      const version = await nextVersion(client);
      await putArchiveWith(client, { name: found.name, archived: found.skill, version, nowSeconds });
      await deps.notify(client, found.name, version, "archive");
      report.archived.push(folder);
    }
    const dropped = await client.query<{ folder: string; name: string }>(
      "SELECT folder, name FROM skill_archive WHERE NOT (folder = ANY($1::text[])) OR name = ANY($2::text[])",
      [[...archive.keys()].filter((f) => !live.has(archive.get(f)?.name ?? "")), [...live.keys()]],
    );
    for (const row of dropped) {
      await client.query("DELETE FROM skill_archive WHERE folder = $1", [row.folder]);
      await deps.notify(client, row.name, await nextVersion(client), "unarchive");
      report.unarchived.push(row.folder);
    }
  });
  return report;
}
