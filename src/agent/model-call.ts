/**
 * One model call of the loop, with everything that may happen when it fails: strip replayed
 * reasoning, rotate to another key, lower max_tokens, compress, rebuild the client, move to a
 * fallback provider, or wait and repeat on the retry ladder (`ai/retry.ts`). Every branch reads
 * the error classifier's flags; nothing here matches message text. Each wait is announced with a
 * `retry` event before it starts, so the user sees it wherever output goes.
 */
import type { ClassifiedError } from "../ai/error-classifier.js";
import { classifyApiError } from "../ai/error-classifier.js";
import {
  DEFAULT_RETRY_POLICY,
  failureAdvice,
  giveUpNotice,
  RetryLadder,
  type RetryPlan,
  type RetryPolicy,
  retryNotice,
  sleep,
} from "../ai/retry.js";
import {
  type FinishReason,
  type Message,
  ProviderError,
  type ToolSchema,
  type Transport,
  type Usage,
} from "../ai/types.js";
import type { AgentEvent } from "./events.js";
import {
  loweredMaxTokens,
  type ModelRecovery,
  type ModelRoute,
  withoutReplayedReasoning,
} from "./recovery.js";
import { mergeUserRuns } from "./role-alternation.js";
import { wellFormed, wellFormedMessages } from "./unicode.js";

