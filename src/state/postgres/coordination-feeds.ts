/**
 * `FeedLedger` over PostgreSQL: a single-consumer update feed's position and the ids already taken,
 * shared by every instance (Telegram's getUpdates under the `telegram:<bot>` lease). Telegram
 * forgets an update once a later getUpdates confirms it with its offset; a poller that died after
 * fetching a batch and before its next request never confirmed it, so the next holder would be
 * given the same updates again. Here the position advances with every batch taken, and the ids are
 * inserted with `ON CONFLICT DO NOTHING`, so of two instances taking the same update exactly one
 * gets it back to hand on. Taken ids are kept two days (Telegram keeps updates for one).
 */
import type { FeedLedger } from "../coordination.js";
import type { PgQueryable } from "./database.js";

/** How long taken ids are remembered. */
export const FEED_SEEN_KEEP = "2 days";

export function pgFeedLedger(db: PgQueryable, name: string, instanceId: string): FeedLedger {
  return {
    async resumeAt() {
      const rows = await db.query<{ next_offset: string }>(
        "SELECT next_offset::text AS next_offset FROM coord_feed_offsets WHERE name = $1",
        [name],
      );
      return rows[0] ? Number(rows[0].next_offset) : undefined;
    },
    async take(ids, next) {
      if (ids.some((id) => !Number.isSafeInteger(id)) || !Number.isSafeInteger(next)) {
        throw new Error(`feed ${name}: update ids must be integers, got ${JSON.stringify([...ids, next])}`);
      }
      const rows = await db.query<{ update_id: string }>(
        `WITH position AS (
           INSERT INTO coord_feed_offsets (name, next_offset) VALUES ($1, $3)
           ON CONFLICT (name) DO UPDATE
             SET next_offset = GREATEST(coord_feed_offsets.next_offset, EXCLUDED.next_offset),
                 updated_at = clock_timestamp()
         )
         INSERT INTO coord_feed_seen (name, update_id, taken_by)
         SELECT $1, id, $4 FROM unnest($2::bigint[]) AS id
         ON CONFLICT (name, update_id) DO NOTHING
         RETURNING update_id::text AS update_id`,
        [name, [...ids], next, instanceId],
      );
      const fresh = new Set(rows.map((r) => Number(r.update_id)));
      return ids.filter((id) => fresh.has(id));
    },
  };
}

/** Forgets taken ids older than `FEED_SEEN_KEEP` (the coordinator's periodic prune). */
export async function pruneFeeds(db: PgQueryable): Promise<void> {
  await db.query(
    `DELETE FROM coord_feed_seen WHERE taken_at < clock_timestamp() - interval '${FEED_SEEN_KEEP}'`,
  );
}
