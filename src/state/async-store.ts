/**
 * The asynchronous `SessionStore` contract over a synchronous engine (the SQLite store, or the
 * write queue in front of it). Each method is an `async` function whose body is one call into the
 * engine, so:
 *
 * - the engine does the whole of its work inside the call, before the promise is even made: a
 *   write is in the file (and, with `durability: full`, fsynced) when the call returns, and two
 *   writes started one after the other land in that order whether or not the first was awaited;
 * - a failure is a rejected promise, never a synchronous throw, as it will be for a backend whose
 *   driver is asynchronous (PostgreSQL);
 * - the cost is one settled promise and one microtask per call, nothing else (no thread hop).
 *
 * With `groupCommits` (the recording stores: the CLI chat, the gateway, the API server), while
 * writes to several sessions come in close together (`COLLECT_WINDOW_MS`), the appends and
 * session-row writes are instead collected until the event loop's check phase (`setImmediate`)
 * and committed together: one transaction for every write the loop's last turn asked for, each in
 * a savepoint of its own so one failure undoes only its own write. A collected write's promise
 * settles after that commit, never before: whoever awaits it (the agent loop does before each
 * step) knows it is in the file. Every other call (reads, undo, branch, delete…) and `close` first
 * commits the collected writes it may need, so each call still sees every write started before
 * it, in order; the queue's `close`, run at process exit too, commits them before anything else.
 * A group that cannot start or commit is rolled back and its writes run one by one, each with the
 * outcome it would have had alone. One session writing alone (the CLI chat) still commits inside
 * each call. 200 concurrent API conversations then cost a few commits per loop turn instead of
 * three each (a commit's fixed cost, mostly the two full-text indexes' new segments, is shared).
 */
import type { Message } from "../ai/types.js";
import type {
  ExportedSession,
  Insights,
  InsightsOptions,
  NewSession,
  RecoveryReport,
  RepairReport,
  SearchHit,
  SearchOptions,
  SessionFilter,
  SessionRecord,
  SessionSource,
  SessionStats,
  SessionStore,
  SessionSummary,
  StoredMessage,
  SyncSessionStore,
  UsageDelta,
} from "./types.js";
import type { UsageSeries, UsageSeriesOptions } from "./usage-series-types.js";

type Patch = Parameters<SessionStore["updateSession"]>[1];

/** How close together writes to two sessions start group commits, and how long these last (ms). */
export const COLLECT_WINDOW_MS = 100;

/** An engine that can run several writes as one transaction (`SqliteSessionStoreHandle.group`). */
export interface GroupingEngine {
  group<T>(fn: () => T): T;
}

interface Collected {
  /** The session the write is to (undefined: not known before it runs, e.g. a new session's id). */
  session: string | undefined;
  run: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

function attempt(run: () => unknown): Outcome {
  try {
    return { ok: true, value: run() };
  } catch (error) {
    return { ok: false, error };
  }
}

function settleWith(write: Collected, outcome: Outcome): void {
  if (outcome.ok) write.resolve(outcome.value);
  else write.reject(outcome.error);
}

/** `SessionStore` over `engine`; closing it closes the engine. */
export class AsyncSessionStore<E extends SyncSessionStore = SyncSessionStore> implements SessionStore {
  /** Writes collected for the next group commit (see the file comment). */
  private collected: Collected[] | undefined;
  private readonly grouping: GroupingEngine | undefined;
  private readonly collectWindowMs: number;

  constructor(
    /** The synchronous engine behind the contract (state package and its tests only). */
    readonly engine: E,
    options: { groupCommits?: GroupingEngine; collectWindowMs?: number } = {},
  ) {
    this.grouping = options.groupCommits;
    this.collectWindowMs = options.collectWindowMs ?? COLLECT_WINDOW_MS;
  }

  get path(): string {
    return this.engine.path;
  }

  /** Writes collected and not yet committed (0 without `groupCommits`). */
  get collectedWrites(): number {
    return this.collected?.length ?? 0;
  }

  /** The session of the last write, and when it was made (ms, monotonic). */
  private readonly lastWrite: { session: string | undefined; at: number } = {
    session: undefined,
    at: Number.NEGATIVE_INFINITY,
  };
  /** Until when writes are collected: set while writes to several sessions come in close together. */
  private collectUntil = Number.NEGATIVE_INFINITY;

