/**
 * The SQLite session store (`state.db`), file-compatible with Python Hermes (schema v17, see
 * schema.ts). `openSessionStore` (the asynchronous `SessionStore` contract every layer uses) and
 * `openSqliteStore` (the synchronous engine under it, for the state package and its tests) are the
 * only ways in; the native driver is loaded inside them.
 *
 * Durability: WAL journal with `synchronous=FULL` by default, so a message is on disk (the WAL is
 * fsynced at commit) when `appendMessage` returns, and survives power loss, not just a crash of the
 * process. `durability: "normal"` trades that for speed (commits survive a process crash; the last
 * ones may roll back after an OS crash).
 *
 * Messages of a session are ordered by `(timestamp, id)`, as Python reads them; new messages get
 * `max(now, newest timestamp in the session)` so a clock that steps back cannot reorder a turn.
 *
 * The parts: schema.ts (DDL and reconciler), connection.ts (driver, opening, lock retry),
 * context.ts (shared connection state), codec.ts (rows ↔ objects), history.ts (appends, undo,
 * branch), listing.ts (listings, resolving references), fts-query.ts + search.ts (search),
 * maintenance.ts (delete, prune, stats, check, repair), insights.ts, legacy-import.ts.
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import type { Message } from "../ai/types.js";
import { AsyncSessionStore } from "./async-store.js";
import { rowToSession, rowToStoredMessage, storedToMessage } from "./codec.js";
import { connect, corruptError, memoryDb } from "./connection.js";
import { StoreContext, type StoreShape } from "./context.js";
import {
  addUsage,
  assertTitleFree,
  branchSession,
  insertMessages,
  insertSession,
  nextLineageTitle,
  undoTurns,
} from "./history.js";
import { insights } from "./insights.js";
import { importLegacyJsonl } from "./legacy-import.js";
import {
  assertSession,
  latestSession,
  listSessions,
  recentSessions,
  requireSession,
  resolveSession,
  sessionRow,
} from "./listing.js";
import * as maintenance from "./maintenance.js";
import { emptyReport, recoverSqlite, sniffRecoverySource } from "./salvage.js";
import {
  applySchemaPlan,
  expectedColumns,
  planIsEmpty,
  planSchema,
  readMaster,
  schemaStamp,
  trigramSupported,
} from "./schema.js";
import { isKnownComplete, recordComplete } from "./schema-stamps.js";
import { searchMessages } from "./search.js";
import { newSessionRow, PATCH_COLUMNS, wantedTitle } from "./session-rows.js";

export { mergeCostStatus } from "./session-rows.js";

import {
  type ExportedSession,
  type Insights,
  type InsightsOptions,
  type NewSession,
  type OpenOptions,
  type RecoveryReport,
  type RepairReport,
  type SearchHit,
  type SearchOptions,
  type SessionFilter,
  type SessionRecord,
  type SessionStats,
  SessionStoreError,
  type SessionSummary,
  type SqliteSessionStoreHandle,
  type StoredMessage,
  type SyncSessionStore,
  type UsageDelta,
} from "./types.js";
import { replayUnsaved } from "./unsaved-writes.js";
import { type UsageSeries, type UsageSeriesOptions, usageSeries } from "./usage-series.js";
import { SAFETY_PAGES, WalCheckpointer } from "./wal-checkpointer.js";

/**
 * Files up to this size get SQLite's `quick_check` when opened for recording (about 5 ms per MB,
 * paid on every start, so kept to a few MB); bigger ones only the pages every write goes through,
 * and damage elsewhere is met by the query that reads it.
 */
export const QUICK_CHECK_MAX_BYTES = 4 * 1024 * 1024;

/** `<home>/state.db`. */
export function sessionStorePath(home: string): string {
  return join(home, "state.db");
}

/** The SQLite store behind the asynchronous contract, with its synchronous engine (`engine`). */
export type SqliteSessionStore = AsyncSessionStore<SqliteSessionStoreHandle>;

