/**
 * Token usage arithmetic, written once: the loop's per-turn total, the agent's per-session total
 * and a conversation's `/usage` tally all add usage the same way. Pure; inputs are never changed.
 */
import type { Usage } from "./types.js";

/** A usage with every counter present and zero. */
export function emptyUsage(): Usage {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
}

/**
 * `total + add`, counter by counter. A counter a provider did not report counts as 0, and the sum
 * always carries all five counters (a total that once saw cache reads keeps reporting them).
 */
export function addUsage(total: Usage, add: Usage): Usage {
  return {
    inputTokens: total.inputTokens + add.inputTokens,
    outputTokens: total.outputTokens + add.outputTokens,
    cacheReadTokens: (total.cacheReadTokens ?? 0) + (add.cacheReadTokens ?? 0),
    cacheWriteTokens: (total.cacheWriteTokens ?? 0) + (add.cacheWriteTokens ?? 0),
    reasoningTokens: (total.reasoningTokens ?? 0) + (add.reasoningTokens ?? 0),
  };
}
