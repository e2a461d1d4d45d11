/**
 * The gateway's event log for control-socket readers: a bounded ring buffer of what happened
 * (messages in and out, approvals requested and resolved, platforms up and down), each event with
 * a cursor that only grows. Readers poll after a cursor or wait for the next event; a reader that
 * falls more than the buffer's size behind is told how many it missed instead of silently skipping.
 */
import type { EventsPage, GatewayEvent, GatewayEventType } from "../../state/gateway-control.js";

/** Default number of events kept (upstream's MCP bridge keeps 1000). */
export const EVENT_BUFFER_SIZE = 1000;

/** Longest text carried by a message event; the whole text is in state.db. */
const CONTENT_LIMIT = 2000;

interface Waiter {
  after: number;
  sessionKey: string | undefined;
  resolve: (event: GatewayEvent | null) => void;
}

export type EventFields = Omit<GatewayEvent, "cursor" | "type" | "at">;

export class GatewayEventLog {
  private readonly buffer: GatewayEvent[] = [];
  private cursor = 0;
  private readonly waiters = new Set<Waiter>();

  constructor(
    private readonly capacity = EVENT_BUFFER_SIZE,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Appends an event (long `content` is cut) and wakes the waiters it matches. */
  push(type: GatewayEventType, fields: EventFields = {}): GatewayEvent {
    const content = fields["content"];
    const event: GatewayEvent = {
      ...fields,
      ...(typeof content === "string" && content.length > CONTENT_LIMIT
        ? { content: `${content.slice(0, CONTENT_LIMIT)}…`, truncated: true }
        : {}),
      cursor: ++this.cursor,
      type,
      at: this.now().toISOString(),
    };
    this.buffer.push(event);
    if (this.buffer.length > this.capacity) this.buffer.splice(0, this.buffer.length - this.capacity);
    for (const waiter of [...this.waiters]) {
      if (matches(event, waiter.after, waiter.sessionKey)) {
        this.waiters.delete(waiter);
        waiter.resolve(event);
      }
    }
    return event;
  }

  /** The latest cursor handed out (0 before the first event). */
  latest(): number {
    return this.cursor;
  }

  /** Events after `after` (optionally one conversation's), oldest first, at most `limit`. */
  poll(cursor: number, options: { sessionKey?: string | undefined; limit: number }): EventsPage {
    const after = this.fromCursor(cursor);
    const events = this.buffer.filter((e) => matches(e, after, options.sessionKey)).slice(0, options.limit);
    return {
      events,
      next_cursor: events.at(-1)?.cursor ?? Math.max(after, this.skippedTo(after, options.sessionKey)),
      dropped: this.dropped(after),
    };
  }

  /**
   * The first matching event after `after`, waiting up to `timeoutMs` for one; null on timeout or
   * when `signal` aborts (the reader went away).
   */
  wait(
    after: number,
    options: { sessionKey?: string | undefined; timeoutMs: number; signal?: AbortSignal },
  ): Promise<GatewayEvent | null> {
    after = this.fromCursor(after);
    const ready = this.buffer.find((e) => matches(e, after, options.sessionKey));
    if (ready || options.timeoutMs <= 0 || options.signal?.aborted) return Promise.resolve(ready ?? null);
    return new Promise((resolve) => {
      const finish = (event: GatewayEvent | null) => {
        clearTimeout(timer);
        options.signal?.removeEventListener("abort", onAbort);
        this.waiters.delete(waiter);
        resolve(event);
      };
      const waiter: Waiter = { after, sessionKey: options.sessionKey, resolve: finish };
      const onAbort = () => finish(null);
      const timer = setTimeout(() => finish(null), options.timeoutMs);
      timer.unref?.();
      options.signal?.addEventListener("abort", onAbort, { once: true });
      this.waiters.add(waiter);
    });
  }

  /**
   * A cursor beyond the latest one was handed out by an earlier gateway run (cursors restart with
   * the process): read this run from its start.
   */
  fromCursor(cursor: number): number {
    return Number.isFinite(cursor) && cursor >= 0 && cursor <= this.cursor ? Math.floor(cursor) : 0;
  }

  /** How many events after `after` are no longer in the buffer. */
  dropped(cursor: number): number {
    const after = this.fromCursor(cursor);
    const oldest = this.buffer[0]?.cursor ?? this.cursor + 1;
    return Math.max(0, oldest - 1 - after);
  }

  /** Wakes every waiter with null (shutdown). */
  close(): void {
    for (const waiter of [...this.waiters]) waiter.resolve(null);
    this.waiters.clear();
  }

  /**
   * With a conversation filter and nothing matching, the cursor may still move past what the
   * reader has seen, so the next poll does not rescan the same unrelated events.
   */
  private skippedTo(after: number, sessionKey: string | undefined): number {
    return sessionKey ? this.cursor : after;
  }
}

function matches(event: GatewayEvent, after: number, sessionKey: string | undefined): boolean {
  return event.cursor > after && (!sessionKey || event.session_key === sessionKey);
}
