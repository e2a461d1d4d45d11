/**
 * One compression pass: head + a summary of the middle + tail, with orphaned tool pairs repaired
 * and roles alternating. Nothing is dropped unless the summary succeeded: a failing summariser is
 * retried once, then the original messages come back untouched with an error for the user.
 */
import { repairHistory } from "../../ai/history-repair.js";
import { type Message, messageText } from "../../ai/types.js";
import { planCompression } from "./plan.js";
import { buildSummaryPrompt, formatSummaryMessage, isSummaryMessage, splitSummaryMessage } from "./prompt.js";
import { pruneToolResults } from "./prune.js";
import { estimateTokens } from "./tokens.js";

/** A pass that saves less than this counts as ineffective; two in a row stop auto-compression. */
export const THRASHING_MIN_SAVING = 0.1;
const STUB_RESULT = "[tool result removed during context compression]";

export type CompressionStatus = "compressed" | "skipped_thrashing" | "nothing_to_compress" | "failed";

export interface CompressOptions {
  summarize: (prompt: string) => Promise<string>;
  focus?: string | undefined;
  contextLength: number;
  /** Fraction of the context window kept verbatim as the tail (config `compression.target_ratio`, 0.2). */
  targetRatio: number;
  /** Saved ratios of earlier passes in this session, oldest first. */
  previousPasses?: readonly number[];
  /** Default 3. */
  protectFirstN?: number;
  /** Skip the thrashing guard (manual `/compress`). */
  force?: boolean;
}

export interface CompressResult {
  messages: Message[];
  summary: string | undefined;
  /** 1 - after/before, in estimated tokens; 0 when nothing changed. */
  savedRatio: number;
  status: CompressionStatus;
  tokensBefore: number;
  tokensAfter: number;
  /** For the user when status is `failed` or `skipped_thrashing`. */
  error?: string;
}

/** True when the last two passes each saved less than 10%. */
export function isThrashing(previousPasses: readonly number[]): boolean {
  if (previousPasses.length < 2) return false;
  return previousPasses.slice(-2).every((r) => r < THRASHING_MIN_SAVING);
}

/**
 * Removes tool results whose call was summarised away and adds a stub result for each call whose
 * result was: the shared history repair (ai/history-repair.ts) with compression's wording.
 */
export function fixToolPairs(messages: readonly Message[]): Message[] {
  return repairHistory(messages, { missingResult: () => STUB_RESULT, orphanResults: "drop" }).messages;
}

function joinText(summaryText: string, content: Message["content"]): Message["content"] {
  if (content === null || content === "") return summaryText;
  if (typeof content === "string") return `${summaryText}\n\n${content}`;
  return [{ type: "text", text: summaryText }, ...content];
}

/** Places the summary between head and tail so that no two user (or assistant) messages touch. */
function assemble(head: Message[], summaryText: string, tail: Message[]): Message[] {
  const prevMsg = head[head.length - 1];
  const prev = prevMsg && prevMsg.role !== "system" ? prevMsg.role : undefined;
  const nextMsg = tail[0];
  const next = nextMsg?.role;
  const prevUserish = prev === "user";
  const prevAssistantish = prev === "assistant" || prev === "tool";
  if (!prevUserish && next !== "user") return [...head, { role: "user", content: summaryText }, ...tail];
  // An assistant summary right after the system prompt would open the conversation with the assistant.
  if (prev !== undefined && !prevAssistantish && next !== "assistant" && next !== "tool")
    return [...head, { role: "assistant", content: summaryText }, ...tail];
  // Both neighbours conflict: merge into the first tail message (a user or assistant message).
  if (nextMsg)
    return [...head, { ...nextMsg, content: joinText(summaryText, nextMsg.content) }, ...tail.slice(1)];
  return [...head, { role: "user", content: summaryText }];
}

async function trySummarize(summarize: CompressOptions["summarize"], prompt: string): Promise<string> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const text = (await summarize(prompt)).trim();
      if (text) return text;
      lastError = new Error("the summary model returned an empty answer");
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

export async function compressMessages(
  messages: readonly Message[],
  options: CompressOptions,
): Promise<CompressResult> {
  const tokensBefore = estimateTokens(messages);
  const unchanged = (status: CompressionStatus, error?: string): CompressResult => ({
    messages: [...messages],
    summary: undefined,
    savedRatio: 0,
    status,
    tokensBefore,
    tokensAfter: tokensBefore,
    ...(error ? { error } : {}),
  });
  if (!options.force && isThrashing(options.previousPasses ?? [])) {
    return unchanged(
      "skipped_thrashing",
      "Context compression stopped: the last two passes each saved under 10%. Start a new session (/new) or run /compress to force one.",
    );
  }
  const plan = planCompression(messages, {
    protectFirstN: options.protectFirstN ?? 3,
    tailTokenBudget: Math.max(1, Math.floor(options.contextLength * options.targetRatio)),
  });
  if (plan.middle.length === 0) return unchanged("nothing_to_compress");

  // An earlier summary in the middle is updated, not summarised as if it were a turn.
  let previousSummary: string | undefined;
  const middle: Message[] = [];
  for (const m of plan.middle) {
    const split = splitSummaryMessage(m);
    if (split) {
      previousSummary = previousSummary ? `${previousSummary}\n\n${split.summary}` : split.summary;
      if (split.rest) middle.push({ ...m, content: split.rest });
    } else middle.push(m);
  }
  for (const m of plan.head) {
    const split = isSummaryMessage(m) ? splitSummaryMessage(m) : undefined;
    if (split && !previousSummary) previousSummary = split.summary;
  }
  const latestUser = [...messages].reverse().find((m) => m.role === "user" && !isSummaryMessage(m));
  const latestText = latestUser ? messageText(latestUser) : undefined;
  const pruned = pruneToolResults(middle, { keepLast: 0 }).messages;
  const prompt = buildSummaryPrompt(pruned, previousSummary, options.focus, latestText);

  let summary: string;
  try {
    summary = await trySummarize(options.summarize, prompt);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return unchanged(
      "failed",
      `Context compression failed (${reason}); no messages were removed. The conversation is unchanged; try /compress again, or /new to start fresh.`,
    );
  }

  let summaryText = formatSummaryMessage(summary);
  if (plan.lastUserInMiddle) {
    summaryText += `\n\nThe user's latest request, verbatim:\n${messageText(plan.lastUserInMiddle)}`;
  }
  const out = fixToolPairs(assemble([...plan.head], summaryText, [...plan.tail]));
  const tokensAfter = estimateTokens(out);
  return {
    messages: out,
    summary,
    savedRatio: tokensBefore > 0 ? Math.max(0, 1 - tokensAfter / tokensBefore) : 0,
    status: "compressed",
    tokensBefore,
    tokensAfter,
  };
}
