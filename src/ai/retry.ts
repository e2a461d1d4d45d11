/**
 * Retry policy for model calls, driven by the error classifier's flags (never by matching message
 * strings): whether to repeat a failed call, how long to wait (the provider's Retry-After or reset
 * time when it gives one, else decorrelated jitter), and what to tell the user about it.
 */
import { type ClassifiedError, classifyApiError, type FailoverReason } from "./error-classifier.js";
import { findProvider, PROVIDERS } from "./providers.js";

export { type HeaderBag, parseDuration, parseResetHeaders, parseRetryAfter } from "./error-classifier.js";

export interface RetryPolicy {
  maxRetries: number;
  /** Shortest wait, and the lower bound of every jittered wait. */
  baseMs: number;
  /** Longest wait, also the most of a provider's Retry-After or reset time that is honoured. */
  capMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxRetries: 3, baseMs: 5_000, capMs: 120_000 };

/** Whether a failed model call is worth repeating unchanged (the classifier's `retryable`). */
export function isRetryable(error: unknown): boolean {
  return classifyApiError(error).retryable;
}

/** How long the provider asked to wait, in ms from `now`; undefined when it did not say. */
export function providerWaitMs(classified: ClassifiedError, now: number = Date.now()): number | undefined {
  if (classified.retryAfterMs !== undefined) return Math.max(0, classified.retryAfterMs);
  return classified.resetAt !== undefined ? Math.max(0, classified.resetAt - now) : undefined;
}

export interface DelayOptions {
  /** The delay used before the previous retry; decorrelated jitter grows from it. */
  previousMs?: number;
  now?: number;
  /** The error's classification when the caller already has it. */
  classified?: ClassifiedError;
}

/**
 * Delay before retry number `attempt` (1-based). The provider's wait (`retryAfterMs`, else
 * `resetAt`) when it gave one, capped at `policy.capMs`. Otherwise decorrelated jitter (AWS
 * style): a uniform pick between `baseMs` and three times the previous delay, capped. Without
 * `previousMs` the previous delay is taken as `baseMs · 2^(attempt-1)`, which is `baseMs` for the
 * first retry.
 */
export function retryDelayMs(
  attempt: number,
  error: unknown,
  policy: RetryPolicy,
  random: () => number = Math.random,
  options: DelayOptions = {},
): number {
  const now = options.now ?? Date.now();
  const classified = options.classified ?? classifyApiError(error, { now });
  const wait = providerWaitMs(classified, now);
  if (wait !== undefined) return Math.min(wait, policy.capMs);
  const previous = options.previousMs ?? policy.baseMs * 2 ** Math.max(0, attempt - 1);
  const high = Math.max(policy.baseMs, Math.min(policy.capMs, previous * 3));
  const pick = Math.min(1, Math.max(0, random()));
  return Math.round(Math.min(policy.capMs, policy.baseMs + pick * (high - policy.baseMs)));
}

export type RetryPlan =
  | { retry: true; delayMs: number }
  | {
      retry: false;
      /** `wait_too_long`: the provider asks for longer than `policy.capMs`, so a retry would fail too. */
      why: "not_retryable" | "exhausted" | "wait_too_long";
    };

/**
 * Whether to make retry number `retryNumber` (1-based) for a classified failure, and after how long.
 * Only `retryable` failures are repeated; flags such as `shouldCompress` or `shouldRotateCredential`
 * need a changed request and are left to the caller.
 */
export function planRetry(
  classified: ClassifiedError,
  retryNumber: number,
  policy: RetryPolicy,
  options: Omit<DelayOptions, "classified"> & { random?: () => number } = {},
): RetryPlan {
  if (!classified.retryable) return { retry: false, why: "not_retryable" };
  if (retryNumber > policy.maxRetries) return { retry: false, why: "exhausted" };
  const now = options.now ?? Date.now();
  const wait = providerWaitMs(classified, now);
  if (wait !== undefined && wait > policy.capMs) return { retry: false, why: "wait_too_long" };
  const delayMs = retryDelayMs(retryNumber, undefined, policy, options.random, {
    ...options,
    now,
    classified,
  });
  return { retry: true, delayMs };
}

// ── what to tell the user ───────────────────────────────────────────────

