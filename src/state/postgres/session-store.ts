/**
 * The session store over PostgreSQL (issue 27): the whole asynchronous `SessionStore` contract
 * with SQLite's semantics, for several Hermes instances sharing one database. The parts:
 * sessions-sql.ts (context, transactions, error mapping, NUL-safe text), sessions-read.ts
 * (listings, resolving, messages), sessions-write.ts (creates, appends, usage, undo, branches),
 * sessions-admin.ts (delete, stats, check, repair, optimize), sessions-import.ts (importSession for
 * `hermes state migrate`, legacy JSONL, recovery). Search, insights, usage series and pruning are
 * search.ts, insights.ts and maintenance.ts beside this file.
 *
 * Rows keep state.db's columns and encodings (times in epoch seconds, Python-format ids, the
 * codec's content encoding), so a session moves between the backends unchanged. Concurrency:
 * each write is one transaction; writers of one session serialise on its row; titles are unique
 * by index (a race is `title_taken`, as in SQLite); numbered lineage titles are taken under an
 * advisory lock per lineage. The schema comes from the migrations (run by the backend's opener),
 * which this checks for on open.
 *
 * Fencing: `fencedBy(fence)` is a view whose writes land only while a chat claim is current
 * (the turn running under it on this instance still holds the chat): appends and row updates
 * stay one statement (a CTE takes the claim row `FOR SHARE` first), transactions take it as their
 * first statement (`inTx` with `ctx.fence`). A refused write throws `ChatClaimLostError`.
 *
 * `close()` ends the store, not the pool: the pool belongs to whoever opened it (several stores
 * share one), unless `closeDatabase` is set.
 */

import type { Message } from "../../ai/types.js";
import { redactText } from "../../util/redact.js";
import { rowToSession, storedToMessage } from "../codec.js";
import type { ClaimFence, ClaimFencedStore } from "../coordination.js";
import { PATCH_COLUMNS } from "../session-rows.js";
import { sanitizeTitle } from "../titles.js";
import {
  type ExportedSession,
  type Insights,
  type InsightsOptions,
  type NewSession,
  type RecoveryReport,
  type RepairReport,
  type SearchHit,
  type SearchOptions,
  type SessionFilter,
  type SessionRecord,
  type SessionSource,
  type SessionStats,
  type SessionStore,
  SessionStoreError,
  type SessionSummary,
  type StoredMessage,
  type UsageDelta,
} from "../types.js";
import type { UsageSeries, UsageSeriesOptions } from "../usage-series-types.js";
import type { PgDatabase } from "./database.js";
import { pgInsights, pgUsageSeries } from "./insights.js";
import { pgAutoPrune, pgPrunable, pgPrune } from "./maintenance.js";
import { appliedVersions } from "./migrate.js";
import { MIGRATIONS } from "./migrations/index.js";
import { SESSION_MIGRATIONS } from "./migrations/sessions.js";
import { pgSearch } from "./search.js";
import * as admin from "./sessions-admin.js";
import { type ImportOptions, importLegacyJsonl, importSession, recoverFrom } from "./sessions-import.js";
import * as read from "./sessions-read.js";
import { inTx, mapPgError, notFound, type PgStoreContext, run } from "./sessions-sql.js";
import * as write from "./sessions-write.js";

export interface PgSessionStoreOptions {
  /** Injected clock in seconds (default `Date.now() / 1000`). */
  now?: () => number;
  /** Applied to every text written (default: the process-wide secret redactor). */
  redact?: (text: string) => string;
  /** `close()` also ends the pool (default false: the pool is shared with other stores). */
  closeDatabase?: boolean;
}

type SessionPatch = Parameters<SessionStore["updateSession"]>[1];

export class PgSessionStore implements SessionStore, ClaimFencedStore<PgSessionStore> {
  private closed = false;
  private readonly ctx: PgStoreContext;
  /** The store a fenced view was made from (it owns the closing); this store itself otherwise. */
  private readonly root: PgSessionStore;

  constructor(
    private readonly db: PgDatabase,
    private readonly options: PgSessionStoreOptions = {},
    view?: { root: PgSessionStore; fence: ClaimFence },
  ) {
    this.ctx = {
      db,
      now: options.now ?? (() => Date.now() / 1000),
      redact: options.redact ?? redactText,
      ...(view ? { fence: view.fence } : {}),
    };
    this.root = view?.root ?? this;
  }