  /**
   * A write that may share a commit. Without `groupCommits`, or while one session alone is writing
   * (the CLI chat), it runs at once, inside the call, as every write did before. Once writes to
   * two sessions came within `collectWindowMs` of each other (a gateway or an API server with
   * several conversations running), writes are collected until the loop's check phase, and go on
   * being collected until that many milliseconds pass without such a pair.
   */
  private collect<T>(session: string | undefined, run: () => T): T | Promise<T> {
    if (!this.grouping) return run();
    const now = performance.now();
    const last = this.lastWrite;
    if (session === undefined || last.session !== session) {
      if (now - last.at < this.collectWindowMs) this.collectUntil = now + this.collectWindowMs;
    }
    last.session = session;
    last.at = now;
    if (!this.collected && now >= this.collectUntil) return run();
    return new Promise<T>((resolve, reject) => {
      const write: Collected = { session, run, resolve: resolve as (value: unknown) => void, reject };
      if (this.collected) {
        this.collected.push(write);
        return;
      }
      this.collected = [write];
      setImmediate(() => this.commitCollected());
    });
  }

  /**
   * Before a read of one session: commits the collected writes when one of them may be to it.
   * Writes to other sessions stay collected; the read could not see anything of them anyway.
   */
  private commitCollectedFor(session: string): void {
    if (this.collected?.some((w) => w.session === undefined || w.session === session)) this.commitCollected();
  }

  /** Commits the collected writes now (every other call does this first). Never throws. */
  commitCollected(): void {
    const batch = this.collected;
    if (!batch) return;
    this.collected = undefined;
    if (batch.length === 1 || !this.grouping) {
      for (const write of batch) settleWith(write, attempt(write.run));
      return;
    }
    let outcomes: Outcome[] | undefined;
    try {
      outcomes = this.grouping.group(() => batch.map((write) => attempt(write.run)));
    } catch {
      // Rolled back as a whole (the lock, a failed commit): each write again on its own.
      outcomes = undefined;
    }
    for (let i = 0; i < batch.length; i++) {
      const write = batch[i]!;
      settleWith(write, outcomes ? outcomes[i]! : attempt(write.run));
    }
  }

  async close(): Promise<void> {
    this.commitCollected();
    this.engine.close();
  }

  async createSession(input: NewSession): Promise<SessionRecord> {
    return this.collect(input.id, () => this.engine.createSession(input));
  }

  async startSession(input: NewSession, first: Message, options?: { usage?: UsageDelta }): Promise<number> {
    return this.collect(input.id, () => this.engine.startSession(input, first, options));
  }

  async getSession(id: string): Promise<SessionRecord | null> {
    this.commitCollectedFor(id);
    return this.engine.getSession(id);
  }

  async resolveSession(ref: string): Promise<SessionRecord> {
    this.commitCollected();
    return this.engine.resolveSession(ref);
  }

  async latestSession(filter?: { source?: SessionSource; title?: string }): Promise<SessionRecord | null> {
    this.commitCollected();
    return this.engine.latestSession(filter);
  }

  async updateSession(id: string, patch: Patch): Promise<void> {
    return this.collect(id, () => this.engine.updateSession(id, patch));
  }

  async setTitle(id: string, title: string | null): Promise<SessionRecord> {
    return this.collect(id, () => this.engine.setTitle(id, title));
  }

  async nextLineageTitle(title: string): Promise<string> {
    this.commitCollected();
    return this.engine.nextLineageTitle(title);
  }

  async endSession(id: string, reason: string): Promise<void> {
    return this.collect(id, () => this.engine.endSession(id, reason));
  }

  async reopenSession(id: string): Promise<void> {
    return this.collect(id, () => this.engine.reopenSession(id));
  }

  async continueSession(
    parentId: string,
    child: NewSession & { parentSessionId: string },
    messages: Message[],
    reason?: string,
  ): Promise<SessionRecord> {
    this.commitCollected();
    return this.engine.continueSession(parentId, child, messages, reason);
  }

