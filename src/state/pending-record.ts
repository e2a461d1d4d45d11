/**
 * The session record a queued `createSession` answers with before its row is in the file: what
 * `getSession` will read back once it is.
 */
import { sanitizeTitle } from "./titles.js";
import type { NewSession, SessionRecord } from "./types.js";

/** The row `createSession` will write, as `getSession` will read it back. */
export function pendingRecord(s: NewSession & { id: string; startedAt: number }): SessionRecord {
  const config =
    s.modelConfig && Object.keys(s.modelConfig).length > 0 ? JSON.stringify(s.modelConfig) : null;
  return {
    id: s.id,
    source: s.source,
    userId: s.userId ?? null,
    model: s.model ?? null,
    modelConfig: config,
    systemPrompt: s.systemPrompt ?? null,
    parentSessionId: s.parentSessionId ?? null,
    startedAt: s.startedAt,
    endedAt: null,
    endReason: null,
    messageCount: 0,
    toolCallCount: 0,
    apiCallCount: 0,
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    estimatedCostUsd: null,
    actualCostUsd: null,
    costStatus: null,
    costSource: null,
    pricingVersion: null,
    cwd: s.cwd ?? null,
    gitBranch: s.gitBranch ?? null,
    gitRepoRoot: s.gitRepoRoot ?? null,
    billingProvider: s.billingProvider ?? null,
    billingBaseUrl: s.billingBaseUrl ?? null,
    title: sanitizeTitle(s.title ?? null),
    archived: false,
  };
}
