/**
 * The `state.db` schema at Python Hermes's SCHEMA_VERSION 17, and the reconciler that brings any
 * existing file up to it without taking anything away.
 *
 * The reconciler only adds: missing tables, missing columns (`ALTER TABLE … ADD COLUMN`), missing
 * indexes and triggers, and a missing full-text table (filled from `messages` when it had to be
 * created). Columns it does not know (a newer Hermes wrote the file) are left alone, and the
 * recorded schema version of an existing file is never changed, so a Python Hermes that opens the
 * file afterwards still runs its own migrations as it would have.
 */
import { createHash } from "node:crypto";
import type { Db } from "./connection.js";

export const SCHEMA_VERSION = 17;

/** Full-text text of one message row: what both FTS tables index (content, tool name, tool calls). */
const ftsText = (row: "new" | "old") =>
  `COALESCE(${row}.content, '') || ' ' || COALESCE(${row}.tool_name, '') || ' ' || COALESCE(${row}.tool_calls, '')`;

/** The same text computed from a `messages` row aliased `m`, for filling an index from scratch. */
export const FTS_TEXT_OF_M =
  "COALESCE(m.content, '') || ' ' || COALESCE(m.tool_name, '') || ' ' || COALESCE(m.tool_calls, '')";

/** CREATE TABLE statements, in creation order. Column lists are the v17 ones, in upstream order. */
export const TABLES: ReadonlyArray<{ name: string; sql: string }> = [
  {
    name: "schema_version",
    sql: `CREATE TABLE IF NOT EXISTS schema_version (
    version INTEGER NOT NULL
)`,
  },
  {
    name: "sessions",
    sql: `CREATE TABLE IF NOT EXISTS sessions (
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
)`,
  },
  {
    name: "messages",
    sql: `CREATE TABLE IF NOT EXISTS messages (
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
)`,
  },
  {
    name: "state_meta",
    sql: `CREATE TABLE IF NOT EXISTS state_meta (
    key TEXT PRIMARY KEY,
    value TEXT
)`,
  },
  {
    name: "compression_locks",
    sql: `CREATE TABLE IF NOT EXISTS compression_locks (
    session_id TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    acquired_at REAL NOT NULL,
    expires_at REAL NOT NULL
)`,
  },
  {
    name: "telegram_dm_topic_mode",
    sql: `CREATE TABLE IF NOT EXISTS telegram_dm_topic_mode (
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
)`,
  },
  {
    name: "telegram_dm_topic_bindings",
    sql: `CREATE TABLE IF NOT EXISTS telegram_dm_topic_bindings (
    chat_id TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    session_key TEXT NOT NULL,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    managed_mode TEXT NOT NULL DEFAULT 'auto',
    linked_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (chat_id, thread_id)
)`,
  },
];

/**
 * Indexes (names and definitions as upstream writes them, plus `ours`: speed-only indexes Python
 * Hermes does not write, whose absence is no problem to report), created after the column pass.
 */
