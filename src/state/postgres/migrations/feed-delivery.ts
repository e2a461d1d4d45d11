/**
 * Update feeds delivered at least once across a hand-over (versions 555–559). A taken update now
 * keeps what is needed to hand it on again (`payload`: the Telegram update, the signal-cli event,
 * the IMAP message's mailbox and UID) until the gateway finished with it (`done_at`). An undone
 * row whose taker is dead (its heartbeat in `coord_instances` is stale) is claimed by the feed's
 * next holder and handed on again (`attempts` counts the hand-ons). Rows taken before this
 * version carry no payload and count as done: they were delivered at most once, as then.
 */
import type { Migration } from "../migrate.js";

export const FEED_DELIVERY_MIGRATIONS: readonly Migration[] = [
  {
    version: 555,
    name: "coordination: taken feed updates kept with their payload until the gateway is done with them",
    up: `
ALTER TABLE coord_feed_seen ADD COLUMN payload jsonb;
ALTER TABLE coord_feed_seen ADD COLUMN done_at timestamptz;
ALTER TABLE coord_feed_seen ADD COLUMN attempts integer NOT NULL DEFAULT 1;
UPDATE coord_feed_seen SET done_at = taken_at;
CREATE INDEX coord_feed_seen_undone ON coord_feed_seen (name, update_id) WHERE done_at IS NULL;
`,
  },
];
