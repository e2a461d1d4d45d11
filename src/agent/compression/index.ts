/** Context compression: pure functions over messages plus an injected summariser. */
export {
  type CompressionStatus,
  type CompressOptions,
  type CompressResult,
  compressMessages,
  fixToolPairs,
  isThrashing,
  THRASHING_MIN_SAVING,
} from "./compress.js";
export { type CompressionPlan, type PlanOptions, planCompression } from "./plan.js";
export {
  buildSummaryPrompt,
  formatSummaryMessage,
  isSummaryMessage,
  renderTurns,
  SUMMARY_END,
  SUMMARY_MARKER,
  splitSummaryMessage,
} from "./prompt.js";
export { PRUNE_MIN_CHARS, type PruneResult, pruneSummary, pruneToolResults } from "./prune.js";
export { estimateMessageTokens, estimateTextTokens, estimateTokens, shouldCompress } from "./tokens.js";
