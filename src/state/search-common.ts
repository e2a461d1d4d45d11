/**
 * What every search backend shares (SQLite's search.ts, PostgreSQL's postgres/search.ts): checking
 * and normalising the options, and cutting snippets with `>>>`/`<<<` markers from a hit's text.
 * No engine code here, so the PostgreSQL side loads nothing of SQLite's.
 */
import type { Message } from "../ai/types.js";
import { contentText, isRole, type Row } from "./codec.js";
import { isEmptyQuery, type ParsedQuery, parseSearchQuery } from "./fts-query.js";
import { type SearchHit, type SearchOptions, SessionStoreError } from "./types.js";

const SNIPPET_MAX = 300;

/** The roles a search covers (default user and assistant); `invalid` for an unknown role. */
export function searchRoles(options: SearchOptions): string[] {
  const roles: string[] = options.roles && options.roles.length > 0 ? options.roles : ["user", "assistant"];
  const unknown = roles.filter((r) => !isRole(r));
  if (unknown.length > 0) {
    throw new SessionStoreError(
      "invalid",
      `search roles must be system, user, assistant or tool; got ${unknown.join(", ")}.`,
    );
  }
  return roles;
}

export interface PreparedSearch {
  parsed: ParsedQuery;
  /** 1 to 100. */
  limit: number;
  sort: "relevance" | "newest" | "oldest";
}

/**
 * What every backend checks and derives before searching: the query parsed, the limit clamped,
 * the sort validated (`invalid` otherwise). Null when the text holds nothing to look for.
 */
export function prepareSearch(options: SearchOptions): PreparedSearch | null {
  const text = typeof options.query === "string" ? options.query : "";
  if (!text.trim()) return null;
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
  return isEmptyQuery(parsed) ? null : { parsed, limit, sort };
}

/** The text a hit's snippet is cut from: content, tool name and tool calls, as the indexes see them. */
export function rowText(r: Row): string {
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

/**
 * A hit from a message row joined with its session (`id`, `session_id`, `role`, `timestamp`, the
 * text columns `rowText` reads, `title`, `source`, `model`), its snippet cut around `terms`.
 * Null for a row whose role is not one of ours.
 */
export function hitFromRow(r: Row, terms: string[]): SearchHit | null {
  if (!isRole(r["role"])) return null;
  return {
    messageId: Number(r["id"]),
    sessionId: String(r["session_id"]),
    role: r["role"] as Message["role"],
    snippet: snippetFromText(rowText(r), terms),
    timestamp: Number(r["timestamp"]),
    sessionTitle: r["title"] === null || r["title"] === undefined ? null : String(r["title"]),
    source: String(r["source"]),
    model: r["model"] === null || r["model"] === undefined ? null : String(r["model"]),
  };
}
