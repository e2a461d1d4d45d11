/**
 * The session store's public contract. `state.db` keeps Python Hermes's tables and column names
 * (snake_case on disk); these types are the camelCase view every other layer uses. Timestamps are
 * Unix seconds as floats, as Python's `time.time()` writes them.
 */
import type { Message, Usage } from "../ai/types.js";

/**
 * How a session's `estimated_cost_usd` was arrived at (Python Hermes's vocabulary): `estimated`
 * from list prices, `actual` from the provider's invoice, `included` when nothing is billed per
 * token (a subscription, a local model), `unknown` when some usage had no known price.
 */
export type SessionCostStatus = "actual" | "estimated" | "included" | "unknown";

/** Where a session came from: `cli`, `telegram`, `discord`, `api-server`, `acp`, `cron`, `batch`, `tool`… */
export type SessionSource = string;

export interface SessionRecord {
  id: string;
  source: SessionSource;
  userId: string | null;
  model: string | null;
  /** JSON text as stored (`model_config`). */
  modelConfig: string | null;
  /** The exact system prompt the session was started with; reused byte for byte on resume. */
  systemPrompt: string | null;
  parentSessionId: string | null;
  startedAt: number;
  endedAt: number | null;
  endReason: string | null;
  messageCount: number;
  toolCallCount: number;
  apiCallCount: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  estimatedCostUsd: number | null;
  actualCostUsd: number | null;
  /** `cost_status` as stored (see `SessionCostStatus`); older rows and other writers may hold other text. */
  costStatus: string | null;
  /** `cost_source`: `official_docs_snapshot`, `user_override`, `none`… */
  costSource: string | null;
  pricingVersion: string | null;
  cwd: string | null;
  gitBranch: string | null;
  gitRepoRoot: string | null;
  billingProvider: string | null;
  billingBaseUrl: string | null;
  title: string | null;
  archived: boolean;
}

/** A session row plus what a listing shows. */
export interface SessionSummary extends SessionRecord {
  /** First user message, whitespace-collapsed, at most 80 characters ("" when none). */
  preview: string;
  /** Timestamp of the newest message, or `startedAt` when there are none. */
  lastActiveAt: number;
}

export interface NewSession {
  /** Default: `YYYYMMDD_HHMMSS_<6 hex>` in local time, the format Python Hermes uses. */
  id?: string;
  source: SessionSource;
  userId?: string;
  model?: string;
  modelConfig?: Record<string, unknown>;
  systemPrompt?: string;
  parentSessionId?: string;
  cwd?: string;
  gitBranch?: string;
  gitRepoRoot?: string;
  billingProvider?: string;
  billingBaseUrl?: string;
  /** Must be unique; a taken title throws `SessionStoreError` with code `title_taken`. */
  title?: string;
  /** Default: now. */
  startedAt?: number;
}

export interface StoredMessage {
  id: number;
  sessionId: string;
  role: Message["role"];
  /** Parts arrays are stored as JSON text and parsed back. */
  content: Message["content"];
  toolCallId: string | null;
  toolCalls: NonNullable<Message["tool_calls"]> | null;
  toolName: string | null;
  timestamp: number;
  tokenCount: number | null;
  finishReason: string | null;
  reasoning: string | null;
  /** Provider reasoning blocks to replay (Anthropic thinking signatures), from `reasoning_details`. */
  reasoningDetails?: unknown[];
  /** Responses API reasoning items to replay, from `codex_reasoning_items`. */
  codexReasoningItems?: unknown[];
  /** 0 after `/undo` or a rewind: kept on disk, left out of the conversation. */
  active: boolean;
}

