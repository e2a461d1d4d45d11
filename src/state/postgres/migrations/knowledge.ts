/**
 * Cron jobs and their runs, memory, skills and skill usage in PostgreSQL (versions 400–499), for
 * the stores in `src/knowledge/postgres/`. Plain SQL only: state/ may not import knowledge/.
 *
 * Records that Hermes keeps as JSON in a file home (a cron job, a skill's usage record, a memory
 * target's entries) are kept as JSON *text*, not jsonb: jsonb refuses `\u0000` and reorders keys,
 * and these records are written back exactly as they were read. Times are epoch seconds
 * (`double precision`) as everywhere else in the PostgreSQL schema. Skill files are `bytea`, so a
 * skill's assets and scripts survive byte for byte.
 */
import type { Migration } from "../migrate.js";

export const KNOWLEDGE_MIGRATIONS: readonly Migration[] = [
  {
    version: 400,
    name: "cron jobs, run outputs, memory, skills and skill usage",
    up: `
CREATE TABLE cron_jobs (
  id text PRIMARY KEY,
  position bigint NOT NULL,
  record text NOT NULL,
  updated_at double precision NOT NULL
);
CREATE TABLE cron_outputs (
  job_id text NOT NULL,
  name text NOT NULL,
  created_at double precision NOT NULL,
  body bytea NOT NULL,
  PRIMARY KEY (job_id, name)
);
CREATE TABLE memory_targets (
  target text PRIMARY KEY CHECK (target IN ('memory', 'user')),
  entries text NOT NULL,
  updated_at double precision NOT NULL
);
CREATE TABLE skill_usage (
  name text PRIMARY KEY,
  record text NOT NULL,
  updated_at double precision NOT NULL
);
CREATE SEQUENCE skill_change_seq;
CREATE TABLE skills (
  name text PRIMARY KEY,
  category text,
  version bigint NOT NULL,
  hash text NOT NULL,
  total_bytes bigint NOT NULL,
  updated_at double precision NOT NULL
);
CREATE TABLE skill_files (
  skill text NOT NULL REFERENCES skills(name) ON DELETE CASCADE,
  path text NOT NULL,
  mode integer NOT NULL,
  content bytea NOT NULL,
  PRIMARY KEY (skill, path)
);
`,
  },
];
