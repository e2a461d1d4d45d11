/**
 * Session search over PostgreSQL, with the query language, routing, filters and snippets of the
 * SQLite store (search.ts): the same parser (fts-query.ts) reads what was typed, and the same
 * route is taken for it.
 *
 * - Words: `messages.search_vector @@ tsquery` on the GIN index (migrations/search.ts). Each term
 *   becomes `phraseto_tsquery('hermes_words', …)` over the text with ASCII punctuation turned into
 *   spaces, exactly as the documents were tokenised (accents folded, so `cafe` finds `café`), so `"docker compose"` is a phrase, `a.b` the
 *   phrase `a b` and `word*` a prefix (`hermes_prefix_tsquery`); terms are ANDed, groups ORed,
 *   `NOT term` is `!!`. Relevance is `ts_rank` within the newest `RANK_WINDOW` matches that pass
 *   the filters (SQLite ranks by bm25 within windows too; rankings may differ, hits do not).
 *   Matches are collected from the newest message ids first (`rangedIds`), so a common word or
 *   phrase costs a bounded walk rather than a visit to every matching row.
 * - Substrings, CJK and symbols: `ILIKE '%term%'` over the same text, answered by the `pg_trgm`
 *   GIN index when a term has three characters or more (a shorter one scans, newest first, as
 *   SQLite's LIKE route does). When the word route finds nothing and every term is three
 *   characters or longer, the substring route is asked as well, so `ockerfi` finds `Dockerfile`.
 *
 * Every value reaches PostgreSQL as a parameter; only the shape of the query (how many terms,
 * which are negated) is written into the SQL.
 */
import {
  chooseRoute,
  highlightTerms,
  likePattern,
  type ParsedQuery,
  type QueryTerm,
  trigramEligible,
} from "../fts-query.js";
import { hitFromRow, prepareSearch, searchRoles } from "../search-common.js";
import type { SearchHit, SearchOptions } from "../types.js";
import type { PgQueryable } from "./database.js";
import { SEARCH_TEXT_SQL, WORD_CONFIG, wordTextSql } from "./migrations/search.js";

/** Relevance is ranked among at most this many of the newest matches, as SQLite ranks bm25. */
export const RANK_WINDOW = 1000;

type Sort = "relevance" | "newest" | "oldest";