export interface SearchOptions {
  /**
   * Free text. Any user text is accepted: FTS5 syntax characters are neutralised, never an error.
   * Words are ANDed; `"…"` is a phrase; `word*` a prefix; upper-case `OR` between terms and
   * `NOT term` after a term are operators. Empty or whitespace-only text finds nothing (returns
   * `[]`); browse with `recent()` instead.
   */
  query: string;
  /** Default 10, at most 100. */
  limit?: number;
  /**
   * Default `relevance` (bm25; for a term matching more than a few thousand messages, ranked within
   * the newest matches first). `newest`/`oldest` order by when the message was stored.
   */
  sort?: "relevance" | "newest" | "oldest";
  /** Only these roles (default: user and assistant). */
  roles?: Message["role"][];
  source?: SessionSource;
  /** Leave this session out (the current one, when searching from inside it). */
  excludeSessionId?: string;
}

export interface SearchHit {
  messageId: number;
  sessionId: string;
  role: Message["role"];
  /** The matching text around the hit, terms wrapped in `>>>`/`<<<`; at most ~300 characters. */
  snippet: string;
  timestamp: number;
  sessionTitle: string | null;
  source: SessionSource;
  model: string | null;
}

export interface SessionFilter {
  source?: SessionSource;
  /** Leave out sessions of these sources (`sessions list` leaves out `subagent` unless `--all`). */
  excludeSources?: readonly SessionSource[];
  /** Only sessions whose `parent_session_id` is this (a session's subagents, its continuations). */
  parentSessionId?: string;
  /** Only sessions of this model. */
  model?: string;
  /** Only sessions started at or after this time (epoch seconds). */
  startedAfter?: number;
  /** Only sessions started before this time (epoch seconds). */
  startedBefore?: number;
  /** Default 20. */
  limit?: number;
  offset?: number;
  includeArchived?: boolean;
}

export interface UsageDelta extends Usage {
  /** Model calls made (default 1 per delta). */
  apiCalls?: number;
  /** Added to `estimated_cost_usd`; absent or non-finite leaves it as it is (NULL stays NULL). */
  costUsd?: number;
  /**
   * Merged into `cost_status`, the worst wins: `unknown` (some usage unpriced) over `estimated`
   * over `actual` over `included`. Absent leaves the column as it is.
   */
  costStatus?: SessionCostStatus;
  /** Replaces `cost_source` when given. */
  costSource?: string;
  /** Replaces `pricing_version` when given. */
  pricingVersion?: string;
}

export interface SessionStats {
  sessions: number;
  messages: number;
  bySource: Record<string, number>;
  /** Bytes of the database file plus its WAL. */
  bytes: number;
  fts: boolean;
  trigram: boolean;
  schemaVersion: number;
  oldestStartedAt: number | null;
  newestStartedAt: number | null;
}

export interface InsightsOptions {
  /** Look back this many days from `now` (default 30). */
  days?: number;
  source?: SessionSource;
  /** Injected clock, seconds (default: now). */
  now?: number;
}

export interface ModelUsage {
  model: string;
  sessions: number;
  apiCalls: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  reasoningTokens: number;
  /** Sum of known session costs (actual where recorded, else estimated); null when none is known. */
  costUsd: number | null;
  /** Sessions with token usage that had no known price, entirely or in part (`costUsd` is then a floor). */
  unpricedSessions: number;
}

export interface Insights {
  since: number;
  until: number;
  sessions: number;
  messages: number;
  userMessages: number;
  toolCalls: number;
  /** Calls per tool name, most used first. */
  tools: Array<{ name: string; calls: number }>;
  /** Total of the known costs in the window; null when none is known. */
  costUsd: number | null;
  /** Sessions in the window with usage that had no known price. */
  unpricedSessions: number;
  byModel: ModelUsage[];
  bySource: Array<{
    source: string;
    sessions: number;
    messages: number;
    inputTokens: number;
    outputTokens: number;
    costUsd: number | null;
    unpricedSessions: number;
  }>;
  /** Sessions started per local calendar day, `YYYY-MM-DD`, oldest first. */
  perDay: Array<{ day: string; sessions: number; messages: number }>;
}

export interface RepairReport {
  /** `PRAGMA integrity_check` said ok. */
  integrity: boolean;
  problems: string[];
  /** What `repair` changed (empty for `check`). */
  fixed: string[];
}

