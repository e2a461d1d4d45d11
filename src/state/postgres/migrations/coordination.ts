/**
 * Coordination between instances (versions 500–599): who is alive, who holds which lease, chat
 * and cron slot, and the messages between instances (kept ten minutes, so a listener that
 * reconnects reads back what it missed). Every time here is
 * the database's clock (`clock_timestamp()`), so instances on hosts whose clocks disagree still
 * agree on when a lease has expired.
 */
import type { Migration } from "../migrate.js";

export const COORDINATION_MIGRATIONS: readonly Migration[] = [
  {
    version: 500,
    name: "coordination: instances, leases, chat claims, cron slots, message bodies",
    up: `
CREATE TABLE coord_instances (
  id text PRIMARY KEY,
  host text NOT NULL,
  pid integer NOT NULL,
  health_url text,
  started_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  last_seen_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  draining boolean NOT NULL DEFAULT false
);
CREATE INDEX coord_instances_seen ON coord_instances (last_seen_at);

CREATE TABLE coord_leases (
  name text PRIMARY KEY,
  holder text NOT NULL,
  token text NOT NULL,
  acquired_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX coord_leases_holder ON coord_leases (holder);

CREATE TABLE coord_chat_claims (
  key text PRIMARY KEY,
  holder text NOT NULL,
  token text NOT NULL,
  claimed_at timestamptz NOT NULL
);
CREATE INDEX coord_chat_claims_holder ON coord_chat_claims (holder);

CREATE TABLE coord_cron_slots (
  job_id text NOT NULL,
  slot text NOT NULL,
  status text NOT NULL CHECK (status IN ('running', 'done')),
  holder text NOT NULL,
  token text NOT NULL,
  attempts integer NOT NULL DEFAULT 1,
  claimed_at timestamptz NOT NULL,
  lease_until timestamptz NOT NULL,
  finished_at timestamptz,
  ok boolean,
  summary text,
  PRIMARY KEY (job_id, slot)
);
CREATE INDEX coord_cron_slots_running ON coord_cron_slots (lease_until) WHERE status = 'running';

CREATE TABLE coord_messages (
  id bigserial PRIMARY KEY,
  body text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
`,
  },
  {
    version: 540,
    name: "coordination: every message kept a while with its addressee, so a reconnected listener reads back what it missed",
    up: `
ALTER TABLE coord_messages ADD COLUMN recipient text;
CREATE INDEX coord_messages_created ON coord_messages (created_at);
`,
  },
  {
    version: 541,
    name: "coordination: update feeds' position and taken ids (Telegram getUpdates across instances)",
    up: `
CREATE TABLE coord_feed_offsets (
  name text PRIMARY KEY,
  next_offset bigint NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE TABLE coord_feed_seen (
  name text NOT NULL,
  update_id bigint NOT NULL,
  taken_by text NOT NULL,
  taken_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (name, update_id)
);
CREATE INDEX coord_feed_seen_taken ON coord_feed_seen (taken_at);
`,
  },
  {
    version: 542,
    name: "coordination: forwarded chat messages, each taken by its receiver or withdrawn by its sender, once",
    up: `
CREATE TABLE coord_handoffs (
  id text PRIMARY KEY,
  sender text NOT NULL,
  receiver text NOT NULL,
  state text NOT NULL DEFAULT 'sent' CHECK (state IN ('sent', 'taken', 'withdrawn')),
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX coord_handoffs_created ON coord_handoffs (created_at);
`,
  },
  {
    version: 543,
    name: "coordination: each instance's running API-server and webhook turns, for gateway status",
    up: `ALTER TABLE coord_instances ADD COLUMN turns integer NOT NULL DEFAULT 0;`,
  },
];
