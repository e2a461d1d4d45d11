/**
 * What a conversation counts while it runs (`/usage` for a session that is not recorded) and the
 * pure history edits `ChatSession` needs without a store.
 */
import type { CostStatus } from "../ai/pricing.js";
import type { Message, Usage } from "../ai/types.js";
import { emptyUsage } from "../ai/usage.js";

/** What an unrecorded session keeps in memory for `/usage`. */
export interface SessionTally {
  usage: Usage;
  apiCalls: number;
  lastContext: number;
  costUsd: number | null;
  costStatus: CostStatus | null;
}

export function emptyTally(): SessionTally {
  return { usage: emptyUsage(), apiCalls: 0, lastContext: 0, costUsd: null, costStatus: null };
}

const STATUS_RANK: Record<CostStatus, number> = { included: 0, actual: 1, estimated: 2, unknown: 3 };

/** The worse of two statuses (the store merges the same way): one unpriced call makes the total a floor. */
export function worseStatus(a: CostStatus | null, b: CostStatus): CostStatus {
  return a === null || STATUS_RANK[b] > STATUS_RANK[a] ? b : a;
}

export function knownStatus(text: string | null): CostStatus | null {
  return text !== null && Object.hasOwn(STATUS_RANK, text) ? (text as CostStatus) : null;
}

/**
 * Drops the last `turns` user turns from a history: each user message and everything after it.
 * Pure; used when the conversation is not recorded.
 */
export function undoInMemory(
  messages: readonly Message[],
  turns: number,
): { messages: Message[]; removed: number; userText: string | null } {
  let cut = messages.length;
  let found = 0;
  for (let i = messages.length - 1; i >= 0 && found < turns; i--) {
    if (messages[i]?.role === "user") {
      cut = i;
      found++;
    }
  }
  if (found === 0) return { messages: [...messages], removed: 0, userText: null };
  const first = messages[cut];
  const userText = typeof first?.content === "string" ? first.content : null;
  return { messages: messages.slice(0, cut), removed: messages.length - cut, userText };
}