export type SessionStoreErrorCode =
  | "not_found"
  | "ambiguous"
  | "title_taken"
  | "corrupt"
  | "locked"
  | "readonly"
  | "invalid";

/** An expected failure with a message meant for the user (no stack trace needed). */
export class SessionStoreError extends Error {
  readonly code: SessionStoreErrorCode;
  constructor(code: SessionStoreErrorCode, message: string) {
    super(message);
    this.name = "SessionStoreError";
    this.code = code;
  }
}

export interface ExportedSession {
  session: SessionRecord;
  messages: StoredMessage[];
}

export interface OpenOptions {
  /** Open read-only: no schema changes, no writes (`hermes sessions list` on someone else's file). */
  readonly?: boolean;
  /**
   * How long SQLite itself waits for another process's lock on each attempt (default 1000 ms);
   * after that the store retries with jittered backoff until `retryBudgetMs` is spent.
   */
  busyTimeoutMs?: number;
  /** Total time a reader or writer keeps retrying a locked database before `locked` (default 10 000 ms). */
  retryBudgetMs?: number;
  /**
   * `full` (default): a committed message survives power loss (WAL fsynced at every commit).
   * `normal`: survives a crash of the process; the last commits may roll back after an OS crash.
   */
  durability?: "full" | "normal";
  /** Injected clock in seconds (default `Date.now() / 1000`). */
  now?: () => number;
  /**
   * Checkpoint the WAL on a worker thread instead of inside the commit that fills it (surfaces
   * that record as they go: see wal-checkpointer.ts). Ignored read-only. Default false.
   */
  checkpointInBackground?: boolean;
  /**
   * Applied to every text the store writes (messages, system prompts, titles). Default: the
   * process-wide secret redactor (util/redact.ts), so no writer can store a known secret.
   */
  redact?: (text: string) => string;
}

/**
 * The session store behind every surface (`openSessionStore` in `sqlite-store.ts` returns the SQLite
 * implementation). Every method is asynchronous, so a backend whose driver is asynchronous only
 * (PostgreSQL) can stand behind the same contract; the SQLite implementation does its work
 * synchronously inside the call and hands back a settled promise (see async-store.ts). Failures
 * are rejections, never synchronous throws. Methods that take an id reject with
 * `SessionStoreError("not_found")` for an unknown one. Callers await every write before the next
 * step that depends on it: a turn's messages land in the order they were awaited.
 */
export interface SessionStore {
  readonly path: string;
  /** Releases the connection (SQLite: closes the file before the promise is made). */
  close(): Promise<void>;

  createSession(input: NewSession): Promise<SessionRecord>;
  /**
   * Creates the session and appends its first message (with that model call's `usage`) in one
   * transaction: one commit where `createSession` then `appendMessage` take two. Throws as either
   * would (an existing id, a taken title, a malformed message), writing nothing. Returns the
   * message's id (provisional, negative, when queued behind another process's lock).
   */
  startSession(input: NewSession, first: Message, options?: { usage?: UsageDelta }): Promise<number>;
  getSession(id: string): Promise<SessionRecord | null>;
  /**
   * Finds a session by id, unique id prefix, exact title, or a lineage base title ("work" finds the
   * newest of "work", "work #2", …). Throws `not_found` or `ambiguous` (message lists candidates).
   */
  resolveSession(ref: string): Promise<SessionRecord>;
  /** The most recently active session, optionally of one source or one title lineage. */
  latestSession(filter?: { source?: SessionSource; title?: string }): Promise<SessionRecord | null>;
  updateSession(
    id: string,
    patch: Partial<
      Pick<
        SessionRecord,
        "model" | "systemPrompt" | "endedAt" | "endReason" | "archived" | "cwd" | "gitBranch"
      >
    >,
  ): Promise<void>;
  /** Sets or clears (`null`) the title; throws `title_taken` when another session has it. */
  setTitle(id: string, title: string | null): Promise<SessionRecord>;
  /** The first free title of a lineage: "work" → "work #2" → "work #3" ("work #2" counts as base "work"). */
  nextLineageTitle(title: string): Promise<string>;
  /** Marks the session ended (`ended_at`, `end_reason`). */
  endSession(id: string, reason: string): Promise<void>;
  /** Clears `ended_at`/`end_reason` when a session is resumed. */
  reopenSession(id: string): Promise<void>;
  /**
   * Continues `parentId` as a new session holding `messages` (after compression), in one
   * transaction: the parent is ended with `reason` (default `compression`), the child created and
   * filled. A crash leaves either the parent as it was or both complete, never an empty child.
   */
  continueSession(
    parentId: string,
    child: NewSession & { parentSessionId: string },
    messages: Message[],
    reason?: string,
  ): Promise<SessionRecord>;

