/**
 * Pruning for PostgreSQL, with the SQLite store's rules (maintenance.ts): a session is prunable
 * when it has ended, and its start, its end and its newest message are all older than the cutoff;
 * a session never ended is kept however old it is. Children of a pruned session keep living with
 * `parent_session_id` cleared.
 *
 * Several instances share the database, so:
 * - `pgPrune` locks the candidate sessions (`FOR UPDATE`, in id order so two pruners cannot
 *   deadlock) and then checks their newest message again: a message appended meanwhile keeps its
 *   session (an append holds a key-share lock on the session row, so it waits for the prune or
 *   the prune waits for it).
 * - `pgAutoPrune` claims the run under a transaction-scoped advisory lock and the
 *   `state_meta.last_auto_prune` marker: of instances starting together, one prunes and the
 *   others see the fresh marker and skip.
 */
import { collapse, contentText, rowToSession } from "../codec.js";
import { SessionStoreError, type SessionSummary } from "../types.js";
import type { PgDatabase, PgQueryable } from "./database.js";

export interface PruneOptions {
  olderThanDays: number;
  source?: string;
}

const AUTO_PRUNE_MARKER = "last_auto_prune";
/** The advisory-lock key auto-prune claims under (an arbitrary constant, "HERMPRUN" in ASCII). */
export const AUTO_PRUNE_LOCK = 0x4845524d5052554en;
const PREVIEW_CHARS = 80;

function cutoffOf(options: PruneOptions, now: number): number {
  const days = options.olderThanDays;
  if (!Number.isFinite(days) || days < 0) {
    throw new SessionStoreError("invalid", `olderThanDays must be a number of days, 0 or more; got ${days}.`);
  }
  return now - days * 86_400;
}

/** The session-row part of the rule, over `$1` (cutoff) and optionally `$2` (source). */
function sessionRule(options: PruneOptions): string {
  return `s.ended_at IS NOT NULL AND s.ended_at < $1 AND s.started_at < $1${options.source !== undefined ? " AND s.source = $2" : ""}`;
}

const LAST_MESSAGE = "(SELECT MAX(x.timestamp) FROM messages x WHERE x.session_id = s.id)";

/** `SessionStore.prunable` for PostgreSQL: what `pgPrune` would delete, oldest first, as summaries. */
export async function pgPrunable(
  db: PgQueryable,
  options: PruneOptions,
  now: number,
): Promise<SessionSummary[]> {
  const cutoff = cutoffOf(options, now);
  const rows = await db.query(
    `SELECT s.*, lm.t AS hermes_last_at, pv.content AS hermes_preview
     FROM sessions s
     CROSS JOIN LATERAL (SELECT ${LAST_MESSAGE} AS t) lm
     LEFT JOIN LATERAL (
       SELECT m.content FROM messages m
       WHERE m.session_id = s.id AND m.role = 'user' AND (m.active = 1 OR m.compacted = 1)
       ORDER BY m.timestamp, m.id LIMIT 1
     ) pv ON true
     WHERE ${sessionRule(options)} AND COALESCE(lm.t, 0) < $1
     ORDER BY s.started_at, s.id COLLATE "C"`,
    [cutoff, ...(options.source !== undefined ? [options.source] : [])],
  );
  return rows.map((row) => {
    const session = rowToSession(row);
    const last = row["hermes_last_at"];
    return {
      ...session,
      preview:
        row["hermes_preview"] === null ? "" : collapse(contentText(row["hermes_preview"]), PREVIEW_CHARS),
      lastActiveAt: last === null || last === undefined ? session.startedAt : Number(last),
    };
  });
}

/**
 * Deletes sessions `ids` and their messages inside the caller's transaction; children of a
 * deleted session keep living with `parent_session_id` cleared.
 */
export async function pgDeleteSessions(
  q: PgQueryable,
  ids: readonly string[],
): Promise<{ sessions: number; messages: number }> {
  if (ids.length === 0) return { sessions: 0, messages: 0 };
  const list = [ids];
  await q.query(
    "UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = ANY($1::text[])",
    list,
  );
  const [m] = await q.query<{ n: string }>(
    "WITH d AS (DELETE FROM messages WHERE session_id = ANY($1::text[]) RETURNING 1) SELECT COUNT(*) AS n FROM d",
    list,
  );
  await q.query("DELETE FROM compression_locks WHERE session_id = ANY($1::text[])", list);
  const [s] = await q.query<{ n: string }>(
    "WITH d AS (DELETE FROM sessions WHERE id = ANY($1::text[]) RETURNING 1) SELECT COUNT(*) AS n FROM d",
    list,
  );
  return { sessions: Number(s?.n ?? 0), messages: Number(m?.n ?? 0) };
}

/** `SessionStore.prune` for PostgreSQL, in one transaction. */
export async function pgPrune(
  db: PgDatabase,
  options: PruneOptions,
  now: number,
): Promise<{ sessions: number; messages: number }> {
  const cutoff = cutoffOf(options, now);
  const params = [cutoff, ...(options.source !== undefined ? [options.source] : [])];
  return db.tx(async (q) => {
    const locked = await q.query<{ id: string }>(
      `SELECT s.id FROM sessions s WHERE ${sessionRule(options)} ORDER BY s.id COLLATE "C" FOR UPDATE`,
      params,
    );
    if (locked.length === 0) return { sessions: 0, messages: 0 };
    // A fresh snapshot now that the rows are ours: messages committed meanwhile count.
    const ids = await q.query<{ id: string }>(
      `SELECT s.id FROM sessions s WHERE s.id = ANY($${params.length + 1}::text[]) AND ${sessionRule(options)}
         AND COALESCE(${LAST_MESSAGE}, 0) < $1`,
      [...params, locked.map((r) => r.id)],
    );
    return pgDeleteSessions(
      q,
      ids.map((r) => r.id),
    );
  });
}

/**
 * `SessionStore.autoPrune` for PostgreSQL: prunes at most once per `minIntervalHours` across every
 * instance, then `VACUUM (ANALYZE)` the two tables when `vacuum` and something was pruned (a
 * role that may not vacuum them leaves that to autovacuum: `vacuumed` is then false).
 */
export async function pgAutoPrune(
  db: PgDatabase,
  options: { retentionDays: number; minIntervalHours: number; vacuum: boolean },
  now: number,
): Promise<{ skipped: boolean; sessions: number; vacuumed: boolean }> {
  const claimed = await db.tx(async (q) => {
    await q.query("SELECT pg_advisory_xact_lock($1)", [AUTO_PRUNE_LOCK.toString()]);
    const [row] = await q.query<{ value: string | null }>("SELECT value FROM state_meta WHERE key = $1", [
      AUTO_PRUNE_MARKER,
    ]);
    const last = Number(row?.value ?? Number.NaN);
    if (Number.isFinite(last) && now - last < options.minIntervalHours * 3600) return false;
    await q.query(
      "INSERT INTO state_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
      [AUTO_PRUNE_MARKER, String(now)],
    );
    return true;
  });
  if (!claimed) return { skipped: true, sessions: 0, vacuumed: false };
  const { sessions } = await pgPrune(db, { olderThanDays: options.retentionDays }, now);
  let vacuumed = false;
  if (sessions > 0 && options.vacuum) {
    vacuumed = await db.query("VACUUM (ANALYZE) messages, sessions").then(
      () => true,
      () => false,
    );
  }
  return { skipped: false, sessions, vacuumed };
}