/**
 * Opens (creating when missing, unless `readonly`) the store at `path` behind the asynchronous
 * `SessionStore` contract. Opening itself is synchronous and throws as `openSqliteStore` does.
 */
export function openSessionStore(path: string, options: OpenOptions = {}): SqliteSessionStore {
  return new AsyncSessionStore(openSqliteStore(path, options));
}

/**
 * Opens (creating when missing, unless `readonly`) the synchronous engine at `path`. Throws
 * `SessionStoreError`: `corrupt` for a file that is not a readable database (left untouched),
 * `locked` when another process holds it past the retry budget, `not_found` for a read-only open
 * of a missing file.
 */
export function openSqliteStore(path: string, options: OpenOptions = {}): SqliteSessionStoreHandle {
  const readonly = options.readonly ?? false;
  const retryBudgetMs = options.retryBudgetMs ?? 10_000;
  const synchronous = options.durability === "normal" ? "NORMAL" : "FULL";
  const db = connect(path, {
    readonly,
    busyTimeoutMs: options.busyTimeoutMs ?? 1000,
    retryBudgetMs,
    synchronous,
  });
  const empty: StoreShape = {
    sessionColumns: new Set(),
    messageColumns: new Set(),
    fts: false,
    trigram: false,
  };
  const ctx = new StoreContext(
    db,
    path,
    readonly,
    retryBudgetMs,
    options.now ?? (() => Date.now() / 1000),
    empty,
    ...(options.redact ? [options.redact] : []),
  );
  try {
    const problems = readonly ? [] : reconcile(ctx).problems;
    ctx.shape = ctx.read(() => readShape(ctx));
    if (!readonly && options.checkpointInBackground) {
      ctx.checkpointer = new WalCheckpointer({ path, synchronous });
      db.pragma(`wal_autocheckpoint = ${SAFETY_PAGES}`);
    }
    return new SqliteEngine(ctx, problems);
  } catch (error) {
    ctx.close();
    throw error;
  }
}

/** Brings the file up to the schema (see schema.ts); takes the write lock only when something is missing. */
export function reconcile(ctx: StoreContext): { done: string[]; problems: string[] } {
  // A schema seen complete before (schema-stamps.ts) is not compared again.
  const stamp = ctx.read(() => schemaStamp(ctx.db));
  if (isKnownComplete(stamp)) return { done: [], problems: [] };
  const expected = expectedColumns(memoryDb);
  const trigram = trigramSupported(ctx.db);
  const plan = ctx.read(() => planSchema(ctx.db, expected, trigram));
  if (planIsEmpty(plan)) {
    recordComplete(stamp);
    return { done: [], problems: [] };
  }
  const result = ctx.write(() => applySchemaPlan(ctx.db, planSchema(ctx.db, expected, trigram)));
  if (result.problems.length === 0) {
    const after = ctx.read(() => ({
      stamp: schemaStamp(ctx.db),
      plan: planSchema(ctx.db, expected, trigram),
    }));
    if (planIsEmpty(after.plan)) recordComplete(after.stamp);
  }
  return result;
}

export function readShape(ctx: StoreContext): StoreShape {
  const cols = (table: string) =>
    new Set(
      (ctx.db.prepare(`PRAGMA table_info("${table}")`).all() as Array<{ name: string }>).map((r) => r.name),
    );
  const master = readMaster(ctx.db);
  return {
    sessionColumns: cols("sessions"),
    messageColumns: cols("messages"),
    fts: master.get("messages_fts")?.type === "table",
    trigram: master.get("messages_fts_trigram")?.type === "table",
  };
}

type SessionPatch = Parameters<SyncSessionStore["updateSession"]>[1];

class SqliteEngine implements SqliteSessionStoreHandle {
  constructor(
    private readonly ctx: StoreContext,
    /** Schema problems met while opening (reported again by `check`). */
    private readonly openProblems: string[],
  ) {}

  get path(): string {
    return this.ctx.path;
  }

  close(): void {
    this.ctx.close();
  }

