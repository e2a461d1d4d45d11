/**
 * Builds a `state.db` the way Python Hermes (SCHEMA_VERSION 17) builds and fills it, without going
 * through our store: upstream's DDL (tables, indexes, the inline FTS5 tables `messages_fts` and
 * `messages_fts_trigram` over `content || tool_name || tool_calls`, and their broad
 * `AFTER UPDATE ON messages` triggers), WAL mode, and rows written as `hermes_state.SessionDB`
 * writes them: REAL timestamps from `time.time()`, JSON columns as `json.dumps` text (", "/": "
 * separators, non-ASCII escaped), NULL where Python leaves NULL (no title, no model_config, no
 * token count), counters incremented per append, `active = 0` rows after a rewind.
 *
 * Use it wherever a test needs "a file an existing Python user already has":
 *
 *   const { sessionIds } = createPythonStateDb(join(home, "state.db"));
 *
 * With no `sessions` option it writes four sessions (ids returned in this order):
 *   0. cli, titled "Refactor the parser", system prompt, a tool-calling turn (read_file), ended;
 *   1. cli, "Refactor the parser #2", child of 0 (parent_session_id), still open;
 *   2. telegram, no title, no model_config, user/chat ids, CJK text (今天天气很好);
 *   3. cli, no title, one undone turn (active = 0) before the kept one, rewind_count 1.
 * Every session has at least one message, none is archived, and every counter matches the rows.
 *
 * The DDL is upstream's v16 schema as captured from a real file plus the v17 additions documented
 * in reference/hermes-inventory.md §9.3 (sessions: session_key, chat_id, chat_type, thread_id,
 * git_branch, git_repo_root, compression_failure_*; messages: compacted; the Telegram topic tables).
 */
import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import type BetterSqlite3 from "better-sqlite3";

export interface PythonMessageSeed {
  role: string;
  content?: string | null;
  /** Stored with Python's `json.dumps` formatting. */
  tool_calls?: unknown[] | null;
  tool_call_id?: string | null;
  tool_name?: string | null;
  /** Seconds; default: the session start plus one second per message. */
  timestamp?: number;
  finish_reason?: string | null;
  reasoning?: string | null;
  /** 0 for a message hidden by /undo (default 1). */
  active?: 0 | 1;
}

export interface PythonSessionSeed {
  /** Default: `YYYYMMDD_HHMMSS_<6 hex>` from `startedAt`. */
  id?: string;
  source?: string;
  title?: string | null;
  model?: string | null;
  modelConfig?: Record<string, unknown> | null;
  systemPrompt?: string | null;
  parentSessionId?: string | null;
  userId?: string | null;
  chatId?: string | null;
  startedAt?: number;
  endedAt?: number | null;
  endReason?: string | null;
  inputTokens?: number;
  outputTokens?: number;
  apiCallCount?: number;
  estimatedCostUsd?: number | null;
  rewindCount?: number;
  messages?: PythonMessageSeed[];
}

export interface CreatePythonStateDbOptions {
  sessions?: PythonSessionSeed[];
  /** Clock for the default sessions, seconds (default: now). */
  now?: number;
}

