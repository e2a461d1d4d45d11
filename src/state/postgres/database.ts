/**
 * One PostgreSQL database shared by every Hermes instance (issue 27): a `pg` pool behind a small
 * surface the PostgreSQL stores use. `pg` is required only when a postgres backend is opened (`loadPg`), so a
 * SQLite home never pays for it at start-up.
 *
 * - `query` runs one statement on any pooled connection.
 * - `tx` runs a function inside BEGIN … COMMIT on one connection, rolling back when it throws.
 * - `connect` hands out a dedicated client (LISTEN, session-level advisory locks); release it.
 *
 * Errors keep `pg`'s codes (`err.code`, SQLSTATE) so stores can map them; connection failures are
 * reported with the URL's password masked (see `maskDatabaseUrl`).
 */
import { createRequire } from "node:module";
import type * as Pg from "pg";
import type { Pool, PoolClient, QueryResultRow } from "pg";

let pgModule: typeof Pg | undefined;
/**
 * The `pg` driver, required from node_modules on first use: the CLI bundle keeps it out
 * (scripts/cli-bundle.mjs), and a dynamic `import()` would not work inside the bundle.
 */
export function loadPg(): typeof Pg {
  pgModule ??= createRequire(import.meta.url)("pg") as typeof Pg;
  return pgModule;
}

export interface PgQueryable {
  query<R extends QueryResultRow = QueryResultRow>(sql: string, params?: readonly unknown[]): Promise<R[]>;
}

export interface PgDatabase extends PgQueryable {
  /** The URL with its password masked, for messages and logs. */
  readonly label: string;
  readonly pool: Pool;
  tx<T>(fn: (client: PgQueryable & { raw: PoolClient }) => Promise<T>): Promise<T>;
  connect(): Promise<PoolClient>;
  close(): Promise<void>;
}

export interface PgOpenOptions {
  /** Connections kept at most (`state.pool_size`, default 10). */
  max?: number;
  /** Name shown in pg_stat_activity (default `hermes`). */
  applicationName?: string;
  /** Milliseconds to wait for a connection before failing (default 10 000). */
  connectTimeoutMs?: number;
}

/** `postgres://user:secret@host/db` → `postgres://user:***@host/db` (unparseable URLs are masked whole). */
export function maskDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "<unparseable database URL>";
  }
}

function wrap(client: { query: Pool["query"] }): PgQueryable {
  return {
    async query<R extends QueryResultRow>(sql: string, params?: readonly unknown[]) {
      const result = await client.query<R>(sql, params as unknown[] | undefined);
      return result.rows;
    },
  };
}

/** Opens a pool on `url`. Nothing connects until the first query. */
export async function openPgDatabase(url: string, options: PgOpenOptions = {}): Promise<PgDatabase> {
  const pool = new (loadPg().Pool)({
    connectionString: url,
    max: options.max ?? 10,
    application_name: options.applicationName ?? "hermes",
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    idleTimeoutMillis: 30_000,
  });
  // An idle client losing its server (restart, failover) must not crash the process.
  pool.on("error", () => {});
  const base = wrap(pool);
  let closed = false;
  return {
    label: maskDatabaseUrl(url),
    pool,
    query: base.query,
    async tx(fn) {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const value = await fn({ ...wrap(client), raw: client });
        await client.query("COMMIT");
        return value;
      } catch (error) {
        await client.query("ROLLBACK").catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
    connect: () => pool.connect(),
    async close() {
      if (closed) return;
      closed = true;
      await pool.end();
    },
  };
}
