/**
 * The stall watchdog every streaming transport runs (through `createWireTransport`): a stream
 * that makes no progress for a while is cut and reported as a timeout, so a hung connection never
 * holds a turn forever.
 */

/** How long a stream may send nothing before it counts as stalled (Hermes's default). */
export const DEFAULT_STALL_MS = 60_000;

/** The reason a stalled request is aborted with; its name makes the classifier read a timeout. */
export class StallError extends Error {
  readonly ms: number;
  constructor(ms: number) {
    super(`no data for ${ms} ms`);
    this.name = "TimeoutError";
    this.ms = ms;
  }
}

/**
 * Fires once when `touch` has not been called for `ms` while running: it aborts the request
 * (through `onStall`) and rejects every promise passed through `race`. Paused while the consumer
 * holds an event, because a slow consumer is not a stalled server. `ms <= 0` never fires.
 *
 * Progress is whatever the transport can see: the response headers, each event from the SDK,
 * and, where the SDK hides keep-alive events (Anthropic's `ping`), each chunk of bytes.
 */
export class StallWatchdog {
  /**
   * One timer at a time, not moved on every event: setting and clearing a timer per chunk cost
   * more than reading the chunk. `touch` only moves `deadline`; when the timer runs out it checks
   * the deadline and waits for the rest, or fires.
   */
  private timer: NodeJS.Timeout | undefined;
  /** When the clock runs out (`performance.now()` ms), as of the last `touch`. */
  private deadline = 0;
  private running = false;
  private hasFired = false;
  private reject: ((error: StallError) => void) | undefined;
  /** Rejects with the `StallError` when the watchdog fires; never resolves. */
  private readonly stalled: Promise<never>;

  constructor(
    readonly ms: number,
    private readonly onStall: (error: StallError) => void,
  ) {
    this.stalled = new Promise<never>((_resolve, reject) => {
      this.reject = reject;
    });
    // Nobody may be racing at the moment it fires; the rejection is still expected.
    this.stalled.catch(() => undefined);
  }

  /** True once the stream was cut as stalled. */
  get fired(): boolean {
    return this.hasFired;
  }

  /** Starts (or resumes) the clock. */
  start(): void {
    this.running = true;
    this.touch();
  }

  /** Progress: the clock starts over. Ignored while paused or stopped. */
  touch(): void {
    if (!this.running || this.hasFired || this.ms <= 0) return;
    this.deadline = performance.now() + this.ms;
    this.timer ??= setTimeout(this.check, this.ms);
  }

  /**
   * Stops the clock until `start` (the consumer holds an event). A timer that runs out meanwhile
   * does nothing; `stop` clears it.
   */
  pause(): void {
    this.running = false;
  }

  /** Stops the clock for good (the request is over): no timer is left behind. */
  stop(): void {
    this.running = false;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** `promise`, or the `StallError` if the watchdog fires first. */
  race<T>(promise: Promise<T>): Promise<T> {
    return this.ms <= 0 ? promise : Promise.race([promise, this.stalled]);
  }

  private readonly check = (): void => {
    this.timer = undefined;
    if (!this.running || this.hasFired) return;
    const left = this.deadline - performance.now();
    if (left > 0) this.timer = setTimeout(this.check, left);
    else this.fire();
  };

  private fire(): void {
    const error = new StallError(this.ms);
    this.hasFired = true;
    this.running = false;
    this.reject?.(error);
    this.onStall(error);
  }
}

/** "60 s", "0.2 s": a stall window for messages. */
export function stallSeconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}
