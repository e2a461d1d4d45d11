/**
 * `skills/.curator_state`: the curator's schedule and last outcome, in Python Hermes's shape
 * (`last_run_at`, `last_run_duration_seconds`, `last_run_summary`, `last_report_path`, `paused`,
 * `run_count`, ...). Keys this side does not know are kept, so a Python Hermes sharing the home
 * loses nothing. A missing or broken file reads as the defaults.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { atomicWriteFile } from "../../util/atomic-write.js";
import { withFileLock } from "../../util/file-lock.js";
import { skillsRoot } from "../skills/paths.js";

export interface CuratorState {
  last_run_at: string | null;
  last_run_duration_seconds: number | null;
  last_run_summary: string | null;
  last_report_path: string | null;
  paused: boolean;
  run_count: number;
  /** When a Hermes CLI command last ran an agent turn here (for the idle check); ours, not Python's. */
  _last_cli_activity_at?: string | null;
  [key: string]: unknown;
}

export const curatorStatePath = (home: string): string => join(skillsRoot(home), ".curator_state");

export function defaultCuratorState(): CuratorState {
  return {
    last_run_at: null,
    last_run_duration_seconds: null,
    last_run_summary: null,
    last_report_path: null,
    paused: false,
    run_count: 0,
  };
}

/** The state file merged over the defaults; the defaults alone when it is missing or unreadable. */
export function readCuratorState(home: string): CuratorState {
  try {
    const data: unknown = JSON.parse(readFileSync(curatorStatePath(home), "utf8").replace(/^\uFEFF/, ""));
    if (data && typeof data === "object" && !Array.isArray(data)) {
      return { ...defaultCuratorState(), ...(data as Record<string, unknown>) } as CuratorState;
    }
  } catch {
    // Missing or broken: the defaults (the next write repairs it).
  }
  return defaultCuratorState();
}

/**
 * Changes the state under its lock and writes it atomically (sorted keys, as Python writes it).
 * Returns the state written.
 */
export async function updateCuratorState(
  home: string,
  change: (state: CuratorState) => void,
): Promise<CuratorState> {
  const path = curatorStatePath(home);
  mkdirSync(skillsRoot(home), { recursive: true });
  return withFileLock(path, async () => {
    const state = readCuratorState(home);
    change(state);
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(state).sort()) sorted[key] = state[key];
    await atomicWriteFile(path, `${JSON.stringify(sorted, null, 2)}\n`);
    return state;
  });
}
