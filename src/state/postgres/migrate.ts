/**
 * Versioned migrations of the PostgreSQL schema, the counterpart of SQLite's schema stamps. Each
 * area of the state (sessions, search, gateway stores, cron, memory and skills, coordination)
 * owns a list of steps with versions in its own range (see `migrations/index.ts`); the runner
 * applies the missing ones in version order, each in its own transaction, recording them in
 * `hermes_migrations`. Several instances starting at once serialise on an advisory lock, so a step
 * runs once. A database migrated by a newer Hermes (a version this build does not know) is refused
 * rather than written with an older idea of the schema.
 */
import type { PgDatabase, PgQueryable } from "./database.js";

export interface Migration {
  version: number;
  name: string;
  /** SQL run as one transaction, or a function given the transaction's client. */
  up: string | ((client: PgQueryable) => Promise<void>);
}

/** The advisory-lock key migrations hold (an arbitrary constant, "HERMIGR" in ASCII). */
export const MIGRATION_LOCK = 0x4845524d49475200n;

export class MigrationError extends Error {
  override name = "MigrationError";
}

export interface MigrationReport {
  applied: Migration[];
  current: number;
}

function checkList(migrations: readonly Migration[]): Migration[] {
  const sorted = [...migrations].sort((a, b) => a.version - b.version);
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i]!.version === sorted[i - 1]!.version) {
      throw new MigrationError(`two migrations share version ${sorted[i]!.version}`);
    }
  }
  return sorted;
}

/** Versions already applied to `db` (empty when the table does not exist yet). */
export async function appliedVersions(db: PgQueryable): Promise<number[]> {
  const rows = await db
    .query<{ version: number }>("SELECT version FROM hermes_migrations ORDER BY version")
    .catch((error: { code?: string }) => {
      if (error.code === "42P01") return [];
      throw error;
    });
  return rows.map((r) => Number(r.version));
}

/** Applies every migration in `migrations` that `db` lacks. */
export async function migrate(db: PgDatabase, migrations: readonly Migration[]): Promise<MigrationReport> {
  const steps = checkList(migrations);
  const known = new Set(steps.map((m) => m.version));
  const client = await db.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK.toString()]);
    await client.query(`CREATE TABLE IF NOT EXISTS hermes_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const done = new Set(
      (await client.query<{ version: number }>("SELECT version FROM hermes_migrations")).rows.map((r) =>
        Number(r.version),
      ),
    );
    const unknown = [...done].filter((v) => !known.has(v));
    if (unknown.length > 0) {
      throw new MigrationError(
        `the database ${db.label} has schema versions this Hermes does not know (${unknown.join(", ")}): it was migrated by a newer Hermes; upgrade this one`,
      );
    }
    const applied: Migration[] = [];
    for (const step of steps) {
      if (done.has(step.version)) continue;
      await client.query("BEGIN");
      try {
        if (typeof step.up === "string") await client.query(step.up);
        else {
          await step.up({
            async query(sql, params) {
              return (await client.query(sql, params as unknown[] | undefined)).rows;
            },
          });
        }
        await client.query("INSERT INTO hermes_migrations (version, name) VALUES ($1, $2)", [
          step.version,
          step.name,
        ]);
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK").catch(() => {});
        throw new MigrationError(
          `migration ${step.version} (${step.name}) failed: ${(error as Error).message}`,
        );
      }
      applied.push(step);
    }
    return { applied, current: steps.at(-1)?.version ?? 0 };
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK.toString()]).catch(() => {});
    client.release();
  }
}