const SHRINK = "compress the conversation with /compress or start a new one with /new";
const TRANSIENT = "usually temporary; try again shortly or switch model with /model";
const HINTS: Partial<Record<FailoverReason, string>> = {
  auth_permanent:
    "this key or account may not use this model or endpoint; check its permissions or use /model",
  billing: "add credits or check the plan's billing, or switch provider with /model",
  overloaded: TRANSIENT,
  server_error: TRANSIENT,
  timeout: "check the network connection and that the base URL is reachable",
  context_overflow: SHRINK,
  payload_too_large: SHRINK,
  long_context_tier: "compress below 200k tokens with /compress, or enable extra usage for the account",
  image_too_large: "attach a smaller or downscaled image",
  max_tokens_too_large: "lower model.max_tokens in config.yaml",
  model_not_found:
    "check the model name (model.default in config.yaml, or /model) and that the provider serves it",
  provider_policy_blocked: "choose another model or provider with /model",
  content_filter: "rephrase the request or use another model",
  thinking_signature: "start a new session with /new if this repeats",
  invalid_encrypted_content: "start a new session with /new if this repeats",
  format_error: "the model or provider may not support an option in this request",
};

/** The first API-key variable of the provider named, or of the catalog entry serving `baseUrl`. */
function keyVariable(provider: string | undefined, baseUrl: string | undefined): string | undefined {
  const host = (url: string) => /^https?:\/\/([^/]+)/.exec(url)?.[1];
  const wanted = host(baseUrl ?? "");
  const profile = provider
    ? findProvider(provider)
    : PROVIDERS.find((p) => wanted !== undefined && host(p.baseUrl) === wanted);
  return profile?.apiKeyEnv[0];
}

function formatWait(ms: number): string {
  const s = Math.ceil(ms / 1000);
  return s < 120 ? `${s}s` : s < 7200 ? `${Math.round(s / 60)} min` : `${Math.round(s / 3600)} h`;
}

/**
 * What the user can do about a failure, or undefined when there is nothing specific
 * ("check OPENROUTER_API_KEY in ~/.hermes/.env", "the limit resets in about 5 min").
 */
export function failureHint(
  classified: ClassifiedError,
  context: { provider?: string; now?: number } = {},
): string | undefined {
  const c = classified;
  if (c.reason === "auth") {
    const variable = keyVariable(context.provider, c.baseUrl);
    return variable
      ? `check ${variable} in ~/.hermes/.env`
      : "check the provider's API key in ~/.hermes/.env (or model.api_key in config.yaml)";
  }
  if (c.reason === "rate_limit") {
    const wait = providerWaitMs(c, context.now);
    return wait ? `the limit resets in about ${formatWait(wait)}` : "wait a little or lower the request rate";
  }
  if (
    c.reason === "provider_policy_blocked" &&
    /openrouter/.test(`${context.provider ?? ""} ${c.baseUrl ?? ""}`)
  )
    return "allow more providers at https://openrouter.ai/settings/privacy or choose another model";
  const lowerable =
    c.reason === "billing" || c.reason === "context_overflow" || c.reason === "max_tokens_too_large";
  if (lowerable && c.availableOutputTokens !== undefined)
    return `set model.max_tokens in config.yaml to ${c.availableOutputTokens} or less, or ${HINTS[c.reason]}`;
  return HINTS[c.reason];
}

/** One line for the user when a model call has failed for good: "the API key was rejected (401): check ...". */
export function failureAdvice(
  classified: ClassifiedError,
  context: { provider?: string; now?: number } = {},
): string {
  const hint = failureHint(classified, context);
  return hint ? `${classified.message}: ${hint}` : classified.message;
}

/**
 * The warning shown before a retry: "Rate limited by the provider (429): slow down. Retrying in
 * 12.0s (attempt 1 of 3)."
 */
export function retryNotice(
  classified: ClassifiedError,
  delayMs: number,
  attempt: number,
  maxRetries: number,
): string {
  const what = classified.message.charAt(0).toUpperCase() + classified.message.slice(1);
  const detail = classified.detail ? `: ${classified.detail.replace(/[.\s]+$/, "")}` : "";
  return `${what}${detail}. Retrying in ${(delayMs / 1000).toFixed(1)}s (attempt ${attempt} of ${maxRetries}).`;
}

/** Sleeps `ms`, resolving early (with false) when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
