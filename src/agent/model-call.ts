/**
 * One model call of the loop, with everything that may happen when it fails: strip replayed
 * reasoning, rotate to another key, lower max_tokens, compress, rebuild the client, move to a
 * fallback provider, or wait and repeat on the retry ladder (`ai/retry.ts`). Every branch reads
 * the error classifier's flags; nothing here matches message text. Each wait is announced with a
 * `retry` event before it starts, so the user sees it wherever output goes.
 */
import type { ClassifiedError } from "../ai/error-classifier.js";
import {
  DEFAULT_RETRY_POLICY,
  RetryLadder,
  type RetryPlan,
  type RetryPolicy,
  retryNotice,
  sleep,
} from "../ai/retry.js";
import {
  type ChatRequest,
  type FinishReason,
  type Message,
  ProviderError,
  type ToolSchema,
  type Transport,
  type Usage,
} from "../ai/types.js";
import { addUsage, emptyUsage } from "../ai/usage.js";
import type { AgentEvent } from "./events.js";
import { classifyModelError, gaveUp, type ModelCallError, routeOf } from "./model-failure.js";
import {
  loweredMaxTokens,
  type ModelRecovery,
  type ModelRoute,
  withoutReplayedReasoning,
} from "./recovery.js";
import { mergeUserRuns } from "./role-alternation.js";
import { wellFormed, wellFormedMessages } from "./unicode.js";

/**
 * What a model call needs from the loop's dependencies (`LoopDeps` extends it). Function members
 * must not throw; the loop holds them to it (`guardLoopDeps` in loop-deps.ts).
 */
export interface ModelCallDeps {
  /** Streams one attempt. May throw (`ProviderError`): that is how a failed attempt is reported. */
  transport: Transport;
  model: string;
  /** Frozen for the session (prompt-cache invariant). */
  tools: readonly ToolSchema[];
  systemPrompt: string;
  /** Added to the system message of every request but never stored in the transcript. */
  ephemeralSystemPrompt?: string;
  maxTokens?: number;
  reasoningEffort?: string;
  extraBody?: Record<string, unknown>;
  /** Retry policy; fields left out take `DEFAULT_RETRY_POLICY`'s. */
  retry?: Partial<RetryPolicy>;
  /**
   * The primary route's provider id and endpoint: named in retry lines ("rate limited by
   * openrouter") and read by the classifier (a refused connection to a local server fails fast).
   */
  provider?: string;
  baseUrl?: string;
  /** Random source for backoff jitter (tests make it fixed). */
  random?: () => number;
  /** Receives every event of the turn, in order. Must not throw; a throw is ignored. */
  emit(event: AgentEvent): void;
  /**
   * Credential rotation, client rebuild and provider fallback for failed model calls. Absent: the
   * loop only strips reasoning, lowers max_tokens, waits and repeats. Its hooks must not throw; a
   * throw: a warning, and the hook counts as "not possible" (undefined).
   */
  recovery?: ModelRecovery;
  /**
   * Compression hook for failures the classifier flags `shouldCompress` (context overflow, 413):
   * shrinks `messages` in place and resolves true when it did; absent or false means "cannot", and
   * the failure goes on to the retry ladder. `failure` is the classified error (the agent learns a
   * smaller context window from it). Must not reject; a rejection: a warning, then false.
   */
  compress?(failure: ClassifiedError): Promise<boolean>;
}

/** Per-turn recovery state: a fallback route lasts until the turn ends. */
export interface TurnRoute {
  /** The primary transport (replaced by credential rotation or a rebuilt client). */
  primary: Transport;
  /** The fallback in use, or undefined while on the primary. */
  fallback: ModelRoute | undefined;
  /** Index of the next `fallback_providers` entry to try. */
  nextFallback: number;
  /** Replayed reasoning is left out of requests after an invalid signature (once per turn). */
  stripReasoning: boolean;
  /** max_tokens lowered after the provider said fewer output tokens fit. */
  maxTokens: number | undefined;
}

