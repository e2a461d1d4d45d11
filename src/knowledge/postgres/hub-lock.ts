/**
 * The hub's provenance of installed skills (`skills/.hub/lock.json`) in PostgreSQL: one row per
 * entry (`skill_hub_lock`, the entry as JSON text). Every reader keeps reading the home's
 * lock.json; this module keeps that file a copy of the database's entries, so a skill installed
 * from the hub on one instance is a hub skill on every instance, not the user's own.
 *
 * - `update` is lock.json's read-modify-write on the shared entries: one transaction under an
 *   advisory lock, only the entries that changed written, a `pg_notify` on the skills channel in
 *   the same transaction; the home's file is rewritten once it committed.
 * - `materialize` writes the home's file from the database (after a notification). An entry of the
 *   file the database lacks stays only while its folder is on disk and is not one the mirror keeps
 *   (a skill only this home has, never stored); one uninstalled elsewhere goes with its folder.
 */
import { existsSync } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { PgDatabase } from "../../state/postgres/database.js";
import { atomicWriteFile } from "../../util/atomic-write.js";
import { withFileLock } from "../../util/file-lock.js";
import { hubDir, lockPath, parseLock, skillsRoot } from "../skills/hub/lock.js";
import type { LockData, LockEntry, SharedHubLock } from "../skills/hub/lock-data.js";
import { readManifest } from "./skill-mirror.js";

export interface PgHubLock extends SharedHubLock {
  /** The database's entries, by skill name. */
  entries(): Promise<Record<string, LockEntry>>;
  /** Rewrites the home's lock.json from the database (see the file comment). */
  materialize(): Promise<void>;
  /**
   * Stores the home's lock.json entries the database lacks (moving a file home in), leaving the
   * file as it is; answers how many were added and how many the database had already.
   */
  importFile(): Promise<{ source: number; copied: number; present: number }>;
}

async function readFileLock(home: string): Promise<LockData | undefined> {
  let text: string;
  try {
    text = await readFile(lockPath(home), "utf8");
  } catch {
    return undefined;
  }
  try {
    return parseLock(text, lockPath(home));
  } catch {
    return undefined; // A broken file is the hub's to report; it is left as it is.
  }
}

const format = (data: LockData) => `${JSON.stringify(data, null, 2)}\n`;

export function pgHubLock(
  db: PgDatabase,
  home: string,
  options: { channel: string; now?: () => number },
): PgHubLock {
  const now = options.now ?? Date.now;

  async function entries(): Promise<Record<string, LockEntry>> {
    const rows = await db.query<{ name: string; entry: string }>(
      `SELECT name, entry FROM skill_hub_lock ORDER BY name COLLATE "C"`,
    );
    return toEntries(rows);
  }

  function toEntries(rows: ReadonlyArray<{ name: string; entry: string }>): Record<string, LockEntry> {
    const raw: Record<string, unknown> = {};
    for (const row of rows) {
      try {
        raw[row.name] = JSON.parse(row.entry);
      } catch {
        // A row nobody could have written through update(): left out rather than failing every read.
      }
    }
    // parseLock normalises each entry as a file's would be (missing strings become "").
    return parseLock(JSON.stringify({ version: 1, installed: raw })).installed;
  }

  /** Writes the home's lock.json to `installed` (under the file's flock), only when it differs. */
  async function writeFile(compute: (file: LockData | undefined) => LockData | undefined): Promise<void> {
    const path = lockPath(home);
    await mkdir(hubDir(home), { recursive: true });
    await withFileLock(path, async () => {
      const file = await readFileLock(home);
      const next = compute(file);
      if (!next) return;
      const text = format(next);
      const current = await readFile(path, "utf8").catch(() => undefined);
      if (current !== text) await atomicWriteFile(path, text);
    });
  }

  async function update<T>(change: (lock: LockData) => T | Promise<T>): Promise<T> {
    const { result, lock, removed } = await store(change);
    await writeFile((file) => ({
      ...(file ?? {}),
      version: file?.version ?? 1,
      installed: { ...localOnly(file, removed, lock.installed), ...lock.installed },
    }));
    return result;
  }

  /** The shared read-modify-write itself (see `update`), without touching the home's file. */
  function store<T>(change: (lock: LockData) => T | Promise<T>) {
    return db.tx(async (client) => {
      await client.query("SELECT pg_advisory_xact_lock(hashtext('hermes-skill-hub-lock'))");
      const rows = await client.query<{ name: string; entry: string }>(
        "SELECT name, entry FROM skill_hub_lock",
      );
      const before = new Map(rows.map((r) => [r.name, r.entry]));
      const lock: LockData = { version: 1, installed: toEntries(rows) };
      const result = await change(lock);
      let changed = false;
      for (const [name, entry] of Object.entries(lock.installed)) {
        const text = JSON.stringify(entry);
        if (before.get(name) === text) continue;
        changed = true;
        await client.query(
          `INSERT INTO skill_hub_lock (name, entry, updated_at) VALUES ($1, $2, $3)
           ON CONFLICT (name) DO UPDATE SET entry = EXCLUDED.entry, updated_at = EXCLUDED.updated_at`,
          [name, text, now() / 1000],
        );
      }
      const removed = new Set<string>();
      for (const name of before.keys()) {
        if (Object.hasOwn(lock.installed, name)) continue;
        changed = true;
        removed.add(name);
        await client.query("DELETE FROM skill_hub_lock WHERE name = $1", [name]);
      }
      if (changed) {
        await client.query("SELECT pg_notify($1, $2)", [options.channel, JSON.stringify({ op: "hub-lock" })]);
      }
      return { result, lock, removed };
    });
  }

  /** The file's entries for skills the database neither lists in its lock nor drops (`dropped`). */
  function localOnly(
    file: LockData | undefined,
    dropped: ReadonlySet<string>,
    shared: Record<string, LockEntry>,
  ): Record<string, LockEntry> {
    const kept: Record<string, LockEntry> = {};
    const mirrored = readManifest(skillsRoot(home)).skills;
    for (const [name, entry] of Object.entries(file?.installed ?? {})) {
      if (Object.hasOwn(shared, name) || dropped.has(name) || Object.hasOwn(mirrored, name)) continue;
      const parts = entry.install_path.split("/").filter((p) => p && p !== "." && p !== "..");
      if (parts.length > 0 && existsSync(join(skillsRoot(home), ...parts))) kept[name] = entry;
    }
    return kept;
  }

  async function materialize(): Promise<void> {
    const shared = await entries();
    await writeFile((file) => {
      if (!file && Object.keys(shared).length === 0) return undefined; // Nothing to say: no file.
      return {
        ...(file ?? {}),
        version: file?.version ?? 1,
        installed: { ...localOnly(file, new Set(), shared), ...shared },
      };
    });
  }

  async function importFile() {
    const file = await readFileLock(home);
    const counts = { source: 0, copied: 0, present: 0 };
    if (!file) return counts;
    await store((lock) => {
      for (const [name, entry] of Object.entries(file.installed)) {
        counts.source++;
        if (Object.hasOwn(lock.installed, name)) counts.present++;
        else {
          lock.installed[name] = entry;
          counts.copied++;
        }
      }
    });
    return counts;
  }

  return { update, entries, materialize, importFile };
}
