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
  readlinkSync,
  realpathSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { lstat, open, readlink, realpath, rename, stat, unlink } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";

export interface AtomicWriteOptions {
  /**
   * Permission bits of the written file. Default: the existing file's mode when replacing one,
   * otherwise the usual 0o666 minus the umask.
   */
  mode?: number;
}

/**
 * Replaces `path` with `data` atomically. The parent directory must exist. When `path` is a
 * symlink, the file it points to is replaced (or created, for a dangling link) and the link kept.
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

/** Symlink hops followed before giving up (the kernel's own limit is 40). */
const MAX_LINK_HOPS = 40;

/**
 * Where a write to `path` lands: `path` itself, or the file its symlink chain ends at, even when
 * that file does not exist yet (a dangling link), so the rename never replaces a link.
 */
async function followLink(path: string): Promise<string> {
  let current = path;
  for (let hop = 0; hop < MAX_LINK_HOPS; hop++) {
    try {
      if (!(await lstat(current)).isSymbolicLink()) return current;
    } catch {
      return current;
    }
    try {
      return await realpath(current);
    } catch {
      current = resolve(dirname(current), await readlink(current));
    }
  }
  throw Object.assign(new Error(`Too many levels of symbolic links: ${path}`), { code: "ELOOP" });
}

function followLinkSync(path: string): string {
  let current = path;
  for (let hop = 0; hop < MAX_LINK_HOPS; hop++) {
    try {
      if (!lstatSync(current).isSymbolicLink()) return current;
    } catch {
      return current;
    }
    try {
      return realpathSync(current);
    } catch {
      current = resolve(dirname(current), readlinkSync(current));
    }
  }
  throw Object.assign(new Error(`Too many levels of symbolic links: ${path}`), { code: "ELOOP" });
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
