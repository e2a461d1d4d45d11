/**
 * Approvals pending across instances and per-chat toggles (versions 520–539): the dangerous
 * commands each instance's turns wait on, with the answer given away from the chat until the
 * instance carries it out, and what `/verbose` and `/yolo` chose in each chat. Times come from the
 * instance that asked (created/expires, as its timeout counts) and from the database (answers).
 * `/voice` modes are kept per chat (`platform:chat_id`, as `gateway_voice_mode.json` keys them).
 */
import type { Migration } from "../migrate.js";

export const APPROVAL_MIGRATIONS: readonly Migration[] = [
  {
    version: 520,
    name: "gateway: pending approvals of every instance, per-chat settings and voice modes",
    up: `
CREATE TABLE gateway_pending_approvals (
  instance_id text NOT NULL,
  id text NOT NULL,
  session_key text NOT NULL,
  platform text NOT NULL,
  chat_id text NOT NULL,
  user_id text NOT NULL,
  command text NOT NULL,
  reason text NOT NULL,
  protected_path boolean NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  answer text CHECK (answer IN ('once', 'session', 'always', 'deny')),
  answered_by text,
  answered_at timestamptz,
  PRIMARY KEY (instance_id, id)
);
CREATE INDEX gateway_pending_approvals_id ON gateway_pending_approvals (id);

CREATE TABLE gateway_chat_settings (
  key_digest bytea PRIMARY KEY,
  session_key text NOT NULL,
  settings text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE TABLE gateway_voice_modes (
  chat_digest bytea PRIMARY KEY,
  chat text NOT NULL,
  mode text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
`,
  },
];
