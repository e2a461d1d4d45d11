/**
 * A batch run's statistics (`statistics.json`): upstream's fields (`run_name`, `distribution`,
 * `total_prompts`, `model`, `completed_at`, `duration_seconds`, `tool_statistics` with success and
 * failure rates, `reasoning_statistics`) and what a run here also reports: prompts by outcome, the
 * success rate, tokens, model calls and per-prompt durations. Pure: built from the per-prompt
 * records of every process that worked on the run.
 */
import type { ReasoningStats, ToolStats } from "./tool-stats.js";
import { addToolStats } from "./tool-stats.js";

/** One finished prompt, as `prompt_stats.jsonl` records it. */
export interface PromptRecord {
  prompt_index: number;
  session_id: string;
  /** `completed`, `max_turns`, `error`, `guardrail`. */
  reason: string;
  completed: boolean;
  discarded_no_reasoning: boolean;
  api_calls: number;
  input_tokens: number;
  output_tokens: number;
  duration_ms: number;
  tool_stats: ToolStats;
  reasoning: Omit<ReasoningStats, "has_any_reasoning">;
}

export interface RunStatistics {
  run_name: string;
  distribution: string | null;
  toolsets: string[] | null;
  total_prompts: number;
  model: string;
  workers: number;
  completed_at: string;
  duration_seconds: number;
  prompts: {
    done: number;
    completed: number;
    failed: number;
    discarded_no_reasoning: number;
    errors: number;
    pending: number;
  };
  success_rate: number;
  tokens: { input: number; output: number; total: number };
  api_calls: number;
  prompt_seconds: { mean: number; median: number; p95: number; max: number };
  tool_statistics: Record<string, ToolStats[string] & { success_rate: number; failure_rate: number }>;
  reasoning_statistics: Omit<ReasoningStats, "has_any_reasoning">;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

export function runStatistics(input: {
  runName: string;
  distribution: string | null;
  toolsets: string[] | null;
  totalPrompts: number;
  model: string;
  workers: number;
  records: readonly PromptRecord[];
  errors: number;
  now: Date;
  durationSeconds: number;
}): RunStatistics {
  const tools: ToolStats = {};
  const reasoning = { total_assistant_turns: 0, turns_with_reasoning: 0, turns_without_reasoning: 0 };
  let input_ = 0;
  let output = 0;
  let apiCalls = 0;
  let completed = 0;
  let discarded = 0;
  for (const r of input.records) {
    addToolStats(tools, r.tool_stats);
    reasoning.total_assistant_turns += r.reasoning.total_assistant_turns;
    reasoning.turns_with_reasoning += r.reasoning.turns_with_reasoning;
    reasoning.turns_without_reasoning += r.reasoning.turns_without_reasoning;
    input_ += r.input_tokens;
    output += r.output_tokens;
    apiCalls += r.api_calls;
    if (r.discarded_no_reasoning) discarded += 1;
    else if (r.completed) completed += 1;
  }
  const done = input.records.length;
  const seconds = input.records.map((r) => r.duration_ms / 1000).sort((a, b) => a - b);
  const toolStatistics: RunStatistics["tool_statistics"] = {};
  for (const [tool, c] of Object.entries(tools).sort((a, b) => b[1].count - a[1].count)) {
    const calls = c.success + c.failure;
    toolStatistics[tool] = {
      ...c,
      success_rate: calls > 0 ? round((c.success / calls) * 100) : 0,
      failure_rate: calls > 0 ? round((c.failure / calls) * 100) : 0,
    };
  }
  return {
    run_name: input.runName,
    distribution: input.distribution,
    toolsets: input.toolsets,
    total_prompts: input.totalPrompts,
    model: input.model,
    workers: input.workers,
    completed_at: input.now.toISOString(),
    duration_seconds: round(input.durationSeconds),
    prompts: {
      done,
      completed,
      failed: done - completed - discarded,
      discarded_no_reasoning: discarded,
      errors: input.errors,
      pending: Math.max(0, input.totalPrompts - done),
    },
    success_rate: done > 0 ? round(completed / done, 4) : 0,
    tokens: { input: input_, output, total: input_ + output },
    api_calls: apiCalls,
    prompt_seconds: {
      mean: seconds.length ? round(seconds.reduce((a, b) => a + b, 0) / seconds.length) : 0,
      median: round(percentile(seconds, 50)),
      p95: round(percentile(seconds, 95)),
      max: round(seconds[seconds.length - 1] ?? 0),
    },
    tool_statistics: toolStatistics,
    reasoning_statistics: reasoning,
  };
}
