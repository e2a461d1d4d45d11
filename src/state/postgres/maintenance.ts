/**
 * Pruning over PostgreSQL with SQLite's rules (maintenance.ts): ended sessions whose start, end
 * and newest message are older than the cutoff; children of a pruned session keep living with
 * `parent_session_id` cleared; `autoPrune` runs at most once per interval across every instance
 * (the `last_auto_prune` marker in `state_meta`, claimed in the same statement that checks it).
 */
import { type SessionSource, SessionStoreError, type SessionSummary } from "../types.js";
import type { PgQueryable } from "./database.js";
import { summaries } from "./sessions-read.js";

const AUTO_PRUNE_MARKER = "last_auto_prune";

function cutoffOf(olderThanDays: number, now: number): number {
  if (!Number.isFinite(olderThanDays) || olderThanDays < 0) {
    throw new SessionStoreError(
      "invalid",
      `olderThanDays must be a number of days, 0 or more; got ${olderThanDays}.`,
    );
  }
  return now - olderThanDays * 86_400;
}

function candidates(options: { olderThanDays: number; source?: SessionSource }, now: number) {
  const params: unknown[] = [cutoffOf(options.olderThanDays, now)];
  if (options.source !== undefined) params.push(options.source);
  const where = `WHERE s.ended_at IS NOT NULL AND s.ended_at < $1 AND s.started_at < $1${
    options.source !== undefined ? " AND s.source = $2" : ""
  } AND COALESCE((SELECT max(lm.timestamp) FROM messages lm WHERE lm.session_id = s.id), 0) < $1`;
  return { where, params };
}

export async function pgPrunable(
  db: PgQueryable,
  options: { olderThanDays: number; source?: SessionSource },
  now: number,
): Promise<SessionSummary[]> {
  const { where, params } = candidates(options, now);
  return summaries(db, where, params, "s.started_at, s.id");
}

export async function pgPrune(
  db: PgQueryable,
  options: { olderThanDays: number; source?: SessionSource },
  now: number,
): Promise<{ sessions: number; messages: number }> {
  const { where, params } = candidates(options, now);
  const rows = await db.query<{ sessions: string; messages: string }>(
    `WITH doomed AS (SELECT s.id FROM sessions s ${where} FOR UPDATE),
       orphans AS (UPDATE sessions SET parent_session_id = NULL
         WHERE parent_session_id IN (SELECT id FROM doomed) AND id NOT IN (SELECT id FROM doomed) RETURNING 1),
       gone_messages AS (DELETE FROM messages WHERE session_id IN (SELECT id FROM doomed) RETURNING 1),
       gone_locks AS (DELETE FROM compression_locks WHERE session_id IN (SELECT id FROM doomed) RETURNING 1),
       gone AS (DELETE FROM sessions WHERE id IN (SELECT id FROM doomed) RETURNING 1)
     SELECT (SELECT count(*) FROM gone) AS sessions, (SELECT count(*) FROM gone_messages) AS messages`,
    params,
  );
  return { sessions: Number(rows[0]?.sessions ?? 0), messages: Number(rows[0]?.messages ?? 0) };
}

export async function pgAutoPrune(
  db: PgQueryable,
  options: { retentionDays: number; minIntervalHours: number; vacuum: boolean },
  now: number,
): Promise<{ skipped: boolean; sessions: number; vacuumed: boolean }> {
  const claimed = await db.query(
    `INSERT INTO state_meta (key, value) VALUES ($1, $2)
     ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value
       WHERE state_meta.value IS NULL OR state_meta.value !~ '^[0-9.eE+-]+$'
          OR state_meta.value::float8 <= $3::float8
     RETURNING key`,
    [AUTO_PRUNE_MARKER, String(now), now - options.minIntervalHours * 3600],
  );
  if (claimed.length === 0) return { skipped: true, sessions: 0, vacuumed: false };
  const { sessions } = await pgPrune(db, { olderThanDays: options.retentionDays }, now);
  const vacuumed = sessions > 0 && options.vacuum;
  if (vacuumed) await db.query("VACUUM (ANALYZE) sessions, messages");
  return { skipped: false, sessions, vacuumed };
}
