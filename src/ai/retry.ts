/**
 * Retry policy for model calls: jittered exponential backoff that honours Retry-After. Decisions
 * come from the error's fields, never from matching message strings.
 */
import { ProviderError } from "./types.js";

export interface RetryPolicy {
  maxRetries: number;
  baseMs: number;
  capMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxRetries: 3, baseMs: 5_000, capMs: 120_000 };

/** Whether a failed model call is worth repeating as-is. */
export function isRetryable(error: unknown): boolean {
  if (!(error instanceof ProviderError)) return false;
  if (error.transport) return true;
  const status = error.status ?? 0;
  return status === 408 || status === 409 || status === 425 || status === 429 || status >= 500;
}

/**
 * Delay before retry number `attempt` (1-based): the provider's Retry-After when given (capped),
 * else decorrelated jitter between base and 3x the previous delay, capped.
 */
export function retryDelayMs(
  attempt: number,
  error: unknown,
  policy: RetryPolicy,
  random: () => number = Math.random,
): number {
  if (error instanceof ProviderError && error.retryAfterMs !== undefined) {
    return Math.min(Math.max(0, error.retryAfterMs), policy.capMs);
  }
  const exp = Math.min(policy.capMs, policy.baseMs * 2 ** (attempt - 1));
  return Math.round(policy.baseMs + random() * Math.max(0, exp - policy.baseMs));
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
