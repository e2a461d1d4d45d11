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

/** `SessionStore` over `engine`; closing it closes the engine. */
export class AsyncSessionStore<E extends SyncSessionStore = SyncSessionStore> implements SessionStore {
  constructor(
    /** The synchronous engine behind the contract (state package and its tests only). */
    readonly engine: E,
  ) {}

  get path(): string {
    return this.engine.path;
  }

  async close(): Promise<void> {
    this.engine.close();
  }

  async createSession(input: NewSession): Promise<SessionRecord> {
    return this.engine.createSession(input);
  }

  async startSession(input: NewSession, first: Message, options?: { usage?: UsageDelta }): Promise<number> {
    return this.engine.startSession(input, first, options);
  }

  async getSession(id: string): Promise<SessionRecord | null> {
    return this.engine.getSession(id);
  }

  async resolveSession(ref: string): Promise<SessionRecord> {
    return this.engine.resolveSession(ref);
  }

  async latestSession(filter?: { source?: SessionSource; title?: string }): Promise<SessionRecord | null> {
    return this.engine.latestSession(filter);
  }

  async updateSession(id: string, patch: Patch): Promise<void> {
    this.engine.updateSession(id, patch);
  }

  async setTitle(id: string, title: string | null): Promise<SessionRecord> {
    return this.engine.setTitle(id, title);
  }

  async nextLineageTitle(title: string): Promise<string> {
    return this.engine.nextLineageTitle(title);
  }

  async endSession(id: string, reason: string): Promise<void> {
    this.engine.endSession(id, reason);
  }

  async reopenSession(id: string): Promise<void> {
    this.engine.reopenSession(id);
  }

  async continueSession(
    parentId: string,
    child: NewSession & { parentSessionId: string },
    messages: Message[],
    reason?: string,
  ): Promise<SessionRecord> {
    return this.engine.continueSession(parentId, child, messages, reason);
  }

  async appendMessage(
    sessionId: string,
    message: Message,
    options?: { timestamp?: number; tokenCount?: number; usage?: UsageDelta },
  ): Promise<number> {
    return this.engine.appendMessage(sessionId, message, options);
  }

  async appendMessages(sessionId: string, messages: Message[]): Promise<number[]> {
    return this.engine.appendMessages(sessionId, messages);
  }

  async recordUsage(sessionId: string, delta: UsageDelta): Promise<void> {
    this.engine.recordUsage(sessionId, delta);
  }

  async getMessages(sessionId: string, options?: { includeInactive?: boolean }): Promise<StoredMessage[]> {
    return this.engine.getMessages(sessionId, options);
  }

  async conversation(sessionId: string): Promise<Message[]> {
    return this.engine.conversation(sessionId);
  }

  async undoTurns(sessionId: string, turns: number): Promise<{ removed: number; userText: string | null }> {
    return this.engine.undoTurns(sessionId, turns);
  }

  async branchSession(
    id: string,
    options?: { title?: string; source?: SessionSource },
  ): Promise<SessionRecord> {
    return this.engine.branchSession(id, options);
  }

  async listSessions(filter?: SessionFilter): Promise<SessionSummary[]> {
    return this.engine.listSessions(filter);
  }

  async search(options: SearchOptions): Promise<SearchHit[]> {
    return this.engine.search(options);
  }

  async around(sessionId: string, messageId: number, window?: number): Promise<StoredMessage[]> {
    return this.engine.around(sessionId, messageId, window);
  }

  async recent(limit?: number, excludeSessionId?: string): Promise<SessionSummary[]> {
    return this.engine.recent(limit, excludeSessionId);
  }

  async deleteSession(id: string): Promise<{ messages: number }> {
    return this.engine.deleteSession(id);
  }

  async prunable(options: { olderThanDays: number; source?: SessionSource }): Promise<SessionSummary[]> {
    return this.engine.prunable(options);
  }

  async prune(options: {
    olderThanDays: number;
    source?: SessionSource;
  }): Promise<{ sessions: number; messages: number }> {
    return this.engine.prune(options);
  }

  async autoPrune(options: {
    retentionDays: number;
    minIntervalHours: number;
    vacuum: boolean;
  }): Promise<{ skipped: boolean; sessions: number; vacuumed: boolean }> {
    return this.engine.autoPrune(options);
  }

  async *exportSessions(filter?: {
    sessionId?: string;
    source?: SessionSource;
  }): AsyncIterable<ExportedSession> {
    yield* this.engine.exportSessions(filter);
  }

  async stats(): Promise<SessionStats> {
    return this.engine.stats();
  }

  async optimize(): Promise<{ bytesBefore: number; bytesAfter: number }> {
    return this.engine.optimize();
  }

  async check(): Promise<RepairReport> {
    return this.engine.check();
  }

  async repair(): Promise<RepairReport> {
    return this.engine.repair();
  }

  async insights(options?: InsightsOptions): Promise<Insights> {
    return this.engine.insights(options);
  }

  async usageSeries(options?: UsageSeriesOptions): Promise<UsageSeries> {
    return this.engine.usageSeries(options);
  }

  async importLegacyJsonl(dir: string): Promise<{ sessions: number; messages: number; skipped: number }> {
    return this.engine.importLegacyJsonl(dir);
  }

  async recoverFrom(file: string): Promise<RecoveryReport> {
    return this.engine.recoverFrom(file);
  }
}