  withRetryBudget<T>(budgetMs: number, busyMs: number, fn: () => T): T {
    return this.ctx.withRetryBudget(budgetMs, busyMs, fn);
  }

  group<T>(fn: () => T): T {
    return this.ctx.group(fn);
  }

  appendTimed(
    sessionId: string,
    entries: ReadonlyArray<{ message: Message; timestamp: number; tokenCount?: number }>,
  ): number[] {
    return this.ctx.write(() => insertMessages(this.ctx, sessionId, entries));
  }

  probe(): void {
    const ctx = this.ctx;
    ctx.read(() => {
      let bytes = 0;
      try {
        bytes = statSync(ctx.path).size;
      } catch {
        // a missing file is a new one; the queries below say the rest
      }
      if (bytes <= QUICK_CHECK_MAX_BYTES) {
        const result = ctx.db.pragma("quick_check(1)", { simple: true });
        if (result !== "ok") throw corruptError(ctx.path, new Error(`quick_check: ${String(result)}`));
        return;
      }
      ctx.get("SELECT COUNT(*) AS n FROM sessions");
      ctx.get("SELECT COUNT(*) AS n FROM messages");
      ctx.all("SELECT * FROM messages ORDER BY id DESC LIMIT 20");
      ctx.all("SELECT * FROM sessions ORDER BY started_at DESC LIMIT 20");
    });
  }

  recoverFrom(file: string): RecoveryReport {
    const ctx = this.ctx;
    const source = sniffRecoverySource(file);
    if (source.kind === "sqlite") return recoverSqlite(ctx, file);
    if (source.kind === "unsaved") {
      return replayUnsaved(this, file, {
        seen: (key) =>
          ctx.read(() => ctx.get("SELECT value FROM state_meta WHERE key = ?", key)) !== undefined,
        mark: (key) =>
          ctx.write(() =>
            ctx
              .stmt("INSERT OR REPLACE INTO state_meta (key, value) VALUES (?, ?)")
              .run(key, String(ctx.now())),
          ),
      });
    }
    return emptyReport("none", source.reason ?? `${file}: nothing to recover`);
  }

  createSession(input: NewSession): SessionRecord {
    const id = this.ctx.write(() => this.insertNewSession(input));
    return this.mustGet(id);
  }

  startSession(input: NewSession, first: Message, options: { usage?: UsageDelta } = {}): number {
    return this.ctx.write(() => {
      const id = this.insertNewSession(input);
      const [messageId] = insertMessages(this.ctx, id, [{ message: first }], options.usage);
      return messageId!;
    });
  }

  continueSession(
    parentId: string,
    child: NewSession & { parentSessionId: string },
    messages: Message[],
    reason = "compression",
  ): SessionRecord {
    const ctx = this.ctx;
    const id = ctx.write(() => {
      requireSession(ctx, parentId);
      ctx
        .stmt("UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ?")
        .run(ctx.now(), reason, parentId);
      const childId = this.insertNewSession(child);
      insertMessages(
        ctx,
        childId,
        messages.map((message) => ({ message })),
      );
      return childId;
    });
    return this.mustGet(id);
  }

  /** The insert of `createSession`, inside the caller's write transaction; returns the new id. */
  private insertNewSession(input: NewSession): string {
    const ctx = this.ctx;
    const row = newSessionRow(input, ctx.now(), ctx.redact);
    const { id, title } = row;
    // An indexed existence probe: no row decoded (it runs for every new session).
    if (ctx.stmt("SELECT 1 FROM sessions WHERE id = ?").pluck().get(id) !== undefined)
      throw new SessionStoreError("invalid", `A session with id "${id}" already exists.`);
    if (title !== null) assertTitleFree(ctx, title, id);
    if (input.parentSessionId !== undefined) requireSession(ctx, input.parentSessionId);
    insertSession(ctx, row);
    return id;
  }

  getSession(id: string): SessionRecord | null {
    return this.ctx.read(() => {
      const row = sessionRow(this.ctx, id);
      return row ? rowToSession(row) : null;
    });
  }

