/**
 * A batch run's folder, `<home>/data/<run-name>/` (upstream writes `data/<run_name>/` under the
 * working directory; here it is under the home so `hermes batch status` finds it from anywhere):
 *
 * - `trajectories.jsonl`: one line per finished prompt whose agent completed (upstream's batch
 *   entry shape), `failed_trajectories.jsonl`: prompts whose agent stopped without completing
 *   (turn limit, model error, guardrail);
 * - `checkpoint.json`: upstream's fields (`run_name`, `completed_prompts`, `last_updated`) plus the
 *   run's settings and errors of prompts to retry; replaced atomically;
 * - `statistics.json`: tokens, tool use per tool, success rate, durations;
 *
 * Each prompt works in its own directory, `<home>/batch-workspaces/<run-name>/<index>/` (unless
 * its row names one): outside `data/`, which is a protected path, so no prompt's agent can edit
 * the checkpoint or another prompt's lines.
 *
 * Crash safety: a prompt's line is appended and fsynced first, then the prompt is marked done in
 * the checkpoint. A run killed between the two leaves a line for a prompt not marked done; on
 * resume {@link trimToCheckpoint} drops such lines (and torn or duplicate ones) before any new
 * prompt runs, so every prompt ends up exactly once in the output.
 */
import { existsSync, readdirSync } from "node:fs";
import { mkdir, open, readFile } from "node:fs/promises";
import { join } from "node:path";
import { atomicWriteFile } from "../util/atomic-write.js";

/** A prompt's own working directory (see the module comment for why it is not under `data/`). */
export function workspaceDir(home: string, runName: string, index: number): string {
  return join(home, "batch-workspaces", runName, String(index));
}

export const TRAJECTORIES_FILE = "trajectories.jsonl";
export const FAILED_FILE = "failed_trajectories.jsonl";
export const CHECKPOINT_FILE = "checkpoint.json";
export const STATISTICS_FILE = "statistics.json";

/** The settings a run was started with, kept so a resume can refuse a changed dataset. */
export interface RunSettings {
  dataset: string;
  dataset_sha256: string;
  total_prompts: number;
  distribution: string | null;
  toolsets: string[] | null;
  max_turns: number;
  model: string;
  workers: number;
}

export interface Checkpoint {
  run_name: string;
  completed_prompts: number[];
  /** Prompts that failed before producing a trajectory (retried on resume): index → error. */
  errors: Record<string, string>;
  /** Prompts discarded for having no reasoning in any turn (upstream's rule): marked done too. */
  discarded_no_reasoning: number[];
  settings: RunSettings;
  started_at: string;
  last_updated: string | null;
  /** Whether the last process to work on the run got through every prompt. */
  finished: boolean;
}

/** `<home>/data`: where runs live. */
export function runsRoot(home: string): string {
  return join(home, "data");
}

/** A run name is one path segment of letters, digits, `.`, `_` and `-` (it becomes a folder name). */
export function checkRunName(name: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(name)) {
    throw new Error(
      `run name "${name}" is not usable as a folder name; use letters, digits, ".", "_" and "-" (starting with a letter or digit).`,
    );
  }
  return name;
}

export function runDir(home: string, name: string): string {
  return join(runsRoot(home), checkRunName(name));
}

/** The run names under `<home>/data` that have a checkpoint, sorted. */
export function listRuns(home: string): string[] {
  const root = runsRoot(home);
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(root, d.name, CHECKPOINT_FILE)))
    .map((d) => d.name)
    .sort();
}

/** Reads a run's checkpoint; undefined when there is none. Throws with the path when it is unreadable. */
export async function readCheckpoint(dir: string): Promise<Checkpoint | undefined> {
  const path = join(dir, CHECKPOINT_FILE);
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`${path} is not valid JSON (${error instanceof Error ? error.message : String(error)}).`);
  }
  if (
    typeof value !== "object" ||
    value === null ||
    !Array.isArray((value as Checkpoint).completed_prompts)
  ) {
    throw new Error(`${path} is not a batch checkpoint (no completed_prompts list).`);
  }
  const cp = value as Checkpoint;
  return {
    ...cp,
    errors: cp.errors ?? {},
    discarded_no_reasoning: cp.discarded_no_reasoning ?? [],
    finished: cp.finished === true,
  };
}

export async function writeCheckpoint(dir: string, checkpoint: Checkpoint, now: Date): Promise<void> {
  checkpoint.last_updated = now.toISOString();
  await atomicWriteFile(join(dir, CHECKPOINT_FILE), `${JSON.stringify(checkpoint, null, 2)}\n`, {
    mode: 0o600,
  });
}

/** Appends one line and syncs it to disk before returning (owner-only: it holds conversations). */
export async function appendLine(path: string, line: string): Promise<void> {
  const handle = await open(path, "a", 0o600);
  try {
    await handle.write(`${line}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Keeps only the lines of `file` whose `prompt_index` is in `done`, the first of each, and drops
 * lines that do not parse (a write torn by a kill). Rewrites the file atomically when anything is
 * dropped; returns how many lines were dropped.
 */
export async function trimToCheckpoint(file: string, done: ReadonlySet<number>): Promise<number> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return 0;
    throw error;
  }
  const { kept, dropped } = keepDoneLines(text, done);
  if (dropped > 0) await atomicWriteFile(file, kept.map((l) => `${l}\n`).join(""), { mode: 0o600 });
  return dropped;
}

/** The pure part of {@link trimToCheckpoint}. */
export function keepDoneLines(text: string, done: ReadonlySet<number>): { kept: string[]; dropped: number } {
  const kept: string[] = [];
  const seen = new Set<number>();
  let dropped = 0;
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    let index: unknown;
    try {
      index = (JSON.parse(line) as { prompt_index?: unknown }).prompt_index;
    } catch {
      dropped += 1;
      continue;
    }
    if (typeof index !== "number" || !done.has(index) || seen.has(index)) {
      dropped += 1;
      continue;
    }
    seen.add(index);
    kept.push(line);
  }
  return { kept, dropped };
}

export async function ensureDir(path: string): Promise<void> {
  await mkdir(path, { recursive: true, mode: 0o700 });
}
