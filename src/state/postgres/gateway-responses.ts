/**
 * The API server's Responses store in PostgreSQL: stored responses (for `previous_response_id`)
 * and named conversations, shared by every instance, so a conversation started through one
 * instance continues through another. `data` is the JSON Python Hermes writes in
 * `response_store.db`, so `hermes state migrate` copies rows as they are.
 *
 * The least recently read or written responses past `capacity` are evicted, as in the file.
 * Recency is a database sequence (`access_seq`), one order for every instance; puts serialise on
 * one lock row so the count never overshoots the capacity.
 */
import {
  decodeStoredResponse,
  encodeStoredResponse,
  type ResponseRecords,
} from "../gateway/response-records.js";
import type { PgDatabase } from "./database.js";
import { keyDigest, storableText } from "./gateway-common.js";

export interface PgResponseOptions {
  /** Responses kept at most (default 100, as the API server keeps). */
  capacity?: number;
}

/** The Responses store of every instance sharing `db` (migration 300). */
export function pgResponseRecords(db: PgDatabase, options: PgResponseOptions = {}): ResponseRecords {
  const capacity = options.capacity ?? 100;
  if (!Number.isInteger(capacity) || capacity < 1) {
    throw new RangeError(
      `The Responses store's capacity must be a whole number of at least 1, got ${capacity}`,
    );
  }
  return {
    capacity,
    async get(id) {
      const rows = await db.query<{ data: string }>(
        `UPDATE gateway_responses SET accessed_at = $2, access_seq = nextval('gateway_responses_access')
          WHERE id_digest = $1 RETURNING data`,
        [keyDigest(id), Date.now() / 1000],
      );
      return rows[0] ? decodeStoredResponse(rows[0].data) : undefined;
    },
    async put(id, entry) {
      storableText("The response id", id);
      const data = encodeStoredResponse(entry);
      await db.tx(async (c) => {
        await c.query("SELECT only_row FROM gateway_response_capacity FOR UPDATE");
        await c.query(
          `INSERT INTO gateway_responses (id_digest, response_id, data, accessed_at) VALUES ($1, $2, $3, $4)
           ON CONFLICT (id_digest) DO UPDATE
             SET data = EXCLUDED.data, accessed_at = EXCLUDED.accessed_at,
                 access_seq = nextval('gateway_responses_access')`,
          [keyDigest(id), id, data, Date.now() / 1000],
        );
        await c.query(
          `DELETE FROM gateway_responses WHERE id_digest IN
             (SELECT id_digest FROM gateway_responses ORDER BY access_seq DESC OFFSET $1)`,
          [capacity],
        );
      });
    },
    async delete(id) {
      const rows = await db.query("DELETE FROM gateway_responses WHERE id_digest = $1 RETURNING 1 AS x", [
        keyDigest(id),
      ]);
      return rows.length > 0;
    },
    async conversation(name) {
      const rows = await db.query<{ response_id: string }>(
        "SELECT response_id FROM gateway_conversations WHERE name_digest = $1",
        [keyDigest(name)],
      );
      return rows[0]?.response_id;
    },
    async setConversation(name, responseId) {
      storableText("The conversation name", name);
      storableText("The response id", responseId);
      await db.query(
        `INSERT INTO gateway_conversations (name_digest, name, response_id) VALUES ($1, $2, $3)
         ON CONFLICT (name_digest) DO UPDATE SET response_id = EXCLUDED.response_id`,
        [keyDigest(name), name, responseId],
      );
    },
    async close() {
      // The pool belongs to the state backend, which closes it.
    },
  };
}