  /**
   * This store with every write fenced by `fence` (a chat claim): each write checks in its own
   * statement or transaction that the claim is still the chat's current one in
   * `coord_chat_claims`, and otherwise writes nothing and throws `ChatClaimLostError`. Reads are
   * unchanged; closing the view does nothing (this store stays open).
   */
  fencedBy(fence: ClaimFence): PgSessionStore {
    return new PgSessionStore(this.db, this.options, { root: this.root, fence });
  }

  get path(): string {
    return this.db.label;
  }

  async close(): Promise<void> {
    if (this.root !== this || this.closed) return;
    this.closed = true;
    if (this.options.closeDatabase) await this.db.close();
  }

  /** Runs `fn` with the store's error mapping; rejects once closed. */
  private async go<T>(fn: () => Promise<T>, title?: string | null): Promise<T> {
    if (this.root.closed)
      throw new SessionStoreError("invalid", `the session store for ${this.db.label} is closed.`);
    try {
      return await fn();
    } catch (error) {
      return mapPgError(this.ctx, error, title);
    }
  }

  private tx<T>(
    fn: (q: Parameters<Parameters<typeof inTx>[1]>[0]) => Promise<T>,
    title?: string | null,
  ): Promise<T> {
    return this.go(() => inTx(this.ctx, fn), title);
  }

  private async mustGet(id: string): Promise<SessionRecord> {
    return read.requireSession(this.db, id);
  }

  async createSession(input: NewSession): Promise<SessionRecord> {
    const title = write.wantedTitle(this.ctx, input.title);
    const id = await this.tx((q) => write.insertNewSession(this.ctx, q, input), title);
    return this.go(() => this.mustGet(id));
  }

  async startSession(
    input: NewSession,
    first: Message,
    options: { usage?: UsageDelta } = {},
  ): Promise<number> {
    const title = write.wantedTitle(this.ctx, input.title);
    return this.tx(async (q) => {
      const id = await write.insertNewSession(this.ctx, q, input);
      const [messageId] = await write.insertMessages(this.ctx, q, id, [{ message: first }], options.usage);
      return messageId!;
    }, title);
  }

  async continueSession(
    parentId: string,
    child: NewSession & { parentSessionId: string },
    messages: Message[],
    reason = "compression",
  ): Promise<SessionRecord> {
    const title = write.wantedTitle(this.ctx, child.title);
    const id = await this.tx(async (q) => {
      const ended = await run(
        q,
        "UPDATE sessions SET ended_at = $1, end_reason = $2 WHERE id = $3 RETURNING id",
        [this.ctx.now(), reason, parentId],
      );
      if (ended.length === 0) throw notFound(parentId);
      const childId = await write.insertNewSession(this.ctx, q, child);
      await write.insertMessages(
        this.ctx,
        q,
        childId,
        messages.map((message) => ({ message })),
      );
      return childId;
    }, title);
    return this.go(() => this.mustGet(id));
  }

  async getSession(id: string): Promise<SessionRecord | null> {
    return this.go(async () => {
      const row = await read.sessionRow(this.db, id);
      return row ? rowToSession(row) : null;
    });
  }

  async resolveSession(ref: string): Promise<SessionRecord> {
    return this.go(() => read.resolveSession(this.db, ref));
  }

  async latestSession(filter?: { source?: SessionSource; title?: string }): Promise<SessionRecord | null> {
    return this.go(() => read.latestSession(this.db, filter));
  }

  async updateSession(id: string, patch: SessionPatch): Promise<void> {
    const sets: string[] = [];
    const values: unknown[] = [];
    for (const [key, column] of Object.entries(PATCH_COLUMNS)) {
      const value = (patch as Record<string, unknown>)[key];
      if (value === undefined) continue;
      values.push(
        key === "archived"
          ? value
            ? 1
            : 0
          : key === "systemPrompt" && value !== null
            ? this.ctx.redact(String(value))
            : value,
      );
      sets.push(`${column} = $${values.length + 1}`);
    }
    await this.go(async () => {
      if (sets.length === 0) await this.mustGet(id);
      else if (!(await write.updateSessionRow(this.db, id, sets.join(", "), values, this.ctx.fence)))
        throw notFound(id);
    });
  }

