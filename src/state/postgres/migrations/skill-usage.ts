/**
 * Skill usage versions (410–429): a one-row counter that every change to `skill_usage` bumps in
 * the same transaction (a statement trigger, so no writer can forget it). Readers compare it to
 * the version they read the records at: the prompt's skills index and the usage read cache are
 * reused while it stands, so an unchanged table costs one single-row query, and a use recorded on
 * any instance is seen by every other at its next read.
 */
import type { Migration } from "../migrate.js";

export const SKILL_USAGE_MIGRATIONS: readonly Migration[] = [
  {
    version: 410,
    name: "skill usage version counter",
    up: `
CREATE TABLE skill_usage_version (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  version bigint NOT NULL
);
INSERT INTO skill_usage_version (id, version) VALUES (true, 1);
CREATE FUNCTION hermes_bump_skill_usage_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE skill_usage_version SET version = version + 1 WHERE id;
  RETURN NULL;
END;
$$;
CREATE TRIGGER skill_usage_version_bump
  AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON skill_usage
  FOR EACH STATEMENT EXECUTE FUNCTION hermes_bump_skill_usage_version();
`,
  },
];
