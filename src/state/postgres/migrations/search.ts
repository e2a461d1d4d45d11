/**
 * Search over messages in PostgreSQL (versions 200–299), the counterpart of SQLite's two FTS5
 * tables:
 *
 * - `messages.search_vector`, a generated `tsvector` over the same text SQLite indexes (content,
 *   tool name, tool calls), with a GIN index: the word index. ASCII punctuation becomes spaces
 *   before PostgreSQL's parser sees the text, so `example.com`, `src/app.ts` or `docker-compose`
 *   are words as FTS5's unicode61 tokenizer splits them (PostgreSQL would keep them whole as a
 *   host, a path or a hyphenated word), and the `simple` configuration lower-cases without
 *   stemming, as FTS5 does. At most the first `SEARCH_VECTOR_CHARS` characters are indexed: a
 *   tsvector holds at most 1 MB, and a long tool output must never make a message unstorable.
 * - A `pg_trgm` GIN index over the same text: substrings, CJK and symbols (`ILIKE '%…%'`).
 * - `hermes_prefix_tsquery(q)`: `q` with its last word a prefix (`word*` in a query).
 * - `hermes_try_jsonb(text)`: JSON text or NULL, never an error (insights reads `tool_calls`, which
 *   older writers may have stored as anything).
 * - From version 210 the word index folds accents as FTS5's unicode61 tokenizer does (`café`,
 *   `Café` and `cafe` are one word): the `hermes_words` text search configuration is `simple` with
 *   the `unaccent` dictionary (Debian's postgresql ships it; a trusted extension, so the database
 *   owner may create it) in front for words holding non-ASCII letters. Documents and queries both
 *   use `WORD_CONFIG`. Re-creating the column rewrites the table once (minutes for millions of
 *   messages, during which writes wait).
 *
 * The text expression lives here once (`SEARCH_TEXT_SQL`) and the queries in search.ts use it as
 * written, so the planner matches it to the index.
 */
import type { Migration } from "../migrate.js";

/** The searchable text of a `messages` row aliased `m`; identical to the trigram index expression. */
export const SEARCH_TEXT_SQL =
  "(COALESCE(m.content, '') || ' ' || COALESCE(m.tool_name, '') || ' ' || COALESCE(m.tool_calls, ''))";

/** Characters of a message the word index covers (the trigram index covers all of it). */
export const SEARCH_VECTOR_CHARS = 262_144;

/** ASCII punctuation, turned into spaces before tokenising (documents and queries alike). */
export const PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";

/** The text search configuration of the word index and of every query against it. */
export const WORD_CONFIG = "hermes_words";

const sqlString = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** SQL that turns text `expr` into the word index's input (punctuation to spaces). */
export function wordTextSql(expr: string): string {
  return `translate(${expr}, ${sqlString(PUNCTUATION)}, ${sqlString(" ".repeat(PUNCTUATION.length))})`;
}

const unaliased = SEARCH_TEXT_SQL.replace(/m\./g, "");

export const SEARCH_MIGRATIONS: readonly Migration[] = [
  {
    version: 200,
    name: "message search: tsvector and trigram indexes",
    up: `
CREATE EXTENSION IF NOT EXISTS pg_trgm;
ALTER TABLE messages ADD COLUMN search_vector tsvector
  GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, ${wordTextSql(`left(${unaliased}, ${SEARCH_VECTOR_CHARS})`)})) STORED;
CREATE INDEX idx_messages_search_vector ON messages USING gin (search_vector);
CREATE INDEX idx_messages_search_trgm ON messages USING gin (${unaliased} gin_trgm_ops);
CREATE FUNCTION hermes_try_jsonb(value text) RETURNS jsonb
  LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
  RETURN value::jsonb;
EXCEPTION WHEN others THEN
  RETURN NULL;
END
$$;
CREATE FUNCTION hermes_prefix_tsquery(q tsquery) RETURNS tsquery
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN numnode(q) = 0 THEN q ELSE (q::text || ':*')::tsquery END
$$;
`,
  },
  {
    version: 210,
    name: "message search: fold accents in the word index (unaccent)",
    up: `
CREATE EXTENSION IF NOT EXISTS unaccent;
CREATE TEXT SEARCH CONFIGURATION ${WORD_CONFIG} (COPY = simple);
ALTER TEXT SEARCH CONFIGURATION ${WORD_CONFIG}
  ALTER MAPPING FOR word, numword, hword, numhword, hword_part, hword_numpart WITH unaccent, simple;
DROP INDEX idx_messages_search_vector;
ALTER TABLE messages DROP COLUMN search_vector;
ALTER TABLE messages ADD COLUMN search_vector tsvector
  GENERATED ALWAYS AS (to_tsvector('${WORD_CONFIG}'::regconfig, ${wordTextSql(`left(${unaliased}, ${SEARCH_VECTOR_CHARS})`)})) STORED;
CREATE INDEX idx_messages_search_vector ON messages USING gin (search_vector);
`,
  },
];

/**
 * Puts back what search needs on a migrated database that lost part of it (an extension dropped
 * with CASCADE, a restore without it): the extensions, the accent-folding configuration, the
 * word column and both indexes, each only when missing. `hermes doctor --fix` runs it; re-creating
 * the column rewrites `messages` once.
 */
export const SEARCH_REPAIR_SQL = `
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE EXTENSION IF NOT EXISTS unaccent;
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_ts_config WHERE cfgname = '${WORD_CONFIG}'
                 AND cfgnamespace = to_regnamespace(current_schema())) THEN
    CREATE TEXT SEARCH CONFIGURATION ${WORD_CONFIG} (COPY = simple);
    ALTER TEXT SEARCH CONFIGURATION ${WORD_CONFIG}
      ALTER MAPPING FOR word, numword, hword, numhword, hword_part, hword_numpart WITH unaccent, simple;
  END IF;
END
$$;
ALTER TABLE messages ADD COLUMN IF NOT EXISTS search_vector tsvector
  GENERATED ALWAYS AS (to_tsvector('${WORD_CONFIG}'::regconfig, ${wordTextSql(`left(${unaliased}, ${SEARCH_VECTOR_CHARS})`)})) STORED;
CREATE INDEX IF NOT EXISTS idx_messages_search_vector ON messages USING gin (search_vector);
CREATE INDEX IF NOT EXISTS idx_messages_search_trgm ON messages USING gin (${unaliased} gin_trgm_ops);
`;