/** What a model call needs from the loop's dependencies (`LoopDeps` extends it). */
export interface ModelCallDeps {
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
  emit(event: AgentEvent): void;
  /**
   * Credential rotation, client rebuild and provider fallback for failed model calls. Absent: the
   * loop only strips reasoning, lowers max_tokens, waits and repeats.
   */
  recovery?: ModelRecovery;
  /**
   * Compression hook for failures the classifier flags `shouldCompress` (context overflow, 413):
   * shrinks `messages` in place and resolves true when it did; absent means "cannot". `failure`
   * is the classified error (the agent learns a smaller context window from it).
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

export interface ModelReply {
  message: Message;
  finish: FinishReason;
}

/**
 * A model call that failed for good. `advice` is the one line for the user: what failed, why no
 * more retries were made, and what to do; `cause` is the last error.
 */
export class ModelCallError extends Error {
  readonly advice: string;
  readonly classified: ClassifiedError;
  constructor(cause: unknown, classified: ClassifiedError, advice: string) {
    super(describeProviderError(cause), { cause });
    this.name = "ModelCallError";
    this.classified = classified;
    this.advice = advice;
  }
}

/**
 * Calls the model once on the turn's route, recovering from failures as the classifier's flags
 * allow. Streams text and reasoning as events; returns the finished message, or throws an
 * `AbortError` when `signal` aborts, or a `ModelCallError`; either way `failed.partialText` is then
 * the streamed text of the attempt that failed (empty when none, or when it failed while waiting).
 */
export async function callModel(
  messages: Message[],
  deps: ModelCallDeps,
  route: TurnRoute,
  withTools: boolean,
  usage: Usage,
  signal: AbortSignal,
  failed: { partialText: string } = { partialText: "" },
): Promise<ModelReply> {
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...deps.retry };
  const ladder = new RetryLadder(policy, deps.random ? { random: deps.random } : {});
  const system = wellFormed(
    deps.ephemeralSystemPrompt ? `${deps.systemPrompt}\n\n${deps.ephemeralSystemPrompt}` : deps.systemPrompt,
  );
  const build = () => {
    const maxTokens = route.maxTokens ?? deps.maxTokens;
    const history = wellFormedMessages(mergeUserRuns(messages));
    return {
      model: route.fallback?.model ?? deps.model,
      messages: [
        { role: "system" as const, content: system },
        ...(route.stripReasoning ? withoutReplayedReasoning(history) : history),
      ],
      ...(withTools ? { tools: [...deps.tools] } : {}),
      ...(maxTokens ? { maxTokens } : {}),
      ...(deps.reasoningEffort ? { reasoningEffort: deps.reasoningEffort } : {}),
      ...(deps.extraBody ? { extraBody: deps.extraBody } : {}),
    };
  };
  let transport = route.fallback?.transport ?? route.primary;
  let lowered = false;
  let rebuilt = false;
  let compressed = false;
  while (true) {
    const request = build();
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
            addUsage(usage, event.usage);
            deps.emit({
              type: "usage",
              usage: event.usage,
              total: { ...usage },
              ...(route.fallback
                ? {
                    billing: {
                      model: route.fallback.model,
                      ...(route.fallback.provider ? { provider: route.fallback.provider } : {}),
                      ...(route.fallback.baseUrl ? { baseUrl: route.fallback.baseUrl } : {}),
                    },
                  }
                : {}),
            });
            break;
          case "finish":
            if (!route.fallback) await noteSuccess(deps);
            return { message: { ...event.message, role: "assistant" }, finish: event.reason };
          default:
            break;
        }
      }
      throw new ProviderError("The provider ended the response without finishing it.", {
        transport: true,
        partial: partialText.length > 0,
      });
    } catch (error) {
      failed.partialText = partialText;
      if (signal.aborted) throw abortError();
      // A failed attempt's text is not the answer, however much of it was shown: consumers are told
      // to take it back (the renderer holds or marks it), and the call is retried or fails below.
      // A stalled partial is never kept as if complete.
      if (partialText || partialToolCall) {
        deps.emit({
          type: "stream_discarded",
          text: partialText,
          reason: error instanceof Error ? error.message : String(error),
        });
      }
      const where = routeOf(deps, route);
      const classified = classifyModelError(error, deps, messages, request.model, route);
      const onPrimary = route.fallback === undefined;

      // 1. An invalid thinking signature or encrypted item: resend without replayed reasoning, once.
      if (classified.shouldStripReasoning && !route.stripReasoning) {
        route.stripReasoning = true;
        deps.emit({
          type: "warning",
          message: `${capitalise(classified.message)}. Retrying without the earlier reasoning blocks.`,
        });
        continue;
      }

      // 2. Another key of the same provider's pool (needs at least two usable keys).
      if (classified.shouldRotateCredential && onPrimary && deps.recovery?.rotateCredential) {
        const rotated = await deps.recovery.rotateCredential(classified);
        if (rotated) {
          transport = rotated;
          route.primary = rotated;
          deps.emit({
            type: "warning",
            message: `${capitalise(classified.message)}. Switched to the next credential of ${deps.recovery.primaryLabel} and retrying.`,
          });
          continue;
        }
      }

      // 3. max_tokens larger than the provider allows: lower it to what fits, once.
      if (classified.availableOutputTokens !== undefined && !lowered) {
        lowered = true;
        route.maxTokens = loweredMaxTokens(classified.availableOutputTokens);
        deps.emit({
          type: "warning",
          message: `${capitalise(classified.message)}. Retrying with max_tokens ${route.maxTokens}.`,
        });
        continue;
      }

      // 4. Too big for the model or the endpoint (context overflow, 413): compress, then resend.
      if (classified.shouldCompress && deps.compress && !compressed) {
        compressed = true;
        if (await deps.compress(classified)) continue;
      }

      const plan = ladder.plan(classified);

      // 5. A connection failure after a retry already failed: a fresh client, then go on retrying.
      const connection = error instanceof ProviderError && error.transport;
      const again = plan.retry && ladder.retries >= 1;
      if (connection && again && !rebuilt && onPrimary && deps.recovery?.rebuildTransport) {
        rebuilt = true;
        const fresh = await deps.recovery.rebuildTransport();
        if (fresh) {
          transport = fresh;
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
          transport = next.transport;
          ladder.newRoute();
          lowered = false;
          continue;
        }
      }

      // 7. Wait and repeat, or give up with the error and what to do about it.
      if (!plan.retry) throw gaveUp(error, classified, plan, ladder, where.label);
      deps.emit({
        type: "retry",
        message: retryNotice(classified, plan, { provider: where.label }),
        reason: classified.reason,
        delayMs: plan.delayMs,
        attempt: plan.attempt,
        attempts: plan.attempts,
        ...(classified.status !== undefined ? { status: classified.status } : {}),
        ...(where.label ? { provider: where.label } : {}),
      });
      ladder.waitedFor(plan.delayMs, classified);
      failed.partialText = "";
      if (!(await sleep(plan.delayMs, signal))) throw abortError();
    }
  }
}

