/**
 * Keeping the conversation inside the model's window: compressing the history in place, and
 * learning a smaller window from an overflow error. The agent owns the state; these do the work.
 */
import { fileContextLengthStore } from "../ai/context-length.js";
import type { ClassifiedError } from "../ai/error-classifier.js";
import type { Message } from "../ai/types.js";
import type { HermesConfig } from "../config/defaults.js";
import { newSessionId } from "../util/session-id.js";
import type { CompressionReport } from "./agent-types.js";
import { compressMessages, estimateTokens } from "./compression/index.js";
import type { AgentEvent } from "./events.js";
import type { Frozen } from "./session-freeze.js";
import { learnContextLength } from "./summarizer.js";

export interface CompressionOutcome {
  report: CompressionReport;
  /** The new session id when the history was compressed (the old one becomes its parent). */
  childSessionId?: string;
}

/**
 * Compresses `history` in place when it is due (or `force`), records the pass in `passes`, and
 * tells `emit` what happened. A compressed history continues as a child session.
 */
export async function compressHistory(
  history: Message[],
  passes: number[],
  frozen: Frozen,
  config: HermesConfig,
  sessionId: string,
  emit: (e: AgentEvent) => void,
  options: { force?: boolean; focus?: string; signal?: AbortSignal },
): Promise<CompressionOutcome> {
  const result = await compressMessages(history, {
    summarize: (prompt) => frozen.summarize(prompt, options.signal),
    contextLength: frozen.contextLength,
    targetRatio: config.compression.target_ratio,
    previousPasses: passes,
    ...(options.force ? { force: true } : {}),
    ...(options.focus ? { focus: options.focus } : {}),
  });
  let childSessionId: string | undefined;
  if (result.status === "compressed") {
    history.splice(0, history.length, ...result.messages);
    passes.push(result.savedRatio);
    childSessionId = newSessionId();
    emit({
      type: "compression",
      sessionId,
      childSessionId,
      messages: [...result.messages],
      tokensBefore: result.tokensBefore,
      tokensAfter: result.tokensAfter,
    });
    emit({
      type: "warning",
      message: `Context compressed: about ${result.tokensBefore} → ${result.tokensAfter} tokens of conversation (${Math.round(result.savedRatio * 100)}% saved).`,
    });
  } else if (result.error) {
    emit({ type: "warning", message: result.error });
  }
  const report: CompressionReport = {
    status: result.status,
    tokensBefore: result.tokensBefore,
    tokensAfter: result.tokensAfter,
    ...(result.error ? { error: result.error } : {}),
  };
  return { report, ...(childSessionId ? { childSessionId } : {}) };
}

/**
 * After an overflow error: when the request was smaller than the window we assumed, the window
 * is smaller than we thought. Learn it (the size the error states, else the next tier down; see
 * summarizer.ts), cache it in `context_length_cache.yaml`, and plan compression against it from
 * now on. A window set in config.yaml is the user's word and is kept.
 */
export async function learnWindowFromOverflow(
  frozen: Frozen,
  failure: ClassifiedError,
  emit: (e: AgentEvent) => void,
  state: { config: HermesConfig; home: string; history: readonly Message[]; lastPromptTokens: number },
): Promise<void> {
  const learnt = await learnContextLength({
    failure,
    configured: state.config.model.context_length,
    sentTokens: Math.max(state.lastPromptTokens, estimateTokens([...state.history])),
    current: frozen.contextLength,
    model: frozen.model,
    baseUrl: frozen.baseUrl,
    store: fileContextLengthStore(state.home),
  });
  if (learnt === undefined) return;
  emit({
    type: "warning",
    message: `The provider's context window for ${frozen.model} is smaller than assumed: planning with ${learnt} tokens (was ${frozen.contextLength}).`,
  });
  frozen.contextLength = learnt;
}
