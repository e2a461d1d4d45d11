/**
 * Finding sessions: listings with previews, the most recently active session, and resolving what
 * a person typed (an id, an id prefix, a title, a lineage) to one session. Every query here is
 * answered from indexes: `sessions(started_at)`, `sessions(id)`, the unique title index and
 * `messages(session_id, timestamp)`, so it stays fast with a million stored messages.
 */

import { collapse, contentText, type Row, rowToSession } from "./codec.js";
import type { StoreContext } from "./context.js";
import { lineageOf, numberedPattern } from "./titles.js";
import {
  type SessionFilter,
  type SessionRecord,
  type SessionSource,
  SessionStoreError,
  type SessionSummary,
} from "./types.js";

const PREVIEW_CHARS = 80;

export function sessionRow(ctx: StoreContext, id: string): Row | undefined {
  return ctx.get("SELECT * FROM sessions WHERE id = ?", id);
}

export function requireSession(ctx: StoreContext, id: string): SessionRecord {
  const row = sessionRow(ctx, id);
  if (!row) throw notFound(id);
  return rowToSession(row);
}

/**
 * Throws `not_found` unless session `id` exists; for writers that only need to know that (one
 * indexed lookup, no row decoded: it runs for every message written).
 */
export function assertSession(ctx: StoreContext, id: string): void {
  if (ctx.stmt("SELECT 1 FROM sessions WHERE id = ?").pluck().get(id) === undefined) throw notFound(id);
}

export function notFound(id: string): SessionStoreError {
  return new SessionStoreError("not_found", `No session with id "${id}". Try \`hermes sessions list\`.`);
}

/** Timestamp of the newest message, or null when the session has none. */
export function lastMessageAt(ctx: StoreContext, id: string): number | null {
  const row = ctx.get("SELECT MAX(timestamp) AS t FROM messages WHERE session_id = ?", id);
  const t = row?.["t"];
  return t === null || t === undefined ? null : Number(t);
}

export function preview(ctx: StoreContext, id: string): string {
  const row = ctx.get(
    `SELECT content FROM messages m WHERE m.session_id = ? AND m.role = 'user' AND ${ctx.visibleMessage("m")}
     ORDER BY m.timestamp, m.id LIMIT 1`,
    id,
  );
  return row ? collapse(contentText(row["content"]), PREVIEW_CHARS) : "";
}

export function summarize(ctx: StoreContext, row: Row): SessionSummary {
  const session = rowToSession(row);
  const last = lastMessageAt(ctx, session.id);
  return { ...session, preview: preview(ctx, session.id), lastActiveAt: last ?? session.startedAt };
}

export function listSessions(ctx: StoreContext, filter: SessionFilter = {}): SessionSummary[] {
  const where: string[] = [];
  const params: unknown[] = [];
  if (filter.source !== undefined) {
    // `+` keeps SQLite walking the started_at index (stopping at the page) instead of sorting
    // every session of the source.
    where.push("+s.source = ?");
    params.push(filter.source);
  }
  if (filter.excludeSources && filter.excludeSources.length > 0) {
    where.push(`+s.source NOT IN (${filter.excludeSources.map(() => "?").join(", ")})`);
    params.push(...filter.excludeSources);
  }
  if (filter.parentSessionId !== undefined) {
    where.push("s.parent_session_id = ?");
    params.push(filter.parentSessionId);
  }
  if (filter.model !== undefined) {
    where.push("+s.model = ?");
    params.push(filter.model);
  }
  if (filter.startedAfter !== undefined) {
    where.push("s.started_at >= ?");
    params.push(filter.startedAfter);
  }
  if (filter.startedBefore !== undefined) {
    where.push("s.started_at < ?");
    params.push(filter.startedBefore);
  }
  if (!filter.includeArchived) where.push(`${ctx.s("archived", "0")} = 0`);
  const limit = Math.max(0, Math.floor(filter.limit ?? 20));
  const offset = Math.max(0, Math.floor(filter.offset ?? 0));
  return ctx.read(() =>
    ctx
      .all(
        `SELECT s.* FROM sessions s ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
         ORDER BY s.started_at DESC LIMIT ? OFFSET ?`,
        ...params,
        limit,
        offset,
      )
      .map((row) => summarize(ctx, row)),
  );
}

/**
 * Candidate sessions for "most recently active": the sessions of the newest stored messages and the
 * newest started sessions. Activity is then computed per candidate from the message index.
 */