export const PYTHON_SCHEMA_SQL = `
CREATE TABLE IF NOT EXISTS schema_version (
    version INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    user_id TEXT,
    session_key TEXT,
    chat_id TEXT,
    chat_type TEXT,
    thread_id TEXT,
    model TEXT,
    model_config TEXT,
    system_prompt TEXT,
    parent_session_id TEXT,
    started_at REAL NOT NULL,
    ended_at REAL,
    end_reason TEXT,
    message_count INTEGER DEFAULT 0,
    tool_call_count INTEGER DEFAULT 0,
    input_tokens INTEGER DEFAULT 0,
    output_tokens INTEGER DEFAULT 0,
    cache_read_tokens INTEGER DEFAULT 0,
    cache_write_tokens INTEGER DEFAULT 0,
    reasoning_tokens INTEGER DEFAULT 0,
    cwd TEXT,
    git_branch TEXT,
    git_repo_root TEXT,
    billing_provider TEXT,
    billing_base_url TEXT,
    billing_mode TEXT,
    estimated_cost_usd REAL,
    actual_cost_usd REAL,
    cost_status TEXT,
    cost_source TEXT,
    pricing_version TEXT,
    title TEXT,
    api_call_count INTEGER DEFAULT 0,
    handoff_state TEXT,
    handoff_platform TEXT,
    handoff_error TEXT,
    compression_failure_cooldown_until REAL,
    compression_failure_error TEXT,
    rewind_count INTEGER NOT NULL DEFAULT 0,
    archived INTEGER NOT NULL DEFAULT 0,
    FOREIGN KEY (parent_session_id) REFERENCES sessions(id)
);

CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL,
    content TEXT,
    tool_call_id TEXT,
    tool_calls TEXT,
    tool_name TEXT,
    timestamp REAL NOT NULL,
    token_count INTEGER,
    finish_reason TEXT,
    reasoning TEXT,
    reasoning_content TEXT,
    reasoning_details TEXT,
    codex_reasoning_items TEXT,
    codex_message_items TEXT,
    platform_message_id TEXT,
    observed INTEGER DEFAULT 0,
    active INTEGER NOT NULL DEFAULT 1,
    compacted INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS state_meta (
    key TEXT PRIMARY KEY,
    value TEXT
);

CREATE TABLE IF NOT EXISTS compression_locks (
    session_id TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    acquired_at REAL NOT NULL,
    expires_at REAL NOT NULL
);

CREATE TABLE IF NOT EXISTS telegram_dm_topic_mode (
    chat_id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    enabled INTEGER NOT NULL DEFAULT 1,
    activated_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    has_topics_enabled INTEGER,
    allows_users_to_create_topics INTEGER,
    capability_checked_at REAL,
    intro_message_id TEXT,
    pinned_message_id TEXT
);

CREATE TABLE IF NOT EXISTS telegram_dm_topic_bindings (
    chat_id TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    session_key TEXT NOT NULL,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    managed_mode TEXT NOT NULL DEFAULT 'auto',
    linked_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (chat_id, thread_id)
);

CREATE INDEX IF NOT EXISTS idx_sessions_source ON sessions(source);
CREATE INDEX IF NOT EXISTS idx_sessions_source_id ON sessions(source, id);
CREATE INDEX IF NOT EXISTS idx_sessions_parent ON sessions(parent_session_id);
CREATE INDEX IF NOT EXISTS idx_sessions_started ON sessions(started_at DESC);
CREATE INDEX IF NOT EXISTS idx_messages_session ON messages(session_id, timestamp);
CREATE INDEX IF NOT EXISTS idx_compression_locks_expires ON compression_locks(expires_at);
CREATE INDEX IF NOT EXISTS idx_messages_platform_msg_id ON messages(session_id, platform_message_id) WHERE platform_message_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_messages_session_active ON messages(session_id, active, timestamp);
CREATE INDEX IF NOT EXISTS idx_sessions_session_key ON sessions(session_key, started_at DESC);
CREATE INDEX IF NOT EXISTS idx_sessions_gateway_peer ON sessions(source, user_id, chat_id, chat_type, thread_id, started_at DESC);
CREATE INDEX IF NOT EXISTS idx_sessions_handoff_state ON sessions(handoff_state, started_at);
CREATE UNIQUE INDEX IF NOT EXISTS idx_sessions_title_unique ON sessions(title) WHERE title IS NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS idx_telegram_dm_topic_bindings_session ON telegram_dm_topic_bindings(session_id);
CREATE INDEX IF NOT EXISTS idx_telegram_dm_topic_bindings_user ON telegram_dm_topic_bindings(user_id, chat_id);
`;

export const PYTHON_FTS_SQL = `
CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5(
    content
);

CREATE TRIGGER IF NOT EXISTS messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, content) VALUES (
        new.id,
        COALESCE(new.content, '') || ' ' || COALESCE(new.tool_name, '') || ' ' || COALESCE(new.tool_calls, '')
    );
END;

CREATE TRIGGER IF NOT EXISTS messages_fts_delete AFTER DELETE ON messages BEGIN
    DELETE FROM messages_fts WHERE rowid = old.id;
END;

CREATE TRIGGER IF NOT EXISTS messages_fts_update AFTER UPDATE ON messages BEGIN
    DELETE FROM messages_fts WHERE rowid = old.id;
    INSERT INTO messages_fts(rowid, content) VALUES (
        new.id,
        COALESCE(new.content, '') || ' ' || COALESCE(new.tool_name, '') || ' ' || COALESCE(new.tool_calls, '')
    );
END;

CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts_trigram USING fts5(
    content,
    tokenize='trigram'
);

CREATE TRIGGER IF NOT EXISTS messages_fts_trigram_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts_trigram(rowid, content) VALUES (
        new.id,
        COALESCE(new.content, '') || ' ' || COALESCE(new.tool_name, '') || ' ' || COALESCE(new.tool_calls, '')
    );
END;

CREATE TRIGGER IF NOT EXISTS messages_fts_trigram_delete AFTER DELETE ON messages BEGIN
    DELETE FROM messages_fts_trigram WHERE rowid = old.id;
END;

CREATE TRIGGER IF NOT EXISTS messages_fts_trigram_update AFTER UPDATE ON messages BEGIN
    DELETE FROM messages_fts_trigram WHERE rowid = old.id;
    INSERT INTO messages_fts_trigram(rowid, content) VALUES (
        new.id,
        COALESCE(new.content, '') || ' ' || COALESCE(new.tool_name, '') || ' ' || COALESCE(new.tool_calls, '')
    );
END;
`;

