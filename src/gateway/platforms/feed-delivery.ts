/**
 * The adapters' half of at-least-once feed delivery (several instances over PostgreSQL): each
 * update taken from a shared feed (`ConnectOptions.feed`) carries a `DeliveryReceipt` the router
 * calls `done` on once it finished with the message; until then the update stays undone in the
 * ledger, and if this instance dies the feed's next holder hands it on again. While receiving, an
 * adapter asks the ledger every few seconds for undone updates of dead instances (`reclaiming`)
 * and hands each on like a fresh one, marked `redelivered`.
 */
import { createHash } from "node:crypto";
import type { FeedLedger, ReclaimedUpdate } from "../../state/coordination.js";
import type { DeliveryReceipt } from "./types.js";

/** How often a receiving adapter looks for updates a dead instance took and never finished. */
export const RECLAIM_EVERY_MS = 3_000;
/** Tries of one `done` write before it is given up (the update may then be handed on again). */
const DONE_TRIES = 5;
/** Tries of one `takeOne` before the update is handed on unrecorded. */
const TAKE_TRIES = 4;

/** A stable 52-bit feed id for a text key (Signal's `<sender>:<timestamp>`), a safe integer. */
export function feedIdOf(key: string): number {
  const digest = createHash("sha256").update(key).digest();
  return digest.readUIntBE(0, 6) * 16 + (digest[6]! >> 4);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref?.());

export class FeedDelivery {
  constructor(
    readonly feed: FeedLedger | undefined,
    private readonly report: (line: string) => void,
  ) {}

  /** Whether updates are kept until done (a ledger that can re-deliver). */
  get tracking(): boolean {
    return !!this.feed?.done && !!this.feed.reclaim;
  }

  /** The receipt for update `id` (undefined without a tracking ledger). */
  receipt(id: number, redelivered?: ReclaimedUpdate): DeliveryReceipt | undefined {
    const feed = this.feed;
    if (!feed?.done || !this.tracking) return undefined;
    let recorded: Promise<void> | undefined;
    const report = this.report;
    const record = async () => {
      for (let i = 1; ; i++) {
        try {
          await feed.done?.([id]);
          return;
        } catch (error) {
          if (i >= DONE_TRIES) {
            report(
              `could not mark update ${id} done in the shared feed (${String(error)}); it may be handed on again`,
            );
            return;
          }
          await sleep(200 * 2 ** i);
        }
      }
    };
    return {
      ...(redelivered
        ? { redelivered: { takenAt: redelivered.takenAt, attempts: redelivered.attempts } }
        : {}),
      done() {
        recorded ??= record();
        return recorded;
      },
    };
  }

  /**
   * Takes one update that has no feed position (a signal-cli event) with `payload` to hand on again.
   * Answers `undefined` when another instance took it already (drop it), else its receipt (none
   * without a tracking ledger). A ledger that keeps failing is tried `TAKE_TRIES` times; then the
   * update is handed on without a receipt (it may come twice, but it is not lost).
   */
  async takeOne(id: number, payload: unknown): Promise<{ receipt?: DeliveryReceipt } | undefined> {
    const feed = this.feed;
    if (!feed) return {};
    for (let i = 1; ; i++) {
      try {
        const fresh = await feed.take([id], undefined, this.tracking ? new Map([[id, payload]]) : undefined);
        if (fresh.length === 0) return undefined;
        const receipt = this.receipt(id);
        return receipt ? { receipt } : {};
      } catch (error) {
        if (i >= TAKE_TRIES) {
          this.report(
            `could not record update ${id} in the shared feed (${String(error)}); handing it on anyway`,
          );
          return {};
        }
        await sleep(200 * 2 ** i);
      }
    }
  }

  /** Marks `id` done at once (an update that carries nothing for the router). */
  settle(id: number): void {
    void this.receipt(id)?.done();
  }

  /** Gives `ids` back to the feed's holder (this instance stopped receiving before handing them on). */
  release(ids: readonly number[]): void {
    if (!this.tracking || ids.length === 0) return;
    void this.feed?.release?.(ids).catch((error: unknown) => {
      this.report(`could not give updates back to the shared feed: ${String(error)}`);
    });
  }

  /**
   * Claims the updates dead instances took and never finished and hands each to `redeliver` in id
   * order. An adapter calls it once before it reads the feed, so a message handed on again comes
   * before anything newer from the same chat (the dead instance stored it already; the next turn
   * takes that copy back only while it is still the chat's last message).
   */
  async reclaimNow(
    signal: AbortSignal,
    redeliver: (update: ReclaimedUpdate) => void | Promise<void>,
  ): Promise<void> {
    const feed = this.feed;
    if (!this.tracking || !feed?.reclaim || signal.aborted) return;
    try {
      for (const update of await feed.reclaim()) {
        if (signal.aborted) {
          this.release([update.id]);
          continue;
        }
        this.report(
          `handing on update ${update.id} again: the instance that took it stopped before it was done`,
        );
        await redeliver(update);
      }
    } catch (error) {
      if (!signal.aborted) this.report(`could not look for unfinished updates: ${String(error)}`);
    }
  }

  /** `reclaimNow` every `everyMs` until `signal` aborts (a taker may die while this instance receives). */
  async reclaiming(
    signal: AbortSignal,
    redeliver: (update: ReclaimedUpdate) => void | Promise<void>,
    everyMs = RECLAIM_EVERY_MS,
  ): Promise<void> {
    if (!this.tracking) return;
    while (!signal.aborted) {
      await new Promise<void>((resolve) => {
        const stop = () => {
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          signal.removeEventListener("abort", stop);
          resolve();
        }, everyMs);
        signal.addEventListener("abort", stop, { once: true });
      });
      await this.reclaimNow(signal, redeliver);
    }
  }
}
