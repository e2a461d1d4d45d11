/**
 * Message search over PostgreSQL, the small version the session store needs to typecheck and run:
 * every word of the query must occur in the message (case-insensitive substring), newest first,
 * with the same filters and snippet markers as SQLite. The full-text version (tsvector, pg_trgm,
 * the FTS query syntax, relevance) replaces this file.
 */
import { collapse, contentText, rowToSession } from "../codec.js";
import type { SearchHit, SearchOptions } from "../types.js";
import type { PgQueryable } from "./database.js";

export async function pgSearch(db: PgQueryable, options: SearchOptions): Promise<SearchHit[]> {
  const words = options.query
    .replace(/["*()]/g, " ")
    .split(/\s+/)
    .filter((w) => w && w !== "OR" && w !== "NOT" && w !== "AND");
  if (words.length === 0) return [];
  const params: unknown[] = [words.map((w) => `%${w.replace(/[\\%_]/g, (c) => `\\${c}`)}%`)];
  const where = ["m.content ILIKE ALL($1::text[])", "(m.active = 1 OR m.compacted = 1)"];
  params.push(options.roles ?? ["user", "assistant"]);
  where.push(`m.role = ANY($${params.length}::text[])`);
  if (options.source !== undefined) {
    params.push(options.source);
    where.push(`s.source = $${params.length}`);
  }
  if (options.excludeSessionId !== undefined) {
    params.push(options.excludeSessionId);
    where.push(`m.session_id <> $${params.length}`);
  }
  params.push(Math.min(100, Math.max(1, Math.floor(options.limit ?? 10))));
  const order = options.sort === "oldest" ? "m.timestamp, m.id" : "m.timestamp DESC, m.id DESC";
  const rows = await db.query(
    `SELECT m.id AS message_id, m.session_id, m.role, m.content, m.timestamp, s.*
     FROM messages m JOIN sessions s ON s.id = m.session_id
     WHERE ${where.join(" AND ")} ORDER BY ${order} LIMIT $${params.length}`,
    params,
  );
  return rows.map((r) => {
    const text = contentText(r["content"]);
    const lower = text.toLowerCase();
    const at = Math.max(0, lower.indexOf(words[0]!.toLowerCase()));
    let snippet = collapse(text.slice(Math.max(0, at - 120), at + 180), 300);
    for (const w of words) {
      snippet = snippet.replace(
        new RegExp(w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "gi"),
        (hit) => `>>>${hit}<<<`,
      );
    }
    const session = rowToSession({ ...r, id: r["session_id"] });
    return {
      messageId: Number(r["message_id"]),
      sessionId: String(r["session_id"]),
      role: r["role"] as SearchHit["role"],
      snippet,
      timestamp: Number(r["timestamp"]),
      sessionTitle: session.title,
      source: session.source,
      model: session.model,
    };
  });
}