  private mustGet(id: string): SessionRecord {
    return this.ctx.read(() => requireSession(this.ctx, id));
  }

  resolveSession(ref: string): SessionRecord {
    return resolveSession(this.ctx, ref);
  }

  latestSession(filter?: { source?: string; title?: string }): SessionRecord | null {
    return latestSession(this.ctx, filter);
  }

  updateSession(id: string, patch: SessionPatch): void {
    const sets: string[] = [];
    const values: unknown[] = [];
    for (const [key, column] of Object.entries(PATCH_COLUMNS)) {
      const value = (patch as Record<string, unknown>)[key];
      if (value === undefined) continue;
      sets.push(`${column} = ?`);
      values.push(
        key === "archived"
          ? value
            ? 1
            : 0
          : key === "systemPrompt"
            ? this.ctx.redact(String(value))
            : value,
      );
    }
    this.ctx.write(() => {
      assertSession(this.ctx, id);
      if (sets.length)
        this.ctx.stmt(`UPDATE sessions SET ${sets.join(", ")} WHERE id = ?`).run(...values, id);
    });
  }

  setTitle(id: string, title: string | null): SessionRecord {
    const clean = wantedTitle(this.ctx.redact, title);
    this.ctx.write(() => {
      requireSession(this.ctx, id);
      if (clean !== null) assertTitleFree(this.ctx, clean, id);
      this.ctx.stmt("UPDATE sessions SET title = ? WHERE id = ?").run(clean, id);
    });
    return this.mustGet(id);
  }

  nextLineageTitle(title: string): string {
    return this.ctx.read(() => nextLineageTitle(this.ctx, title));
  }

  endSession(id: string, reason: string): void {
    this.ctx.write(() => {
      assertSession(this.ctx, id);
      this.ctx
        .stmt("UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ?")
        .run(this.ctx.now(), reason, id);
    });
  }

  reopenSession(id: string): void {
    this.ctx.write(() => {
      assertSession(this.ctx, id);
      this.ctx.stmt("UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = ?").run(id);
    });
  }

  appendMessage(
    sessionId: string,
    message: Message,
    options: { timestamp?: number; tokenCount?: number; usage?: UsageDelta } = {},
  ): number {
    const { usage, ...entry } = options;
    return this.ctx.write(() => {
      const [id] = insertMessages(this.ctx, sessionId, [{ message, ...entry }], usage);
      return id!;
    });
  }

  appendMessages(sessionId: string, messages: Message[], options: { usage?: UsageDelta } = {}): number[] {
    return this.ctx.write(() => {
      return insertMessages(
        this.ctx,
        sessionId,
        messages.map((message) => ({ message })),
        options.usage,
      );
    });
  }

  recordUsage(sessionId: string, delta: UsageDelta): void {
    this.ctx.write(() => addUsage(this.ctx, sessionId, delta));
  }

  getMessages(sessionId: string, options: { includeInactive?: boolean } = {}): StoredMessage[] {
    const ctx = this.ctx;
    const filter = options.includeInactive ? "" : ` AND ${ctx.activeMessage("m")}`;
    return ctx.read(() => {
      requireSession(ctx, sessionId);
      return ctx
        .all(`SELECT * FROM messages m WHERE m.session_id = ?${filter} ORDER BY m.timestamp, m.id`, sessionId)
        .map(rowToStoredMessage)
        .filter((m): m is StoredMessage => m !== null);
    });
  }

  conversation(sessionId: string): Message[] {
    return this.getMessages(sessionId).map(storedToMessage);
  }

  undoTurns(sessionId: string, turns: number): { removed: number; userText: string | null } {
    const n = Math.floor(turns);
    if (!(n >= 1)) throw new SessionStoreError("invalid", `Turns to undo must be 1 or more, got ${turns}.`);
    return this.ctx.write(() => undoTurns(this.ctx, sessionId, n));
  }

  branchSession(id: string, options: { title?: string; source?: string } = {}): SessionRecord {
    return this.mustGet(this.ctx.write(() => branchSession(this.ctx, id, options)));
  }

