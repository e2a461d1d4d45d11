/**
 * `hermes batch run`: every prompt of a JSONL dataset through its own agent session, N at a time in
 * this process (a bounded pool; each prompt's session has its own abort, so an interrupt stops the
 * run cleanly: running prompts are interrupted, not marked done, and run again on `--resume`).
 * Output layout, checkpoint and crash-safety rules: run-store.ts. Entries: upstream's batch shape.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { ResolvedRuntime } from "../ai/resolve.js";
import type { Transport } from "../ai/types.js";
import type { HermesConfig } from "../config/defaults.js";
import type { SessionStore } from "../state/types.js";
import { resolveToolsets } from "../tools/toolsets.js";
import { atomicWriteFile } from "../util/atomic-write.js";
import { FileLockTimeoutError, withFileLock } from "../util/file-lock.js";
import type { Logger } from "../util/log.js";
import { type DatasetRow, parseDataset } from "./dataset.js";
import { distributionNamed, sampleToolsets } from "./distributions.js";
import { batchEntry } from "./entry.js";
import { type PromptOutcome, runPrompt } from "./prompt-run.js";
import {
  appendLine,
  CHECKPOINT_FILE,
  type Checkpoint,
  ensureDir,
  FAILED_FILE,
  readCheckpoint,
  runDir,
  STATISTICS_FILE,
  TRAJECTORIES_FILE,
  trimToCheckpoint,
  workspaceDir,
  writeCheckpoint,
} from "./run-store.js";
import { type PromptRecord, type RunStatistics, runStatistics } from "./stats.js";
import { extractReasoningStats, extractToolStats } from "./tool-stats.js";

export const PROMPT_STATS_FILE = "prompt_stats.jsonl";
/** Upstream's default `max_turns` for batch runs. */
export const DEFAULT_BATCH_MAX_TURNS = 10;

/** A problem with the run's arguments or state the user must fix (exit 2). */
export class BatchUsageError extends Error {
  override name = "BatchUsageError";
}

export type BatchProgress =
  | { type: "start"; total: number; pending: number; done: number; dir: string; dropped: number }
  | { type: "warning"; message: string }
  | {
      type: "prompt";
      index: number;
      outcome: "completed" | "failed" | "discarded" | "error" | "interrupted";
      detail?: string;
      done: number;
      total: number;
      ms: number;
    };

export interface BatchRunOptions {
  home: string;
  config: HermesConfig;
  env: Record<string, string | undefined>;
  dataset: string;
  runName: string;
  workers: number;
  /** Fixed toolsets for every prompt; otherwise sampled from `distribution` (default "default"). */
  toolsets?: string[];
  distribution?: string;
  maxTurns: number;
  /** The model name recorded in the run's settings and entries when no session reported one. */
  model: string;
  resolved?: ResolvedRuntime;
  transport?: Transport;
  store: SessionStore | null;
  yolo?: boolean;
  resume?: boolean;
  /** Keep trajectories without any reasoning (upstream discards them). */
  keepNoReasoning?: boolean;
  signal?: AbortSignal;
  random?: () => number;
  now?: () => Date;
  onProgress?: (event: BatchProgress) => void;
  logger?: Logger;
}

export interface BatchSummary {
  dir: string;
  statistics: RunStatistics;
  /** Prompts run by this process. */
  ran: number;
  interrupted: boolean;
  /** Every prompt of the dataset is done. */
  finished: boolean;
}

/** Runs (or resumes) a batch; throws `BatchUsageError` for problems the user must fix. */
export async function runBatch(options: BatchRunOptions): Promise<BatchSummary> {
  const datasetPath = resolve(options.dataset);
  let text: string;
  try {
    text = await readFile(datasetPath, "utf8");
  } catch (error) {
    throw new BatchUsageError(`cannot read the dataset ${datasetPath}: ${(error as Error).message}`);
  }
  const { rows, warnings } = parseDataset(text);
  for (const message of warnings)
    options.onProgress?.({ type: "warning", message: `${datasetPath} ${message}` });
  if (rows.length === 0) {
    throw new BatchUsageError(`${datasetPath} has no usable rows (each line: {"prompt": "..."}).`);
  }
  const distribution = options.toolsets ? undefined : distributionNamed(options.distribution ?? "default");
  if (options.toolsets) {
    const unknown = resolveToolsets(options.toolsets, { custom: customToolsets(options.config) }).unknown;
    if (unknown.length > 0) throw new BatchUsageError(`unknown toolset(s): ${unknown.join(", ")}.`);
  }
  let dir: string;
  try {
    dir = runDir(options.home, options.runName);
  } catch (error) {
    throw new BatchUsageError((error as Error).message);
  }
  await ensureDir(dir);
  try {
    return await withFileLock(
      join(dir, "run"),
      () => runLocked(options, dir, datasetPath, text, rows, distribution),
      {
        timeoutMs: 300,
      },
    );
  } catch (error) {
    if (error instanceof FileLockTimeoutError) {
      throw new BatchUsageError(
        `another hermes batch run is working on "${options.runName}" (${dir}); wait for it or stop it.`,
      );
    }
    throw error;
  }
}

