/**
 * What the store's parts share: the connection, a statement cache, the clock, the write/read
 * wrappers with retry and error mapping, and which optional columns and tables the file has (a
 * read-only open of an older file cannot add them, so queries adapt instead).
 */

import { redactText } from "../util/redact.js";
import type { Row } from "./codec.js";
import { corruptError, type Db, isCorrupt, type Statement, sqliteCode, withBusyRetry } from "./connection.js";
import { SessionStoreError } from "./types.js";
import type { WalCheckpointer } from "./wal-checkpointer.js";

export interface StoreShape {
  /** Column names present in `sessions`. */
  sessionColumns: Set<string>;
  /** Column names present in `messages`. */
  messageColumns: Set<string>;
  /** The word index exists. */
  fts: boolean;
  /** The trigram index exists. */
  trigram: boolean;
}

export class StoreContext {
  private readonly statements = new Map<string, Statement>();
  private closed = false;
  /** Checkpoints the WAL on a worker thread (recording stores; see wal-checkpointer.ts). */
  checkpointer: WalCheckpointer | undefined;

  constructor(
    readonly db: Db,
    readonly path: string,
    readonly readonly: boolean,
    public retryBudgetMs: number,
    readonly now: () => number,
    public shape: StoreShape,
    /** Applied to every text written (messages, system prompts, titles): secrets never reach the file. */
    readonly redact: (text: string) => string = redactText,
  ) {}

  /** A prepared statement, cached by its SQL text. */
  stmt(sql: string): Statement {
    this.assertOpen();
    let s = this.statements.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }

  all(sql: string, ...params: unknown[]): Row[] {
    return this.stmt(sql).all(...params) as Row[];
  }

  get(sql: string, ...params: unknown[]): Row | undefined {
    return this.stmt(sql).get(...params) as Row | undefined;
  }

  /** SQL for a `messages` column, or `fallback` when an older file read-only lacks it. */
  m(column: string, fallback: string, alias = "m"): string {
    return this.shape.messageColumns.has(column) ? `${alias}.${column}` : fallback;
  }

  /** SQL for a `sessions` column, or `fallback` when missing. */
  s(column: string, fallback: string, alias = "s"): string {
    return this.shape.sessionColumns.has(column) ? `${alias}.${column}` : fallback;
  }

  /** Rows visible in the conversation and in search: active, or archived by compression. */
  visibleMessage(alias = "m"): string {
    const active = this.m("active", "1", alias);
    const compacted = this.m("compacted", "0", alias);
    return compacted === "0" ? `${active} = 1` : `(${active} = 1 OR ${compacted} = 1)`;
  }

  /** Active rows only (what the conversation replays). */
  activeMessage(alias = "m"): string {
    return `${this.m("active", "1", alias)} = 1`;
  }

  /**
   * Runs `fn` in `BEGIN IMMEDIATE … COMMIT`, retrying the whole transaction with jittered backoff
   * while another process holds the write lock; `locked` once the retry budget is spent. Inside
   * `group`, `fn` runs in a savepoint of the group's transaction instead: a failure undoes its own
   * changes and no other write's.
   */
  write<T>(fn: () => T): T {
    this.assertOpen();
    if (this.readonly) {
      throw new SessionStoreError(
        "readonly",
        `${this.path} was opened read-only; nothing can be changed through it.`,
      );
    }
    if (this.grouped) {
      // SQLite ended the group's transaction itself (disk full, I/O error): nothing more joins it.
      if (this.groupLost) throw this.groupLost;
      return this.mapErrors(() => this.inSavepoint(fn));
    }
    this.applyBusyTimeout();
    return this.mapErrors(() =>
      withBusyRetry(this.path, this.retryBudgetMs, () => {
        this.stmt("BEGIN IMMEDIATE").run();
        try {
          const result = fn();
          this.stmt("COMMIT").run();
          this.checkpointer?.afterCommit();
          return result;
        } catch (error) {
          if (this.db.inTransaction) this.stmt("ROLLBACK").run();
          throw error;
        }
      }),
    );
  }

  /** True while `group` runs: writes are savepoints of its transaction. */
  private grouped = false;
  /** The error with which SQLite rolled the group's whole transaction back, if it did. */
  private groupLost: unknown;

