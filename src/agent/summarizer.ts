/**
 * The pieces of compression that talk to models: the summariser (the auxiliary chain, or the
 * session's own model when the agent was given a ready transport) and learning a smaller context
 * window from an overflow error.
 */
import { type AuxiliaryRuntime, auxiliaryComplete } from "../ai/auxiliary.js";
import { type ContextCheckMemo, isFreshCheck } from "../ai/context-checks.js";
import {
  type ContextLengthStore,
  catalogContextLength,
  contextCacheKey,
  contextLengthFor,
  probeDownContextLength,
} from "../ai/context-length.js";
import type { ClassifiedError } from "../ai/error-classifier.js";
import { fetchStatedWindow, statedContextLengths } from "../ai/model-metadata.js";
import type { ResolvedRuntime } from "../ai/resolve.js";
import type { Message, Transport } from "../ai/types.js";

const SUMMARY_MAX_TOKENS = 4000;

/** Summarises a compression prompt; rejects when no model gave a summary. */
export type Summarize = (prompt: string, signal?: AbortSignal) => Promise<string>;

/**
 * The summariser: the auxiliary `compression` chain when there is one, else `transport()` (the
 * session's current primary) with `model`.
 */
export function makeSummarizer(input: {
  chain: readonly AuxiliaryRuntime[];
  transport: () => Transport;
  model: string;
}): Summarize {
  return async (prompt, signal) => {
    const messages: Message[] = [{ role: "user", content: prompt }];
    if (input.chain.length > 0) {
      return (await auxiliaryComplete(input.chain, messages, { signal, maxTokens: SUMMARY_MAX_TOKENS })).text;
    }
    return collectText(
      input.transport(),
      { model: input.model, messages, maxTokens: SUMMARY_MAX_TOKENS },
      signal,
    );
  };
}

/** The text of one model response, with no tools. */
async function collectText(
  transport: Transport,
  request: { model: string; messages: Message[]; maxTokens: number },
  signal?: AbortSignal,
): Promise<string> {
  let text = "";
  let finalText = "";
  for await (const event of transport.stream(request, signal)) {
    if (event.type === "text_delta") text += event.text;
    else if (event.type === "finish")
      finalText = typeof event.message.content === "string" ? event.message.content : "";
  }
  const result = (finalText || text).trim();
  if (!result) throw new Error("The model returned an empty summary.");
  return result;
}

/**
 * After an overflow error: when the request (`sentTokens`) was smaller than the window assumed
 * (`current`), the window is smaller than thought. Returns the learnt size (the one the error
 * states, else the next tier down), stored in `store`; undefined when nothing was learnt. A
 * window set in config.yaml (`configured`) is the user's word and is kept.
 */
export async function learnContextLength(input: {
  failure: ClassifiedError;
  configured: number | null | undefined;
  sentTokens: number;
  current: number;
  model: string;
  baseUrl: string | undefined;
  store: ContextLengthStore;
}): Promise<number | undefined> {
  if (input.failure.reason !== "context_overflow" || input.configured) return undefined;
  if (input.sentTokens >= input.current) return undefined;
  const learnt = await probeDownContextLength({
    model: input.model,
    baseUrl: input.baseUrl,
    current: input.current,
    errorText: `${input.failure.detail ?? ""} ${input.failure.message}`,
    store: input.store,
  }).catch(() => undefined);
  return learnt !== undefined && learnt < input.current ? learnt : undefined;
}

/**
 * The context window to plan against now: config.yaml's `model.context_length`, a learnt or
 * cached size, the catalog, else the default. For a model none of those knows, on an
 * OpenAI-compatible endpoint, `stated` also asks the endpoint's model listing in the background
 * (it resolves to the stated window, cached for next time, or undefined), so start-up never waits.
 */
export function resolveContextLength(input: {
  model: string;
  config: { model: { context_length?: number | null | undefined } };
  runtime: ResolvedRuntime | undefined;
  store: ContextLengthStore;
  /** What listings said at earlier starts (`<home>/cache/context_length_checks.json`). */
  checks?: ContextCheckMemo | undefined;
  fetch?: typeof fetch;
  clock?: () => number;
}): { now: number; stated?: Promise<number | undefined> } {
  const { model, config, runtime, store } = input;
  const now = contextLengthFor(model, config, { ...(runtime ? { baseUrl: runtime.baseUrl } : {}), store });
  const configured = config.model.context_length;
  if (
    (typeof configured === "number" && configured > 0) ||
    !runtime ||
    runtime.apiMode !== "chat_completions"
  )
    return { now };
  const key = contextCacheKey(model, runtime.baseUrl);
  if (store.get(key) || catalogContextLength(model)) return { now };
  const clock = input.clock ?? Date.now;
  const checked = input.checks?.get(key);
  // An earlier start's answer: planned with at once, and not asked again while it is recent.
  const known = checked?.tokens ?? now;
  if (isFreshCheck(checked, clock())) return { now: known };
  const ask = {
    baseUrl: runtime.baseUrl,
    apiKey: runtime.apiKey,
    apiKeyHeader: runtime.apiKeyHeader,
    model,
    ...(input.fetch ? { fetch: input.fetch } : {}),
  };
  // Once per process and endpoint (an hour), not once per session: a server opens many sessions.
  // An injected fetch (tests) asks every time.
  const stated = (input.fetch ? fetchStatedWindow(ask) : statedContextLengths.get(ask)).then(
    async (answer) => {
      if (answer.answered) input.checks?.set(key, { tokens: answer.tokens, at: clock() });
      if (answer.tokens !== undefined)
        await Promise.resolve(store.set(key, answer.tokens)).catch(() => undefined);
      return answer.tokens;
    },
  );
  return { now: known, stated };
}