/** Collects parameters and hands out their `$n` placeholders. */
class Params {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

function filterSql(options: SearchOptions, p: Params): string {
  const roles = searchRoles(options);
  const parts = ["(m.active = 1 OR m.compacted = 1)", `m.role = ANY(${p.add(roles)}::text[])`];
  if (options.source !== undefined) parts.push(`s.source = ${p.add(options.source)}`);
  if (options.excludeSessionId !== undefined)
    parts.push(`m.session_id <> ${p.add(options.excludeSessionId)}`);
  return parts.join(" AND ");
}

/** The tsquery of a parsed query, as SQL over parameters. */
function tsquerySql(q: ParsedQuery, p: Params): string {
  const term = (t: QueryTerm) => {
    const phrase = `phraseto_tsquery('${WORD_CONFIG}', ${wordTextSql(`${p.add(t.text)}::text`)})`;
    const query = t.prefix ? `hermes_prefix_tsquery(${phrase})` : phrase;
    return t.negated ? `!!${query}` : query;
  };
  return `(${q.groups.map((g) => `(${g.map(term).join(" && ")})`).join(" || ")})`;
}

/** Substring conditions (`ILIKE`) over the searchable text, as SQL over parameters. */
function substringSql(q: ParsedQuery, p: Params): string {
  const term = (t: QueryTerm) => {
    const like = `${SEARCH_TEXT_SQL} ILIKE ${p.add(likePattern(t.text))}`;
    return t.negated ? `NOT (${like})` : like;
  };
  return `(${q.groups.map((g) => `(${g.map(term).join(" AND ")})`).join(" OR ")})`;
}

const FROM = "FROM messages m JOIN sessions s ON s.id = m.session_id";
/** What the match queries read: sessions only when a filter needs them (every message has one). */
const matchFrom = (options: SearchOptions) => (options.source !== undefined ? FROM : "FROM messages m");

/** Ids the first walk covers (the newest ones, or the first ones for `oldest`). */
const FIRST_SPAN = 16_384;
/** Walks over id ranges before the index takes the rest whatever the estimate says. */
const MAX_WALKS = 4;
/**
 * How much dearer a match taken through the index is than a row visited by a walk (the index
 * hands every match over in no useful order: each is read, filtered and sorted), measured on the
 * 1M-message bench corpus.
 */
const INDEX_COST_PER_MATCH = 10;

/**
 * The newest (or, for `oldest`, the first) `want` matching ids. Walks id ranges from the newest
 * (backwards through the primary key, each row tested), starting with `FIRST_SPAN` ids; when that
 * left `want` unfilled, the matches found so far estimate how many older ones there are: few
 * (a rare term) and the index hands over every older match at once, to be ordered; many (a common
 * word or phrase) and the walk goes on over just enough older ids to fill `want` at that density.
 * So a common term costs a bounded walk and not a visit to each of its tens of thousands of
 * matches (PostgreSQL's estimate for a phrase being far too low for the planner to see it), and a
 * rare one costs its few matches. `rank` (SQL over the same parameters) is computed for the rows
 * returned.
 */
async function rangedIds(
  db: PgQueryable,
  condition: (p: Params) => string,
  options: SearchOptions,
  oldest: boolean,
  want: number,
  rank?: (p: Params) => string,
): Promise<Array<{ id: number; rank: number }>> {
  const [bounds] = await db.query<{ lo: string | null; hi: string | null }>(
    "SELECT MIN(id) AS lo, MAX(id) AS hi FROM messages",
  );
  if (!bounds || bounds.lo === null || bounds.hi === null) return [];
  const lo = Number(bounds.lo);
  const hi = Number(bounds.hi);
  const found: Array<{ id: number; rank: number }> = [];
  const take = async (sql: string, p: Params) => {
    const rows = await db.query<{ id: string; rank: number }>(sql, p.values);
    for (const r of rows) found.push({ id: Number(r.id), rank: Number(r.rank) });
  };
  const select = (p: Params, range: string) => {
    const where = `${range} AND ${condition(p)} AND ${filterSql(options, p)}`;
    return { where, rankSql: rank ? rank(p) : "0" };
  };
  const order = (p: Params) => `ORDER BY id ${oldest ? "ASC" : "DESC"} LIMIT ${p.add(want - found.length)}`;

  // `next` is the first id not walked yet; ids walked so far: `walked`.
  let next = oldest ? lo : hi;
  let walked = 0;
  let span = FIRST_SPAN;
  for (let walk = 0; walk < MAX_WALKS; walk++) {
    const p = new Params();
    const end = oldest ? next + span : next - span;
    const range = oldest
      ? `m.id >= ${p.add(next)}::bigint AND m.id < ${p.add(end)}::bigint`
      : `m.id <= ${p.add(next)}::bigint AND m.id > ${p.add(end)}::bigint`;
    const { where, rankSql } = select(p, range);
    await take(
      `SELECT m.id, ${rankSql} AS rank ${matchFrom(options)} WHERE ${where} ${order(p).replace("BY id", "BY m.id")}`,
      p,
    );
    walked += span;
    next = end;
    if (found.length >= want || (oldest ? next > hi : next < lo)) return found;
    const missing = want - found.length;
    const density = found.length / walked;
    const older = density * (oldest ? hi - next + 1 : next - lo + 1);
    span = Math.ceil((missing / Math.max(density, 1e-9)) * 1.25);
    if (span > INDEX_COST_PER_MATCH * older) break;
  }
  // The rest: every match through the index, then ordered (a walk in id order, which the planner
  // favours under LIMIT, would read every older row when the term is rare).
  const p = new Params();
  const { where, rankSql } = select(p, `m.id ${oldest ? ">=" : "<="} ${p.add(next)}::bigint`);
  await take(
    `WITH matches AS MATERIALIZED (SELECT m.id, ${rankSql} AS rank ${matchFrom(options)} WHERE ${where})
     SELECT id, rank FROM matches ${order(p)}`,
    p,
  );
  return found;
}

async function wordIds(
  db: PgQueryable,
  parsed: ParsedQuery,
  options: SearchOptions,
  sort: Sort,
  limit: number,
): Promise<number[]> {
  const match = (p: Params) => `m.search_vector @@ ${tsquerySql(parsed, p)}`;
  if (sort !== "relevance") {
    return (await rangedIds(db, match, options, sort === "oldest", limit)).map((r) => r.id);
  }
  const window = await rangedIds(
    db,
    match,
    options,
    false,
    RANK_WINDOW,
    (p) => `ts_rank(m.search_vector, ${tsquerySql(parsed, p)})`,
  );
  return window
    .sort((a, b) => b.rank - a.rank || b.id - a.id)
    .slice(0, limit)
    .map((r) => r.id);
}

async function substringIds(
  db: PgQueryable,
  parsed: ParsedQuery,
  options: SearchOptions,
  sort: Sort,
  limit: number,
): Promise<number[]> {
  // Substring matches are not ranked (as in SQLite): newest first unless `oldest`.
  const rows = await rangedIds(db, (p) => substringSql(parsed, p), options, sort === "oldest", limit);
  return rows.map((r) => r.id);
}

async function hits(db: PgQueryable, ids: number[], parsed: ParsedQuery): Promise<SearchHit[]> {
  if (ids.length === 0) return [];
  const rows = await db.query(
    `SELECT m.id, m.session_id, m.role, m.timestamp, m.content, m.tool_name, m.tool_calls,
            s.title, s.source, s.model
     ${FROM} WHERE m.id = ANY($1::bigint[])`,
    [ids],
  );
  const byId = new Map(rows.map((r) => [Number(r["id"]), r]));
  const terms = highlightTerms(parsed);
  const out: SearchHit[] = [];
  for (const id of ids) {
    const r = byId.get(id);
    const hit = r ? hitFromRow(r, terms) : null;
    if (hit) out.push(hit);
  }
  return out;
}

/** `SessionStore.search` for PostgreSQL. Empty or whitespace-only text finds nothing. */
export async function pgSearch(db: PgQueryable, options: SearchOptions): Promise<SearchHit[]> {
  const prepared = prepareSearch(options);
  if (!prepared) return [];
  const { parsed, limit, sort } = prepared;
  if (chooseRoute(parsed) === "words") {
    const ids = await wordIds(db, parsed, options, sort, limit);
    if (ids.length > 0 || !trigramEligible(parsed)) return hits(db, ids, parsed);
  }
  return hits(db, await substringIds(db, parsed, options, sort, limit), parsed);
}
