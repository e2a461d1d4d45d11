/**
 * The approvals "always allow" list in PostgreSQL: one row per entry, shared by every instance,
 * so an "always" answered through one instance approves on all of them. Adds and removals are
 * single statements (`ON CONFLICT DO NOTHING`, `DELETE … RETURNING`), safe under concurrency.
 */
import { type CommandAllowlist, checkAllowlistEntry } from "../gateway/command-allowlist.js";
import type { PgDatabase } from "./database.js";
import { keyDigest } from "./gateway-common.js";

/** The "always allow" list of every instance sharing `db` (migration 300). */
export function pgCommandAllowlist(db: PgDatabase): CommandAllowlist {
  return {
    async list() {
      const rows = await db.query<{ entry: string }>(
        "SELECT entry FROM gateway_command_allowlist ORDER BY seq",
      );
      return rows.map((r) => r.entry);
    },
    async add(entry) {
      checkAllowlistEntry(entry);
      const rows = await db.query(
        `INSERT INTO gateway_command_allowlist (entry_digest, entry) VALUES ($1, $2)
         ON CONFLICT (entry_digest) DO NOTHING RETURNING 1 AS x`,
        [keyDigest(entry), entry],
      );
      return rows.length > 0;
    },
    async remove(entry) {
      const rows = await db.query(
        "DELETE FROM gateway_command_allowlist WHERE entry_digest = $1 RETURNING 1 AS x",
        [keyDigest(entry)],
      );
      return rows.length > 0;
    },
  };
}
