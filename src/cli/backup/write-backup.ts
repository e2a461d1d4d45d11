/**
 * `hermes backup`: the whole root home (every profile included) into one zip, each SQLite
 * database as a consistent snapshot taken while other processes may keep writing. The archive is
 * written under a hidden `.partial` name and renamed only when complete, so a crash or a full disk
 * never leaves a zip that looks finished.
 */
import { mkdtempSync, renameSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { snapshotDatabase } from "../../state/snapshot.js";
import { withFileLock } from "../../util/file-lock.js";
import { ZipWriter } from "../../util/zip.js";
import { isDatabase, walkHome } from "./home-files.js";

export interface BackupSummary {
  output: string;
  files: number;
  bytes: number;
  zipBytes: number;
  /** One line per file that could not be archived (the backup is then incomplete). */
  errors: string[];
  skippedDirs: string[];
}

export class BackupBusyError extends Error {
  constructor(root: string) {
    super(`another Hermes backup of ${root} is running; wait for it to finish`);
    this.name = "BackupBusyError";
  }
}

/**
 * Archives `root` into `output` (the final path; its directory must exist). `progress` hears
 * every 500 files. Throws BackupBusyError when another backup holds the root's `.backup.lock`;
 * a file that cannot be read is reported in `errors`, not thrown.
 */
export async function writeBackup(
  root: string,
  output: string,
  progress: (done: number, total: number) => void = () => {},
): Promise<BackupSummary> {
  try {
    return await withFileLock(root, () => writeLocked(root, output, progress), {
      lockPath: join(root, ".backup.lock"),
      timeoutMs: 250,
    });
  } catch (error) {
    if (error instanceof Error && error.name === "FileLockTimeoutError") throw new BackupBusyError(root);
    throw error;
  }
}

async function writeLocked(
  root: string,
  output: string,
  progress: (done: number, total: number) => void,
): Promise<BackupSummary> {
  const skippedDirs: string[] = [];
  const files = walkHome(root, output, skippedDirs);
  const partial = join(dirname(output), `.${basename(output)}.${process.pid}.partial`);
  const scratch = mkdtempSync(join(tmpdir(), "hermes-backup-"));
  const zip = new ZipWriter(partial);
  const errors: string[] = [];
  let bytes = 0;
  let count = 0;
  try {
    for (const [index, file] of files.entries()) {
      try {
        const mtime = statSync(file.path).mtime;
        if (isDatabase(file.name)) {
          const copy = join(scratch, `db-${index}`);
          snapshotDatabase(file.path, copy);
          bytes += await zip.addFile(file.name, copy, { mtime, mode: 0o600 });
          rmSync(copy, { force: true });
        } else {
          bytes += await zip.addFile(file.name, file.path, { mtime, mode: statSync(file.path).mode & 0o777 });
        }
        count++;
      } catch (error) {
        if (error instanceof Error && error.name === "ZipError") throw error;
        errors.push(`${file.name}: ${error instanceof Error ? error.message : String(error)}`);
      }
      if ((index + 1) % 500 === 0) progress(index + 1, files.length);
    }
    zip.close();
    renameSync(partial, output);
  } catch (error) {
    zip.abort();
    rmSync(partial, { force: true });
    throw error;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return { output, files: count, bytes, zipBytes: statSync(output).size, errors, skippedDirs };
}

/** `hermes-backup-YYYY-MM-DD-HHMMSS[-label].zip`, upstream's name, in local time. */
export function backupFileName(now: Date, label?: string): string {
  const pad = (n: number) => String(n).padStart(2, "0");
  const stamp =
    `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}-` +
    `${pad(now.getHours())}${pad(now.getMinutes())}${pad(now.getSeconds())}`;
  return `hermes-backup-${stamp}${label ? `-${label}` : ""}.zip`;
}

/**
 * A label made safe for a file name: lowercase letters, digits, `-`, `_` and `.`, other runs
 * becoming `-`, at most 48 characters. Empty when nothing usable is left.
 */
export function cleanLabel(label: string): string {
  return label
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/^[-.]+|[-.]+$/g, "")
    .slice(0, 48);
}
