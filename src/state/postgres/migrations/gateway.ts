/**
 * The gateway's stores in PostgreSQL (versions 300–399): what a running gateway reads and writes
 * besides sessions, shared by every instance. Keys that come from outside are stored as SHA-256
 * digests (`bytea`) beside their text, so no value is too long for an index (see
 * gateway-common.ts); documents kept in the shape of their file are JSON text, so a hand-added key
 * or a NUL escaped inside JSON survives a round trip. Times are epoch seconds (`double
 * precision`), as in the files (delivery times in ms, as the webhook server counts them). `seq` columns keep insertion order, which the file stores list by.
 */
import type { Migration } from "../migrate.js";

export const GATEWAY_MIGRATIONS: readonly Migration[] = [
  {
    version: 300,
    name: "gateway stores: chat index, pairing, webhooks, Responses, command allowlist",
    up: `
CREATE TABLE gateway_chat_index (
  key_digest bytea PRIMARY KEY,
  session_key text NOT NULL,
  session_id text NOT NULL,
  entry text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX idx_gateway_chat_index_session ON gateway_chat_index (session_id);

CREATE TABLE gateway_pairing_platforms (
  platform text PRIMARY KEY,
  failures integer NOT NULL DEFAULT 0,
  locked_until double precision NOT NULL DEFAULT 0
);
CREATE TABLE gateway_pairing_pending (
  platform text NOT NULL,
  request_id text NOT NULL,
  hash text NOT NULL,
  salt text NOT NULL,
  user_id text NOT NULL,
  user_name text NOT NULL,
  created_at double precision NOT NULL,
  seq bigserial NOT NULL,
  PRIMARY KEY (platform, request_id)
);
CREATE TABLE gateway_pairing_approved (
  platform text NOT NULL,
  user_digest bytea NOT NULL,
  user_id text NOT NULL,
  user_name text NOT NULL,
  approved_at double precision,
  seq bigserial NOT NULL,
  PRIMARY KEY (platform, user_digest)
);
CREATE TABLE gateway_pairing_requests (
  platform text NOT NULL,
  user_digest bytea NOT NULL,
  user_id text NOT NULL,
  last_request double precision NOT NULL,
  PRIMARY KEY (platform, user_digest)
);

CREATE TABLE gateway_webhook_subscriptions (
  name_digest bytea PRIMARY KEY,
  name text NOT NULL,
  route text NOT NULL,
  seq bigserial NOT NULL
);
CREATE TABLE gateway_webhook_deliveries (
  key_digest bytea PRIMARY KEY,
  route text NOT NULL,
  delivery_id text NOT NULL,
  seen_ms double precision NOT NULL
);
CREATE INDEX idx_gateway_webhook_deliveries_seen ON gateway_webhook_deliveries (seen_ms);

CREATE SEQUENCE gateway_responses_access;
CREATE TABLE gateway_responses (
  id_digest bytea PRIMARY KEY,
  response_id text NOT NULL,
  data text NOT NULL,
  accessed_at double precision NOT NULL,
  access_seq bigint NOT NULL DEFAULT nextval('gateway_responses_access')
);
CREATE INDEX idx_gateway_responses_access ON gateway_responses (access_seq);
CREATE TABLE gateway_conversations (
  name_digest bytea PRIMARY KEY,
  name text NOT NULL,
  response_id text NOT NULL
);
CREATE TABLE gateway_response_capacity (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row)
);
INSERT INTO gateway_response_capacity VALUES (true);

CREATE TABLE gateway_imports (
  store text PRIMARY KEY,
  imported_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE gateway_command_allowlist (
  entry_digest bytea PRIMARY KEY,
  entry text NOT NULL,
  seq bigserial NOT NULL
);
`,
  },
];
