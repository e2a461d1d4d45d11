import { listOutputFiles, OUTPUT_NAME, readOutputFile } from "./outputs.js";
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
export const CRON_OUTPUT_NAME = OUTPUT_NAME;
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
    // The file home's outputs are read as every reader reads them (outputs.ts).
    listOutputs: async (id) => listOutputFiles(store.outputDir(id)),
    readOutput: async (id, name, maxBytes = MAX_OUTPUT_READ_BYTES) =>
      readOutputFile(store.outputDir(id), name, maxBytes),
  };
}