function customToolsets(config: HermesConfig) {
  const custom = (config as Record<string, unknown>)["custom_toolsets"];
  return custom && typeof custom === "object" ? (custom as Record<string, { tools?: string[] }>) : {};
}

async function runLocked(
  options: BatchRunOptions,
  dir: string,
  datasetPath: string,
  text: string,
  rows: DatasetRow[],
  distribution: ReturnType<typeof distributionNamed> | undefined,
): Promise<BatchSummary> {
  const now = options.now ?? (() => new Date());
  const started = Date.now();
  const sha = createHash("sha256").update(text).digest("hex");
  const existing = await readCheckpoint(dir).catch((error: Error) => {
    throw new BatchUsageError(`${error.message} Move ${dir} aside or choose another --run-name.`);
  });
  if (existing && !options.resume) {
    throw new BatchUsageError(
      `run "${options.runName}" already exists (${dir}); pass --resume to continue it, or choose another --run-name.`,
    );
  }
  if (existing && existing.settings.dataset_sha256 !== sha) {
    throw new BatchUsageError(
      `the dataset changed since run "${options.runName}" started (${existing.settings.dataset} then, ${datasetPath} now); prompt numbers would no longer match. Start a new --run-name.`,
    );
  }
  const checkpoint: Checkpoint = existing ?? {
    run_name: options.runName,
    completed_prompts: [],
    errors: {},
    discarded_no_reasoning: [],
    settings: {
      dataset: datasetPath,
      dataset_sha256: sha,
      total_prompts: rows.length,
      distribution: distribution ? (options.distribution ?? "default") : null,
      toolsets: options.toolsets ?? null,
      max_turns: options.maxTurns,
      model: options.model,
      workers: options.workers,
    },
    started_at: now().toISOString(),
    last_updated: null,
    finished: false,
  };
  const done = new Set(checkpoint.completed_prompts);
  // Lines written by a process killed before it marked their prompt done go first.
  let dropped = 0;
  for (const file of [TRAJECTORIES_FILE, FAILED_FILE, PROMPT_STATS_FILE]) {
    dropped += await trimToCheckpoint(join(dir, file), done);
  }
  checkpoint.finished = false;
  await writeCheckpoint(dir, checkpoint, now());

  const pending = rows.filter((r) => !done.has(r.index));
  options.onProgress?.({
    type: "start",
    total: rows.length,
    pending: pending.length,
    done: done.size,
    dir,
    dropped,
  });

  // One writer at a time: line, stats line, then the checkpoint that marks the prompt done.
  let chain: Promise<void> = Promise.resolve();
  const serial = (fn: () => Promise<void>) => {
    const next = chain.then(fn);
    chain = next.catch(() => undefined);
    return next;
  };
  const random = options.random ?? Math.random;
  const signal = options.signal ?? new AbortController().signal;
  let ran = 0;
  let nextRow = 0;

  const work = async (slot: number) => {
    while (!signal.aborted) {
      const row = pending[nextRow++];
      if (!row) return;
      const toolsets = options.toolsets ?? sampled(distribution!, random, options);
      const cwd = row.cwd ? resolve(row.cwd) : workspaceDir(options.home, options.runName, row.index);
      if (!row.cwd) await ensureDir(cwd);
      const t0 = Date.now();
      const outcome = await runPrompt(row, cwd, toolsets, promptContext(options), signal);
      const ms = Date.now() - t0;
      await serial(() => record(row, outcome, toolsets, slot, ms));
    }
  };

  const record = async (
    row: DatasetRow,
    outcome: PromptOutcome,
    toolsets: string[],
    slot: number,
    ms: number,
  ): Promise<void> => {
    const report = (o: Extract<BatchProgress, { type: "prompt" }>["outcome"], detail?: string) =>
      options.onProgress?.({
        type: "prompt",
        index: row.index,
        outcome: o,
        ...(detail ? { detail } : {}),
        done: done.size,
        total: rows.length,
        ms,
      });
    if (outcome.kind === "interrupted") return report("interrupted");
    if (outcome.kind === "error") {
      checkpoint.errors[String(row.index)] = outcome.error;
      await writeCheckpoint(dir, checkpoint, now());
      return report("error", outcome.error);
    }
    ran += 1;
    const toolStats = extractToolStats(outcome.messages);
    const reasoning = extractReasoningStats(outcome.messages);
    const discard = !options.keepNoReasoning && !reasoning.has_any_reasoning;
    if (!discard) {
      const line = batchEntry({ row, outcome, toolsets, toolStats, slot, now: now() });
      await appendLine(join(dir, outcome.completed ? TRAJECTORIES_FILE : FAILED_FILE), line);
    }
    const { has_any_reasoning: _, ...reasoningCounts } = reasoning;
    const stats: PromptRecord = {
      prompt_index: row.index,
      session_id: outcome.sessionId,
      reason: outcome.reason,
      completed: outcome.completed,
      discarded_no_reasoning: discard,
      api_calls: outcome.apiCalls,
      input_tokens: outcome.usage.inputTokens,
      output_tokens: outcome.usage.outputTokens,
      duration_ms: ms,
      tool_stats: toolStats,
      reasoning: reasoningCounts,
    };
    await appendLine(join(dir, PROMPT_STATS_FILE), JSON.stringify(stats));
    // Only now is the prompt done: a kill before this line leaves lines that the resume drops.
    done.add(row.index);
    checkpoint.completed_prompts = [...done].sort((a, b) => a - b);
    delete checkpoint.errors[String(row.index)];
    if (discard) checkpoint.discarded_no_reasoning.push(row.index);
    await writeCheckpoint(dir, checkpoint, now());
    report(
      discard ? "discarded" : outcome.completed ? "completed" : "failed",
      outcome.error ?? outcome.reason,
    );
  };

  const workers = Math.max(1, Math.min(options.workers, pending.length || 1));
  await Promise.all(Array.from({ length: workers }, (_, slot) => work(slot)));
  await chain;

  const finished = done.size === rows.length;
  checkpoint.finished = finished;
  await writeCheckpoint(dir, checkpoint, now());
  const statistics = runStatistics({
    runName: options.runName,
    distribution: checkpoint.settings.distribution,
    toolsets: checkpoint.settings.toolsets,
    totalPrompts: rows.length,
    model: checkpoint.settings.model,
    workers: options.workers,
    records: await readPromptRecords(dir, done),
    errors: Object.keys(checkpoint.errors).length,
    now: now(),
    durationSeconds: (Date.now() - started) / 1000,
  });
  await atomicWriteFile(join(dir, STATISTICS_FILE), `${JSON.stringify(statistics, null, 2)}\n`, {
    mode: 0o600,
  });
  return { dir, statistics, ran, interrupted: signal.aborted, finished };
}