  listSessions(filter?: SessionFilter): SessionSummary[] {
    return listSessions(this.ctx, filter);
  }

  search(options: SearchOptions): SearchHit[] {
    return searchMessages(this.ctx, options);
  }

  around(sessionId: string, messageId: number, window = 5): StoredMessage[] {
    const ctx = this.ctx;
    const w = Math.max(0, Math.floor(window));
    return ctx.read(() => {
      requireSession(ctx, sessionId);
      const anchor = ctx.get("SELECT * FROM messages WHERE id = ? AND session_id = ?", messageId, sessionId);
      if (!anchor)
        throw new SessionStoreError("not_found", `Session ${sessionId} has no message ${messageId}.`);
      const active = ctx.activeMessage("m");
      const side = (cmp: "<" | ">", dir: "ASC" | "DESC") =>
        ctx.all(
          `SELECT * FROM messages m WHERE m.session_id = ? AND ${active} AND (m.timestamp, m.id) ${cmp} (?, ?)
           ORDER BY m.timestamp ${dir}, m.id ${dir} LIMIT ?`,
          sessionId,
          anchor["timestamp"],
          messageId,
          w,
        );
      return [...side("<", "DESC").reverse(), anchor, ...side(">", "ASC")]
        .map(rowToStoredMessage)
        .filter((m): m is StoredMessage => m !== null);
    });
  }

  recent(limit?: number, excludeSessionId?: string): SessionSummary[] {
    return recentSessions(this.ctx, limit, excludeSessionId);
  }

  deleteSession(id: string): { messages: number } {
    return this.ctx.write(() => {
      requireSession(this.ctx, id);
      return { messages: maintenance.deleteSessions(this.ctx, [id]).messages };
    });
  }

  prunable(options: { olderThanDays: number; source?: string }): SessionSummary[] {
    return maintenance.prunable(this.ctx, options);
  }

  prune(options: { olderThanDays: number; source?: string }): { sessions: number; messages: number } {
    return maintenance.prune(this.ctx, options);
  }

  autoPrune(options: { retentionDays: number; minIntervalHours: number; vacuum: boolean }): {
    skipped: boolean;
    sessions: number;
    vacuumed: boolean;
  } {
    return maintenance.autoPrune(this.ctx, options);
  }

  *exportSessions(filter: { sessionId?: string; source?: string } = {}): Iterable<ExportedSession> {
    const ctx = this.ctx;
    // Ids first (small), then one session at a time: a million messages are never held at once.
    // Same-second sessions keep their creation order (rowid), not their random id suffix.
    const ids = ctx.read(() => {
      if (filter.sessionId !== undefined) {
        requireSession(ctx, filter.sessionId);
        return [filter.sessionId];
      }
      const where = filter.source !== undefined ? "WHERE source = ?" : "";
      const params = filter.source !== undefined ? [filter.source] : [];
      return ctx
        .all(`SELECT id FROM sessions ${where} ORDER BY started_at, rowid`, ...params)
        .map((r) => String(r["id"]));
    });
    for (const id of ids) {
      const session = this.getSession(id);
      if (!session) continue;
      yield { session, messages: this.getMessages(id, { includeInactive: true }) };
    }
  }

  stats(): SessionStats {
    return maintenance.stats(this.ctx);
  }

  optimize(): { bytesBefore: number; bytesAfter: number } {
    return maintenance.optimize(this.ctx);
  }

  check(): RepairReport {
    return maintenance.check(this.ctx, this.openProblems);
  }

  repair(): RepairReport {
    return maintenance.repair(
      this.ctx,
      () => reconcile(this.ctx),
      () => readShape(this.ctx),
    );
  }

  insights(options?: InsightsOptions): Insights {
    return insights(this.ctx, options);
  }

  usageSeries(options?: UsageSeriesOptions): UsageSeries {
    return usageSeries(this.ctx, options);
  }

  importLegacyJsonl(dir: string): { sessions: number; messages: number; skipped: number } {
    return importLegacyJsonl(this.ctx, dir);
  }
}