  async appendMessage(
    sessionId: string,
    message: Message,
    options?: { timestamp?: number; tokenCount?: number; usage?: UsageDelta },
  ): Promise<number> {
    return this.collect(sessionId, () => this.engine.appendMessage(sessionId, message, options));
  }

  async appendMessages(
    sessionId: string,
    messages: Message[],
    options?: { usage?: UsageDelta },
  ): Promise<number[]> {
    return this.collect(sessionId, () => this.engine.appendMessages(sessionId, messages, options));
  }

  async recordUsage(sessionId: string, delta: UsageDelta): Promise<void> {
    return this.collect(sessionId, () => this.engine.recordUsage(sessionId, delta));
  }

  async getMessages(sessionId: string, options?: { includeInactive?: boolean }): Promise<StoredMessage[]> {
    this.commitCollectedFor(sessionId);
    return this.engine.getMessages(sessionId, options);
  }

  async conversation(sessionId: string): Promise<Message[]> {
    this.commitCollectedFor(sessionId);
    return this.engine.conversation(sessionId);
  }

  async undoTurns(sessionId: string, turns: number): Promise<{ removed: number; userText: string | null }> {
    this.commitCollected();
    return this.engine.undoTurns(sessionId, turns);
  }

  async branchSession(
    id: string,
    options?: { title?: string; source?: SessionSource },
  ): Promise<SessionRecord> {
    this.commitCollected();
    return this.engine.branchSession(id, options);
  }

  async listSessions(filter?: SessionFilter): Promise<SessionSummary[]> {
    this.commitCollected();
    return this.engine.listSessions(filter);
  }

  async search(options: SearchOptions): Promise<SearchHit[]> {
    this.commitCollected();
    return this.engine.search(options);
  }

  async around(sessionId: string, messageId: number, window?: number): Promise<StoredMessage[]> {
    this.commitCollectedFor(sessionId);
    return this.engine.around(sessionId, messageId, window);
  }

  async recent(limit?: number, excludeSessionId?: string): Promise<SessionSummary[]> {
    this.commitCollected();
    return this.engine.recent(limit, excludeSessionId);
  }

  async deleteSession(id: string): Promise<{ messages: number }> {
    this.commitCollected();
    return this.engine.deleteSession(id);
  }

  async prunable(options: { olderThanDays: number; source?: SessionSource }): Promise<SessionSummary[]> {
    this.commitCollected();
    return this.engine.prunable(options);
  }

  async prune(options: {
    olderThanDays: number;
    source?: SessionSource;
  }): Promise<{ sessions: number; messages: number }> {
    this.commitCollected();
    return this.engine.prune(options);
  }

  async autoPrune(options: {
    retentionDays: number;
    minIntervalHours: number;
    vacuum: boolean;
  }): Promise<{ skipped: boolean; sessions: number; vacuumed: boolean }> {
    this.commitCollected();
    return this.engine.autoPrune(options);
  }

  async *exportSessions(filter?: {
    sessionId?: string;
    source?: SessionSource;
  }): AsyncIterable<ExportedSession> {
    this.commitCollected();
    yield* this.engine.exportSessions(filter);
  }

  async stats(): Promise<SessionStats> {
    this.commitCollected();
    return this.engine.stats();
  }

  async optimize(): Promise<{ bytesBefore: number; bytesAfter: number }> {
    this.commitCollected();
    return this.engine.optimize();
  }

  async check(): Promise<RepairReport> {
    this.commitCollected();
    return this.engine.check();
  }

  async repair(): Promise<RepairReport> {
    this.commitCollected();
    return this.engine.repair();
  }

  async insights(options?: InsightsOptions): Promise<Insights> {
    this.commitCollected();
    return this.engine.insights(options);
  }

  async usageSeries(options?: UsageSeriesOptions): Promise<UsageSeries> {
    this.commitCollected();
    return this.engine.usageSeries(options);
  }

  async importLegacyJsonl(dir: string): Promise<{ sessions: number; messages: number; skipped: number }> {
    this.commitCollected();
    return this.engine.importLegacyJsonl(dir);
  }

  async recoverFrom(file: string): Promise<RecoveryReport> {
    this.commitCollected();
    return this.engine.recoverFrom(file);
  }
}
