/**
 * The last per-home pieces a postgres home shares (versions 440–449), for the stores in
 * `src/knowledge/postgres/` (plain SQL only: state/ may not import knowledge/):
 *
 * - `skill_bundled_seeds`: for a bundled skill the database holds, the digests of the bundled
 *   copies it was seeded from, the newest last (the shared counterpart of `.bundled_manifest`),
 *   so a newer bundled version replaces an unedited copy once for every instance, never an edited
 *   one, and an instance still on an older build never puts its older copy back;
 * - `skill_opt_outs`: the home's "no" to bundled skills (`.no-bundled-skills` and
 *   `skills/.curator_suppressed`), one row, absent until the lists were first shared;
 * - `pending_writes`: memory and skill writes staged for approval (`pending/<subsystem>/<id>.json`),
 *   the record kept as the JSON text the file holds; `claimed_at` marks one being applied;
 * - `curator_reports`: each curator run's `run.json`, by its folder name under `logs/curator/`.
 */
import type { Migration } from "../migrate.js";

export const HOME_EXTRA_MIGRATIONS: readonly Migration[] = [
  {
    version: 440,
    name: "bundled seeds, opt-out lists, staged writes and curator reports",
    up: `
CREATE TABLE skill_bundled_seeds (
  name text NOT NULL,
  hash text NOT NULL,
  updated_at double precision NOT NULL,
  PRIMARY KEY (name, hash)
);
CREATE TABLE skill_opt_outs (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  all_skills boolean NOT NULL,
  suppressed text NOT NULL,
  updated_at double precision NOT NULL
);
CREATE TABLE pending_writes (
  subsystem text NOT NULL CHECK (subsystem IN ('memory', 'skills')),
  id text NOT NULL CHECK (id ~ '^[A-Za-z0-9_-]{1,64}$'),
  record text NOT NULL,
  created_at double precision NOT NULL,
  claimed_at double precision,
  PRIMARY KEY (subsystem, id)
);
CREATE TABLE curator_reports (
  id text PRIMARY KEY CHECK (id ~ '^[0-9]{8}-[0-9]{6}(-[0-9]+)?$'),
  started_at text NOT NULL,
  record text NOT NULL,
  created_at double precision NOT NULL
);
`,
  },
];
