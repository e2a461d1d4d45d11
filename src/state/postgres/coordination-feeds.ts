/**
 * `FeedLedger` over PostgreSQL: a single-consumer update feed's position and the ids already taken,
 * shared by every instance (Telegram's getUpdates under the `telegram:<bot>` lease, signal-cli's
 * events, an IMAP inbox). Telegram forgets an update once a later getUpdates confirms it with its
 * offset; a poller that died after fetching a batch and before its next request never confirmed
 * it, so the next holder would be given the same updates again. Here the position advances with
 * every batch taken, and the ids are inserted with `ON CONFLICT DO NOTHING`, so of two instances
 * taking the same update exactly one gets it back to hand on. Taken ids are kept two days
 * (Telegram keeps updates for one).
 *
 * At least once across a hand-over (migration 555): an id taken with a payload stays undone until
 * the gateway is done with it. `reclaim` moves undone rows whose taker's heartbeat is stale (or
 * that their taker released) to the caller with one conditional `UPDATE` over rows locked with
 * `FOR UPDATE SKIP LOCKED`, so two instances reclaiming at once never both get a row.
 */
import type { FeedLedger, ReclaimedUpdate } from "../coordination.js";
import type { PgQueryable } from "./database.js";

/** How long taken ids are remembered. */
export const FEED_SEEN_KEEP = "2 days";
/** An undone update is handed on again only this long after it was first taken. */
export const FEED_REDELIVER_WITHIN = "1 day";
/** Hand-ons of one update at most (the first included): one that kills every taker stops here. */
export const FEED_MAX_ATTEMPTS = 3;
/** Updates reclaimed by one call at most. */
const RECLAIM_BATCH = 100;
/** `taken_by` of a released row: no instance has this id, so it counts as a dead taker's. */
const RELEASED = "";

export interface PgFeedLedgerOptions {
  /** An instance not seen for this long is dead (the coordinator's `instanceTtlMs`; default 8 000). */
  instanceTtlMs?: number;
}

const integers = (name: string, values: readonly number[]) => {
  if (values.some((id) => !Number.isSafeInteger(id))) {
    throw new Error(`feed ${name}: update ids must be integers, got ${JSON.stringify(values)}`);
  }
};

export function pgFeedLedger(
  db: PgQueryable,
  name: string,
  instanceId: string,
  options: PgFeedLedgerOptions = {},
): FeedLedger {
  const instanceTtlMs = options.instanceTtlMs ?? 8_000;
  return {
    async resumeAt() {
      const rows = await db.query<{ next_offset: string }>(
        "SELECT next_offset::text AS next_offset FROM coord_feed_offsets WHERE name = $1",
        [name],
      );
      return rows[0] ? Number(rows[0].next_offset) : undefined;
    },
    async take(ids, next, payloads) {
      integers(name, next === undefined ? ids : [...ids, next]);
      const kept = ids.map((id) => {
        const payload = payloads?.get(id);
        return payload === undefined ? null : JSON.stringify(payload);
      });
      const insert = `INSERT INTO coord_feed_seen (name, update_id, taken_by, payload, done_at)
         SELECT $1, t.id, $4, t.payload::jsonb, CASE WHEN t.payload IS NULL THEN clock_timestamp() END
         FROM unnest($2::bigint[], $3::text[]) AS t(id, payload)
         ON CONFLICT (name, update_id) DO NOTHING
         RETURNING update_id::text AS update_id`;
      const rows = await db.query<{ update_id: string }>(
        next === undefined
          ? insert
          : `WITH position AS (
               INSERT INTO coord_feed_offsets (name, next_offset) VALUES ($1, $5)
               ON CONFLICT (name) DO UPDATE
                 SET next_offset = GREATEST(coord_feed_offsets.next_offset, EXCLUDED.next_offset),
                     updated_at = clock_timestamp()
             )
             ${insert}`,
        next === undefined ? [name, [...ids], kept, instanceId] : [name, [...ids], kept, instanceId, next],
      );
      const fresh = new Set(rows.map((r) => Number(r.update_id)));
      return ids.filter((id) => fresh.has(id));
    },
    async done(ids) {
      if (ids.length === 0) return;
      integers(name, ids);
      await db.query(
        `UPDATE coord_feed_seen SET done_at = clock_timestamp()
         WHERE name = $1 AND update_id = ANY($2::bigint[]) AND done_at IS NULL`,
        [name, [...ids]],
      );
    },
    async release(ids) {
      if (ids.length === 0) return;
      integers(name, ids);
      await db.query(
        `UPDATE coord_feed_seen SET taken_by = $3
         WHERE name = $1 AND update_id = ANY($2::bigint[]) AND done_at IS NULL AND taken_by = $4`,
        [name, [...ids], RELEASED, instanceId],
      );
    },
    async reclaim(): Promise<ReclaimedUpdate[]> {
      const rows = await db.query<{ update_id: string; payload: unknown; taken_at: Date; attempts: number }>(
        `UPDATE coord_feed_seen s SET taken_by = $2, attempts = s.attempts + 1
         FROM (
           SELECT f.update_id FROM coord_feed_seen f
           WHERE f.name = $1 AND f.done_at IS NULL AND f.taken_by <> $2
             AND f.attempts < $4
             AND f.taken_at > clock_timestamp() - interval '${FEED_REDELIVER_WITHIN}'
             AND NOT EXISTS (SELECT 1 FROM coord_instances i WHERE i.id = f.taken_by
               AND i.last_seen_at > clock_timestamp() - ($3::double precision * interval '1 millisecond'))
           ORDER BY f.update_id
           LIMIT ${RECLAIM_BATCH}
           FOR UPDATE SKIP LOCKED
         ) c
         WHERE s.name = $1 AND s.update_id = c.update_id
         RETURNING s.update_id::text AS update_id, s.payload, s.taken_at, s.attempts`,
        [name, instanceId, instanceTtlMs, FEED_MAX_ATTEMPTS],
      );
      return rows
        .map((r) => ({
          id: Number(r.update_id),
          payload: r.payload,
          takenAt: new Date(r.taken_at),
          attempts: Number(r.attempts),
        }))
        .sort((a, b) => a.id - b.id);
    },
  };
}

/** Forgets taken ids older than `FEED_SEEN_KEEP` (the coordinator's periodic prune). */
export async function pruneFeeds(db: PgQueryable): Promise<void> {
  await db.query(
    `DELETE FROM coord_feed_seen WHERE taken_at < clock_timestamp() - interval '${FEED_SEEN_KEEP}'`,
  );
}
