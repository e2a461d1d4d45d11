/**
 * The write queue's options and the asynchronous store over it (queued-store.ts builds both):
 * the `SessionStore` contract with group commits (async-store.ts) plus the queue's backlog
 * controls.
 */
import { AsyncSessionStore } from "./async-store.js";
import type { SessionStore, SyncSessionStore } from "./types.js";

export interface QueuedStoreOptions {
  /** One line for the user (the CLI writes it to stderr): queued, saved, not saved. */
  notify: (message: string) => void;
  /** Where the unsaved-writes file goes when the lock never frees (the home). */
  recoveryDir: string;
  /** How long a write may wait for the lock before it is queued (default 500 ms). */
  writeWaitMs?: number;
  /** How long a read or write that needs the queued writes first waits for them (default 10 s). */
  settleWaitMs?: number;
  /** How long `close` keeps trying before writing the unsaved-writes file (default 2 s). */
  closeWaitMs?: number;
  /** Seconds; the timestamps queued messages keep (default: now). */
  now?: () => number;
  /** Background retry timer (tests inject one); the default is an unref'd setTimeout. */
  setTimer?: (fn: () => void, ms: number) => () => void;
  /** Applied to the unsaved-writes file, like every other text the store writes (default: redactText). */
  redact?: (text: string) => string;
  /** How close together writes to two sessions start group commits, and how long they last (async-store.ts). */
  collectWindowMs?: number;
}

/** What the write queue adds to a store: its backlog and ways to write it out. */
interface QueueControls {
  /** Writes accepted but not in the file yet (queued or failed). */
  readonly pendingWrites: number;
  /** Messages among them. */
  readonly pendingMessages: number;
  /** One attempt to write the queue, never waiting for the lock; true when nothing is left. */
  flush(): boolean;
  /**
   * Keeps trying to write the queue for up to `timeoutMs` without blocking the event loop (signals
   * are still handled); stops early when `signal` aborts. True when everything is saved.
   */
  drain(timeoutMs: number, signal?: AbortSignal): Promise<boolean>;
}

/** A `SessionStore` that queues writes while another process holds the lock. */
export interface QueuedSessionStore extends SessionStore, QueueControls {}

/** The write queue's synchronous engine (behind `QueuedSessionStore`). */
export type SyncQueuedStore = SyncSessionStore & QueueControls;

/**
 * The asynchronous contract over the queue, with group commits (async-store.ts); the backlog
 * controls pass straight through, after the collected writes.
 */
export class AsyncQueuedStore extends AsyncSessionStore<SyncQueuedStore> implements QueuedSessionStore {
  get pendingWrites(): number {
    return this.engine.pendingWrites + this.collectedWrites;
  }

  get pendingMessages(): number {
    return this.engine.pendingMessages;
  }

  flush(): boolean {
    this.commitCollected();
    return this.engine.flush();
  }

  drain(timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    this.commitCollected();
    return this.engine.drain(timeoutMs, signal);
  }
}
