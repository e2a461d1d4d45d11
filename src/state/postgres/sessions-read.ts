/**
 * Reading sessions from PostgreSQL: single rows, listings with previews, the most recently active
 * session, resolving what a person typed, messages in order and the window around one. The
 * semantics are SQLite's (listing.ts): same filters, same resolution order, same previews. A
 * listing page is one statement (the newest message time and the preview are subqueries per row,
 * answered from the `(session_id, timestamp)` index), not a query per session.
 */
import { collapse, contentText, type Row, rowToSession, rowToStoredMessage } from "../codec.js";
import { lineageOf, numberedPattern } from "../titles.js";
import {
  type SessionFilter,
  type SessionRecord,
  type SessionSource,
  SessionStoreError,
  type SessionSummary,
  type StoredMessage,
} from "../types.js";
import type { PgQueryable } from "./database.js";
import { notFound, one, prefixPattern, run } from "./sessions-sql.js";

const PREVIEW_CHARS = 80;
/** Rows the conversation replays. */
export const ACTIVE = "m.active = 1";
/** Rows visible in the conversation and in search: active, or archived by compression. */
export const VISIBLE = "(m.active = 1 OR m.compacted = 1)";

/** `last_at` and `preview_content` for the session row aliased `s`. */
const SUMMARY_COLUMNS = `(SELECT max(lm.timestamp) FROM messages lm WHERE lm.session_id = s.id) AS last_at,
  (SELECT m.content FROM messages m WHERE m.session_id = s.id AND m.role = 'user' AND ${VISIBLE}
   ORDER BY m.timestamp, m.id LIMIT 1) AS preview_content`;

export async function sessionRow(q: PgQueryable, id: string, lock = ""): Promise<Row | undefined> {
  return one(q, `SELECT * FROM sessions WHERE id = $1 ${lock}`, [id]);
}

export async function requireSession(q: PgQueryable, id: string, lock = ""): Promise<SessionRecord> {
  const row = await sessionRow(q, id, lock);
  if (!row) throw notFound(id);
  return rowToSession(row);
}

function toSummary(row: Row): SessionSummary {
  const session = rowToSession(row);
  const last = row["last_at"];
  const content = row["preview_content"];
  return {
    ...session,
    preview: content === null || content === undefined ? "" : collapse(contentText(content), PREVIEW_CHARS),
    lastActiveAt: last === null || last === undefined ? session.startedAt : Number(last),
  };
}

/** Summaries of the sessions matching `where` (SQL over `s`, parameters `params`), in `order`. */
/**
 * Summaries of the sessions matching `where` (SQL over `s`, parameters `params`) in `order`, cut by
 * `limit` (SQL). The page is chosen first, so previews are computed for its rows only, not for
 * the rows an OFFSET skips.
 */
export async function summaries(
  q: PgQueryable,
  where: string,
  params: readonly unknown[],
  order: string,
  limit = "",
): Promise<SessionSummary[]> {
  const rows = await run(
    q,
    `SELECT s.*, ${SUMMARY_COLUMNS} FROM (SELECT s.* FROM sessions s ${where} ORDER BY ${order} ${limit}) s ORDER BY ${order}`,
    params,
  );
  return rows.map(toSummary);
}

export async function listSessions(q: PgQueryable, filter: SessionFilter = {}): Promise<SessionSummary[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (sql: (n: string) => string, value: unknown) => {
    params.push(value);
    where.push(sql(`$${params.length}`));
  };
  if (filter.source !== undefined) add((p) => `s.source = ${p}`, filter.source);
  if (filter.excludeSources && filter.excludeSources.length > 0)
    add((p) => `NOT (s.source = ANY(${p}::text[]))`, [...filter.excludeSources]);
  if (filter.parentSessionId !== undefined) add((p) => `s.parent_session_id = ${p}`, filter.parentSessionId);
  if (filter.model !== undefined) add((p) => `s.model = ${p}`, filter.model);
  if (filter.startedAfter !== undefined) add((p) => `s.started_at >= ${p}`, filter.startedAfter);
  if (filter.startedBefore !== undefined) add((p) => `s.started_at < ${p}`, filter.startedBefore);
  if (!filter.includeArchived) where.push("s.archived = 0");
  const limit = Math.max(0, Math.floor(filter.limit ?? 20));
  const offset = Math.max(0, Math.floor(filter.offset ?? 0));
  params.push(limit, offset);
  // Ties on started_at in creation order, as SQLite's index walk gives them.
  return summaries(
    q,
    where.length ? `WHERE ${where.join(" AND ")}` : "",
    params,
    "s.started_at DESC, s.created_seq ASC",
    `LIMIT $${params.length - 1} OFFSET $${params.length}`,
  );
}

