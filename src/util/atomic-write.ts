/**
 * Atomic file replacement: write a temp file in the same directory, fsync it, rename it over the
 * target. A reader sees the old content or the new, never a half-written file, and a crash leaves
 * at worst a stray temp file (named `.<name>.<pid>.<rand>.tmp`), never a truncated target.
 */
import { randomBytes } from "node:crypto";
import {
  closeSync,
  fchmodSync,
  fsyncSync,
  lstatSync,
  openSync,
  realpathSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { lstat, open, realpath, rename, stat, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

export interface AtomicWriteOptions {
  /**
   * Permission bits of the written file. Default: the existing file's mode when replacing one,
   * otherwise the usual 0o666 minus the umask.
   */
  mode?: number;
}

/**
 * Replaces `path` with `data` atomically. The parent directory must exist. When `path` is a
 * symlink, the file it points to is replaced and the link is kept.
 */
export async function atomicWriteFile(
  path: string,
  data: string | Uint8Array,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const target = await followLink(path);
  const mode = options.mode ?? (await existingMode(target));
  const tmp = tempPathFor(target);
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(tmp, "wx", mode ?? 0o666);
    await handle.writeFile(data);
    // The umask applies at creation; set the mode explicitly so a preserved or requested mode is exact.
    if (mode !== undefined) await handle.chmod(mode);
    await handle.sync();
    await handle.close();
    handle = undefined;
    await rename(tmp, target);
  } catch (error) {
    await handle?.close().catch(() => {});
    await unlink(tmp).catch(() => {});
    throw error;
  }
  await syncDir(dirname(target));
}

/** Synchronous twin of {@link atomicWriteFile}, for start-up and shutdown paths that cannot await. */
export function atomicWriteFileSync(
  path: string,
  data: string | Uint8Array,
  options: AtomicWriteOptions = {},
): void {
  const target = followLinkSync(path);
  const mode = options.mode ?? existingModeSync(target);
  const tmp = tempPathFor(target);
  let fd: number | undefined;
  try {
    fd = openSync(tmp, "wx", mode ?? 0o666);
    const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    let written = 0;
    while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
    if (mode !== undefined) fchmodSync(fd, mode);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(tmp, target);
  } catch (error) {
    if (fd !== undefined) closeSync(fd);
    try {
      unlinkSync(tmp);
    } catch {
      // The temp file may never have been created.
    }
    throw error;
  }
  syncDirSync(dirname(target));
}

function tempPathFor(target: string): string {
  return join(dirname(target), `.${basename(target)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
}

async function followLink(path: string): Promise<string> {
  try {
    if ((await lstat(path)).isSymbolicLink()) return await realpath(path);
  } catch {
    // Missing file or dangling link: write at the given path.
  }
  return path;
}

function followLinkSync(path: string): string {
  try {
    if (lstatSync(path).isSymbolicLink()) return realpathSync(path);
  } catch {
    // Missing file or dangling link: write at the given path.
  }
  return path;
}

async function existingMode(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).mode & 0o7777;
  } catch {
    return undefined;
  }
}

function existingModeSync(path: string): number | undefined {
  try {
    return statSync(path).mode & 0o7777;
  } catch {
    return undefined;
  }
}

async function syncDir(dir: string): Promise<void> {
  // Makes the rename itself durable. Not supported everywhere (e.g. Windows); the write already succeeded.
  try {
    const handle = await open(dir, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Best effort.
  }
}

function syncDirSync(dir: string): void {
  try {
    const fd = openSync(dir, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Best effort.
  }
}
