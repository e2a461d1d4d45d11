/**
 * `hermes batch status NAME`: a run's progress read from its checkpoint and per-prompt records,
 * without running anything (safe while the run is going on: the files are replaced atomically or
 * appended, and a torn last line is skipped).
 */
import { existsSync } from "node:fs";
import { readCheckpoint, runDir } from "./run-store.js";
import { readPromptRecords } from "./runner.js";
import { type RunStatistics, runStatistics } from "./stats.js";

export interface BatchStatus {
  run_name: string;
  dir: string;
  dataset: string;
  total_prompts: number;
  done: number;
  /** `finished`, or `incomplete` (interrupted, killed, still running, or prompts to retry). */
  state: "finished" | "incomplete";
  started_at: string;
  last_updated: string | null;
  /** Prompts that failed before a trajectory existed, with why (retried on --resume). */
  errors: Record<string, string>;
  statistics: RunStatistics;
}

export async function batchStatus(home: string, name: string): Promise<BatchStatus> {
  const dir = runDir(home, name);
  const checkpoint = existsSync(dir) ? await readCheckpoint(dir) : undefined;
  if (!checkpoint) {
    throw new Error(`no batch run named "${name}" (looked in ${dir}); \`hermes batch list\` shows the runs.`);
  }
  const done = new Set(checkpoint.completed_prompts);
  const records = await readPromptRecords(dir, done);
  const s = checkpoint.settings;
  return {
    run_name: checkpoint.run_name,
    dir,
    dataset: s.dataset,
    total_prompts: s.total_prompts,
    done: done.size,
    state: checkpoint.finished && done.size >= s.total_prompts ? "finished" : "incomplete",
    started_at: checkpoint.started_at,
    last_updated: checkpoint.last_updated,
    errors: checkpoint.errors,
    statistics: runStatistics({
      runName: checkpoint.run_name,
      distribution: s.distribution,
      toolsets: s.toolsets,
      totalPrompts: s.total_prompts,
      model: s.model,
      workers: s.workers,
      records,
      errors: Object.keys(checkpoint.errors).length,
      now: new Date(checkpoint.last_updated ?? checkpoint.started_at),
      durationSeconds: 0,
    }),
  };
}

export function formatStatus(status: BatchStatus): string {
  const st = status.statistics;
  const lines = [
    `Run ${status.run_name} (${status.state}): ${status.done}/${status.total_prompts} prompts done`,
    `  dataset:   ${status.dataset}`,
    `  output:    ${status.dir}`,
    `  model:     ${st.model}; ${st.distribution ? `distribution ${st.distribution}` : `toolsets ${(st.toolsets ?? []).join(", ")}`}`,
    `  outcomes:  ${st.prompts.completed} completed, ${st.prompts.failed} failed, ${st.prompts.discarded_no_reasoning} discarded (no reasoning), ${st.prompts.errors} to retry, ${st.prompts.pending} pending`,
    `  success:   ${(st.success_rate * 100).toFixed(1)}%`,
    `  tokens:    ${st.tokens.total} (${st.tokens.input} in, ${st.tokens.output} out), ${st.api_calls} model calls`,
    `  per prompt: median ${st.prompt_seconds.median} s, p95 ${st.prompt_seconds.p95} s, max ${st.prompt_seconds.max} s`,
    `  updated:   ${status.last_updated ?? status.started_at}`,
  ];
  const tools = Object.entries(st.tool_statistics);
  if (tools.length > 0) {
    lines.push("  tools:");
    for (const [tool, c] of tools)
      lines.push(
        `    ${tool.padEnd(20)} ${String(c.count).padStart(6)} calls  ${c.success_rate.toFixed(1)}% ok`,
      );
  }
  const errors = Object.entries(status.errors);
  if (errors.length > 0) {
    lines.push("  to retry (hermes batch run DATASET --run-name NAME --resume):");
    for (const [index, error] of errors.slice(0, 10)) lines.push(`    prompt ${index}: ${error}`);
    if (errors.length > 10) lines.push(`    … and ${errors.length - 10} more`);
  }
  return lines.join("\n");
}
