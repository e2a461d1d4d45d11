/**
 * Sessions and messages in PostgreSQL (versions 100–199): the same columns as SQLite's v17 schema
 * with PostgreSQL types. Times stay epoch seconds (`double precision`) as in state.db, so the
 * codec, the ordering and `hermes state migrate` carry values across unchanged; ids stay text
 * (Python's `YYYYMMDD_HHMMSS_xxxxxx`) and message ids a sequence.
 */
import type { Migration } from "../migrate.js";

export const SESSION_MIGRATIONS: readonly Migration[] = [
  {
    version: 100,
    name: "sessions and messages",
    up: `
CREATE TABLE sessions (
  id text PRIMARY KEY,
  source text NOT NULL,
  user_id text,
  session_key text,
  chat_id text,
  chat_type text,
  thread_id text,
  model text,
  model_config text,
  system_prompt text,
  parent_session_id text REFERENCES sessions(id),
  started_at double precision NOT NULL,
  ended_at double precision,
  end_reason text,
  message_count integer DEFAULT 0,
  tool_call_count integer DEFAULT 0,
  input_tokens bigint DEFAULT 0,
  output_tokens bigint DEFAULT 0,
  cache_read_tokens bigint DEFAULT 0,
  cache_write_tokens bigint DEFAULT 0,
  reasoning_tokens bigint DEFAULT 0,
  cwd text,
  git_branch text,
  git_repo_root text,
  billing_provider text,
  billing_base_url text,
  billing_mode text,
  estimated_cost_usd double precision,
  actual_cost_usd double precision,
  cost_status text,
  cost_source text,
  pricing_version text,
  title text,
  api_call_count integer DEFAULT 0,
  handoff_state text,
  handoff_platform text,
  handoff_error text,
  compression_failure_cooldown_until double precision,
  compression_failure_error text,
  rewind_count integer NOT NULL DEFAULT 0,
  archived integer NOT NULL DEFAULT 0
);
CREATE TABLE messages (
  id bigserial PRIMARY KEY,
  session_id text NOT NULL REFERENCES sessions(id),
  role text NOT NULL,
  content text,
  tool_call_id text,
  tool_calls text,
  tool_name text,
  timestamp double precision NOT NULL,
  token_count integer,
  finish_reason text,
  reasoning text,
  reasoning_content text,
  reasoning_details text,
  codex_reasoning_items text,
  codex_message_items text,
  platform_message_id text,
  observed integer DEFAULT 0,
  active integer NOT NULL DEFAULT 1,
  compacted integer NOT NULL DEFAULT 0
);
CREATE TABLE state_meta (key text PRIMARY KEY, value text);
CREATE TABLE compression_locks (
  session_id text PRIMARY KEY,
  holder text NOT NULL,
  acquired_at double precision NOT NULL,
  expires_at double precision NOT NULL
);
CREATE INDEX idx_sessions_source ON sessions (source);
CREATE INDEX idx_sessions_parent ON sessions (parent_session_id);
CREATE INDEX idx_sessions_started ON sessions (started_at DESC);
CREATE INDEX idx_sessions_archived_started ON sessions (archived, started_at DESC);
CREATE UNIQUE INDEX idx_sessions_title_unique ON sessions (title) WHERE title IS NOT NULL;
CREATE INDEX idx_sessions_source_id ON sessions (source, id);
CREATE INDEX idx_sessions_session_key ON sessions (session_key, started_at DESC);
CREATE INDEX idx_sessions_gateway_peer ON sessions (source, user_id, chat_id, chat_type, thread_id, started_at DESC);
CREATE INDEX idx_sessions_handoff_state ON sessions (handoff_state, started_at);
CREATE INDEX idx_messages_session ON messages (session_id, timestamp);
CREATE INDEX idx_messages_session_active ON messages (session_id, active, timestamp);
CREATE INDEX idx_messages_platform_msg_id ON messages (session_id, platform_message_id) WHERE platform_message_id IS NOT NULL;
CREATE INDEX idx_compression_locks_expires ON compression_locks (expires_at);
`,
  },
  {
    version: 101,
    name: "session store: creation order, prefix lookups, parent links as in state.db",
    // - `created_seq`: the creation order of sessions started in the same second (SQLite's rowid),
    //   for exports and listings.
    // - `text_pattern_ops` indexes: id prefixes and lineage titles ("work #…") are LIKE prefix
    //   lookups, which a default-collation btree cannot answer.
    // - The parent link is not a foreign key, as in state.db (SQLite does not enforce it): a
    //   Python-written home may name a parent it no longer has, and `hermes state migrate` copies
    //   sessions one by one in start order. Deleting a session clears its children's link.
    // - `hermes_json_array_length`: the length of a stored `tool_calls` JSON array, 0 for anything
    //   else (unreadable text included), for recounting a session's tool calls.
    up: `
ALTER TABLE sessions DROP CONSTRAINT IF EXISTS sessions_parent_session_id_fkey;
ALTER TABLE sessions ADD COLUMN created_seq bigserial;
CREATE INDEX idx_sessions_started_seq ON sessions (started_at, created_seq);
CREATE INDEX idx_sessions_id_prefix ON sessions (id text_pattern_ops);
CREATE INDEX idx_sessions_title_prefix ON sessions (title text_pattern_ops) WHERE title IS NOT NULL;
CREATE INDEX idx_sessions_model ON sessions (model);
CREATE FUNCTION hermes_json_array_length(value text) RETURNS integer
LANGUAGE plpgsql IMMUTABLE AS $fn$
BEGIN
  IF value IS NULL THEN RETURN 0; END IF;
  RETURN json_array_length(value::json);
EXCEPTION WHEN others THEN
  RETURN 0;
END
$fn$;
`,
  },
];
