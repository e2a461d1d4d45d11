/**
 * Keeping a time-limited hold alive (a lease, a cron slot's lease): renew it in the background
 * every quarter of its TTL, and give it up locally before the database could hand it to someone
 * else. `lost` aborts when a renewal says the hold is gone (taken over, released elsewhere) or
 * when no renewal has succeeded for the TTL minus a margin (the database unreachable, the event
 * loop stalled): the holder must stop using the resource then, since another instance may have
 * it a moment later.
 */

export interface Renewal {
  /** Aborts once, with a reason, when the hold is no longer ours. */
  readonly lost: AbortSignal;
  /** Stops renewing (the hold was released or finished); `lost` does not fire after this. */
  stop(): void;
}

export interface RenewalOptions {
  ttlMs: number;
  /** When the hold was taken (ms, this process's clock: the request's start, so never late). */
  since: number;
  /** Extends the hold; resolves false when it is no longer ours. May throw (retried). */
  renew(): Promise<boolean>;
  /** What `lost` says, e.g. `lease "telegram"`. */
  what: string;
}

/** How long before the database-side expiry the holder gives up its hold. */
export function renewalMargin(ttlMs: number): number {
  return Math.min(1_000, Math.floor(ttlMs / 10));
}

export function keepRenewed(options: RenewalOptions): Renewal {
  const controller = new AbortController();
  const interval = Math.max(25, Math.floor(options.ttlMs / 4));
  const margin = renewalMargin(options.ttlMs);
  let stopped = false;
  let renewTimer: NodeJS.Timeout | undefined;
  let deadline: NodeJS.Timeout | undefined;

  const lose = (why: string) => {
    if (stopped) return;
    stopped = true;
    clearTimeout(renewTimer);
    clearTimeout(deadline);
    controller.abort(new Error(`${options.what} was lost: ${why}`));
  };
  const armDeadline = (renewedAt: number) => {
    clearTimeout(deadline);
    const left = renewedAt + options.ttlMs - margin - Date.now();
    deadline = setTimeout(() => lose(`not renewed within ${options.ttlMs} ms (database unreachable?)`), left);
    deadline.unref();
  };
  const schedule = () => {
    if (stopped) return;
    renewTimer = setTimeout(async () => {
      const started = Date.now();
      try {
        const ours = await options.renew();
        if (stopped) return;
        if (!ours) return lose("another instance holds it now");
        armDeadline(started);
      } catch {
        // Retried on the next turn; the deadline decides when it is too late.
      }
      schedule();
    }, interval);
    renewTimer.unref();
  };
  armDeadline(options.since);
  schedule();
  return {
    lost: controller.signal,
    stop() {
      stopped = true;
      clearTimeout(renewTimer);
      clearTimeout(deadline);
    },
  };
}
