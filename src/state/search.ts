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
import type { Message } from "../ai/types.js";
import { contentText, isRole, type Row } from "./codec.js";
import { isBusy } from "./connection.js";
import type { StoreContext } from "./context.js";
import {
  chooseRoute,
  highlightTerms,
  isEmptyQuery,
  type ParsedQuery,
  parseSearchQuery,
  toFtsMatch,
  toLikeClause,
  toTrigramMatch,
  trigramEligible,
} from "./fts-query.js";
import type { FtsTable } from "./schema.js";
import { type SearchHit, type SearchOptions, SessionStoreError } from "./types.js";

export const RANK_WINDOW = 1000;
const MAX_WINDOWS = 25;
const SNIPPET_MAX = 300;

interface Filters {
  sql: string;
  params: unknown[];
}

function filters(ctx: StoreContext, options: SearchOptions): Filters {
  const roles: string[] = options.roles && options.roles.length > 0 ? options.roles : ["user", "assistant"];
  const unknown = roles.filter((r) => !isRole(r));
  if (unknown.length > 0) {
    throw new SessionStoreError(
      "invalid",
      `search roles must be system, user, assistant or tool; got ${unknown.join(", ")}.`,
    );
  }
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
  const text = typeof options.query === "string" ? options.query : "";
  if (!text.trim()) return [];
  const wanted = options.limit ?? 10;
  const limit = Number.isFinite(wanted) ? Math.max(1, Math.min(100, Math.floor(wanted))) : 10;
  const sort = options.sort ?? "relevance";
  if (sort !== "relevance" && sort !== "newest" && sort !== "oldest") {
    throw new SessionStoreError(
      "invalid",
      `search sort must be relevance, newest or oldest, got "${String(sort)}".`,
    );
  }
  const parsed = parseSearchQuery(text);
  if (isEmptyQuery(parsed)) return [];
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
    if (!r || !isRole(r["role"])) continue;
    out.push({
      messageId: Number(r["id"]),
      sessionId: String(r["session_id"]),
      role: r["role"] as Message["role"],
      snippet: snippetFromText(rowText(r), terms),
      timestamp: Number(r["timestamp"]),
      sessionTitle: r["title"] === null || r["title"] === undefined ? null : String(r["title"]),
      source: String(r["source"]),
      model: r["model"] === null || r["model"] === undefined ? null : String(r["model"]),
    });
  }
  return out;
}

function rowText(r: Row): string {
  const parts = [contentText(r["content"])];
  if (typeof r["tool_name"] === "string") parts.push(r["tool_name"]);
  if (typeof r["tool_calls"] === "string") parts.push(r["tool_calls"]);
  return parts.filter(Boolean).join(" ");
}

/**
 * A snippet of at most ~300 characters around the first occurrence (case-insensitive) of a term,
 * every occurrence of a term inside it wrapped in `>>>`/`<<<`. Cut here rather than with FTS5's
 * snippet(), which re-reads the document through every index segment (about half a millisecond a
 * hit on a large store). A phrase that does not occur literally (`connection, pool` for the
 * phrase "connection pool") is looked for word by word.
 */
export function snippetFromText(text: string, terms: string[]): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const lower = flat.toLowerCase();
  const needles = [...new Set([...terms, ...terms.flatMap((t) => t.split(" "))])]
    .map((t) => t.toLowerCase())
    .filter((t) => t.length > 0)
    .sort((a, b) => b.length - a.length);
  let at = -1;
  for (const needle of needles) {
    const i = lower.indexOf(needle);
    if (i !== -1 && (at === -1 || i < at)) at = i;
  }
  if (at === -1) return flat.length > SNIPPET_MAX ? `${flat.slice(0, SNIPPET_MAX - 1)}…` : flat;
  const start = Math.max(0, at - 100);
  const end = Math.min(flat.length, start + SNIPPET_MAX);
  const window = flat.slice(start, end);
  const windowLower = lower.slice(start, end);
  let out = "";
  let i = 0;
  while (i < window.length) {
    const needle = needles.find((n) => windowLower.startsWith(n, i));
    if (needle) {
      out += `>>>${window.slice(i, i + needle.length)}<<<`;
      i += needle.length;
    } else {
      out += window[i];
      i++;
    }
  }
  return `${start > 0 ? "…" : ""}${out}${end < flat.length ? "…" : ""}`;
}
