/**
 * Retry policy for model calls, driven by the error classifier's flags (never by matching message
 * strings): whether to repeat a failed call, how long to wait, and when to stop. Fitted to an
 * interactive tool: the first wait is short (1–2 s, jittered), waits grow, a transient failure
 * nothing explains is retried once, and one call never spends more than `budgetMs` waiting in all;
 * a provider that asks for a longer wait than is left is not waited for. Pure: clock and random
 * source are injected. What the user is told lives in `retry-notices.ts`.
 */
import { type ClassifiedError, classifyApiError } from "./error-classifier.js";

export { type HeaderBag, parseDuration, parseResetHeaders, parseRetryAfter } from "./error-classifier.js";
export {
  failureAdvice,
  failureHint,
  giveUpNotice,
  type RetryNoticeContext,
  retryNotice,
} from "./retry-notices.js";

export interface RetryPolicy {
  /** Retries after the first attempt (`agent.api_max_retries`); a failure's `retryLimit` may lower it. */
  maxRetries: number;
  /** Retry n waits between `baseMs·2^(n-1)` and twice that (so the first wait is base to 2·base). */
  baseMs: number;
  /** Longest single backoff wait (the provider's own Retry-After is bounded by `budgetMs` instead). */
  capMs: number;
  /**
   * Most time one model call may spend waiting across all its retries, provider waits included.
   * A provider asking for longer than what is left is not waited for: the call fails (or falls
   * back) at once with a message saying so.
   */
  budgetMs: number;
}

/**
 * The defaults: 3 retries (upstream's `agent.api_max_retries`), first wait 1–2 s, then 2–4 s and
 * 4–8 s, never more than 60 s of waiting for one call. Upstream Hermes has no key for the total,
 * so it is an internal default.
 */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxRetries: 3,
  baseMs: 1_000,
  capMs: 30_000,
  budgetMs: 60_000,
};

/** Whether a failed model call is worth repeating unchanged (the classifier's `retryable`). */
export function isRetryable(error: unknown): boolean {
  return classifyApiError(error).retryable;
}

/** How long the provider asked to wait, in ms from `now`; undefined when it did not say. */
export function providerWaitMs(classified: ClassifiedError, now: number = Date.now()): number | undefined {
  if (classified.retryAfterMs !== undefined) return Math.max(0, classified.retryAfterMs);
  return classified.resetAt !== undefined ? Math.max(0, classified.resetAt - now) : undefined;
}

/**
 * The jittered backoff before retry number `retryNumber` (1-based): uniform in
 * `[base·2^(n-1), 2·base·2^(n-1)]`, capped at `capMs`. Full-range jitter keeps clients that failed
 * together from retrying together; doubling makes each wait longer than the last.
 */
export function backoffMs(
  retryNumber: number,
  policy: RetryPolicy,
  random: () => number = Math.random,
): number {
  const step = policy.baseMs * 2 ** Math.max(0, retryNumber - 1);
  const pick = Math.min(1, Math.max(0, random()));
  return Math.round(Math.min(policy.capMs, step * (1 + pick)));
}

export interface DelayOptions {
  now?: number;
  /** The error's classification when the caller already has it. */
  classified?: ClassifiedError;
}

/**
 * Delay before retry number `attempt` (1-based): the provider's wait (`retryAfterMs`, else
 * `resetAt`) when it gave one, bounded by the policy's budget; otherwise `backoffMs`.
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
  if (wait !== undefined) return Math.min(wait, policy.budgetMs);
  return backoffMs(attempt, policy, random);
}

export type RetryPlan =
  | {
      retry: true;
      delayMs: number;
      /** The attempt about to be made (2 for the first retry). */
      attempt: number;
      /** Attempts this failure may get in all (the first one included). */
      attempts: number;
    }
  | {
      retry: false;
      /**
       * `not_retryable`: the same request would fail again. `exhausted`: every allowed retry was
       * made. `wait_too_long`: the provider asks for longer than the time left (`waitMs` >
       * `remainingMs`). `budget_spent`: no waiting time is left for this call.
       */
      why: "not_retryable" | "exhausted" | "wait_too_long" | "budget_spent";
      /** Attempts made so far. */
      attempts: number;
      waitMs?: number;
      remainingMs?: number;
    };

