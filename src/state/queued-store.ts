/**
 * The session store for surfaces that record a conversation while it happens (the CLI chat): the
 * SQLite store, plus a write queue so another process holding `state.db`'s lock never costs the
 * session its history.
 *
 * A write first gets a short try at the lock (`writeWaitMs`). When another process still holds it,
 * the write is queued in memory, in order, and answers at once with what the caller needs (the
 * session record it will create, a provisional message id); a background timer retries with
 * backoff for as long as the process runs, and every later write goes behind the queue so order is
 * kept. The user is told once when writes start queueing and again when they are saved. At exit,
 * `drain` (async, bounded) and then `close` (synchronous, short) make a last attempt; what still
 * cannot be written goes to `<home>/state-unsaved-<time>.jsonl` (`hermes sessions repair --from`
 * brings it back), and the user is told how many messages that is.
 *
 * Reads go straight to the file (WAL readers are never blocked by a writer), except reads of a
 * session with writes waiting, which wait for the queue (bounded) so a history has no holes; so do
 * writes whose answer depends on the file (undo, branch, delete, prune…).
 */
import type { Message } from "../ai/types.js";
import { onProcessExit } from "../util/exit-reaper.js";
import { redactJson, redactText } from "../util/redact.js";
import { newSessionId } from "../util/session-id.js";
import { validateMessage } from "./codec.js";
import { pendingRecord } from "./pending-record.js";
import { AsyncQueuedStore, type QueuedStoreOptions, type SyncQueuedStore } from "./queued-store-api.js";
import { sanitizeTitle } from "./titles.js";
import {
  type ExportedSession,
  type NewSession,
  type RecoveryReport,
  type SessionRecord,
  SessionStoreError,
  type SqliteSessionStoreHandle,
  type SyncSessionStore,
  type UsageDelta,
} from "./types.js";
import {
  applyWrite,
  messagesIn,
  type QueuedWrite,
  type SessionPatch,
  writeSession,
  writeUnsavedFile,
} from "./unsaved-writes.js";

export type { QueuedSessionStore, QueuedStoreOptions, SyncQueuedStore } from "./queued-store-api.js";
export { AsyncQueuedStore };

interface Entry {
  write: QueuedWrite;
  /** The error that keeps it from being written, other than the lock. */
  failure?: string;
}

const defaultTimer = (fn: () => void, ms: number) => {
  const t = setTimeout(fn, ms);
  t.unref();
  return () => clearTimeout(t);
};

function isLocked(error: unknown): boolean {
  return error instanceof SessionStoreError && error.code === "locked";
}

