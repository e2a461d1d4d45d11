/**
 * Cross-process exclusive lock for read-modify-write of a shared file (memory files, cron jobs,
 * lock files of the skills hub). The lock is a POSIX `flock` on a sidecar `<path>.lock` that is
 * never deleted, which is exactly what Python Hermes takes on the same files, so the two
 * implementations exclude each other when they share a home. The target file itself is still
 * replaced atomically, so readers never need the lock.
 *
 * Waiting never blocks the event loop: the lock is tried non-blocking and retried with short,
 * jittered sleeps until `timeoutMs`.
 */
import { closeSync, mkdirSync, openSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";

interface FsExt {
  flock(
    fd: number,
    flags: "ex" | "exnb" | "un",
    callback: (error: NodeJS.ErrnoException | null) => void,
  ): void;
}

let fsExt: FsExt | undefined;

function loadFsExt(): FsExt {
  if (!fsExt) {
    const require = createRequire(import.meta.url);
    fsExt = require("fs-ext") as FsExt;
  }
  return fsExt;
}

export interface FileLockOptions {
  /** Give up after this long (default 10 s) with an error that names the lock file. */
  timeoutMs?: number;
  /** Lock file path; default `<path>.lock`. */
  lockPath?: string;
}

export class FileLockTimeoutError extends Error {
  readonly lockPath: string;
  constructor(lockPath: string, waitedMs: number) {
    super(
      `Another process has held ${lockPath} for ${Math.round(waitedMs / 1000)} s; try again, ` +
        "or stop the other Hermes process if it is stuck.",
    );
    this.name = "FileLockTimeoutError";
    this.lockPath = lockPath;
  }
}

function tryLock(fd: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    loadFsExt().flock(fd, "exnb", (error) => {
      if (!error) resolve(true);
      else if (error.code === "EAGAIN" || error.code === "EWOULDBLOCK") resolve(false);
      else reject(error);
    });
  });
}

function unlock(fd: number): Promise<void> {
  return new Promise((resolve) => {
    loadFsExt().flock(fd, "un", () => resolve());
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs `fn` while holding the exclusive lock for `path`. The lock is released (and its file
 * descriptor closed) however `fn` ends. Locks are per open file description, so two callers in
 * the same process also exclude each other.
 */
export async function withFileLock<T>(
  path: string,
  fn: () => Promise<T> | T,
  options: FileLockOptions = {},
): Promise<T> {
  const lockPath = options.lockPath ?? `${path}.lock`;
  const timeoutMs = options.timeoutMs ?? 10_000;
  mkdirSync(dirname(lockPath), { recursive: true });
  const fd = openSync(lockPath, "a+");
  try {
    const started = Date.now();
    let delay = 5;
    while (!(await tryLock(fd))) {
      const waited = Date.now() - started;
      if (waited >= timeoutMs) throw new FileLockTimeoutError(lockPath, waited);
      await sleep(Math.min(delay + Math.random() * delay, timeoutMs - waited));
      delay = Math.min(delay * 2, 100);
    }
    try {
      return await fn();
    } finally {
      await unlock(fd);
    }
  } finally {
    closeSync(fd);
  }
}