export const INDEXES: ReadonlyArray<{ name: string; sql: string; ours?: true }> = [
  { name: "idx_sessions_source", sql: "CREATE INDEX IF NOT EXISTS idx_sessions_source ON sessions(source)" },
  {
    name: "idx_sessions_source_id",
    sql: "CREATE INDEX IF NOT EXISTS idx_sessions_source_id ON sessions(source, id)",
  },
  {
    name: "idx_sessions_parent",
    sql: "CREATE INDEX IF NOT EXISTS idx_sessions_parent ON sessions(parent_session_id)",
  },
  {
    name: "idx_sessions_started",
    sql: "CREATE INDEX IF NOT EXISTS idx_sessions_started ON sessions(started_at DESC)",
  },
  // Ours, not upstream's (an extra index is invisible to Python Hermes): the default listing
  // (`archived = 0`, newest first) pages by offset through this index alone, never reading the
  // skipped rows' wide columns (system prompts).
  {
    name: "idx_sessions_archived_started",
    sql: "CREATE INDEX IF NOT EXISTS idx_sessions_archived_started ON sessions(archived, started_at DESC)",
    ours: true,
  },
  {
    name: "idx_sessions_session_key",
    sql: "CREATE INDEX IF NOT EXISTS idx_sessions_session_key ON sessions(session_key, started_at DESC)",
  },
  {
    name: "idx_sessions_gateway_peer",
    sql: "CREATE INDEX IF NOT EXISTS idx_sessions_gateway_peer ON sessions(source, user_id, chat_id, chat_type, thread_id, started_at DESC)",
  },
  {
    name: "idx_sessions_handoff_state",
    sql: "CREATE INDEX IF NOT EXISTS idx_sessions_handoff_state ON sessions(handoff_state, started_at)",
  },
  {
    name: "idx_sessions_title_unique",
    sql: "CREATE UNIQUE INDEX IF NOT EXISTS idx_sessions_title_unique ON sessions(title) WHERE title IS NOT NULL",
  },
  {
    name: "idx_messages_session",
    sql: "CREATE INDEX IF NOT EXISTS idx_messages_session ON messages(session_id, timestamp)",
  },
  {
    name: "idx_messages_session_active",
    sql: "CREATE INDEX IF NOT EXISTS idx_messages_session_active ON messages(session_id, active, timestamp)",
  },
  {
    name: "idx_messages_platform_msg_id",
    sql: "CREATE INDEX IF NOT EXISTS idx_messages_platform_msg_id ON messages(session_id, platform_message_id) WHERE platform_message_id IS NOT NULL",
  },
  {
    name: "idx_compression_locks_expires",
    sql: "CREATE INDEX IF NOT EXISTS idx_compression_locks_expires ON compression_locks(expires_at)",
  },
  {
    name: "idx_telegram_dm_topic_bindings_session",
    sql: "CREATE UNIQUE INDEX IF NOT EXISTS idx_telegram_dm_topic_bindings_session ON telegram_dm_topic_bindings(session_id)",
  },
  {
    name: "idx_telegram_dm_topic_bindings_user",
    sql: "CREATE INDEX IF NOT EXISTS idx_telegram_dm_topic_bindings_user ON telegram_dm_topic_bindings(user_id, chat_id)",
  },
];

export type FtsTable = "messages_fts" | "messages_fts_trigram";

/**
 * The two full-text tables in the v11–v22 inline layout: each keeps its own copy of
 * `content || tool_name || tool_calls`. The update triggers fire only when an indexed column
 * changes (upstream's later narrowing of the same trigger), so marking messages inactive does not
 * rewrite the index; the index contents are the same either way.
 */
export const FTS: Record<FtsTable, { table: string; triggers: Array<{ name: string; sql: string }> }> = {
  messages_fts: {
    table: "CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5(\n    content\n)",
    triggers: ftsTriggers("messages_fts"),
  },
  messages_fts_trigram: {
    table:
      "CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts_trigram USING fts5(\n    content,\n    tokenize='trigram'\n)",
    triggers: ftsTriggers("messages_fts_trigram"),
  },
};

function ftsTriggers(t: FtsTable): Array<{ name: string; sql: string }> {
  return [
    {
      name: `${t}_insert`,
      sql: `CREATE TRIGGER IF NOT EXISTS ${t}_insert AFTER INSERT ON messages BEGIN
    INSERT INTO ${t}(rowid, content) VALUES (new.id, ${ftsText("new")});
END`,
    },
    {
      name: `${t}_delete`,
      sql: `CREATE TRIGGER IF NOT EXISTS ${t}_delete AFTER DELETE ON messages BEGIN
    DELETE FROM ${t} WHERE rowid = old.id;
END`,
    },
    {
      name: `${t}_update`,
      sql: `CREATE TRIGGER IF NOT EXISTS ${t}_update AFTER UPDATE OF content, tool_name, tool_calls ON messages BEGIN
    DELETE FROM ${t} WHERE rowid = old.id;
    INSERT INTO ${t}(rowid, content) VALUES (new.id, ${ftsText("new")});
END`,
    },
  ];
}

export interface ColumnSpec {
  name: string;
  /** Declaration usable in `ALTER TABLE … ADD COLUMN` (type, NOT NULL, DEFAULT). */
  decl: string;
  notNull: boolean;
  hasDefault: boolean;
}

