/**
 * Where to cut a trajectory to fit a token budget, as Python Hermes's `trajectory_compressor.py`
 * plans it. Protected: the first system, human, gpt and tool turns and the last N turns. From the
 * start of the middle, just enough turns to cover the overage plus the summary replacing them are
 * summarised into one `human` turn; the rest of the middle stays verbatim. A boundary never lands on
 * a `tool` turn, so a `<tool_call>` is never separated from its `<tool_response>`. Pure.
 */
import type { ShareGptTurn } from "../../agent/trajectory.js";

export interface CompressionSettings {
  targetTokens: number;
  /** The summary's size the plan counts on (upstream: 750). */
  summaryTokens: number;
  /** Turns at the end kept verbatim (upstream: 4). */
  keepLast: number;
}

export const DEFAULT_SUMMARY_TOKENS = 750;
export const DEFAULT_KEEP_LAST = 4;
export const SUMMARY_NOTICE =
  "\n\nSome of your previous tool responses may be summarized to preserve context.";
export const SUMMARY_FALLBACK =
  "[CONTEXT SUMMARY]: [Summary generation failed - previous turns contained tool calls and responses that have been compressed to save context space.]";

type Turn = Pick<ShareGptTurn, "from" | "value"> | { from: string; value: string };

/** The compressible middle `[start, end)` between the protected head and tail. */
export function compressibleRange(turns: readonly Turn[], keepLast: number): { start: number; end: number } {
  const n = turns.length;
  const protectedIdx = new Set<number>();
  for (const role of ["system", "human", "gpt", "tool"]) {
    const i = turns.findIndex((t) => t.from === role);
    if (i >= 0) protectedIdx.add(i);
  }
  for (let i = Math.max(0, n - keepLast); i < n; i++) protectedIdx.add(i);
  const head = [...protectedIdx].filter((i) => i < Math.floor(n / 2));
  const tail = [...protectedIdx].filter((i) => i >= Math.floor(n / 2));
  return { start: head.length ? Math.max(...head) + 1 : 0, end: tail.length ? Math.min(...tail) : n };
}

/**
 * Moves a cut onto a clean boundary within `[min, max]`: one not on a `tool` turn (a tool turn
 * always follows the gpt turn it answers). Forward first, so an orphaned tool turn joins the region
 * holding its call; backward only when nothing clean lies ahead.
 */
export function snapBoundary(turns: readonly Turn[], idx: number, min: number, max: number): number {
  const clean = (i: number) => i >= turns.length || turns[i]!.from !== "tool";
  let forward = idx;
  while (forward < max && !clean(forward)) forward++;
  if (clean(forward)) return forward;
  let backward = idx;
  while (backward > min && !clean(backward)) backward--;
  return backward;
}

/** The region `[start, until)` to summarise, or undefined when the trajectory fits or cannot shrink. */
export function planCompression(
  turns: readonly Turn[],
  turnTokens: readonly number[],
  settings: CompressionSettings,
): { start: number; until: number } | undefined {
  const total = turnTokens.reduce((a, b) => a + b, 0);
  if (total <= settings.targetTokens) return undefined;
  const range = compressibleRange(turns, settings.keepLast);
  const start = snapBoundary(turns, range.start, range.start, range.end);
  const end = range.end;
  if (start >= end) return undefined;
  const needed = total - settings.targetTokens + settings.summaryTokens;
  let accumulated = 0;
  let until = start;
  for (let i = start; i < end; i++) {
    accumulated += turnTokens[i] ?? 0;
    until = i + 1;
    if (accumulated >= needed) break;
  }
  until = snapBoundary(turns, until, start, end);
  const regionTokens = turnTokens.slice(start, until).reduce((a, b) => a + b, 0);
  if (until <= start || regionTokens <= settings.summaryTokens) return undefined;
  return { start, until };
}

/** The head (the system turn with the summary notice), the summary as a human turn, the rest. */
export function assembleCompressed<T extends Turn>(
  turns: readonly T[],
  region: { start: number; until: number },
  summary: string,
): Turn[] {
  const head = turns
    .slice(0, region.start)
    .map((t) => (t.from === "system" ? { ...t, value: t.value + SUMMARY_NOTICE } : { ...t }));
  return [...head, { from: "human", value: summary }, ...turns.slice(region.until).map((t) => ({ ...t }))];
}

/** Long turns are cut in the middle for the summary prompt (as upstream: 3000 chars at most). */
function elide(value: string): string {
  if (value.length <= 3000) return value;
  return `${value.slice(0, 1500)}\n...[${value.length - 2000} characters omitted]...\n${value.slice(-500)}`;
}

export function summaryPrompt(
  turns: readonly Turn[],
  region: { start: number; until: number },
  targetTokens: number,
): string {
  const content = turns
    .slice(region.start, region.until)
    .map((t, k) => `[Turn ${region.start + k} - ${t.from.toUpperCase()}]:\n${elide(t.value)}`)
    .join("\n\n");
  return `Summarize the following agent conversation turns concisely. This summary will replace these turns in the conversation history.

Write the summary in the same language as the conversation turns below; never translate.

Write the summary from a neutral perspective describing what the assistant did and learned. Include:
1. What actions the assistant took (tool calls, searches, file operations)
2. Key information or results obtained
3. Any important decisions or findings
4. Relevant data, file names, values, or outputs

Keep the summary factual and informative. Target approximately ${targetTokens} tokens.

---
TURNS TO SUMMARIZE:
${content}
---

Write only the summary, starting with "[CONTEXT SUMMARY]:" prefix.`;
}

/** The model's answer with the `[CONTEXT SUMMARY]:` prefix exactly once. */
export function finishSummary(text: string): string {
  const t = text.trim();
  if (t.startsWith("[CONTEXT SUMMARY]:")) return t;
  return t ? `[CONTEXT SUMMARY]: ${t}` : "[CONTEXT SUMMARY]:";
}
