/**
 * Fenced chat claims (versions 550–554): each claim row carries the time its holder last
 * confirmed it (`seen_at`), renewed with the holder's heartbeat by a statement that takes the
 * row's lock. A claim is taken over only when that time and the holder's heartbeat are both older
 * than the instance TTL, judged on the row's newest version, so a take-over and a renewal can
 * never both win (see state/postgres/coordination.ts).
 */
import type { Migration } from "../migrate.js";

export const CHAT_FENCE_MIGRATIONS: readonly Migration[] = [
  {
    version: 550,
    name: "coordination: chat claims renewed by their holder (seen_at), for fenced take-overs",
    up: `
ALTER TABLE coord_chat_claims ADD COLUMN seen_at timestamptz NOT NULL DEFAULT clock_timestamp();
`,
  },
];
