/**
 * What the skill writers beside the skill tools need shared on PostgreSQL (versions 430–449):
 *
 * - `skill_hub_lock`: the hub's provenance of installed skills, one row per entry of
 *   `skills/.hub/lock.json` (the entry kept as JSON text, written back as read), so every instance
 *   knows a hub skill for what it is and not as the user's own;
 * - `skill_archive` + `skill_archive_files`: the curator's archive (`skills/.archive/<folder>`), so
 *   a skill archived on one instance can be listed and restored on any other.
 */
import type { Migration } from "../migrate.js";

export const SKILL_WRITE_MIGRATIONS: readonly Migration[] = [
  {
    version: 430,
    name: "hub provenance of installed skills and the curator's archive",
    up: `
CREATE TABLE skill_hub_lock (
  name text PRIMARY KEY,
  entry text NOT NULL,
  updated_at double precision NOT NULL
);
CREATE TABLE skill_archive (
  folder text PRIMARY KEY,
  name text NOT NULL,
  version bigint NOT NULL,
  hash text NOT NULL,
  total_bytes bigint NOT NULL,
  archived_at double precision NOT NULL
);
CREATE TABLE skill_archive_files (
  folder text NOT NULL REFERENCES skill_archive(folder) ON DELETE CASCADE,
  path text NOT NULL,
  mode integer NOT NULL,
  content bytea NOT NULL,
  PRIMARY KEY (folder, path)
);
`,
  },
];
