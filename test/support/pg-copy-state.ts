/**
 * Copies the sessions, messages and state_meta rows of a SQLite state.db into a migrated
 * PostgreSQL database with plain multi-row INSERTs, ids and times kept: what the PostgreSQL
 * search, insights and maintenance tests compare against the SQLite store on the same data.
 * Only the columns both sides have are copied (a Python file's extra columns are left behind).
 * PostgreSQL text cannot hold NUL, so content parts take the `\u0001json:` prefix the codec also
 * reads (as the PostgreSQL session store writes them) and any other NUL becomes U+FFFD.
 */
import { createRequire } from "node:module";
import type BetterSqlite3 from "better-sqlite3";
import type { PgQueryable } from "../../src/state/postgres/database.js";

const require = createRequire(import.meta.url);
const Sqlite = require("better-sqlite3") as typeof BetterSqlite3;

const CHUNK = 500;

function storable(value: unknown): unknown {
  if (typeof value !== "string" || !value.includes("\u0000")) return value;
  const text = value.startsWith("\u0000json:") ? `\u0001${value.slice(1)}` : value;
  return text.replaceAll("\u0000", "\ufffd");
}

async function pgColumns(db: PgQueryable, table: string): Promise<Set<string>> {
  const rows = await db.query<{ name: string }>(
    `SELECT column_name AS name FROM information_schema.columns
     WHERE table_schema = current_schema() AND table_name = $1 AND is_generated = 'NEVER'`,
    [table],
  );
  return new Set(rows.map((r) => r.name));
}

async function copyTable(
  file: BetterSqlite3.Database,
  db: PgQueryable,
  table: string,
  order: string,
): Promise<number> {
  const wanted = await pgColumns(db, table);
  const columns = (file.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>)
    .map((c) => c.name)
    .filter((c) => wanted.has(c));
  const rows = file
    .prepare(`SELECT ${columns.join(", ")} FROM ${table} ORDER BY ${order}`)
    .raw()
    .all() as unknown[][];
  for (let i = 0; i < rows.length; i += CHUNK) {
    const chunk = rows.slice(i, i + CHUNK);
    const params: unknown[] = [];
    const tuples = chunk.map((row) => {
      const marks = row.map((value) => {
        params.push(storable(value));
        return `$${params.length}`;
      });
      return `(${marks.join(", ")})`;
    });
    await db.query(`INSERT INTO ${table} (${columns.join(", ")}) VALUES ${tuples.join(", ")}`, params);
  }
  return rows.length;
}

/** Copies `path` into `db` (migrated, empty); answers how many sessions and messages it copied. */
export async function copySqliteStateToPg(
  path: string,
  db: PgQueryable,
): Promise<{ sessions: number; messages: number }> {
  const file = new Sqlite(path, { readonly: true });
  try {
    // Parents first, so the foreign key holds whatever order the ids sort in.
    const sessions = await copyTable(
      file,
      db,
      "sessions",
      "CASE WHEN parent_session_id IS NULL THEN 0 ELSE 1 END, started_at, rowid",
    );
    const messages = await copyTable(file, db, "messages", "id");
    await copyTable(file, db, "state_meta", "key");
    await db.query("SELECT setval('messages_id_seq', GREATEST((SELECT MAX(id) FROM messages), 1))");
    return { sessions, messages };
  } finally {
    file.close();
  }
}