/**
 * Candidate sessions for "most recently active" (as SQLite's listing.ts picks them): the sessions
 * of the newest stored messages and the newest started sessions, with their newest message time.
 */
async function activeCandidates(
  q: PgQueryable,
  source: SessionSource | undefined,
  extra: number,
): Promise<Row[]> {
  const bySource = source === undefined ? "" : " AND s.source = $3";
  const params: unknown[] = [500 + extra * 20, extra + 20];
  if (source !== undefined) params.push(source);
  return run(
    q,
    `WITH c AS (
       (SELECT m.session_id AS id FROM messages m JOIN sessions s ON s.id = m.session_id
        WHERE s.archived = 0${bySource} ORDER BY m.id DESC LIMIT $1)
       UNION
       (SELECT s.id FROM sessions s WHERE s.archived = 0${bySource} ORDER BY s.started_at DESC LIMIT $2))
     SELECT s.*, (SELECT max(lm.timestamp) FROM messages lm WHERE lm.session_id = s.id) AS last_at
     FROM sessions s WHERE s.id = ANY(ARRAY(SELECT id FROM c)) ORDER BY s.started_at DESC, s.created_seq ASC`,
    params,
  );
}

/** The first user message of each session, for previews. */
async function previews(q: PgQueryable, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await run(
    q,
    `SELECT DISTINCT ON (m.session_id) m.session_id, m.content FROM messages m
     WHERE m.session_id = ANY($1::text[]) AND m.role = 'user' AND ${VISIBLE}
     ORDER BY m.session_id, m.timestamp, m.id`,
    [[...ids]],
  );
  return new Map(
    rows.map((r) => [String(r["session_id"]), collapse(contentText(r["content"]), PREVIEW_CHARS)]),
  );
}

export async function recentSessions(
  q: PgQueryable,
  limit = 10,
  excludeSessionId?: string,
): Promise<SessionSummary[]> {
  const n = Math.max(0, Math.floor(limit));
  const out: SessionSummary[] = [];
  for (const row of await activeCandidates(q, undefined, n)) {
    const id = String(row["id"]);
    if (id === excludeSessionId || row["last_at"] === null || row["last_at"] === undefined) continue;
    out.push({ ...rowToSession(row), preview: "", lastActiveAt: Number(row["last_at"]) });
  }
  out.sort((a, b) => b.lastActiveAt - a.lastActiveAt || b.startedAt - a.startedAt);
  const top = out.slice(0, n);
  const texts = await previews(
    q,
    top.map((s) => s.id),
  );
  return top.map((s) => ({ ...s, preview: texts.get(s.id) ?? "" }));
}

async function lineageRows(q: PgQueryable, base: string, withLast = false): Promise<Row[]> {
  const last = withLast
    ? ", (SELECT max(lm.timestamp) FROM messages lm WHERE lm.session_id = s.id) AS last_at"
    : "";
  return run(
    q,
    `SELECT s.*${last} FROM sessions s WHERE s.title = $1 OR s.title LIKE $2 ESCAPE '\\'
     ORDER BY s.started_at DESC, s.created_seq ASC`,
    [base, numberedPattern(base)],
  );
}

function mostRecentlyActive(rows: Row[]): SessionRecord | null {
  let best: { row: Row; at: number } | null = null;
  for (const row of rows) {
    const last = row["last_at"];
    const at = last === null || last === undefined ? Number(row["started_at"]) : Number(last);
    if (!best || at > best.at) best = { row, at };
  }
  return best ? rowToSession(best.row) : null;
}