function isCorruptError(error: unknown): boolean {
  return error instanceof SessionStoreError && error.code === "corrupt";
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Wraps an open SQLite engine; closing the result closes it. */
export function queuedSessionStore(
  inner: SqliteSessionStoreHandle,
  options: QueuedStoreOptions,
): AsyncQueuedStore {
  const engine = new WriteQueueStore(inner, options);
  const store = new AsyncQueuedStore(engine, {
    groupCommits: engine,
    ...(options.collectWindowMs !== undefined ? { collectWindowMs: options.collectWindowMs } : {}),
  });
  // Writes collected for a group commit are committed before the queue closes, at exit too.
  engine.beforeClose = () => store.commitCollected();
  return store;
}

class WriteQueueStore implements SyncQueuedStore {
  private readonly queue: Entry[] = [];
  /** Records of sessions created while queued, so existence checks see them. */
  private readonly pendingSessions = new Map<string, SessionRecord>();
  private readonly writeWaitMs: number;
  private readonly settleWaitMs: number;
  private readonly closeWaitMs: number;
  private readonly now: () => number;
  private readonly setTimer: (fn: () => void, ms: number) => () => void;
  private cancelTimer: (() => void) | undefined;
  private backoffMs = 100;
  private provisionalId = 0;
  private lastStamp = 0;
  /** Writes saved since the queue last started filling (for the "saved" notice). */
  private episode = { writes: 0, messages: 0, told: false };
  private readonly toldFailures = new Set<string>();
  private closed = false;
  private readonly unhookExit: () => void;
  /** Commits what the asynchronous layer collected; runs first in `close` (queuedSessionStore). */
  beforeClose: (() => void) | undefined;
  /** Set while a group could not take the lock: its writes queue without trying it again. */
  private lockHeld = false;

  constructor(
    private readonly inner: SqliteSessionStoreHandle,
    private readonly options: QueuedStoreOptions,
  ) {
    this.writeWaitMs = options.writeWaitMs ?? 500;
    this.settleWaitMs = options.settleWaitMs ?? 10_000;
    this.closeWaitMs = options.closeWaitMs ?? 2000;
    this.now = options.now ?? (() => Date.now() / 1000);
    this.setTimer = options.setTimer ?? defaultTimer;
    // process.exit (normal end, SIGTERM/SIGHUP through the exit reaper) still saves or writes the file.
    this.unhookExit = onProcessExit(() => this.close());
  }

  get path(): string {
    return this.inner.path;
  }

  get pendingWrites(): number {
    return this.queue.length;
  }

  get pendingMessages(): number {
    return this.queue.reduce((n, e) => n + messagesIn(e.write), 0);
  }

  // ---- the queue -------------------------------------------------------------------------------

  /** Non-decreasing timestamps for queued messages, so a clock stepping back cannot reorder them. */
  private stamp(): number {
    this.lastStamp = Math.max(this.now(), this.lastStamp);
    return this.lastStamp;
  }

  private assertOpen(): void {
    if (this.closed) throw new SessionStoreError("invalid", `the session store for ${this.path} is closed.`);
  }

  /**
   * Runs `direct` when nothing is queued (with a short wait for the lock); otherwise, or when the
   * lock is still held, queues `build()` and returns `provisional()`.
   */
  private submit<T>(direct: () => T, build: () => QueuedWrite, provisional: () => T): T {
    this.assertOpen();
    if (this.waitingFor() > 0) this.flush();
    if (this.waitingFor() === 0 && !this.lockHeld) {
      try {
        return this.inner.withRetryBudget(this.writeWaitMs, Math.min(100, this.writeWaitMs), direct);
      } catch (error) {
        if (isCorruptError(error)) {
          // The file went bad under us: keep the write for the unsaved-writes file, never drop it.
          this.queue.push({ write: build(), failure: errorText(error) });
          this.tellFailure(errorText(error));
          return provisional();
        }
        if (!isLocked(error)) throw error;
      }
    }
    const write = build();
    this.queue.push({ write });
    if (!this.episode.told) {
      this.episode = { writes: 0, messages: 0, told: true };
      this.options.notify(
        `${this.path} is locked by another process; this session's history is kept in memory and will be written as soon as the lock frees.`,
      );
    }
    this.schedule();
    return provisional();
  }

  private schedule(): void {
    if (this.cancelTimer || this.closed) return;
    const delay = this.backoffMs * (0.5 + Math.random() / 2);
    this.backoffMs = Math.min(this.backoffMs * 2, 2000);
    this.cancelTimer = this.setTimer(() => {
      this.cancelTimer = undefined;
      if (this.closed) return;
      if (!this.flush()) this.schedule();
    }, delay);
  }

  flush(): boolean {
    return this.flushWithin(0, 0);
  }

  /**
   * Runs `fn`'s writes in one transaction of the file (group commits, async-store.ts), with the
   * short wait for the lock a single write gets. With writes already queued, `fn` runs as the
   * writes would one by one (behind the queue). When the lock stays held, `fn` runs with its
   * writes queued in order, without each waiting for the lock again. When the group fails later
   * (its commit), everything it did is rolled back and the error rethrown for the caller to run
   * the writes again one by one; entries the rolled-back writes queued are taken back first.
   */
  group<T>(fn: () => T): T {
    this.assertOpen();
    if (this.waitingFor() > 0) return fn();
    const queued = this.queue.length;
    const sessions = new Map(this.pendingSessions);
    try {
      return this.inner.withRetryBudget(this.writeWaitMs, Math.min(100, this.writeWaitMs), () =>
        this.inner.group(fn),
      );
    } catch (error) {
      this.queue.splice(queued);
      this.pendingSessions.clear();
      for (const [id, record] of sessions) this.pendingSessions.set(id, record);
      // The transaction never started: nothing of `fn` ran.
      if (!isLocked(error)) throw error;
    }
    this.lockHeld = true;
    try {
      return fn();
    } finally {
      this.lockHeld = false;
    }
  }

  /** Writes queued entries in order until one meets the lock; true when none is left waiting. */
  private flushWithin(budgetMs: number, busyMs: number): boolean {
    if (this.closed) return this.queue.length === 0;
    let i = 0;
    while (i < this.queue.length) {
      const entry = this.queue[i]!;
      if (entry.failure !== undefined) {
        i++;
        continue;
      }
      try {
        this.inner.withRetryBudget(budgetMs, busyMs, () => this.apply(entry.write));
      } catch (error) {
        if (isLocked(error)) return false;
        entry.failure = errorText(error);
        this.tellFailure(entry.failure);
        i++;
        continue;
      }
      this.queue.splice(i, 1);
      this.episode.writes++;
      this.episode.messages += messagesIn(entry.write);
      if (entry.write.op === "createSession") this.pendingSessions.delete(entry.write.input.id);
      if (entry.write.op === "continueSession") this.pendingSessions.delete(entry.write.child.id);
    }
    if (this.episode.told && this.queue.every((e) => e.failure !== undefined)) {
      this.options.notify(
        `${this.path} is free again: saved ${this.episode.writes} queued writes (${this.episode.messages} messages).`,
      );
      this.episode = { writes: 0, messages: 0, told: false };
      this.backoffMs = 100;
    }
    return this.queue.every((e) => e.failure !== undefined);
  }

  private apply(write: QueuedWrite): void {
    if (write.op !== "createSession" || !write.input.title) {
      applyWrite(this.inner, write);
      return;
    }
    try {
      applyWrite(this.inner, write);
    } catch (error) {
      // Another process took the title while we waited: keep the session, drop the title.
      if ((error as { code?: string }).code !== "title_taken") throw error;
      const { title: _dropped, ...input } = write.input;
      this.inner.createSession(input);
      this.options.notify(
        `The title "${write.input.title}" was taken meanwhile; the session was saved without one.`,
      );
    }
  }

  private tellFailure(message: string): void {
    if (this.toldFailures.has(message)) return;
    this.toldFailures.add(message);
    this.options.notify(
      `a session write could not be saved to ${this.path} (${message}); it is kept and will be written to an unsaved-writes file in ${this.options.recoveryDir} at exit.`,
    );
  }

  /** Writes waiting for `sessionId` (or any, without one). */
  private waitingFor(sessionId?: string): number {
    return this.queue.filter(
      (e) => e.failure === undefined && (sessionId === undefined || writeSession(e.write) === sessionId),
    ).length;
  }

  /** Waits (bounded, blocking) for the queued writes a read or a dependent write needs. */
  private settle(sessionId?: string): void {
    this.assertOpen();
    if (this.waitingFor(sessionId) === 0) return;
    this.flushWithin(this.settleWaitMs, 200);
    const left = this.waitingFor(sessionId);
    if (left > 0) {
      throw new SessionStoreError(
        "locked",
        `${this.path} is still locked by another process: ${left} writes ${sessionId ? `of session ${sessionId} ` : ""}are waiting for it, so this cannot be done yet. They are kept and saved when it frees; try again then.`,
      );
    }
  }

  async drain(timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    if (this.flush()) return true;
    this.options.notify(
      `waiting up to ${Math.round(timeoutMs / 1000)} s for ${this.path} to save ${this.pendingMessages} queued messages (Ctrl+C to stop waiting; nothing is lost)…`,
    );
    let delay = 25;
    while (!this.closed && !signal?.aborted) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(delay, left));
        signal?.addEventListener(
          "abort",
          () => {
            clearTimeout(t);
            resolve();
          },
          { once: true },
        );
      });
      delay = Math.min(delay * 2, 250);
      if (this.flush()) return true;
    }
    return this.flush();
  }

  close(): void {
    if (this.closed) return;
    this.beforeClose?.();
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    if (this.waitingFor() > 0) this.flushWithin(this.closeWaitMs, 100);
    this.closed = true;
    this.unhookExit();
    const left = this.queue.splice(0);
    try {
      if (left.length > 0) this.saveUnsaved(left);
    } finally {
      this.inner.close();
    }
  }

  private saveUnsaved(left: Entry[]): void {
    const messages = left.reduce((n, e) => n + messagesIn(e.write), 0);
    const redact = this.options.redact ?? redactText;
    const what = `${messages} messages (${left.length} writes)`;
    try {
      const file = writeUnsavedFile(
        this.options.recoveryDir,
        this.path,
        left.map((e) => redactJson(e.write, redact)),
      );
      this.options.notify(
        `${what} could not be saved to ${this.path}. They are in ${file}; bring them back with \`hermes sessions repair --from ${file}\`.`,
      );
    } catch (error) {
      this.options.notify(
        `${what} could not be saved to ${this.path}, and writing them to ${this.options.recoveryDir} failed too (${errorText(error)}): they are lost.`,
      );
    }
  }

  // ---- writes that can wait in the queue -------------------------------------------------------

  /** Throws `not_found` now, as the store would, for a session that neither exists nor is queued. */
  private requireKnown(id: string): SessionRecord {
    const known = this.pendingSessions.get(id) ?? this.inner.getSession(id);
    if (!known) throw new SessionStoreError("not_found", `No session with id "${id}".`);
    return known;
  }

  createSession(input: NewSession): SessionRecord {
    const full = this.newSessionInput(input);
    return this.submit(
      () => this.inner.createSession(full),
      () => this.createWrite(full),
      () => this.pendingSessions.get(full.id) ?? pendingRecord(full),
    );
  }

  /**
   * One transaction when the file is free; queued, the session's row and then its message, as
   * `createSession` and `appendMessage` would queue them.
   */
  startSession(input: NewSession, first: Message, options: { usage?: UsageDelta } = {}): number {
    const full = this.newSessionInput(input);
    validateMessage(first);
    let queued = false;
    const id = this.submit(
      () => this.inner.startSession(full, first, options),
      () => this.createWrite(full),
      () => {
        queued = true;
        return 0;
      },
    );
    return queued ? this.appendMessage(full.id, first, options) : id;
  }

  private newSessionInput(input: NewSession): NewSession & { id: string; startedAt: number } {
    if (!input.source) throw new SessionStoreError("invalid", "A session needs a source (cli, telegram, …).");
    const startedAt = input.startedAt ?? this.now();
    return { ...input, id: input.id ?? newSessionId(new Date(startedAt * 1000)), startedAt };
  }

  /** The queued form of a new session (its id checked now, as the store would). */
  private createWrite(full: NewSession & { id: string; startedAt: number }): QueuedWrite {
    if (this.pendingSessions.has(full.id) || this.inner.getSession(full.id))
      throw new SessionStoreError("invalid", `A session with id "${full.id}" already exists.`);
    this.pendingSessions.set(full.id, pendingRecord(full));
    return { op: "createSession", input: full };
  }

  continueSession(
    parentId: string,
    child: NewSession & { parentSessionId: string },
    messages: Message[],
    reason = "compression",
  ): SessionRecord {
    const startedAt = child.startedAt ?? this.now();
    const full = { ...child, id: child.id ?? newSessionId(new Date(startedAt * 1000)), startedAt };
    return this.submit(
      () => this.inner.continueSession(parentId, full, messages, reason),
      () => {
        this.requireKnown(parentId);
        for (const m of messages) validateMessage(m);
        if (this.pendingSessions.has(full.id) || this.inner.getSession(full.id))
          throw new SessionStoreError("invalid", `A session with id "${full.id}" already exists.`);
        this.pendingSessions.set(full.id, pendingRecord(full));
        return { op: "continueSession", parentId, child: full, messages, reason };
      },
      () => this.pendingSessions.get(full.id) ?? pendingRecord(full),
    );
  }

  updateSession(id: string, patch: SessionPatch): void {
    this.submit(
      () => this.inner.updateSession(id, patch),
      () => {
        const known = this.requireKnown(id);
        if (this.pendingSessions.has(id))
          this.pendingSessions.set(id, { ...known, ...patch } as SessionRecord);
        return { op: "updateSession", id, patch };
      },
      () => undefined,
    );
  }

  setTitle(id: string, title: string | null): SessionRecord {
    return this.submit(
      () => this.inner.setTitle(id, title),
      () => {
        const known = this.requireKnown(id);
        if (this.pendingSessions.has(id))
          this.pendingSessions.set(id, { ...known, title: sanitizeTitle(title) });
        return { op: "setTitle", id, title };
      },
      () => ({ ...this.requireKnown(id), title: sanitizeTitle(title) }),
    );
  }

  endSession(id: string, reason: string): void {
    const at = this.now();
    this.submit(
      () => this.inner.endSession(id, reason),
      () => {
        this.requireKnown(id);
        return { op: "endSession", id, reason, at };
      },
      () => undefined,
    );
  }

  reopenSession(id: string): void {
    this.submit(
      () => this.inner.reopenSession(id),
      () => {
        this.requireKnown(id);
        return { op: "reopenSession", id };
      },
      () => undefined,
    );
  }

  /**
   * Queued appends return provisional ids (negative; the row's real id is not known yet). With
   * `usage`, one transaction when the file is free; queued, the usage write follows the message's.
   */
  appendMessage(
    sessionId: string,
    message: Message,
    options: { timestamp?: number; tokenCount?: number; usage?: UsageDelta } = {},
  ): number {
    const { usage, ...rest } = options;
    if (!usage) return this.appendAll(sessionId, [message], rest)[0]!;
    const id = this.submit(
      () => [this.inner.appendMessage(sessionId, message, options)],
      () => this.appendWrite(sessionId, [message], rest),
      () => [--this.provisionalId],
    )[0]!;
    if (id < 0) this.recordUsage(sessionId, usage);
    return id;
  }

  /** As `appendMessage`: with `usage`, one transaction when the file is free; queued, usage after. */
  appendMessages(sessionId: string, messages: Message[], options: { usage?: UsageDelta } = {}): number[] {
    const { usage } = options;
    if (!usage) return this.appendAll(sessionId, messages, {});
    const ids = this.submit(
      () => this.inner.appendMessages(sessionId, messages, options),
      () => this.appendWrite(sessionId, messages, {}),
      () => messages.map(() => --this.provisionalId),
    );
    if (ids.some((id) => id < 0)) this.recordUsage(sessionId, usage);
    return ids;
  }

  private appendAll(
    sessionId: string,
    messages: Message[],
    options: { timestamp?: number; tokenCount?: number },
  ): number[] {
    return this.submit(
      () =>
        messages.length === 1
          ? [this.inner.appendMessage(sessionId, messages[0]!, options)]
          : this.inner.appendMessages(sessionId, messages),
      () => this.appendWrite(sessionId, messages, options),
      () => messages.map(() => --this.provisionalId),
    );
  }

  /** The queued form of an append (validated now, as the store would). */
  private appendWrite(
    sessionId: string,
    messages: Message[],
    options: { timestamp?: number; tokenCount?: number },
  ): QueuedWrite {
    for (const m of messages) validateMessage(m);
    this.requireKnown(sessionId);
    const entries = messages.map((message) => ({
      message,
      timestamp: options.timestamp ?? this.stamp(),
      ...(options.tokenCount !== undefined ? { tokenCount: options.tokenCount } : {}),
    }));
    return { op: "appendMessages", sessionId, entries };
  }

  recordUsage(sessionId: string, delta: UsageDelta): void {
    this.submit(
      () => this.inner.recordUsage(sessionId, delta),
      () => {
        this.requireKnown(sessionId);
        return { op: "recordUsage", sessionId, delta };
      },
      () => undefined,
    );
  }

  // ---- reads: the store must be open; only a session with writes waiting waits for the queue -----

  getSession(id: string): SessionRecord | null {
    this.assertOpen();
    return this.inner.getSession(id) ?? this.pendingSessions.get(id) ?? null;
  }

  resolveSession(ref: string): SessionRecord {
    this.assertOpen();
    const pending = this.pendingSessions.get(ref);
    if (pending) return pending;
    return this.inner.resolveSession(ref);
  }

  latestSession(filter?: { source?: string; title?: string }): SessionRecord | null {
    this.settle();
    return this.inner.latestSession(filter);
  }

  nextLineageTitle(title: string): string {
    this.assertOpen();
    return this.inner.nextLineageTitle(title);
  }

  getMessages(sessionId: string, options?: { includeInactive?: boolean }) {
    this.settle(sessionId);
    return this.inner.getMessages(sessionId, options);
  }

  private read<T>(fn: () => T): T {
    this.assertOpen();
    return fn();
  }

  conversation(sessionId: string): Message[] {
    this.settle(sessionId);
    return this.inner.conversation(sessionId);
  }

  around(sessionId: string, messageId: number, window?: number) {
    this.settle(sessionId);
    return this.inner.around(sessionId, messageId, window);
  }

  listSessions(filter?: Parameters<SyncSessionStore["listSessions"]>[0]) {
    return this.read(() => this.inner.listSessions(filter));
  }

  search(options: Parameters<SyncSessionStore["search"]>[0]) {
    return this.read(() => this.inner.search(options));
  }

  recent(limit?: number, excludeSessionId?: string) {
    return this.read(() => this.inner.recent(limit, excludeSessionId));
  }

  *exportSessions(filter?: { sessionId?: string; source?: string }): Iterable<ExportedSession> {
    this.settle(filter?.sessionId);
    yield* this.inner.exportSessions(filter);
  }

  stats() {
    return this.read(() => this.inner.stats());
  }

  check() {
    return this.read(() => this.inner.check());
  }

  insights(options?: Parameters<SyncSessionStore["insights"]>[0]) {
    return this.read(() => this.inner.insights(options));
  }

  usageSeries(options?: Parameters<SyncSessionStore["usageSeries"]>[0]) {
    return this.read(() => this.inner.usageSeries(options));
  }

  // ---- writes that depend on what is in the file: they wait for the queue first ----------------

  undoTurns(sessionId: string, turns: number) {
    this.settle(sessionId);
    return this.inner.undoTurns(sessionId, turns);
  }

  branchSession(id: string, options?: { title?: string; source?: string }) {
    this.settle(id);
    return this.inner.branchSession(id, options);
  }

  deleteSession(id: string) {
    this.settle(id);
    return this.inner.deleteSession(id);
  }

  prunable(options: { olderThanDays: number; source?: string }) {
    return this.read(() => this.inner.prunable(options));
  }

  prune(options: { olderThanDays: number; source?: string }) {
    this.settle();
    return this.inner.prune(options);
  }

  autoPrune(options: { retentionDays: number; minIntervalHours: number; vacuum: boolean }) {
    this.settle();
    return this.inner.autoPrune(options);
  }

  optimize() {
    this.settle();
    return this.inner.optimize();
  }

  repair() {
    this.settle();
    return this.inner.repair();
  }

  importLegacyJsonl(dir: string) {
    this.settle();
    return this.inner.importLegacyJsonl(dir);
  }

  recoverFrom(file: string): RecoveryReport {
    this.settle();
    return this.inner.recoverFrom(file);
  }
}
