/**
 * Bundled-skill updates for the copies a postgres home keeps in its database. A bundled skill
 * enters the database when someone writes it (an edit through the skill tools, a bundled reset);
 * from then on the local seeding leaves it to this pass (`sharedSkillNames` in bundled.ts), which
 * applies the file home's rule to the shared copy: a newer bundled version replaces the database's
 * copy only while that copy is still the bundled one it was seeded from; an edited copy is kept.
 *
 * What the copy was seeded from is `skill_bundled_seeds` (the digests of the bundled copies it
 * was seeded from, the newest last), shared by every instance; a bundled copy seeded before is an
 * older build's, never put back. Before a row exists, this instance's `.bundled_manifest` speaks for it: the
 * mirror's folder (the database's copy, refreshed just before) hashing to the recorded digest
 * means it was never edited. The replacement is one conditional write: under the skill's advisory
 * lock, only when the row still has the version and digest that were judged, so instances that
 * start together update it once, and an older build starting later never downgrades it (its
 * bundled copy is not what the row was seeded from). The write is announced on the skills channel
 * in its transaction, like every skill write, so each instance's mirror follows.
 */
import { join } from "node:path";
import type { PgDatabase, PgQueryable } from "../../state/postgres/database.js";
import { atomicWriteFileSync } from "../../util/atomic-write.js";
import { listBundled } from "../skills/bundled.js";
import { isOptedOut, readSuppressed } from "../skills/bundled-opt-out.js";
import { skillDirHash } from "../skills/dir-hash.js";
import { formatBundledManifest, manifestPath, readBundledManifest } from "../skills/provenance.js";
import { checkSkill, readSkillFolder, type StoredSkill, skillHash } from "./skill-files.js";
import { readManifest } from "./skill-mirror.js";
import { SkillConflictError } from "./skill-versions.js";

export interface SharedSeedReport {
  /** Database copies replaced by the newer bundled version. */
  updated: string[];
  /** Database copies already equal to the bundled version (another instance updated them). */
  current: string[];
  /** Skills whose bundled copy here was seeded before (this build is older than the one that updated them). */
  older: string[];
  /** Database copies the user edited: kept. */
  userModified: string[];
  failed: Array<{ name: string; error: string }>;
}

export interface SharedSeedDeps {
  db: PgDatabase;
  home: string;
  /** The skills folder the database is mirrored into (`<home>/skills`). */
  mirrorDir: string;
  bundledDir: string | undefined;
  /** Stores `skill` on `client` inside its transaction when it still has `expectedVersion`. */
  putIn(client: PgQueryable, skill: StoredSkill, options: { expectedVersion: number }): Promise<number>;
  now?: () => number;
}

/** Runs the pass (see the file comment). Never throws for one skill: it lands in `failed`. */
export async function seedSharedBundled(deps: SharedSeedDeps): Promise<SharedSeedReport> {
  const report: SharedSeedReport = { updated: [], current: [], older: [], userModified: [], failed: [] };
  const { db, home, bundledDir } = deps;
  if (!bundledDir || isOptedOut(home)) return report;
  const held = new Map(
    (
      await db.query<{ name: string; category: string | null; version: string; hash: string }>(
        "SELECT name, category, version, hash FROM skills",
      )
    ).map((r) => [r.name, { category: r.category, version: Number(r.version), hash: r.hash }]),
  );
  const suppressed = readSuppressed(home);
  const due = listBundled(bundledDir).filter((b) => held.has(b.name) && !suppressed.has(b.name));
  if (due.length === 0) return report;
  const seeds = new Map<string, string>();
  const seen = new Set<string>();
  const rows = await db.query<{ name: string; hash: string }>(
    "SELECT name, hash FROM skill_bundled_seeds ORDER BY updated_at, hash",
  );
  for (const r of rows) {
    seeds.set(r.name, r.hash); // The newest last.
    seen.add(`${r.name}\0${r.hash}`);
  }
  const manifest = readBundledManifest(home);
  const before = formatBundledManifest(manifest);
  const mirrored = readManifest(deps.mirrorDir).skills;
  const seconds = () => (deps.now ?? Date.now)() / 1000;
  const recordSeed = (client: PgQueryable, name: string, hash: string) =>
    client.query(
      `INSERT INTO skill_bundled_seeds (name, hash, updated_at) VALUES ($1, $2, $3)
       ON CONFLICT (name, hash) DO UPDATE SET updated_at = EXCLUDED.updated_at`,
      [name, hash, seconds()],
    );

  for (const source of due) {
    const row = held.get(source.name) as { category: string | null; version: number; hash: string };
    try {
      // The bundled copy as the database would hold it, where the database keeps the skill.
      const bundled = checkSkill({
        name: source.name,
        category: row.category,
        files: readSkillFolder(source.dir),
      });
      const bundledHash = skillHash(bundled);
      const bundledDirHash = skillDirHash(source.dir);
      if (row.hash === bundledHash) {
        if (seeds.get(source.name) !== bundledHash) await recordSeed(db, source.name, bundledHash);
        manifest.set(source.name, bundledDirHash);
        report.current.push(source.name);
        continue;
      }
      if (seen.has(`${source.name}\0${bundledHash}`)) {
        report.older.push(source.name);
        continue;
      }
      if (!seededUnchanged(source.name, row.hash, seeds, manifest, mirrored, deps.mirrorDir)) {
        report.userModified.push(source.name);
        continue;
      }
      await db.tx(async (client) => {
        await client.query("SELECT pg_advisory_xact_lock(hashtext('hermes-skill:' || $1))", [source.name]);
        const now = await client.query<{ version: string; hash: string }>(
          "SELECT version, hash FROM skills WHERE name = $1 FOR UPDATE",
          [source.name],
        );
        if (Number(now[0]?.version) !== row.version || now[0]?.hash !== row.hash) {
          throw new SkillConflictError(`${source.name} changed on another instance meanwhile`, null);
        }
        await deps.putIn(client, bundled, { expectedVersion: row.version });
        await recordSeed(client, source.name, bundledHash);
      });
      manifest.set(source.name, bundledDirHash);
      report.updated.push(source.name);
    } catch (error) {
      if (error instanceof SkillConflictError) continue; // Judged again at the next start.
      report.failed.push({
        name: source.name,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
  const after = formatBundledManifest(manifest);
  if (after !== before) atomicWriteFileSync(manifestPath(home), after);
  return report;
}

/**
 * Whether the database's copy (digest `current`) is still the bundled copy it was seeded from:
 * the shared seed record says so, or, before there is one, this instance's `.bundled_manifest`
 * digest matches the mirror's folder, which holds the database's copy.
 */
function seededUnchanged(
  name: string,
  current: string,
  seeds: ReadonlyMap<string, string>,
  manifest: ReadonlyMap<string, string>,
  mirrored: Record<string, { dir: string; hash: string }>,
  mirrorDir: string,
): boolean {
  const seed = seeds.get(name);
  if (seed !== undefined) return seed === current;
  const recorded = manifest.get(name);
  const entry = mirrored[name];
  if (!recorded || !entry || entry.hash !== current) return false;
  if (entry.dir.split("/").some((part) => part === ".." || part === "" || part.startsWith("."))) return false;
  return skillDirHash(join(mirrorDir, ...entry.dir.split("/"))) === recorded;
}