  async setTitle(id: string, title: string | null): Promise<SessionRecord> {
    const clean = await this.go(async () => sanitizeTitle(title === null ? null : this.ctx.redact(title)));
    await this.tx(async (q) => {
      await read.requireSession(q, id, "FOR UPDATE");
      if (clean !== null) await write.assertTitleFree(q, clean, id);
      await run(q, "UPDATE sessions SET title = $1 WHERE id = $2", [clean, id]);
    }, clean);
    return this.go(() => this.mustGet(id));
  }

  async nextLineageTitle(title: string): Promise<string> {
    return this.go(() => write.nextLineageTitle(this.db, title));
  }

  async endSession(id: string, reason: string): Promise<void> {
    await this.go(async () => {
      const sets = "ended_at = $2, end_reason = $3";
      const values = [this.ctx.now(), reason];
      if (!(await write.updateSessionRow(this.db, id, sets, values, this.ctx.fence))) throw notFound(id);
    });
  }

  async reopenSession(id: string): Promise<void> {
    await this.go(async () => {
      const sets = "ended_at = NULL, end_reason = NULL";
      if (!(await write.updateSessionRow(this.db, id, sets, [], this.ctx.fence))) throw notFound(id);
    });
  }

  async appendMessage(
    sessionId: string,
    message: Message,
    options: { timestamp?: number; tokenCount?: number; usage?: UsageDelta } = {},
  ): Promise<number> {
    const { usage, ...entry } = options;
    // One statement, so no explicit transaction: one round trip per message (fenced too).
    return this.go(
      async () =>
        (
          await write.insertMessages(
            this.ctx,
            this.db,
            sessionId,
            [{ message, ...entry }],
            usage,
            this.ctx.fence,
          )
        )[0]!,
    );
  }

  async appendMessages(
    sessionId: string,
    messages: Message[],
    options: { usage?: UsageDelta } = {},
  ): Promise<number[]> {
    return this.go(() =>
      write.insertMessages(
        this.ctx,
        this.db,
        sessionId,
        messages.map((message) => ({ message })),
        options.usage,
        this.ctx.fence,
      ),
    );
  }

  async recordUsage(sessionId: string, delta: UsageDelta): Promise<void> {
    await this.go(() => write.addUsage(this.db, sessionId, delta, this.ctx.fence));
  }

  async getMessages(
    sessionId: string,
    options: { includeInactive?: boolean } = {},
  ): Promise<StoredMessage[]> {
    return this.go(() => read.getMessages(this.db, sessionId, options.includeInactive ?? false));
  }

  async conversation(sessionId: string): Promise<Message[]> {
    return (await this.getMessages(sessionId)).map(storedToMessage);
  }

  async undoTurns(sessionId: string, turns: number): Promise<{ removed: number; userText: string | null }> {
    const n = Math.floor(turns);
    if (!(n >= 1)) throw new SessionStoreError("invalid", `Turns to undo must be 1 or more, got ${turns}.`);
    return this.tx((q) => write.undoTurns(q, sessionId, n));
  }

  async branchSession(
    id: string,
    options: { title?: string; source?: SessionSource } = {},
  ): Promise<SessionRecord> {
    const title =
      options.title === undefined ? undefined : await this.go(async () => sanitizeTitle(options.title));
    const newId = await this.tx((q) => write.branchSession(this.ctx, q, id, options), title);
    return this.go(() => this.mustGet(newId));
  }

  async listSessions(filter?: SessionFilter): Promise<SessionSummary[]> {
    return this.go(() => read.listSessions(this.db, filter));
  }

  async search(options: SearchOptions): Promise<SearchHit[]> {
    return this.go(() => pgSearch(this.db, options));
  }

  async around(sessionId: string, messageId: number, window = 5): Promise<StoredMessage[]> {
    return this.go(() => read.around(this.db, sessionId, messageId, window));
  }

  async recent(limit?: number, excludeSessionId?: string): Promise<SessionSummary[]> {
    return this.go(() => read.recentSessions(this.db, limit, excludeSessionId));
  }

  async deleteSession(id: string): Promise<{ messages: number }> {
    return this.go(() => admin.deleteSession(this.ctx, id));
  }

  async prunable(options: { olderThanDays: number; source?: SessionSource }): Promise<SessionSummary[]> {
    return this.go(() => pgPrunable(this.db, options, this.ctx.now()));
  }

  async prune(options: {
    olderThanDays: number;
    source?: SessionSource;
  }): Promise<{ sessions: number; messages: number }> {
    return this.go(() => pgPrune(this.db, options, this.ctx.now()));
  }

