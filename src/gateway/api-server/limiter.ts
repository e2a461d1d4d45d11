/**
 * The API server's run limiter: at most `maxRunning` agent turns at once; further requests wait in
 * a bounded first-in-first-out queue, and past the queue they are refused at once (the server
 * answers 429 with Retry-After).
 */

/** Thrown by `acquire` when both the run slots and the queue are full. */
export class QueueFullError extends Error {
  constructor(
    readonly running: number,
    readonly queued: number,
  ) {
    super(`${running} agent runs are in progress and ${queued} requests are waiting; try again shortly.`);
    this.name = "QueueFullError";
  }
}

/** Thrown by `acquire` when the caller's signal aborts while it waits (the client went away). */
export class AcquireAbortedError extends Error {
  constructor() {
    super("The request was abandoned while it waited for a run slot.");
    this.name = "AcquireAbortedError";
  }
}

interface Waiter {
  grant: () => void;
  reject: (error: Error) => void;
}

export class RunLimiter {
  private active = 0;
  private readonly waiting: Waiter[] = [];
  private idleWaiters: Array<() => void> = [];

  constructor(
    readonly maxRunning: number,
    readonly maxQueued: number,
  ) {
    if (!Number.isInteger(maxRunning) || maxRunning < 1) {
      throw new RangeError(`maxRunning must be a positive whole number, got ${maxRunning}`);
    }
    if (!Number.isInteger(maxQueued) || maxQueued < 0) {
      throw new RangeError(`maxQueued must be a whole number >= 0, got ${maxQueued}`);
    }
  }

  get running(): number {
    return this.active;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /**
   * Waits for a run slot and resolves with its release function (idempotent). Rejects at once with
   * `QueueFullError` when the queue is full, or with `AcquireAbortedError` when `signal` aborts
   * first; a rejected caller holds no slot.
   */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(new AcquireAbortedError());
    if (this.active < this.maxRunning) {
      this.active++;
      return Promise.resolve(this.releaser());
    }
    if (this.waiting.length >= this.maxQueued) {
      return Promise.reject(new QueueFullError(this.active, this.waiting.length));
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const at = this.waiting.indexOf(waiter);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(new AcquireAbortedError());
        this.notifyIdle();
      };
      const waiter: Waiter = {
        grant: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve(this.releaser());
        },
        reject,
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  /** Resolves when nothing runs and nothing waits. */
  idle(): Promise<void> {
    if (this.active === 0 && this.waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) {
        // The slot passes straight to the next waiter: `active` stays the same.
        next.grant();
      } else {
        this.active--;
        this.notifyIdle();
      }
    };
  }

  private notifyIdle(): void {
    if (this.active !== 0 || this.waiting.length !== 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