export async function latestSession(
  q: PgQueryable,
  filter: { source?: SessionSource; title?: string } = {},
): Promise<SessionRecord | null> {
  if (filter.title !== undefined) {
    const rows = (await lineageRows(q, lineageOf(filter.title.trim()).base, true)).filter(
      (r) => filter.source === undefined || r["source"] === filter.source,
    );
    return mostRecentlyActive(rows);
  }
  return mostRecentlyActive(await activeCandidates(q, filter.source, 1));
}

/**
 * Resolution order (as SQLite): exact id; exact title (a base title with numbered continuations
 * resolves to the newest of the lineage); unique id prefix of at least four characters; a lineage
 * base nobody holds any more.
 */
export async function resolveSession(q: PgQueryable, ref: string): Promise<SessionRecord> {
  const wanted = ref.trim();
  if (!wanted) throw new SessionStoreError("invalid", "A session id or title is needed.");
  const byId = await sessionRow(q, wanted);
  if (byId) return rowToSession(byId);
  const exact = await one(q, "SELECT * FROM sessions WHERE title = $1", [wanted]);
  if (exact) {
    if (lineageOf(wanted).base !== wanted) return rowToSession(exact);
    return rowToSession((await lineageRows(q, wanted))[0] ?? exact);
  }
  if ([...wanted].length >= 4) {
    const prefixed = await run(
      q,
      `SELECT id FROM sessions WHERE id LIKE $1 ESCAPE '\\' ORDER BY id COLLATE "C" LIMIT 6`,
      [prefixPattern(wanted)],
    );
    if (prefixed.length === 1) return requireSession(q, String(prefixed[0]!["id"]));
    if (prefixed.length > 1) {
      const ids = prefixed.slice(0, 5).map((r) => String(r["id"]));
      throw new SessionStoreError(
        "ambiguous",
        `"${wanted}" matches several sessions: ${ids.join(", ")}${prefixed.length > 5 ? ", …" : ""}. Give more of the id.`,
      );
    }
  }
  const lineage = (await lineageRows(q, lineageOf(wanted).base))[0];
  if (lineage && lineageOf(wanted).base === wanted) return rowToSession(lineage);
  throw new SessionStoreError(
    "not_found",
    `No session matches "${wanted}" (by id, id prefix or title). Try \`hermes sessions list\`.`,
  );
}

function storedMessages(rows: Row[]): StoredMessage[] {
  return rows.map(rowToStoredMessage).filter((m): m is StoredMessage => m !== null);
}

export async function getMessages(
  q: PgQueryable,
  sessionId: string,
  includeInactive: boolean,
): Promise<StoredMessage[]> {
  const rows = await run(
    q,
    `SELECT * FROM messages m WHERE m.session_id = $1${includeInactive ? "" : ` AND ${ACTIVE}`}
     ORDER BY m.timestamp, m.id`,
    [sessionId],
  );
  if (rows.length === 0) await requireSession(q, sessionId);
  return storedMessages(rows);
}

export async function around(
  q: PgQueryable,
  sessionId: string,
  messageId: number,
  window: number,
): Promise<StoredMessage[]> {
  const w = Math.max(0, Math.floor(window));
  await requireSession(q, sessionId);
  const anchor = Number.isSafeInteger(messageId)
    ? await one(q, "SELECT * FROM messages WHERE id = $1 AND session_id = $2", [messageId, sessionId])
    : undefined;
  if (!anchor) throw new SessionStoreError("not_found", `Session ${sessionId} has no message ${messageId}.`);
  const side = (cmp: "<" | ">", dir: "ASC" | "DESC") =>
    run(
      q,
      `SELECT * FROM messages m WHERE m.session_id = $1 AND ${ACTIVE} AND (m.timestamp, m.id) ${cmp} ($2::float8, $3::bigint)
       ORDER BY m.timestamp ${dir}, m.id ${dir} LIMIT $4`,
      [sessionId, anchor["timestamp"], messageId, w],
    );
  const [before, after] = await Promise.all([side("<", "DESC"), side(">", "ASC")]);
  return storedMessages([...before.reverse(), anchor, ...after]);
}