export interface PlanOptions {
  now?: number;
  random?: () => number;
  /** Time this call has already spent waiting before earlier retries. */
  waitedMs?: number;
  /** Retries already made on this route for failures of the same reason (for `retryLimit`). */
  reasonRetries?: number;
}

/**
 * Whether to make retry number `retryNumber` (1-based) for a classified failure, and after how
 * long. Only `retryable` failures are repeated: at most `policy.maxRetries` retries in all, at
 * most `retryLimit` of them for failures of this reason (so a 500 after a 429 still gets its one
 * retry, a second 500 does not), within what is left of `policy.budgetMs`. Flags such as
 * `shouldCompress` or `shouldRotateCredential` need a changed request and are left to the caller.
 */
export function planRetry(
  classified: ClassifiedError,
  retryNumber: number,
  policy: RetryPolicy,
  options: PlanOptions = {},
): RetryPlan {
  const made = retryNumber; // the first attempt plus retryNumber - 1 retries
  if (!classified.retryable) return { retry: false, why: "not_retryable", attempts: made };
  // Retries this failure may still get: what the policy leaves, and what its reason's limit leaves.
  const left = Math.min(
    policy.maxRetries - (retryNumber - 1),
    (classified.retryLimit ?? Number.POSITIVE_INFINITY) - (options.reasonRetries ?? 0),
  );
  if (left <= 0) return { retry: false, why: "exhausted", attempts: made };
  const now = options.now ?? Date.now();
  const remainingMs = Math.max(0, policy.budgetMs - (options.waitedMs ?? 0));
  const wait = providerWaitMs(classified, now);
  if (wait !== undefined && wait > remainingMs)
    return { retry: false, why: "wait_too_long", attempts: made, waitMs: wait, remainingMs };
  if (wait === undefined && remainingMs <= 0)
    return { retry: false, why: "budget_spent", attempts: made, remainingMs };
  const delayMs = wait ?? Math.min(backoffMs(retryNumber, policy, options.random), remainingMs);
  return { retry: true, delayMs, attempt: retryNumber + 1, attempts: retryNumber + left };
}

/**
 * The retry state of one model call: how many retries the current route has had and how much of
 * the call's waiting budget is spent. A fallback route starts its own count of retries but shares
 * the budget, so a call never waits longer than `policy.budgetMs` in all.
 */
export class RetryLadder {
  private made = 0;
  private waited = 0;
  private readonly byReason = new Map<string, number>();

  constructor(
    readonly policy: RetryPolicy,
    private readonly options: { random?: () => number; now?: () => number } = {},
  ) {}

  /** What to do about `failure`, for the next retry of the current route. */
  plan(failure: ClassifiedError): RetryPlan {
    return planRetry(failure, this.made + 1, this.policy, {
      now: this.options.now?.() ?? Date.now(),
      waitedMs: this.waited,
      reasonRetries: this.byReason.get(failure.reason) ?? 0,
      ...(this.options.random ? { random: this.options.random } : {}),
    });
  }

  /** Records a retry for `failure` that waited `ms` first. */
  waitedFor(ms: number, failure?: ClassifiedError): void {
    this.made++;
    this.waited += Math.max(0, ms);
    if (failure) this.byReason.set(failure.reason, (this.byReason.get(failure.reason) ?? 0) + 1);
  }

  /** The call moved to another route (a fallback provider): its retries count afresh. */
  newRoute(): void {
    this.made = 0;
    this.byReason.clear();
  }

  /** Retries made on the current route. */
  get retries(): number {
    return this.made;
  }

  /** Time spent waiting so far in this call. */
  get waitedMs(): number {
    return this.waited;
  }
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