  /**
   * Appends one message at once (durable before the promise settles) and bumps the counters. Returns its id.
   * `usage` (the model call that produced the message) is added in the same transaction, as
   * `recordUsage` would: one commit instead of two per model call.
   */
  appendMessage(
    sessionId: string,
    message: Message,
    options?: { timestamp?: number; tokenCount?: number; usage?: UsageDelta },
  ): Promise<number>;
  /**
   * Appends several messages in one transaction, with `usage` (the model call that produced the
   * first of them) added in it too.
   */
  appendMessages(sessionId: string, messages: Message[], options?: { usage?: UsageDelta }): Promise<number[]>;
  recordUsage(sessionId: string, delta: UsageDelta): Promise<void>;
  /** Messages in order; inactive (undone) ones only with `includeInactive`. */
  getMessages(sessionId: string, options?: { includeInactive?: boolean }): Promise<StoredMessage[]>;
  /** The active messages as the agent sends them (no ids or timestamps). */
  conversation(sessionId: string): Promise<Message[]>;
  /**
   * Marks the last `turns` user turns (each user message and everything after it) inactive and bumps
   * `rewind_count`. Returns how many messages were hidden and the text of the earliest undone user
   * message (what `/retry` sends again).
   */
  undoTurns(sessionId: string, turns: number): Promise<{ removed: number; userText: string | null }>;
  /** A new session holding a copy of the active messages, `parent_session_id` = the source. */
  branchSession(id: string, options?: { title?: string; source?: SessionSource }): Promise<SessionRecord>;

  listSessions(filter?: SessionFilter): Promise<SessionSummary[]>;
  search(options: SearchOptions): Promise<SearchHit[]>;
  /** Active messages around one message of a session: `window` before and after it (default 5). */
  around(sessionId: string, messageId: number, window?: number): Promise<StoredMessage[]>;
  /** The most recently active sessions (at least one message, not archived) with previews, for browsing. */
  recent(limit?: number, excludeSessionId?: string): Promise<SessionSummary[]>;