/** What one user turn carries from model call to model call. */
export interface ModelTurn {
  route: TurnRoute;
  /** Usage of every model call of the turn so far (`total` of the `usage` events). */
  usage: Usage;
}

/** A turn that has made no model call yet, on `primary`. */
export function newModelTurn(primary: Transport): ModelTurn {
  return {
    route: { primary, fallback: undefined, nextFallback: 0, stripReasoning: false, maxTokens: undefined },
    usage: emptyUsage(),
  };
}

/**
 * How a model call ended. `partialText` is the text streamed by the attempt that failed ("" when
 * none came, or when the call stopped while waiting to retry): the loop stores it, marked as
 * interrupted, so the model and the transcript see where the answer broke off.
 */
export type ModelCallResult =
  | { type: "reply"; message: Message; finish: FinishReason }
  | { type: "aborted"; partialText: string }
  | { type: "failed"; error: ModelCallError; partialText: string };

/** What one model call tracks across its attempts. */
interface Attempts {
  transport: Transport;
  ladder: RetryLadder;
  /** Each of these recoveries is tried once per call. */
  lowered: boolean;
  rebuilt: boolean;
  compressed: boolean;
}

/** One attempt's end: the reply, or the error with what had streamed before it. */
type AttemptResult =
  | { type: "reply"; message: Message; finish: FinishReason }
  | { type: "error"; error: unknown; partialText: string; partialToolCall: boolean };

/** What to do after a failed attempt. */
type NextStep =
  | { type: "again" }
  | {
      type: "wait";
      plan: Extract<RetryPlan, { retry: true }>;
      classified: ClassifiedError;
      provider?: string;
    }
  | { type: "give_up"; error: ModelCallError };

/**
 * Calls the model once on the turn's route, recovering from failures as the classifier's flags
 * allow. Streams text and reasoning as events and adds usage to `turn.usage`. Resolves to the
 * reply, or how it stopped (aborted, or failed for good); does not reject unless a dependency
 * breaks its contract.
 */
export async function callModel(
  messages: Message[],
  deps: ModelCallDeps,
  turn: ModelTurn,
  withTools: boolean,
  signal: AbortSignal,
): Promise<ModelCallResult> {
  const route = turn.route;
  const attempts: Attempts = {
    transport: route.fallback?.transport ?? route.primary,
    ladder: new RetryLadder(
      { ...DEFAULT_RETRY_POLICY, ...deps.retry },
      deps.random ? { random: deps.random } : {},
    ),
    lowered: false,
    rebuilt: false,
    compressed: false,
  };
  while (true) {
    const request = buildRequest(messages, deps, route, withTools);
    const attempt = await streamAttempt(attempts.transport, request, deps, turn, signal);
    if (attempt.type === "reply") {
      if (!route.fallback) await noteSuccess(deps);
      return attempt;
    }
    if (signal.aborted) return { type: "aborted", partialText: attempt.partialText };
    // A failed attempt's text is not the answer, however much of it was shown: consumers are told
    // to take it back (the renderer holds or marks it), and the call is retried or fails below.
    // A stalled partial is never kept as if complete.
    if (attempt.partialText || attempt.partialToolCall) {
      deps.emit({
        type: "stream_discarded",
        text: attempt.partialText,
        reason: attempt.error instanceof Error ? attempt.error.message : String(attempt.error),
      });
    }
    const classified = classifyModelError(attempt.error, route.fallback ?? deps, {
      systemPrompt: deps.systemPrompt,
      messages,
      model: request.model,
    });
    const next = await nextStep(attempt.error, classified, deps, route, attempts);
    if (next.type === "again") continue;
    if (next.type === "give_up")
      return { type: "failed", error: next.error, partialText: attempt.partialText };
    announceRetry(deps, next);
    attempts.ladder.waitedFor(next.plan.delayMs, classified);
    if (!(await sleep(next.plan.delayMs, signal))) return { type: "aborted", partialText: "" };
  }
}

