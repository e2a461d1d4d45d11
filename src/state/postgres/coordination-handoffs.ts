/**
 * `HandoffLedger` over PostgreSQL: a row per forwarded chat message. The receiver's `take` and the
 * sender's `withdraw` are each one conditional UPDATE of the same row from `sent`, so the row lock
 * lets exactly one of them win however late a receipt or a read-back NOTIFY is. Rows are kept a
 * day (a forwarded message is settled within seconds).
 */
import type { HandoffLedger } from "../coordination.js";
import type { PgQueryable } from "./database.js";

export function pgHandoffs(db: PgQueryable, instanceId: string): HandoffLedger {
  return {
    async offer(id, to) {
      await db.query(
        `INSERT INTO coord_handoffs (id, sender, receiver) VALUES ($1, $2, $3)
         ON CONFLICT (id) DO NOTHING`,
        [id, instanceId, to],
      );
    },
    async take(id) {
      const rows = await db.query<{ state: string; receiver: string; took: boolean }>(
        `WITH took AS (
           UPDATE coord_handoffs SET state = 'taken'
           WHERE id = $1 AND receiver = $2 AND state = 'sent' RETURNING id
         )
         SELECT h.state, h.receiver, EXISTS (SELECT 1 FROM took) AS took
         FROM coord_handoffs h WHERE h.id = $1`,
        [id, instanceId],
      );
      const row = rows[0];
      if (!row || row.receiver !== instanceId) return "withdrawn";
      if (row.took) return "taken";
      return row.state === "taken" ? "again" : "withdrawn";
    },
    async withdraw(id) {
      const rows = await db.query(
        `UPDATE coord_handoffs SET state = 'withdrawn'
         WHERE id = $1 AND sender = $2 AND state = 'sent' RETURNING id`,
        [id, instanceId],
      );
      if (rows.length === 1) return true;
      const left = await db.query("SELECT 1 FROM coord_handoffs WHERE id = $1", [id]);
      // Never recorded (the offer failed): nobody can have taken it.
      return left.length === 0;
    },
  };
}

/** Forgets settled handoffs older than a day (the coordinator's periodic prune). */
export async function pruneHandoffs(db: PgQueryable): Promise<void> {
  await db.query("DELETE FROM coord_handoffs WHERE created_at < clock_timestamp() - interval '1 day'");
}