/** The upstream columns of `sessions` and `messages` at v17, for "Python-style reader" queries. */
export const PYTHON_SESSION_COLUMNS = [
  "id",
  "source",
  "user_id",
  "session_key",
  "chat_id",
  "chat_type",
  "thread_id",
  "model",
  "model_config",
  "system_prompt",
  "parent_session_id",
  "started_at",
  "ended_at",
  "end_reason",
  "message_count",
  "tool_call_count",
  "input_tokens",
  "output_tokens",
  "cache_read_tokens",
  "cache_write_tokens",
  "reasoning_tokens",
  "cwd",
  "git_branch",
  "git_repo_root",
  "billing_provider",
  "billing_base_url",
  "billing_mode",
  "estimated_cost_usd",
  "actual_cost_usd",
  "cost_status",
  "cost_source",
  "pricing_version",
  "title",
  "api_call_count",
  "handoff_state",
  "handoff_platform",
  "handoff_error",
  "compression_failure_cooldown_until",
  "compression_failure_error",
  "rewind_count",
  "archived",
] as const;

export const PYTHON_MESSAGE_COLUMNS = [
  "id",
  "session_id",
  "role",
  "content",
  "tool_call_id",
  "tool_calls",
  "tool_name",
  "timestamp",
  "token_count",
  "finish_reason",
  "reasoning",
  "reasoning_content",
  "reasoning_details",
  "codex_reasoning_items",
  "codex_message_items",
  "platform_message_id",
  "observed",
  "active",
  "compacted",
] as const;

