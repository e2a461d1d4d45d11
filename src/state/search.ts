/**
 * Full-text search over stored messages.
 *
 * Routing (see fts-query.ts): ordinary words go to the word index `messages_fts`; CJK text and
 * terms without letters or digits go to the trigram index `messages_fts_trigram`; when the word
 * index finds nothing for a query whose terms are all three characters or longer, the trigram
 * index is asked as well, so a substring of a word (`ockerfi`) still finds `Dockerfile`. Terms
 * shorter than three characters that the word index cannot take fall back to a LIKE scan, newest
 * first.
 *
 * Bounded work for very common terms: ranking by bm25 costs time proportional to the number of
 * matching rows, which for a word in a tenth of a million messages is too slow. Relevance is
 * therefore ranked within windows of the newest `RANK_WINDOW` matches: a cheap probe (an FTS scan
 * in rowid order with OFFSET, no ranking) finds where the window starts; ranking happens inside it;
 * when filters leave too few hits, the next older window is ranked, up to `MAX_WINDOWS`. A term
 * with fewer matches than one window is ranked over all of them, which is the common case for
 * rare words. Substring (trigram) matches and `newest`/`oldest` walk the index in rowid order
 * (storage order) and stop at `limit`.
 *
 * Snippets are cut from the message text in JavaScript (see `snippetFromText`). */
import { isBusy } from "./connection.js";
import type { StoreContext } from "./context.js";
import {
  chooseRoute,
  highlightTerms,
  type ParsedQuery,
  toFtsMatch,
  toLikeClause,
  toTrigramMatch,
  trigramEligible,
} from "./fts-query.js";
import type { FtsTable } from "./schema.js";
import { hitFromRow, prepareSearch, searchRoles, snippetFromText } from "./search-common.js";
import type { SearchHit, SearchOptions } from "./types.js";

export { snippetFromText };

export const RANK_WINDOW = 1000;
const MAX_WINDOWS = 25;

interface Filters {
  sql: string;
  params: unknown[];
}

function filters(ctx: StoreContext, options: SearchOptions): Filters {
  const roles = searchRoles(options);
  const parts = [ctx.visibleMessage("m"), `m.role IN (${roles.map(() => "?").join(", ")})`];
  const params: unknown[] = [...roles];
  if (options.source !== undefined) {
    parts.push("s.source = ?");
    params.push(options.source);
  }
  if (options.excludeSessionId !== undefined) {
    parts.push("m.session_id <> ?");
    params.push(options.excludeSessionId);
  }
  return { sql: parts.join(" AND "), params };
}

/** Empty or whitespace-only text returns no hits (use `recent()` to browse without a query). */
export function searchMessages(ctx: StoreContext, options: SearchOptions): SearchHit[] {
  const prepared = prepareSearch(options);
  if (!prepared) return [];
  const { parsed, limit, sort } = prepared;
  const f = filters(ctx, options);
  return ctx.read(() => {
    const route = chooseRoute(parsed);
    const { fts, trigram } = ctx.shape;
    const like = () => likeSearch(ctx, parsed, f, sort, limit);
    if (route === "words" && fts) {
      const hits = ftsSearch(ctx, "messages_fts", toFtsMatch(parsed), f, sort, limit) ?? like();
      if (hits.length > 0 || !trigram || !trigramEligible(parsed)) return finish(ctx, hits, parsed);
      return finish(
        ctx,
        ftsSearch(ctx, "messages_fts_trigram", toTrigramMatch(parsed), f, sort, limit) ?? [],
        parsed,
      );
    }
    if (route !== "like" && trigram && trigramEligible(parsed)) {
      return finish(
        ctx,
        ftsSearch(ctx, "messages_fts_trigram", toTrigramMatch(parsed), f, sort, limit) ?? like(),
        parsed,
      );
    }
    return finish(ctx, like(), parsed);
  });
}

function ftsSearch(
  ctx: StoreContext,
  table: FtsTable,
  match: string,
  f: Filters,
  sort: "relevance" | "newest" | "oldest",
  limit: number,
): number[] | null {
  try {
    return ftsIds(ctx, table, match, f, sort, limit);
  } catch (error) {
    // The MATCH text is built from quoted terms only, so this is not expected; if the FTS table is
    // damaged (`hermes sessions repair` rebuilds it) or refuses the text, answer from the messages
    // table instead.
    if (isBusy(error)) throw error;
    return null;
  }
}