function sampled(
  distribution: ReturnType<typeof distributionNamed>,
  random: () => number,
  options: BatchRunOptions,
): string[] {
  const custom = customToolsets(options.config);
  const { toolsets } = sampleToolsets(
    distribution,
    random,
    (name) => resolveToolsets([name], { custom }).unknown.length === 0,
  );
  return toolsets;
}

function promptContext(options: BatchRunOptions) {
  return {
    home: options.home,
    config: options.config,
    env: options.env,
    ...(options.resolved ? { resolved: options.resolved } : {}),
    ...(options.transport ? { transport: options.transport } : {}),
    store: options.store,
    maxTurns: options.maxTurns,
    yolo: options.yolo === true,
    ...(options.logger ? { logger: options.logger } : {}),
    onWarning: (message: string) => options.onProgress?.({ type: "warning", message }),
  };
}

/** The stats records of prompts marked done (first of each), for `statistics.json` and status. */
export async function readPromptRecords(dir: string, done: ReadonlySet<number>): Promise<PromptRecord[]> {
  let text: string;
  try {
    text = await readFile(join(dir, PROMPT_STATS_FILE), "utf8");
  } catch {
    return [];
  }
  const seen = new Set<number>();
  const records: PromptRecord[] = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    try {
      const r = JSON.parse(line) as PromptRecord;
      if (done.has(r.prompt_index) && !seen.has(r.prompt_index)) {
        seen.add(r.prompt_index);
        records.push(r);
      }
    } catch {
      // A torn last line of a killed run: dropped on the next resume.
    }
  }
  return records;
}

export { CHECKPOINT_FILE };