let expectedCache: Map<string, ColumnSpec[]> | undefined;

/**
 * The expected columns of every table, read back from the DDL above through an in-memory database
 * (so the DDL text is the single source of truth).
 */
export function expectedColumns(openMemory: () => Db): Map<string, ColumnSpec[]> {
  if (expectedCache) return expectedCache;
  const mem = openMemory();
  try {
    const out = new Map<string, ColumnSpec[]>();
    for (const t of TABLES) {
      mem.exec(t.sql);
      const rows = mem.prepare(`PRAGMA table_info("${t.name}")`).all() as TableInfoRow[];
      out.set(
        t.name,
        rows.map((r) => {
          const parts = [r.type];
          if (r.notnull && !r.pk) parts.push("NOT NULL");
          if (r.dflt_value !== null) parts.push(`DEFAULT ${r.dflt_value}`);
          return {
            name: r.name,
            decl: parts.filter(Boolean).join(" "),
            notNull: Boolean(r.notnull),
            hasDefault: r.dflt_value !== null,
          };
        }),
      );
    }
    expectedCache = out;
    return out;
  } finally {
    mem.close();
  }
}

export interface TableInfoRow {
  cid: number;
  name: string;
  type: string;
  notnull: number;
  dflt_value: string | null;
  pk: number;
}

/** What a file lacks compared with the schema above; empty lists mean nothing to do. */
export interface SchemaPlan {
  tables: string[];
  columns: Array<{ table: string; column: ColumnSpec }>;
  indexes: string[];
  /** FTS tables to create (and fill from existing messages). */
  ftsTables: FtsTable[];
  /** Triggers to create on FTS tables that exist in the inline layout. */
  triggers: string[];
  /** No schema_version row yet. */
  version: boolean;
}

export function planIsEmpty(p: SchemaPlan): boolean {
  return !(
    p.tables.length ||
    p.columns.length ||
    p.indexes.length ||
    p.ftsTables.length ||
    p.triggers.length ||
    p.version
  );
}

interface MasterRow {
  type: string;
  name: string;
  sql: string | null;
}

export function readMaster(db: Db): Map<string, MasterRow> {
  const rows = db.prepare("SELECT type, name, sql FROM sqlite_master").all() as MasterRow[];
  return new Map(rows.map((r) => [r.name, r]));
}

/**
 * True when an FTS table is the inline (self-contained) layout this module creates, as opposed to
 * the external-content layout newer Hermes versions use; only the inline layout gets our triggers.
 */
export function isInlineFts(sql: string | null | undefined): boolean {
  return !!sql && !/content\s*=/i.test(sql);
}

/** Compares the file with the schema; reads only. */
export function planSchema(
  db: Db,
  expected: Map<string, ColumnSpec[]>,
  trigramSupported: boolean,
): SchemaPlan {
  const master = readMaster(db);
  const plan: SchemaPlan = {
    tables: [],
    columns: [],
    indexes: [],
    ftsTables: [],
    triggers: [],
    version: false,
  };
  for (const t of TABLES) {
    if (!master.has(t.name)) {
      plan.tables.push(t.name);
      continue;
    }
    const live = new Set(
      (db.prepare(`PRAGMA table_info("${t.name}")`).all() as TableInfoRow[]).map((r) => r.name),
    );
    for (const column of expected.get(t.name) ?? []) {
      if (!live.has(column.name)) plan.columns.push({ table: t.name, column });
    }
  }
  for (const i of INDEXES) if (!master.has(i.name)) plan.indexes.push(i.name);
  for (const name of Object.keys(FTS) as FtsTable[]) {
    if (name === "messages_fts_trigram" && !trigramSupported) continue;
    const existing = master.get(name);
    if (!existing) {
      plan.ftsTables.push(name);
      continue;
    }
    if (!isInlineFts(existing.sql)) continue;
    for (const trig of FTS[name].triggers) if (!master.has(trig.name)) plan.triggers.push(trig.name);
  }
  if (!master.has("schema_version")) plan.version = true;
  else {
    const row = db.prepare("SELECT COUNT(*) AS n FROM schema_version").get() as { n: number };
    if (row.n === 0) plan.version = true;
  }
  return plan;
}

