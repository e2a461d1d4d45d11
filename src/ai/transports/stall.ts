/**
 * Stall detection shared by the SDK transports: a stream that sends nothing for a while is cut
 * and reported as a timeout, so a hung connection never holds a turn forever.
 */

/** How long a stream may send nothing before it counts as stalled (Hermes's default). */
export const DEFAULT_STALL_MS = 60_000;

/** Rejection marker for a stalled wait; transports turn it into a `ProviderError` with `stalled`. */
export class StallError extends Error {
  readonly ms: number;
  constructor(ms: number) {
    super(`no data for ${ms} ms`);
    this.name = "TimeoutError";
    this.ms = ms;
  }
}

/**
 * `promise`, or a `StallError` (after aborting `controller`) when it takes longer than `ms`.
 * `ms <= 0` waits forever.
 */
export function withinStall<T>(promise: Promise<T>, ms: number, controller: AbortController): Promise<T> {
  if (ms <= 0) return promise;
  let timer: NodeJS.Timeout | undefined;
  const stalled = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      const error = new StallError(ms);
      reject(error);
      controller.abort(error);
    }, ms);
  });
  return Promise.race([promise, stalled]).finally(() => clearTimeout(timer));
}

/** "60 s", "0.2 s": a stall window for messages. */
export function stallSeconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}
