/**
 * A model call that failed: how it is classified with what the loop knows, and the one line the
 * user is told when no recovery is left.
 */
import { type ClassifiedError, classifyApiError } from "../ai/error-classifier.js";
import { failureAdvice, giveUpNotice, type RetryLadder, type RetryPlan } from "../ai/retry.js";
import { type Message, ProviderError } from "../ai/types.js";

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

export function gaveUp(
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

/** Where a call went: the primary's provider and endpoint, or the fallback's in use. */
export interface CallEndpoint {
  provider?: string | undefined;
  baseUrl?: string | undefined;
}

/**
 * The endpoint as the user knows it: the provider id, or the endpoint's host for a custom one
 * (`127.0.0.1:8080`), and its base URL.
 */
export function routeOf({ provider, baseUrl }: CallEndpoint): { label?: string; baseUrl?: string } {
  let host: string | undefined;
  try {
    host = baseUrl ? new URL(baseUrl).host : undefined;
  } catch {
    host = undefined;
  }
  const label = provider && provider !== "custom" ? provider : (host ?? provider);
  return { ...(label ? { label } : {}), ...(baseUrl ? { baseUrl } : {}) };
}

/** Classifies a failed model call with what the loop knows: the model, endpoint and conversation size. */
export function classifyModelError(
  error: unknown,
  { provider, baseUrl }: CallEndpoint,
  request: { systemPrompt: string; messages: readonly Message[]; model: string },
): ClassifiedError {
  // About 4 characters per token; only the order of magnitude matters ("a large session").
  const chars = request.systemPrompt.length + JSON.stringify(request.messages).length;
  return classifyApiError(error, {
    model: request.model,
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
