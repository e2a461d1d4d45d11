/**
 * An append-only log file rotated by size the way Python's `RotatingFileHandler` rotates it
 * (`agent.log` → `agent.log.1` → `agent.log.2` …, the oldest beyond `backupCount` dropped), safe
 * when several processes (the CLI and the gateway) append to the same file.
 *
 * Each `append` is one synchronous `write(2)` on an `O_APPEND` descriptor, so a line is on disk
 * (in the page cache) before the call returns and survives a crash or `process.exit`, and lines of
 * two processes never interleave mid-line. A `stat(2)` of the path tells:
 * - the file was rotated or removed by someone else (its inode changed): reopen the path;
 * - the file, including the other process's lines, reached `maxBytes`: rotate.
 * That stat is not made per line (it was a fifth of a line's cost): only when `recheckMs` (500 ms)
 * passed since the last one, or when the last stat's size plus this process's own bytes since then
 * says the next line would pass `maxBytes`. So within that window, a line written after another
 * process rotated the file lands at the end of the rotated file (`.1`), not in the new one: it is
 * kept, only in the older file (unless backupCount is 0, where rotation discards the old file and
 * its lines anyway). Another process's lines are counted at the next stat, so a file can pass
 * `maxBytes` by what the other writers appended since this one's last stat (at most about twice
 * `maxBytes` with two writers).
 * Rotation takes an exclusive `flock` on the file being rotated, then stats the path again: when
 * another process rotated it meanwhile, this one only reopens. So two processes that both see a
 * full file rotate it once, and no backup is shifted twice. A line another process writes between
 * our check and our rename lands at the end of `.1`, never lost. Without `fs-ext` (the native
 * flock binding) rotation still happens, only that narrow race is not excluded.
 *
 * Hand-written rather than a library's: see the module comment of `log.ts`.
 */
import { closeSync, fstatSync, openSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import { createRequire } from "node:module";

export interface RotatingFileOptions {
  /** Rotate before a write that would take the file past this many bytes; 0: never rotate. */
  maxBytes: number;
  /**
   * Rotated copies kept (`.1` newest). 0 keeps none: a full file is removed and started over
   * (Python would let it grow without bound instead).
   */
  backupCount: number;
  /** Permission bits of a file this creates (default 0o600; the umask can only narrow them). */
  mode?: number;
  /** Longest time between two stats of the path (see the module comment); default 500, 0: every line. */
  recheckMs?: number;
}

type FlockSync = (fd: number, flags: "ex" | "un") => void;
let flockSync: FlockSync | null | undefined;

/** fs-ext's synchronous flock, loaded on the first rotation only; null when it cannot load. */
function loadFlock(): FlockSync | null {
  if (flockSync === undefined) {
    try {
      const require = createRequire(import.meta.url);
      flockSync = (require("fs-ext") as { flockSync: FlockSync }).flockSync;
    } catch {
      flockSync = null;
    }
  }
  return flockSync;
}

export class RotatingFile {
  private fd: number | undefined;
  private ino = -1;
  /** The file's size: as of the last stat, plus what this process appended since. */
  private size = 0;
  /** `performance.now()` of the last stat of the path. */
  private checkedAt = 0;

  constructor(
    readonly path: string,
    private readonly options: RotatingFileOptions,
  ) {}

  /** Appends `text`. Throws the file system's error (EACCES, ENOSPC…); the caller decides. */
  append(text: string): void {
    const data = Buffer.from(text, "utf8");
    const { maxBytes } = this.options;
    const full = maxBytes > 0 && this.size > 0 && this.size + data.length > maxBytes;
    if (
      this.fd === undefined ||
      full ||
      performance.now() - this.checkedAt >= (this.options.recheckMs ?? 500)
    ) {
      const size = this.current();
      if (maxBytes > 0 && size > 0 && size + data.length > maxBytes) {
        this.rotate();
        this.current();
      }
    }
    writeSync(this.fd as number, data);
    this.size += data.length;
  }

  /** Opens the path when needed; returns the file's size now (with other processes' lines). */
  private current(): number {
    this.checkedAt = performance.now();
    if (this.fd !== undefined) {
      try {
        const st = statSync(this.path);
        if (st.ino === this.ino) {
          this.size = st.size;
          return st.size;
        }
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      }
      // Rotated or removed by someone else: follow the path.
      this.close();
    }
    this.fd = openSync(this.path, "a", this.options.mode ?? 0o600);
    const st = fstatSync(this.fd);
    this.ino = st.ino;
    this.size = st.size;
    return st.size;
  }

  private rotate(): void {
    const fd = this.fd as number;
    const flock = loadFlock();
    let locked = false;
    try {
      if (flock) {
        flock(fd, "ex");
        locked = true;
      }
      let stillOurs = false;
      try {
        stillOurs = statSync(this.path).ino === this.ino;
      } catch {
        // Gone: someone else rotated it; the reopen below creates a fresh file.
      }
      if (stillOurs) this.shift();
    } finally {
      if (locked) flock?.(fd, "un");
    }
    this.close();
  }

  /** `.n-1` → `.n` … `.1` → `.2`, the file → `.1` (rename replaces the target atomically). */
  private shift(): void {
    const { backupCount } = this.options;
    if (backupCount <= 0) {
      rmSync(this.path, { force: true });
      return;
    }
    for (let i = backupCount - 1; i >= 1; i--) {
      try {
        renameSync(`${this.path}.${i}`, `${this.path}.${i + 1}`);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      }
    }
    renameSync(this.path, `${this.path}.1`);
  }

  close(): void {
    if (this.fd === undefined) return;
    try {
      closeSync(this.fd);
    } catch {
      // Already closed or invalid: nothing left to release.
    }
    this.fd = undefined;
    this.ino = -1;
    this.size = 0;
  }
}