  async autoPrune(options: { retentionDays: number; minIntervalHours: number; vacuum: boolean }): Promise<{
    skipped: boolean;
    sessions: number;
    vacuumed: boolean;
  }> {
    return this.go(() => pgAutoPrune(this.db, options, this.ctx.now()));
  }

  /** Ids first (small), then one session at a time: a million messages are never held at once. */
  async *exportSessions(
    filter: { sessionId?: string; source?: SessionSource } = {},
  ): AsyncIterable<ExportedSession> {
    const ids = await this.go(async () => {
      if (filter.sessionId !== undefined) {
        await this.mustGet(filter.sessionId);
        return [filter.sessionId];
      }
      const rows = await run(
        this.db,
        `SELECT id FROM sessions ${filter.source !== undefined ? "WHERE source = $1" : ""} ORDER BY started_at, created_seq`,
        filter.source !== undefined ? [filter.source] : [],
      );
      return rows.map((r) => String(r["id"]));
    });
    for (const id of ids) {
      const session = await this.getSession(id);
      if (!session) continue;
      const messages = await this.go(() => read.getMessages(this.db, id, true)).catch((error: unknown) => {
        // Deleted by another instance between the two reads.
        if (error instanceof SessionStoreError && error.code === "not_found") return null;
        throw error;
      });
      if (messages) yield { session, messages };
    }
  }

  async stats(): Promise<SessionStats> {
    return this.go(() => admin.stats(this.ctx));
  }

  async optimize(): Promise<{ bytesBefore: number; bytesAfter: number }> {
    return this.go(() => admin.optimize(this.ctx));
  }

  async check(): Promise<RepairReport> {
    return this.go(() => admin.check(this.ctx));
  }

  async repair(): Promise<RepairReport> {
    return this.go(() => admin.repair(this.ctx));
  }

  async insights(options?: InsightsOptions): Promise<Insights> {
    return this.go(() => pgInsights(this.db, { ...options, now: options?.now ?? this.ctx.now() }));
  }

  async usageSeries(options?: UsageSeriesOptions): Promise<UsageSeries> {
    return this.go(() => pgUsageSeries(this.db, { ...options, now: options?.now ?? this.ctx.now() }));
  }

  async importLegacyJsonl(dir: string): Promise<{ sessions: number; messages: number; skipped: number }> {
    return this.go(() => importLegacyJsonl(this.ctx, dir));
  }

  async recoverFrom(file: string): Promise<RecoveryReport> {
    return this.go(() => recoverFrom(this.ctx, file));
  }

  /**
   * Imports one exported session keeping its id, times, counters and message ids (`hermes state
   * migrate`); `"present"` when a session with that id is already here (nothing changed).
   */
  async importSession(e: ExportedSession, options?: ImportOptions): Promise<"imported" | "present"> {
    return this.go(() => importSession(this.ctx, e, options));
  }
}

/**
 * The session store over `db`. Throws `SessionStoreError("invalid")` when the sessions schema
 * (migrations 100+) has not been applied or a newer Hermes migrated the database, `locked` when
 * the database cannot be reached.
 */
export async function openPgSessionStore(
  db: PgDatabase,
  options: PgSessionStoreOptions = {},
): Promise<PgSessionStore> {
  const store = new PgSessionStore(db, options);
  const ctx: PgStoreContext = { db, now: () => 0, redact: (t) => t };
  const done = new Set(await appliedVersions(db).catch((error: unknown) => mapPgError(ctx, error)));
  // A database a newer Hermes migrated is refused here as at the backend's open: never written.
  const known = new Set(MIGRATIONS.map((m) => m.version));
  const unknown = [...done].filter((v) => !known.has(v));
  if (unknown.length > 0) {
    throw new SessionStoreError(
      "invalid",
      `the database ${db.label} has schema versions this Hermes does not know (${unknown.join(", ")}): it was migrated by a newer Hermes; upgrade this one`,
    );
  }
  const missing = SESSION_MIGRATIONS.filter((m) => !done.has(m.version));
  if (missing.length > 0) {
    throw new SessionStoreError(
      "invalid",
      `${db.label} lacks the sessions schema (migration${missing.length === 1 ? "" : "s"} ${missing.map((m) => m.version).join(", ")}); run the migrations first (opening the postgres backend does).`,
    );
  }
  return store;
}