/** The request of the next attempt: the route's model and limits over the history as it is now. */
function buildRequest(messages: Message[], deps: ModelCallDeps, route: TurnRoute, withTools: boolean) {
  const system = wellFormed(
    deps.ephemeralSystemPrompt ? `${deps.systemPrompt}\n\n${deps.ephemeralSystemPrompt}` : deps.systemPrompt,
  );
  const maxTokens = route.maxTokens ?? deps.maxTokens;
  const history = wellFormedMessages(mergeUserRuns(messages));
  return {
    model: route.fallback?.model ?? deps.model,
    messages: [
      { role: "system" as const, content: system },
      ...(route.stripReasoning ? withoutReplayedReasoning(history) : history),
    ],
    ...(withTools ? { tools: deps.tools } : {}),
    ...(maxTokens ? { maxTokens } : {}),
    ...(deps.reasoningEffort ? { reasoningEffort: deps.reasoningEffort } : {}),
    ...(deps.extraBody ? { extraBody: deps.extraBody } : {}),
  };
}

/** Streams one attempt, passing text, reasoning and usage on as events as they arrive. */
async function streamAttempt(
  transport: Transport,
  request: ChatRequest,
  deps: ModelCallDeps,
  turn: ModelTurn,
  signal: AbortSignal,
): Promise<AttemptResult> {
  let partialText = "";
  let partialToolCall = false;
  try {
    for await (const event of transport.stream(request, signal)) {
      switch (event.type) {
        case "text_delta":
          partialText += event.text;
          deps.emit({ type: "text_delta", text: event.text });
          break;
        case "tool_call_delta":
        case "tool_call":
          partialToolCall = true;
          break;
        case "reasoning_delta":
          deps.emit({ type: "reasoning_delta", text: event.text });
          break;
        case "usage":
          turn.usage = addUsage(turn.usage, event.usage);
          deps.emit({ type: "usage", usage: event.usage, total: turn.usage, ...billingOf(turn.route) });
          break;
        case "finish":
          return { type: "reply", message: { ...event.message, role: "assistant" }, finish: event.reason };
        default:
          break;
      }
    }
    throw new ProviderError("The provider ended the response without finishing it.", {
      transport: true,
      partial: partialText.length > 0,
    });
  } catch (error) {
    return { type: "error", error, partialText, partialToolCall };
  }
}

/** Usage on a fallback is priced as the fallback provider's model, not the session's. */
function billingOf(route: TurnRoute): { billing?: { model: string; provider?: string; baseUrl?: string } } {
  const fallback = route.fallback;
  if (!fallback) return {};
  return {
    billing: {
      model: fallback.model,
      ...(fallback.provider ? { provider: fallback.provider } : {}),
      ...(fallback.baseUrl ? { baseUrl: fallback.baseUrl } : {}),
    },
  };
}

/**
 * Recoveries that change the request and try again at once, each at most once per call (rotation
 * as long as the pool has keys). True when one applied.
 */
async function recoveredInPlace(
  classified: ClassifiedError,
  deps: ModelCallDeps,
  route: TurnRoute,
  attempts: Attempts,
): Promise<boolean> {
  // 1. An invalid thinking signature or encrypted item: resend without replayed reasoning, once.
  if (classified.shouldStripReasoning && !route.stripReasoning) {
    route.stripReasoning = true;
    deps.emit({
      type: "warning",
      message: `${capitalise(classified.message)}. Retrying without the earlier reasoning blocks.`,
    });
    return true;
  }
  // 2. Another key of the same provider's pool (needs at least two usable keys).
  if (classified.shouldRotateCredential && route.fallback === undefined && deps.recovery?.rotateCredential) {
    const rotated = await deps.recovery.rotateCredential(classified);
    if (rotated) {
      attempts.transport = rotated;
      route.primary = rotated;
      deps.emit({
        type: "warning",
        message: `${capitalise(classified.message)}. Switched to the next credential of ${deps.recovery.primaryLabel} and retrying.`,
      });
      return true;
    }
  }
  // 3. max_tokens larger than the provider allows: lower it to what fits, once.
  if (classified.availableOutputTokens !== undefined && !attempts.lowered) {
    attempts.lowered = true;
    route.maxTokens = loweredMaxTokens(classified.availableOutputTokens);
    deps.emit({
      type: "warning",
      message: `${capitalise(classified.message)}. Retrying with max_tokens ${route.maxTokens}.`,
    });
    return true;
  }
  // 4. Too big for the model or the endpoint (context overflow, 413): compress, then resend.
  if (classified.shouldCompress && deps.compress && !attempts.compressed) {
    attempts.compressed = true;
    if (await deps.compress(classified)) return true;
  }
  return false;
}