function activeCandidates(ctx: StoreContext, source: SessionSource | undefined, extra: number): Row[] {
  const archived = `${ctx.s("archived", "0")} = 0`;
  const bySource = source === undefined ? "" : " AND s.source = ?";
  const params = source === undefined ? [] : [source];
  // Newest messages first (rowid order; CROSS JOIN keeps that loop outermost so it stops at the
  // limit instead of sorting every message of the matching sessions), then their sessions.
  const fromMessages = ctx.all(
    `SELECT m.session_id AS id FROM messages m CROSS JOIN sessions s ON s.id = m.session_id
     WHERE ${archived}${bySource} ORDER BY m.id DESC LIMIT ?`,
    ...params,
    500 + extra * 20,
  );
  const fromStarts = ctx.all(
    `SELECT s.id FROM sessions s WHERE ${archived}${bySource} ORDER BY s.started_at DESC LIMIT ?`,
    ...params,
    extra + 20,
  );
  const ids = new Set([...fromMessages, ...fromStarts].map((r) => String(r["id"])));
  return [...ids].map((id) => sessionRow(ctx, id)).filter((r): r is Row => r !== undefined);
}

/** The newest sessions by last activity, with previews, leaving out empty and archived ones. */
export function recentSessions(ctx: StoreContext, limit = 10, excludeSessionId?: string): SessionSummary[] {
  const n = Math.max(0, Math.floor(limit));
  return ctx.read(() => {
    const out: SessionSummary[] = [];
    for (const row of activeCandidates(ctx, undefined, n)) {
      const id = String(row["id"]);
      if (id === excludeSessionId) continue;
      const last = lastMessageAt(ctx, id);
      if (last === null) continue;
      out.push({ ...rowToSession(row), preview: "", lastActiveAt: last });
    }
    out.sort((a, b) => b.lastActiveAt - a.lastActiveAt || b.startedAt - a.startedAt);
    return out.slice(0, n).map((s) => ({ ...s, preview: preview(ctx, s.id) }));
  });
}

function lineageRows(ctx: StoreContext, base: string): Row[] {
  if (!ctx.shape.sessionColumns.has("title")) return [];
  return ctx.all(
    "SELECT * FROM sessions WHERE title = ? OR title LIKE ? ESCAPE '\\'",
    base,
    numberedPattern(base),
  );
}

function mostRecentlyActive(ctx: StoreContext, rows: Row[]): SessionRecord | null {
  let best: { row: Row; at: number } | null = null;
  for (const row of rows) {
    const at = lastMessageAt(ctx, String(row["id"])) ?? Number(row["started_at"]);
    if (!best || at > best.at) best = { row, at };
  }
  return best ? rowToSession(best.row) : null;
}

export function latestSession(
  ctx: StoreContext,
  filter: { source?: SessionSource; title?: string } = {},
): SessionRecord | null {
  return ctx.read(() => {
    if (filter.title !== undefined) {
      const rows = lineageRows(ctx, lineageOf(filter.title.trim()).base).filter(
        (r) => filter.source === undefined || r["source"] === filter.source,
      );
      return mostRecentlyActive(ctx, rows);
    }
    return mostRecentlyActive(ctx, activeCandidates(ctx, filter.source, 1));
  });
}

function newestStarted(rows: Row[]): Row | undefined {
  return [...rows].sort((a, b) => Number(b["started_at"]) - Number(a["started_at"]))[0];
}

/**
 * Resolution order: exact id; exact title (a base title with numbered continuations resolves to
 * the newest of the lineage, as the interface promises); unique id prefix of at least four
 * characters; a lineage base nobody holds any more ("work" when only "work #2" is left).
 */
export function resolveSession(ctx: StoreContext, ref: string): SessionRecord {
  const wanted = ref.trim();
  if (!wanted) throw new SessionStoreError("invalid", "A session id or title is needed.");
  return ctx.read(() => {
    const byId = sessionRow(ctx, wanted);
    if (byId) return rowToSession(byId);
    const hasTitles = ctx.shape.sessionColumns.has("title");
    const exact = hasTitles ? ctx.get("SELECT * FROM sessions WHERE title = ?", wanted) : undefined;
    if (exact) {
      if (lineageOf(wanted).base !== wanted) return rowToSession(exact);
      return rowToSession(newestStarted(lineageRows(ctx, wanted)) ?? exact);
    }
    if ([...wanted].length >= 4) {
      const prefixed = ctx.all(
        "SELECT id FROM sessions WHERE id >= ? AND id < ? ORDER BY id LIMIT 6",
        wanted,
        `${wanted}\uffff`,
      );
      if (prefixed.length === 1) return requireSession(ctx, String(prefixed[0]!["id"]));
      if (prefixed.length > 1) {
        const ids = prefixed.slice(0, 5).map((r) => String(r["id"]));
        throw new SessionStoreError(
          "ambiguous",
          `"${wanted}" matches several sessions: ${ids.join(", ")}${prefixed.length > 5 ? ", …" : ""}. Give more of the id.`,
        );
      }
    }
    const lineage = hasTitles ? newestStarted(lineageRows(ctx, lineageOf(wanted).base)) : undefined;
    if (lineage && lineageOf(wanted).base === wanted) return rowToSession(lineage);
    throw new SessionStoreError(
      "not_found",
      `No session matches "${wanted}" (by id, id prefix or title). Try \`hermes sessions list\`.`,
    );
  });
}