function ftsIds(
  ctx: StoreContext,
  table: FtsTable,
  match: string,
  f: Filters,
  sort: "relevance" | "newest" | "oldest",
  limit: number,
): number[] {
  const join = `FROM ${table} f JOIN messages m ON m.id = f.rowid JOIN sessions s ON s.id = m.session_id`;
  // Substring (trigram) matches are not ranked: bm25 over trigrams says little about relevance and
  // costs a phrase-position check per candidate, so they come newest first.
  if (sort === "relevance" && table === "messages_fts")
    return rankedInWindows(ctx, table, join, match, f, limit);
  const dir = sort === "oldest" ? "ASC" : "DESC";
  return ctx
    .all(
      `SELECT f.rowid AS id ${join} WHERE ${table} MATCH ? AND ${f.sql} ORDER BY f.rowid ${dir} LIMIT ?`,
      match,
      ...f.params,
      limit,
    )
    .map((r) => Number(r["id"]));
}

function rankedInWindows(
  ctx: StoreContext,
  table: FtsTable,
  join: string,
  match: string,
  f: Filters,
  limit: number,
): number[] {
  const out: number[] = [];
  let upper: number | null = null;
  for (let w = 0; w < MAX_WINDOWS && out.length < limit; w++) {
    const bound = upper === null ? "" : " AND rowid <= CAST(? AS INTEGER)";
    const probe = ctx.get(
      `SELECT rowid AS id FROM ${table} WHERE ${table} MATCH ?${bound} ORDER BY rowid DESC LIMIT 1 OFFSET ?`,
      ...(upper === null ? [match, RANK_WINDOW - 1] : [match, upper, RANK_WINDOW - 1]),
    );
    const lower = probe ? Number(probe["id"]) : null;
    const range: string[] = [];
    const rangeParams: number[] = [];
    if (lower !== null) {
      range.push("f.rowid >= CAST(? AS INTEGER)");
      rangeParams.push(lower);
    }
    if (upper !== null) {
      range.push("f.rowid <= CAST(? AS INTEGER)");
      rangeParams.push(upper);
    }
    const rangeSql = range.length ? ` AND ${range.join(" AND ")}` : "";
    const rows = ctx.all(
      `SELECT f.rowid AS id ${join} WHERE ${table} MATCH ?${rangeSql} AND ${f.sql} ORDER BY f.rank LIMIT ?`,
      match,
      ...rangeParams,
      ...f.params,
      limit - out.length,
    );
    for (const r of rows) out.push(Number(r["id"]));
    if (lower === null) break;
    upper = lower - 1;
  }
  return out;
}

function likeSearch(
  ctx: StoreContext,
  parsed: ParsedQuery,
  f: Filters,
  sort: "relevance" | "newest" | "oldest",
  limit: number,
): number[] {
  const like = toLikeClause(parsed, ["m.content", "m.tool_name", "m.tool_calls"]);
  const dir = sort === "oldest" ? "ASC" : "DESC";
  const rows = ctx.all(
    `SELECT m.id AS id FROM messages m JOIN sessions s ON s.id = m.session_id WHERE ${f.sql} AND ${like.sql} ORDER BY m.id ${dir} LIMIT ?`,
    ...f.params,
    ...like.params,
    limit,
  );
  return rows.map((r) => Number(r["id"]));
}

function finish(ctx: StoreContext, ids: number[], parsed: ParsedQuery): SearchHit[] {
  const terms = highlightTerms(parsed);
  const meta = `SELECT m.id, m.session_id, m.role, m.timestamp, m.content, m.tool_name, m.tool_calls,
    ${ctx.s("title", "NULL")} AS title, s.source, s.model
    FROM messages m JOIN sessions s ON s.id = m.session_id WHERE m.id = ?`;
  const out: SearchHit[] = [];
  for (const id of ids) {
    const r = ctx.get(meta, id);
    const hit = r ? hitFromRow(r, terms) : null;
    if (hit) out.push(hit);
  }
  return out;
}
