/**
 * The run history of cron jobs as a contract any backend provides: the locked read-modify-write
 * of every job the ticker claims and finishes runs through (`last_run_at`, `last_status`,
 * `running_since`, `repeat.completed`), and each run's saved output. A file home keeps them in
 * `cron/jobs.json` and `cron/output/<id>/<stamp>.md` (`cronRunHistory` over `CronStore`); the
 * PostgreSQL backend in rows (`knowledge/postgres/cron-jobs.ts`).
 */
import { closeSync, fstatSync, lstatSync, openSync, readdirSync, readSync } from "node:fs";
import { join } from "node:path";
import type { CronStore } from "./store.js";
import type { CronJob } from "./types.js";

/** One saved run output: its name (`YYYY-MM-DD_HH-MM-SS[-n].md`), bytes and when it was written. */
export interface CronOutputInfo {
  name: string;
  size: number;
  modified_at: string;
}

export interface CronOutputText {
  text: string;
  /** The whole output's size in bytes. */
  size: number;
  /** Only the first `maxBytes` were read. */
  truncated: boolean;
}

/** What `saveOutput` names a run: local wall time, `-2`, `-3`… on a clash. */
export const CRON_OUTPUT_NAME = /^\d{4}-\d{2}-\d{2}_\d{2}-\d{2}-\d{2}(-\d{1,4})?\.md$/;
/** Default largest part of one output `readOutput` answers. */
export const MAX_OUTPUT_READ_BYTES = 256 * 1024;

export interface CronRunHistory {
  /**
   * Runs `fn` on every job read under the backend's lock (across processes and instances), then
   * saves what it leaves in the array; when `fn` throws nothing is written.
   */
  update<T>(fn: (jobs: CronJob[]) => T | Promise<T>): Promise<T>;
  /** Saves one run's output (redacted), keeps the newest `retention`; answers where it is. */
  saveOutput(id: string, text: string, at: number, retention?: number): Promise<string>;
  /** The job's saved outputs, newest first; [] for an unknown job or an id that is not one. */
  listOutputs(id: string): Promise<CronOutputInfo[]>;
  /** One output by name, or undefined when there is none (or the name is not an output's). */
  readOutput(id: string, name: string, maxBytes?: number): Promise<CronOutputText | undefined>;
}

/** An output's name for a run at `iso` (Hermes's local time with offset). */
export function outputStamp(iso: string): string {
  return iso.slice(0, 19).replace("T", "_").replace(/:/g, "-");
}

/** The run history of a file home (`cron/jobs.json` and `cron/output/`). */
export function cronRunHistory(store: CronStore): CronRunHistory {
  return {
    update: (fn) => store.update(fn),
    saveOutput: (id, text, at, retention) => store.saveOutput(id, text, at, retention),
    async listOutputs(id) {
      const dir = store.outputDir(id);
      if (!dir) return [];
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch {
        return [];
      }
      const files: CronOutputInfo[] = [];
      for (const name of names.filter((n) => CRON_OUTPUT_NAME.test(n))) {
        try {
          const stat = lstatSync(join(dir, name));
          if (stat.isFile()) files.push({ name, size: stat.size, modified_at: stat.mtime.toISOString() });
        } catch {
          // Removed by retention between the listing and the stat.
        }
      }
      return files.sort((a, b) => (a.name < b.name ? 1 : a.name > b.name ? -1 : 0));
    },
    async readOutput(id, name, maxBytes = MAX_OUTPUT_READ_BYTES) {
      const dir = store.outputDir(id);
      if (!dir || !CRON_OUTPUT_NAME.test(name)) return undefined;
      const path = join(dir, name);
      // Never through a symlink: a regular file in the job's folder only.
      const stat = lstatSync(path, { throwIfNoEntry: false });
      if (!stat?.isFile()) return undefined;
      const fd = openSync(path, "r");
      try {
        const size = fstatSync(fd).size;
        const buffer = Buffer.alloc(Math.min(size, Math.max(0, maxBytes)));
        const read = readSync(fd, buffer, 0, buffer.length, 0);
        return { text: buffer.subarray(0, read).toString("utf8"), size, truncated: size > read };
      } finally {
        closeSync(fd);
      }
    },
  };
}
