/**
 * Sessions and messages in PostgreSQL (versions 100–199): the same columns as SQLite's v17 schema
 * with PostgreSQL types. Times stay epoch seconds (`double precision`) as in state.db, so the
 * codec, the ordering and `hermes state migrate` carry values across unchanged; ids stay text
 * (Python's `YYYYMMDD_HHMMSS_xxxxxx`) and message ids a sequence. `parent_session_id` has no foreign
 * key, as SQLite does not enforce its own: a Python-written file may name a parent it no longer
 * has, and such a session must still move into PostgreSQL unchanged.
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
  parent_session_id text,
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
  {
    version: 102,
    name: "session store: appends in one round trip",
    // `hermes_append_messages`: one call appends a session's messages, bumps its counters and adds
    // one usage report (all optional arrays/values), serialised on the session's row. As a
    // VOLATILE function under READ COMMITTED each statement inside sees a fresh snapshot, so the
    // newest timestamp it reads after taking the row lock includes every append committed before.
    // Returns the new ids in order, or NULL for an unknown session.
    // `hermes_merge_cost_status`: the worst of two cost statuses (unknown > estimated > actual >
    // included); text that is not a known status gives way to the new one.
    up: `
CREATE FUNCTION hermes_merge_cost_status(stored text, next text) RETURNS text
LANGUAGE sql IMMUTABLE AS $fn$
  SELECT CASE
    WHEN next IS NULL THEN stored
    WHEN stored IS NULL OR array_position(ARRAY['included', 'actual', 'estimated', 'unknown'], stored) IS NULL THEN next
    WHEN array_position(ARRAY['included', 'actual', 'estimated', 'unknown'], stored)
      >= array_position(ARRAY['included', 'actual', 'estimated', 'unknown'], next) THEN stored
    ELSE next END
$fn$;
CREATE FUNCTION hermes_append_messages(
  p_session text, p_now double precision,
  p_role text[], p_content text[], p_tool_call_id text[], p_tool_calls text[], p_tool_name text[],
  p_ts double precision[], p_token_count integer[], p_finish_reason text[], p_reasoning text[],
  p_reasoning_details text[], p_codex_reasoning_items text[], p_tool_call_total integer,
  p_usage bigint[], p_cost double precision, p_cost_status text, p_cost_source text, p_pricing_version text
) RETURNS bigint[]
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
  v_floor double precision;
  v_ids bigint[];
BEGIN
  UPDATE sessions SET
    message_count = COALESCE(message_count, 0) + cardinality(p_role),
    tool_call_count = COALESCE(tool_call_count, 0) + p_tool_call_total,
    input_tokens = COALESCE(input_tokens, 0) + COALESCE(p_usage[1], 0),
    output_tokens = COALESCE(output_tokens, 0) + COALESCE(p_usage[2], 0),
    cache_read_tokens = COALESCE(cache_read_tokens, 0) + COALESCE(p_usage[3], 0),
    cache_write_tokens = COALESCE(cache_write_tokens, 0) + COALESCE(p_usage[4], 0),
    reasoning_tokens = COALESCE(reasoning_tokens, 0) + COALESCE(p_usage[5], 0),
    api_call_count = COALESCE(api_call_count, 0) + COALESCE(p_usage[6], 0),
    estimated_cost_usd = CASE WHEN p_cost IS NULL THEN estimated_cost_usd ELSE COALESCE(estimated_cost_usd, 0) + p_cost END,
    cost_status = hermes_merge_cost_status(cost_status, p_cost_status),
    cost_source = COALESCE(p_cost_source, cost_source),
    pricing_version = COALESCE(p_pricing_version, pricing_version)
  WHERE id = p_session;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  SELECT GREATEST(p_now, COALESCE(max(m.timestamp), 0)) INTO v_floor FROM messages m WHERE m.session_id = p_session;
  WITH ins AS (
    INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp, token_count,
      finish_reason, reasoning, reasoning_details, codex_reasoning_items)
    SELECT p_session, u.role, u.content, u.tool_call_id, u.tool_calls, u.tool_name, COALESCE(u.ts, v_floor),
      u.token_count, u.finish_reason, u.reasoning, u.reasoning_details, u.codex_reasoning_items
    FROM unnest(p_role, p_content, p_tool_call_id, p_tool_calls, p_tool_name, p_ts, p_token_count, p_finish_reason,
      p_reasoning, p_reasoning_details, p_codex_reasoning_items)
      WITH ORDINALITY AS u(role, content, tool_call_id, tool_calls, tool_name, ts, token_count, finish_reason,
        reasoning, reasoning_details, codex_reasoning_items, ord)
    ORDER BY u.ord
    RETURNING id)
  SELECT array_agg(ins.id ORDER BY ins.id) INTO v_ids FROM ins;
  RETURN COALESCE(v_ids, ARRAY[]::bigint[]);
END
$fn$;
`,
  },
];