/**
 * Applies a plan inside the caller's write transaction. Returns what it did, in words, and the
 * problems it met that it could not fix (for example duplicate titles that keep the unique title
 * index from being built on a very old file).
 */
export function applySchemaPlan(db: Db, plan: SchemaPlan): { done: string[]; problems: string[] } {
  const done: string[] = [];
  const problems: string[] = [];
  for (const name of plan.tables) {
    const t = TABLES.find((x) => x.name === name);
    if (!t) continue;
    db.exec(t.sql);
    done.push(`created table ${name}`);
  }
  for (const { table, column } of plan.columns) {
    db.exec(`ALTER TABLE "${table}" ADD COLUMN "${column.name}" ${column.decl}`);
    done.push(`added column ${table}.${column.name}`);
  }
  for (const name of plan.indexes) {
    const i = INDEXES.find((x) => x.name === name);
    if (!i) continue;
    try {
      db.exec(i.sql);
      done.push(`created index ${name}`);
    } catch (error) {
      problems.push(
        `index ${name} could not be created: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
  for (const name of plan.ftsTables) {
    db.exec(FTS[name].table);
    for (const trig of FTS[name].triggers) db.exec(trig.sql);
    const filled = fillFtsFromMessages(db, name);
    done.push(`created full-text table ${name}${filled ? ` and indexed ${filled} messages` : ""}`);
  }
  for (const trigName of plan.triggers) {
    for (const fts of Object.values(FTS)) {
      const trig = fts.triggers.find((x) => x.name === trigName);
      if (trig) {
        db.exec(trig.sql);
        done.push(`created trigger ${trigName}`);
      }
    }
  }
  if (plan.version) {
    db.prepare("INSERT INTO schema_version (version) VALUES (?)").run(SCHEMA_VERSION);
    done.push(`recorded schema version ${SCHEMA_VERSION}`);
  }
  return { done, problems };
}

/** Re-derives an inline FTS table from `messages` (delete everything, insert every row). */
export function fillFtsFromMessages(db: Db, name: FtsTable): number {
  db.exec(`DELETE FROM ${name}`);
  const info = db
    .prepare(`INSERT INTO ${name}(rowid, content) SELECT m.id, ${FTS_TEXT_OF_M} FROM messages m`)
    .run();
  return info.changes;
}

/** Whether this SQLite build has FTS5's trigram tokenizer (3.34+). */
export function trigramSupported(db: Db): boolean {
  try {
    db.exec("CREATE VIRTUAL TABLE temp.hermes_trigram_probe USING fts5(x, tokenize='trigram')");
    db.exec("DROP TABLE temp.hermes_trigram_probe");
    return true;
  } catch {
    return false;
  }
}

/** Everything above that a plan depends on, as text (computed once). */
let schemaTextCache: string | undefined;
const schemaText = () => {
  schemaTextCache ??= JSON.stringify([SCHEMA_VERSION, TABLES, INDEXES, FTS]);
  return schemaTextCache;
};

/**
 * A digest of everything `planSchema` reads from a file: its `sqlite_master` rows (ALTER TABLE
 * rewrites a table's stored CREATE text, so columns are in them), whether `schema_version` holds a
 * row, the SQLite build (trigram support) and the schema above. Two files with one stamp get the
 * same plan, so a stamp once seen with an empty plan needs no second look (`schema-stamps.ts`).
 */
export function schemaStamp(db: Db): string {
  const rows = db
    .prepare("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name")
    .raw()
    .all();
  const hasVersionTable = rows.some(
    (r) => (r as unknown[])[0] === "table" && (r as unknown[])[1] === "schema_version",
  );
  const versioned = hasVersionTable
    ? (db.prepare("SELECT EXISTS (SELECT 1 FROM schema_version) AS v").get() as { v: number }).v
    : -1;
  const sqlite = (db.prepare("SELECT sqlite_version() AS v").get() as { v: string }).v;
  return createHash("sha256")
    .update(JSON.stringify([1, sqlite, versioned, rows]))
    .update(schemaText())
    .digest("hex");
}