/** After a failed attempt: try again now, wait and try again, or give up. */
async function nextStep(
  error: unknown,
  classified: ClassifiedError,
  deps: ModelCallDeps,
  route: TurnRoute,
  attempts: Attempts,
): Promise<NextStep> {
  if (await recoveredInPlace(classified, deps, route, attempts)) return { type: "again" };
  const where = routeOf(route.fallback ?? deps);
  const onPrimary = route.fallback === undefined;
  const plan = attempts.ladder.plan(classified);

  // 5. A connection failure after a retry already failed: a fresh client, then go on retrying.
  const connection = error instanceof ProviderError && error.transport;
  const again = plan.retry && attempts.ladder.retries >= 1;
  if (connection && again && !attempts.rebuilt && onPrimary && deps.recovery?.rebuildTransport) {
    attempts.rebuilt = true;
    const fresh = await deps.recovery.rebuildTransport();
    if (fresh) {
      attempts.transport = fresh;
      route.primary = fresh;
    }
  }

  // 6. Billing, permanent auth, unknown model, policy, a local server that is down: fall back
  // now; other retryable failures once their retries (or the time for them) are spent. The
  // fallback holds for the rest of this turn.
  const fallBackNow =
    (classified.shouldFallback && !classified.retryable) ||
    (!plan.retry && (classified.retryable || classified.shouldFallback));
  if (fallBackNow && deps.recovery?.fallback) {
    const next = await nextFallback(deps.recovery, route, classified, deps);
    if (next) {
      attempts.transport = next.transport;
      attempts.ladder.newRoute();
      attempts.lowered = false;
      return { type: "again" };
    }
  }

  // 7. Wait and repeat, or give up with the error and what to do about it.
  if (!plan.retry)
    return { type: "give_up", error: gaveUp(error, classified, plan, attempts.ladder, where.label) };
  return { type: "wait", plan, classified, ...(where.label ? { provider: where.label } : {}) };
}

/** Said before the wait starts, so the user always sees why nothing happens. */
function announceRetry(deps: ModelCallDeps, step: Extract<NextStep, { type: "wait" }>): void {
  const { plan, classified, provider } = step;
  deps.emit({
    type: "retry",
    message: retryNotice(classified, plan, { provider }),
    reason: classified.reason,
    delayMs: plan.delayMs,
    attempt: plan.attempt,
    attempts: plan.attempts,
    ...(classified.status !== undefined ? { status: classified.status } : {}),
    ...(provider ? { provider } : {}),
  });
}

/** Switches the turn to the next usable fallback; undefined when none is left. */
async function nextFallback(
  recovery: ModelRecovery,
  route: TurnRoute,
  failure: ClassifiedError,
  deps: ModelCallDeps,
): Promise<ModelRoute | undefined> {
  const failedLabel = route.fallback?.label ?? recovery.primaryLabel;
  while (recovery.fallback) {
    const index = route.nextFallback++;
    const candidate = await recovery.fallback(index);
    if (candidate === undefined) return undefined;
    if (candidate instanceof Error) {
      deps.emit({ type: "warning", message: `Skipping ${candidate.message}` });
      continue;
    }
    route.fallback = candidate;
    route.maxTokens = undefined;
    deps.emit({
      type: "warning",
      message: `${failedLabel} failed: ${failure.message}. Using fallback ${candidate.label} for the rest of this turn.`,
    });
    return candidate;
  }
  return undefined;
}

async function noteSuccess(deps: ModelCallDeps): Promise<void> {
  try {
    await deps.recovery?.succeeded?.();
  } catch {
    // Bookkeeping of the key's use must not fail a call that succeeded.
  }
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
