/**
 * One batch trajectory line in Python Hermes's batch shape: `prompt_index`, `conversations`
 * (ShareGPT), `metadata`, `completed`, `partial`, `api_calls`, `toolsets_used`, and `tool_stats` /
 * `tool_error_counts` over every known tool (zeros for unused ones), so every line has the same
 * columns for dataset loaders. Redacted by the process-wide secret redactor. Pure apart from that.
 */
import { toShareGpt, trajectoryLine } from "../agent/trajectory.js";
import type { DatasetRow } from "./dataset.js";
import type { PromptOutcome } from "./prompt-run.js";
import { allKnownTools, normalizeToolStats, type ToolStats, toolErrorCounts } from "./tool-stats.js";

export function batchEntry(input: {
  row: DatasetRow;
  outcome: Extract<PromptOutcome, { kind: "ran" }>;
  toolsets: readonly string[];
  toolStats: ToolStats;
  /** The pool slot that ran it (upstream's `batch_num`). */
  slot: number;
  now: Date;
  redact?: (text: string) => string;
}): string {
  const { outcome } = input;
  const all = allKnownTools();
  const entry = {
    prompt_index: input.row.index,
    conversations: toShareGpt(outcome.messages, outcome.tools),
    metadata: {
      batch_num: input.slot,
      timestamp: input.now.toISOString(),
      model: outcome.model,
      session_id: outcome.sessionId,
      stop_reason: outcome.reason,
      ...(outcome.error ? { error: outcome.error } : {}),
      ...(input.row.image ? { image: input.row.image } : {}),
    },
    completed: outcome.completed,
    partial: outcome.partial,
    api_calls: outcome.apiCalls,
    toolsets_used: [...input.toolsets],
    tool_stats: normalizeToolStats(input.toolStats, all),
    tool_error_counts: toolErrorCounts(input.toolStats, all),
  };
  return trajectoryLine(entry, input.redact);
}
