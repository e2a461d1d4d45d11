/**
 * What a file says, read once and kept while the file stays the same: for inputs a long-running
 * process reads at the start of every session (`.env`, prompt files, memory), where one `stat` is
 * much cheaper than opening, reading and parsing again. The file counts as the same while its inode,
 * mtime (ns) and size are; an atomic replace always changes the inode.
 *
 * Racy writes (git's "racily clean" problem): file times advance in coarse ticks, so a same-size
 * rewrite in the same tick as the read would keep the stamp. A file modified within the last
 * `RACY_MS` is therefore read every time and not cached until it has been quiet that long.
 */
import { type BigIntStats, readFileSync, statSync } from "node:fs";

const RACY_MS = 2000;

export interface StampedCacheOptions {
  /** Most files kept (oldest dropped first); default 256. */
  max?: number;
  /** Clock (ms since the epoch), for tests. */
  now?: () => number;
}

/** Decides from the stat alone (a directory, too large): a value returned here is not cached. */
export type StampedPrecheck<T> = (stat: BigIntStats) => T | undefined;

/** `readFileSync(path)` through a cache keyed by the file's stamp, turned into `T` by `parse`. */
export class StampedFileCache<T> {
  private readonly entries = new Map<string, { stamp: string; value: T }>();
  private readonly max: number;
  private readonly now: () => number;
  private readonly precheck: StampedPrecheck<T> | undefined;

  constructor(
    private readonly parse: (bytes: Buffer, path: string) => T,
    options: StampedCacheOptions & { precheck?: StampedPrecheck<T> } = {},
  ) {
    this.precheck = options.precheck;
    this.max = options.max ?? 256;
    this.now = options.now ?? Date.now;
  }

  /**
   * What `parse` made of the file as it is now; undefined when it does not exist (ENOENT, ENOTDIR).
   * Read and parse errors are thrown as `readFileSync` and `parse` throw them, and never cached.
   */
  read(path: string): T | undefined {
    const st = stat(path);
    if (!st) {
      this.entries.delete(path);
      return undefined;
    }
    const early = this.precheck?.(st);
    if (early !== undefined) {
      this.entries.delete(path);
      return early;
    }
    const stamp = `${st.ino}:${st.mtimeNs}:${st.size}`;
    const hit = this.entries.get(path);
    if (hit && hit.stamp === stamp) return hit.value;
    const value = this.parse(readFileSync(path), path);
    const racy = this.now() - Number(st.mtimeNs / 1_000_000n) < RACY_MS;
    if (racy) this.entries.delete(path);
    else {
      this.entries.delete(path);
      this.entries.set(path, { stamp, value });
      if (this.entries.size > this.max) {
        const oldest = this.entries.keys().next().value;
        if (oldest !== undefined) this.entries.delete(oldest);
      }
    }
    return value;
  }
}

/** The file's stat; undefined for ENOENT and ENOTDIR (a parent is a file), without a thrown error for ENOENT. */
function stat(path: string): BigIntStats | undefined {
  try {
    return statSync(path, { bigint: true, throwIfNoEntry: false });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOTDIR") return undefined;
    throw error;
  }
}