/** Python's `json.dumps` with default arguments: ", " and ": " separators, non-ASCII as \\uXXXX. */
export function pyJsonDumps(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "string") {
    return JSON.stringify(value).replace(
      /[\u0080-\uffff]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
    );
  }
  if (typeof value === "number" || typeof value === "boolean") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(pyJsonDumps).join(", ")}]`;
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  return `{${entries.map(([k, v]) => `${pyJsonDumps(k)}: ${pyJsonDumps(v)}`).join(", ")}}`;
}

function pythonSessionId(startedAt: number, n: number): string {
  const d = new Date(startedAt * 1000);
  const p = (x: number) => String(x).padStart(2, "0");
  const hex = (0xa1b2c0 + n).toString(16);
  return `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}_${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}_${hex}`;
}

export function defaultPythonSessions(now: number): PythonSessionSeed[] {
  const day = 86_400;
  const a = now - 2 * day + 0.123456;
  const b = now - 1 * day + 0.654321;
  const c = now - 3 * 3600 + 0.5;
  const d = now - 1800 + 0.25;
  const idA = pythonSessionId(a, 0);
  return [
    {
      id: idA,
      source: "cli",
      title: "Refactor the parser",
      model: "anthropic/claude-sonnet-4",
      modelConfig: { max_iterations: 90, reasoning_config: { enabled: true, effort: "medium" } },
      systemPrompt: "You are Hermes Agent, an intelligent AI assistant created by Nous Research.",
      startedAt: a,
      endedAt: a + 600,
      endReason: "user_exit",
      inputTokens: 5120,
      outputTokens: 812,
      apiCallCount: 2,
      estimatedCostUsd: 0.02754,
      messages: [
        { role: "user", content: "Can you refactor the tokenizer in parser.py? It is too slow." },
        {
          role: "assistant",
          content: "Let me read the file first.",
          tool_calls: [
            {
              id: "call_ab12",
              type: "function",
              function: { name: "read_file", arguments: pyJsonDumps({ path: "parser.py" }) },
            },
          ],
          finish_reason: "tool_calls",
          reasoning: "The user wants a faster tokenizer; read the code before changing it.",
        },
        {
          role: "tool",
          content: pyJsonDumps({ content: "def tokenize(s):\n    return s.split()" }),
          tool_call_id: "call_ab12",
          tool_name: "read_file",
        },
        {
          role: "assistant",
          content: "The tokenizer splits on whitespace only; I rewrote it with a compiled regex.",
          finish_reason: "stop",
        },
      ],
    },
    {
      id: pythonSessionId(b, 1),
      source: "cli",
      title: "Refactor the parser #2",
      model: "anthropic/claude-sonnet-4",
      parentSessionId: idA,
      startedAt: b,
      messages: [
        { role: "user", content: "Now benchmark the new tokenizer against the old one." },
        {
          role: "assistant",
          content: "The regex tokenizer is 3.1x faster on the sample corpus.",
          finish_reason: "stop",
        },
      ],
    },
    {
      id: pythonSessionId(c, 2),
      source: "telegram",
      title: null,
      model: "openai/gpt-4.1",
      modelConfig: null,
      userId: "123456789",
      chatId: "123456789",
      startedAt: c,
      messages: [
        { role: "user", content: "今天天气很好，我们去公园吧" },
        { role: "assistant", content: "好主意！记得带水。" },
      ],
    },
    {
      id: pythonSessionId(d, 3),
      source: "cli",
      model: "nousresearch/hermes-4-70b",
      startedAt: d,
      rewindCount: 1,
      messages: [
        { role: "user", content: "first attempt at a grocery list", active: 0 },
        { role: "assistant", content: "Here is a draft list.", active: 0 },
        { role: "user", content: "Make a grocery list: apples, pears, oat milk" },
        { role: "assistant", content: "Grocery list: apples, pears, oat milk.", finish_reason: "stop" },
      ],
    },
  ];
}

/**
 * Creates `path` (and its directory) as Python Hermes v17 would, filled with `sessions` (default:
 * see the module comment). Throws if the file already holds a database. Returns the session ids
 * in seed order.
 */
export function createPythonStateDb(
  path: string,
  options: CreatePythonStateDbOptions = {},
): { sessionIds: string[] } {
  const require = createRequire(import.meta.url);
  const Database = require("better-sqlite3") as typeof BetterSqlite3;
  mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  try {
    const existing = db.prepare("SELECT COUNT(*) AS n FROM sqlite_master").get() as { n: number };
    if (existing.n > 0) throw new Error(`createPythonStateDb: ${path} already holds a database`);
    db.pragma("journal_mode = WAL");
    db.pragma("foreign_keys = ON");
    db.exec(PYTHON_SCHEMA_SQL);
    db.exec(PYTHON_FTS_SQL);
    db.prepare("INSERT INTO schema_version (version) VALUES (?)").run(17);
    const now = options.now ?? Date.now() / 1000;
    const seeds = options.sessions ?? defaultPythonSessions(now);
    const ids: string[] = [];
    const insertSession = db.prepare(
      `INSERT INTO sessions (id, source, user_id, chat_id, model, model_config, system_prompt, parent_session_id, started_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const insertMessage = db.prepare(
      `INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp, token_count,
         finish_reason, reasoning, active)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    seeds.forEach((seed, n) => {
      const startedAt = seed.startedAt ?? now - (seeds.length - n) * 3600 + 0.5;
      const id = seed.id ?? pythonSessionId(startedAt, n);
      ids.push(id);
      db.transaction(() => {
        insertSession.run(
          id,
          seed.source ?? "cli",
          seed.userId ?? null,
          seed.chatId ?? null,
          seed.model ?? null,
          seed.modelConfig ? pyJsonDumps(seed.modelConfig) : null,
          seed.systemPrompt ?? null,
          seed.parentSessionId ?? null,
          startedAt,
        );
        // Python's append_message: one row, then message_count + 1 and tool_call_count + len(tool_calls).
        (seed.messages ?? []).forEach((m, i) => {
          const calls = m.tool_calls && m.tool_calls.length > 0 ? m.tool_calls : null;
          insertMessage.run(
            id,
            m.role,
            m.content ?? null,
            m.tool_call_id ?? null,
            calls ? pyJsonDumps(calls) : null,
            m.tool_name ?? null,
            m.timestamp ?? startedAt + 1 + i * 1.5,
            null,
            m.finish_reason ?? null,
            m.reasoning ?? null,
            m.active ?? 1,
          );
          db.prepare(
            "UPDATE sessions SET message_count = message_count + 1, tool_call_count = tool_call_count + ? WHERE id = ?",
          ).run(m.role === "assistant" && calls ? calls.length : 0, id);
        });
        // A rewind hides rows and sets message_count to the active rows.
        db.prepare(
          "UPDATE sessions SET message_count = (SELECT COUNT(*) FROM messages WHERE session_id = ? AND active = 1) WHERE id = ?",
        ).run(id, id);
        db.prepare(
          `UPDATE sessions SET title = ?, ended_at = ?, end_reason = ?, input_tokens = ?, output_tokens = ?,
             api_call_count = ?, estimated_cost_usd = ?, rewind_count = ? WHERE id = ?`,
        ).run(
          seed.title ?? null,
          seed.endedAt ?? null,
          seed.endReason ?? null,
          seed.inputTokens ?? 0,
          seed.outputTokens ?? 0,
          seed.apiCallCount ?? 0,
          seed.estimatedCostUsd ?? null,
          seed.rewindCount ?? 0,
          id,
        );
      })();
    });
    return { sessionIds: ids };
  } finally {
    db.close();
  }
}