function gaveUp(
  error: unknown,
  classified: ClassifiedError,
  plan: Extract<RetryPlan, { retry: false }>,
  ladder: RetryLadder,
  provider: string | undefined,
): ModelCallError {
  const context = provider ? { provider } : {};
  const advice =
    plan.why === "not_retryable"
      ? failureAdvice(classified, context)
      : giveUpNotice(classified, plan, {
          ...context,
          budgetMs: ladder.policy.budgetMs,
          waitedMs: ladder.waitedMs,
        });
  return new ModelCallError(error, classified, advice);
}

/**
 * The route in use as the user knows it: the provider id, or the endpoint's host for a custom
 * one (`127.0.0.1:8080`), and its base URL.
 */
function routeOf(deps: ModelCallDeps, route: TurnRoute): { label?: string; baseUrl?: string } {
  const provider = route.fallback ? route.fallback.provider : deps.provider;
  const baseUrl = route.fallback ? route.fallback.baseUrl : deps.baseUrl;
  let host: string | undefined;
  try {
    host = baseUrl ? new URL(baseUrl).host : undefined;
  } catch {
    host = undefined;
  }
  const label = provider && provider !== "custom" ? provider : (host ?? provider);
  return { ...(label ? { label } : {}), ...(baseUrl ? { baseUrl } : {}) };
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

function addUsage(total: Usage, add: Usage): void {
  total.inputTokens += add.inputTokens;
  total.outputTokens += add.outputTokens;
  total.cacheReadTokens = (total.cacheReadTokens ?? 0) + (add.cacheReadTokens ?? 0);
  total.cacheWriteTokens = (total.cacheWriteTokens ?? 0) + (add.cacheWriteTokens ?? 0);
  total.reasoningTokens = (total.reasoningTokens ?? 0) + (add.reasoningTokens ?? 0);
}

export function abortError(): Error {
  const error = new Error("The turn was interrupted.");
  error.name = "AbortError";
  return error;
}

/** Classifies a failed model call with what the loop knows: the model, endpoint and conversation size. */
function classifyModelError(
  error: unknown,
  deps: ModelCallDeps,
  messages: readonly Message[],
  model: string,
  route: TurnRoute,
): ClassifiedError {
  // About 4 characters per token; only the order of magnitude matters ("a large session").
  const chars = deps.systemPrompt.length + JSON.stringify(messages).length;
  const provider = route.fallback ? route.fallback.provider : deps.provider;
  const baseUrl = route.fallback ? route.fallback.baseUrl : deps.baseUrl;
  return classifyApiError(error, {
    model,
    approxContextTokens: Math.ceil(chars / 4),
    ...(provider ? { provider } : {}),
    ...(baseUrl ? { baseUrl } : {}),
  });
}

/** One line for the user: what failed, with the provider's status and message. */
export function describeProviderError(error: unknown): string {
  if (error instanceof ProviderError) {
    const status = error.status ? `HTTP ${error.status}` : error.transport ? "connection problem" : "error";
    const detail = error.message.replace(/\s+/g, " ").slice(0, 300);
    return `Provider ${status}: ${detail}`;
  }
  return `Model call failed: ${error instanceof Error ? error.message : String(error)}`;
}
