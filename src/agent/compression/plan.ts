/**
 * Where to cut: a protected head (leading system messages plus the first few turns), a tail kept
 * verbatim within a token budget, and the middle to summarise. Boundaries never separate an
 * assistant message that calls tools from its tool results.
 */
import type { Message } from "../../ai/types.js";
import { estimateMessageTokens } from "./tokens.js";

export interface CompressionPlan {
  head: Message[];
  middle: Message[];
  tail: Message[];
  /** The last user message sits in the middle because keeping it in the tail would exceed `maxTailTokens`; the caller must carry it verbatim. */
  lastUserInMiddle: Message | undefined;
}

export interface PlanOptions {
  /** Messages after the leading system messages kept verbatim at the start (Hermes: 3). */
  protectFirstN: number;
  /** Tokens of recent messages kept verbatim. */
  tailTokenBudget: number;
  /** The tail may grow up to this to include the last user message (default 3 × budget). */
  maxTailTokens?: number;
}

function lastUserIndex(messages: readonly Message[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]?.role === "user") return i;
  return -1;
}

/** Moves a tail start back so it does not begin with tool results cut from their call. */
function alignTailStart(messages: readonly Message[], start: number): number {
  let i = start;
  while (i > 0 && i < messages.length && messages[i]?.role === "tool") i--;
  return i;
}

/** Moves a head end forward past the tool results of a call the head ends with. */
function alignHeadEnd(messages: readonly Message[], end: number): number {
  let i = end;
  while (i < messages.length && messages[i]?.role === "tool") i++;
  return i;
}

export function planCompression(messages: readonly Message[], options: PlanOptions): CompressionPlan {
  let firstNonSystem = 0;
  while (firstNonSystem < messages.length && messages[firstNonSystem]?.role === "system") firstNonSystem++;
  const headEnd = alignHeadEnd(
    messages,
    Math.min(messages.length, firstNonSystem + Math.max(0, options.protectFirstN)),
  );

  // Walk back from the end within the budget (always at least one message).
  let tailStart = messages.length;
  let tokens = 0;
  while (tailStart > headEnd) {
    const m = messages[tailStart - 1];
    if (!m) break;
    const t = estimateMessageTokens(m);
    if (tailStart < messages.length && tokens + t > options.tailTokenBudget) break;
    tokens += t;
    tailStart--;
  }
  tailStart = alignTailStart(messages, tailStart);

  let lastUserInMiddle: Message | undefined;
  const lastUser = lastUserIndex(messages);
  if (lastUser >= headEnd && lastUser < tailStart) {
    const maxTail = options.maxTailTokens ?? options.tailTokenBudget * 3;
    let extended = 0;
    for (let i = lastUser; i < messages.length; i++)
      extended += estimateMessageTokens(messages[i] as Message);
    if (extended <= maxTail) tailStart = lastUser;
    else lastUserInMiddle = messages[lastUser];
  }
  if (tailStart < headEnd) tailStart = headEnd;
  return {
    head: messages.slice(0, headEnd),
    middle: messages.slice(headEnd, tailStart),
    tail: messages.slice(tailStart),
    lastUserInMiddle,
  };
}
