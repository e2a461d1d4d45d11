/**
 * Per-trajectory tool and reasoning statistics, as Python Hermes's batch runner counts them: a call
 * counts for its tool; its result is a failure when it is JSON with a non-null `error` (also inside
 * a `content` object) or `"success": false`, or plain text that is empty or starts with "Error:".
 * A non-zero exit code alone is not a failure: the model can correct itself. Pure.
 */
import { type Message, messageText } from "../ai/types.js";
import { TOOLSETS } from "../tools/toolsets.js";

export interface ToolCounts {
  count: number;
  success: number;
  failure: number;
}

export type ToolStats = Record<string, ToolCounts>;

export interface ReasoningStats {
  total_assistant_turns: number;
  turns_with_reasoning: number;
  turns_without_reasoning: number;
  has_any_reasoning: boolean;
}

/** Every tool a built-in toolset names: the columns every entry's stats carry (for Arrow/Parquet). */
export function allKnownTools(): string[] {
  const names = new Set<string>();
  for (const spec of Object.values(TOOLSETS)) for (const tool of spec.tools ?? []) names.add(tool);
  return [...names].sort();
}

function failed(content: string): boolean {
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch {
    return content === "" || content.trim().toLowerCase().startsWith("error:");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return false;
  const rec = parsed as Record<string, unknown>;
  if ("error" in rec && rec["error"] !== null) return true;
  const inner = rec["content"];
  if (typeof inner === "object" && inner !== null && !Array.isArray(inner)) {
    const innerError = (inner as Record<string, unknown>)["error"];
    if (innerError !== undefined && innerError !== null) return true;
  }
  return rec["success"] === false;
}

export function extractToolStats(messages: readonly Message[]): ToolStats {
  const stats: ToolStats = {};
  const byId = new Map<string, string>();
  for (const m of messages) {
    if (m.role === "assistant") {
      for (const call of m.tool_calls ?? []) {
        const name = call.function.name;
        stats[name] ??= { count: 0, success: 0, failure: 0 };
        stats[name].count += 1;
        byId.set(call.id, name);
      }
    } else if (m.role === "tool") {
      const name = byId.get(m.tool_call_id ?? "");
      const counts = name === undefined ? undefined : stats[name];
      if (!counts) continue;
      if (failed(messageText(m))) counts.failure += 1;
      else counts.success += 1;
    }
  }
  return stats;
}

export function extractReasoningStats(messages: readonly Message[]): ReasoningStats {
  let total = 0;
  let withReasoning = 0;
  for (const m of messages) {
    if (m.role !== "assistant") continue;
    total += 1;
    if (messageText(m).includes("<REASONING_SCRATCHPAD>") || m.reasoning?.trim()) withReasoning += 1;
  }
  return {
    total_assistant_turns: total,
    turns_with_reasoning: withReasoning,
    turns_without_reasoning: total - withReasoning,
    has_any_reasoning: withReasoning > 0,
  };
}

/** `stats` with every tool of `all` present (zeros for unused ones), and any other tool kept. */
export function normalizeToolStats(stats: ToolStats, all: readonly string[]): ToolStats {
  const out: ToolStats = {};
  for (const tool of all) out[tool] = { ...(stats[tool] ?? { count: 0, success: 0, failure: 0 }) };
  for (const [tool, counts] of Object.entries(stats)) out[tool] ??= { ...counts };
  return out;
}

/** Failure counts per tool over `all` (and any other tool used). */
export function toolErrorCounts(stats: ToolStats, all: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const tool of all) out[tool] = stats[tool]?.failure ?? 0;
  for (const [tool, counts] of Object.entries(stats)) out[tool] ??= counts.failure;
  return out;
}

/** Adds `from` into `into` (aggregation over a run). */
export function addToolStats(into: ToolStats, from: ToolStats): void {
  for (const [tool, counts] of Object.entries(from)) {
    into[tool] ??= { count: 0, success: 0, failure: 0 };
    const target = into[tool];
    target.count += counts.count;
    target.success += counts.success;
    target.failure += counts.failure;
  }
}
