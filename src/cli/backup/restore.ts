/**
 * `hermes import FILE`: a backup zip back into a home. Every member is judged first (nothing lands
 * outside the home, nothing is written through a symlink, the source machine's runtime files are
 * kept out), then written under a temporary name and renamed into place, so a damaged member
 * leaves the file it would have replaced untouched. A database member is checked as SQLite before
 * it replaces the live file, whose stale WAL and shared memory go with it.
 */
import { chmodSync, mkdirSync, realpathSync, renameSync, rmSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { snapshotDatabase } from "../../state/snapshot.js";
import { extractZipEntry, readZipEntries, type ZipEntry } from "../../util/zip.js";
import {
  archivePrefix,
  isDatabase,
  isSymlink,
  judgeMember,
  looksLikeHome,
  SECRET_FILE_NAMES,
} from "./home-files.js";

export interface ImportSummary {
  restored: number;
  /** The source machine's runtime files left out (kept this machine's). */
  skippedRuntime: string[];
  /** Members refused or failed, one line each. */
  errors: string[];
  prefix: string;
}

export class ImportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ImportError";
  }
}

/** The archive's members and its prefix, after checking it is a zip holding a Hermes home. Throws ImportError. */
export function inspectBackup(zipPath: string): { entries: ZipEntry[]; prefix: string } {
  let entries: ZipEntry[];
  try {
    entries = readZipEntries(zipPath);
  } catch (error) {
    throw new ImportError(
      `${zipPath} is not a readable zip archive: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const names = entries.map((entry) => entry.name).filter((name) => !name.endsWith("/"));
  if (!looksLikeHome(names)) {
    throw new ImportError(
      `${zipPath} does not look like a Hermes backup (no config.yaml, .env, state.db, SOUL.md or auth.json in it)`,
    );
  }
  return { entries, prefix: archivePrefix(names) };
}

/** Restores the backup at `zipPath` into `home` (created when missing). */
export async function importBackup(
  zipPath: string,
  home: string,
  progress: (done: number, total: number) => void = () => {},
): Promise<ImportSummary> {
  const { entries, prefix } = inspectBackup(zipPath);
  mkdirSync(home, { recursive: true });
  const realHome = realpathSync(home);
  const summary: ImportSummary = { restored: 0, skippedRuntime: [], errors: [], prefix };
  const files = entries.filter((entry) => !entry.name.endsWith("/"));
  for (const [index, entry] of files.entries()) {
    const name = prefix && entry.name.startsWith(prefix) ? entry.name.slice(prefix.length) : entry.name;
    const verdict = judgeMember(name);
    if (verdict.kind === "directory") continue;
    if (verdict.kind === "skip-runtime") {
      summary.skippedRuntime.push(name);
      continue;
    }
    if (verdict.kind === "blocked") {
      summary.errors.push(`${entry.name}: refused (${verdict.reason})`);
      continue;
    }
    try {
      prepareTarget(realHome, verdict.parts);
      await restoreData(zipPath, entry, join(realHome, ...verdict.parts));
      summary.restored++;
    } catch (error) {
      summary.errors.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
    }
    if ((index + 1) % 500 === 0) progress(index + 1, files.length);
  }
  return summary;
}

/** Creates the member's parent directories, refusing any that is a symlink or leads outside the home. */
function prepareTarget(home: string, parts: string[]): void {
  let dir = home;
  for (const part of parts.slice(0, -1)) {
    dir = join(dir, part);
    if (isSymlink(dir)) throw new Error(`refused: ${relative(home, dir)} is a symlink in this home`);
    mkdirSync(dir, { recursive: true });
  }
  const real = realpathSync(dir);
  if (real !== home && !real.startsWith(home + sep))
    throw new Error("refused: it would land outside the home");
  const target = join(dir, parts[parts.length - 1] ?? "");
  if (isSymlink(target)) throw new Error(`refused: ${relative(home, target)} is a symlink in this home`);
}

async function restoreData(zipPath: string, entry: ZipEntry, target: string): Promise<void> {
  const temp = join(dirname(target), `.${entry.name.split("/").pop() ?? "member"}.${process.pid}.import`);
  try {
    await extractZipEntry(zipPath, entry, temp);
    const name = target.split(sep).pop() ?? "";
    if (isDatabase(name)) {
      // Open and check the restored database before it replaces the live one; a member that is not
      // SQLite must not become a state.db that the next chat moves aside as corrupt.
      const checked = `${temp}.checked`;
      snapshotDatabase(temp, checked);
      rmSync(temp, { force: true });
      renameSync(checked, temp);
      for (const suffix of ["-wal", "-shm", "-journal"]) rmSync(`${target}${suffix}`, { force: true });
    }
    const secret = SECRET_FILE_NAMES.has(name) || isDatabase(name);
    chmodSync(temp, secret ? 0o600 : entry.mode & 0o777 || 0o644);
    renameSync(temp, target);
  } finally {
    rmSync(temp, { force: true });
    rmSync(`${temp}.checked`, { force: true });
  }
}
