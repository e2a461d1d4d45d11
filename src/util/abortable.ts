/**
 * Settles with `work`, or rejects as soon as `signal` aborts, for work that takes no signal of its
 * own (an SDK call, a browser action): the work goes on in the background and its result is
 * dropped (a late rejection is swallowed, never unhandled).
 */
export function abortable<T>(
  work: Promise<T>,
  signal: AbortSignal,
  reason: (signal: AbortSignal) => Error = abortReason,
): Promise<T> {
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(reason(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      work.catch(() => undefined);
      reject(reason(signal));
    };
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

/** The signal's own reason when it is an Error, else a plain "aborted". */
export function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error("aborted");
}