  /**
   * One transaction (one commit) for several writes: `fn` runs after `BEGIN IMMEDIATE` (retried
   * as `write` retries, before anything of `fn` ran) and every `write` inside it is a savepoint.
   * When `fn` or the commit throws, the whole group is rolled back and the error rethrown, so the
   * caller can run the writes again one by one. Nested calls join the open group.
   */
  group<T>(fn: () => T): T {
    this.assertOpen();
    if (this.grouped) return fn();
    if (this.readonly) {
      throw new SessionStoreError(
        "readonly",
        `${this.path} was opened read-only; nothing can be changed through it.`,
      );
    }
    this.applyBusyTimeout();
    this.mapErrors(() =>
      withBusyRetry(this.path, this.retryBudgetMs, () => this.stmt("BEGIN IMMEDIATE").run()),
    );
    this.grouped = true;
    this.groupLost = undefined;
    try {
      const result = fn();
      if (this.groupLost) throw this.groupLost;
      this.mapErrors(() => this.stmt("COMMIT").run());
      this.checkpointer?.afterCommit();
      return result;
    } catch (error) {
      if (this.db.inTransaction) this.stmt("ROLLBACK").run();
      throw error;
    } finally {
      this.grouped = false;
      this.groupLost = undefined;
    }
  }

  private inSavepoint<T>(fn: () => T): T {
    this.stmt("SAVEPOINT hermes_write").run();
    try {
      const result = fn();
      this.stmt("RELEASE hermes_write").run();
      return result;
    } catch (error) {
      if (this.db.inTransaction) {
        this.stmt("ROLLBACK TO hermes_write").run();
        this.stmt("RELEASE hermes_write").run();
      } else {
        this.groupLost = error;
      }
      throw error;
    }
  }

  /**
   * Runs `fn` with another lock budget: SQLite's own wait per attempt (`busyMs`) and the total
   * retry time (`budgetMs`). The write queue uses 0/0 for a single attempt that never blocks.
   */
  withRetryBudget<T>(budgetMs: number, busyMs: number, fn: () => T): T {
    this.assertOpen();
    const saved = { budget: this.retryBudgetMs, busy: this.wantedBusyMs };
    this.retryBudgetMs = budgetMs;
    this.wantedBusyMs = Math.max(0, Math.floor(busyMs));
    try {
      return fn();
    } finally {
      this.retryBudgetMs = saved.budget;
      this.wantedBusyMs = saved.busy;
    }
  }

  /**
   * SQLite's busy timeout is set on the connection only when a write needs a different one than
   * it has (`applyBusyTimeout`), never restored eagerly: the recording store runs every write with
   * the same short wait, and a `PRAGMA` before and after each one (four statements per write) cost
   * more than the insert itself. Reads keep whatever wait the connection has: in WAL mode a read
   * meets a busy file only during recovery, and the read's retry budget is its own.
   */
  private connectionBusyMs: number | undefined;
  /** The wait the next write wants; undefined: the connection's own, as opened. */
  private wantedBusyMs: number | undefined;
  private openedBusyMs: number | undefined;

  private applyBusyTimeout(): void {
    this.connectionBusyMs ??= Number(this.stmt("PRAGMA busy_timeout").pluck().get());
    this.openedBusyMs ??= this.connectionBusyMs;
    const ms = this.wantedBusyMs ?? this.openedBusyMs;
    if (this.connectionBusyMs === ms) return;
    // A handful of distinct values, so the statement cache stays small.
    this.stmt(`PRAGMA busy_timeout = ${ms}`).get();
    this.connectionBusyMs = ms;
  }

  /** Runs a read with the same busy retry and error mapping as writes. */
  read<T>(fn: () => T): T {
    this.assertOpen();
    return this.mapErrors(() => withBusyRetry(this.path, this.retryBudgetMs, fn));
  }

  private mapErrors<T>(fn: () => T): T {
    try {
      return fn();
    } catch (error) {
      if (error instanceof SessionStoreError) throw error;
      if (isCorrupt(error)) throw corruptError(this.path, error);
      const code = sqliteCode(error);
      const why = error instanceof Error ? error.message : String(error);
      if (code.startsWith("SQLITE_READONLY")) {
        throw new SessionStoreError(
          "readonly",
          `${this.path} cannot be written (${why}); check its permissions.`,
        );
      }
      if (code === "SQLITE_FULL") {
        throw new SessionStoreError(
          "invalid",
          `${this.path} cannot grow: the disk is full (${why}). Nothing was written.`,
        );
      }
      throw error;
    }
  }

  assertOpen(): void {
    if (this.closed) throw new SessionStoreError("invalid", `the session store for ${this.path} is closed.`);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.statements.clear();
    // Its connection first, so this one is the last and cleans the WAL up as before.
    this.checkpointer?.close();
    this.db.close();
  }
}