  /** Deletes a session and its messages; children keep living with `parent_session_id` cleared. */
  deleteSession(id: string): Promise<{ messages: number }>;
  /**
   * Sessions that `prune` would delete: ended, and started, ended and last active more than
   * `olderThanDays` ago. Sessions never ended are kept. Children of a pruned session keep living
   * with `parent_session_id` cleared.
   */
  prunable(options: { olderThanDays: number; source?: SessionSource }): Promise<SessionSummary[]>;
  prune(options: { olderThanDays: number; source?: SessionSource }): Promise<{
    sessions: number;
    messages: number;
  }>;
  /**
   * `sessions.auto_prune`: `prune` at most once per `minIntervalHours` across processes (marker in
   * `state_meta`), then VACUUM when `vacuum` and something was pruned.
   */
  autoPrune(options: { retentionDays: number; minIntervalHours: number; vacuum: boolean }): Promise<{
    skipped: boolean;
    sessions: number;
    vacuumed: boolean;
  }>;
  exportSessions(filter?: { sessionId?: string; source?: SessionSource }): AsyncIterable<ExportedSession>;
  stats(): Promise<SessionStats>;
  /** FTS segment merge, then VACUUM. */
  optimize(): Promise<{ bytesBefore: number; bytesAfter: number }>;
  /** Read-only health check: integrity, FTS consistency, counters. */
  check(): Promise<RepairReport>;
  /** Fixes what `check` finds that can be fixed in place (FTS rebuild, columns, counters). */
  repair(): Promise<RepairReport>;
  insights(options?: InsightsOptions): Promise<Insights>;
  /** Per-day (and per-day-and-model) tokens, cost and tool calls for charts (usage-series.ts). */
  usageSeries(
    options?: import("./usage-series-types.js").UsageSeriesOptions,
  ): Promise<import("./usage-series-types.js").UsageSeries>;
  /**
   * Imports legacy JSONL transcripts (`sessions/*.jsonl` in the home) once; a marker in `state_meta`
   * keeps it from running twice. Unreadable lines are skipped and counted.
   */
  importLegacyJsonl(dir: string): Promise<{ sessions: number; messages: number; skipped: number }>;
  /**
   * `hermes sessions repair --from FILE`: copies the sessions and messages that can still be read
   * from another state.db (a moved-aside damaged one, a Python Hermes file) or from an
   * unsaved-writes file (`state-unsaved-*.jsonl`) into this store. A session whose id is already
   * here is skipped with its messages, never merged or overwritten. Throws `not_found` for a
   * missing file; a file with nothing readable returns a report with `readable: false`.
   */
  recoverFrom(file: string): Promise<RecoveryReport>;
}

/** `T`'s methods with their promises taken off: what a synchronous engine returns directly. */
export type Synchronous<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => Promise<infer R> ? (...args: A) => R : T[K];
};

/**
 * The SQLite engine's own surface: `SessionStore` with every method synchronous (writers take
 * `BEGIN IMMEDIATE` with jittered retry, so several processes can write one file at once). Only
 * the state package (the write queue, recovery, the async adapter) and its tests use it; every
 * other layer goes through `SessionStore`.
 */
export type SyncSessionStore = Omit<Synchronous<SessionStore>, "exportSessions"> & {
  exportSessions(filter?: { sessionId?: string; source?: SessionSource }): Iterable<ExportedSession>;
};

/**
 * The SQLite store plus what the write queue (queued-store.ts) needs beyond the contract.
 */
export interface SqliteSessionStoreHandle extends SyncSessionStore {
  /** Runs `fn` with another lock budget (see `StoreContext.withRetryBudget`). */
  withRetryBudget<T>(budgetMs: number, busyMs: number, fn: () => T): T;
  /**
   * Runs `fn`'s writes in one transaction, each in a savepoint of its own (`StoreContext.group`);
   * throws, with everything rolled back, when the transaction cannot start or commit.
   */
  group<T>(fn: () => T): T;
  /** `appendMessages` with the timestamps the messages were produced at (queued writes keep theirs). */
  appendTimed(
    sessionId: string,
    entries: ReadonlyArray<{ message: Message; timestamp: number; tokenCount?: number }>,
  ): number[];
  /**
   * Throws `corrupt` when the file is damaged: SQLite's `quick_check` for files up to
   * `QUICK_CHECK_MAX_BYTES`, otherwise a read of the pages every session write goes through.
   */
  probe(): void;
}

/** What `recoverFrom` brought back. */
export interface RecoveryReport {
  /** `sqlite` for a database file, `unsaved` for an unsaved-writes JSONL file, `none` otherwise. */
  kind: "sqlite" | "unsaved" | "none";
  /** False when nothing at all could be read (0 bytes, not a database, no readable table). */
  readable: boolean;
  /** Why nothing could be read, when `readable` is false. */
  reason?: string;
  sessions: { recovered: number; skipped: number; unreadable: number };
  messages: { recovered: number; skipped: number; unreadable: number };
  /** Sessions made up for readable messages whose session row was lost (source `recovered`). */
  placeholders: number;
}
