/**
 * Moving the session tables between a SQLite `state.db` and PostgreSQL (`hermes state migrate`,
 * `hermes state export`). Rows are copied as they are, column for column (the columns both sides
 * have), ids kept: a session id, a message id and every time stay what they were, so lineage,
 * `--resume <id>` and search results point at the same things afterwards. A Python-written file
 * moves unchanged, including columns Hermes-TS does not read.
 *
 * Idempotent and resumable: rows already in the target are skipped by key, so running the copy
 * again after an interruption copies only what is missing. It refuses, before writing anything
 * more, when the target holds a different message under an id the source uses (another home was
 * migrated into the same database): merging two homes' message ids would silently drop messages.
 * The copy ends with a verification: every source session is in the target with as many messages.
 */
import { existsSync } from "node:fs";
import BetterSqlite3 from "better-sqlite3";
import { openSqliteStore } from "../sqlite-store.js";
import type { PgDatabase } from "./database.js";

export interface TableCopy {
  table: "sessions" | "messages";
  /** Rows in the source. */
  source: number;
  /** Rows written by this run. */
  copied: number;
  /** Rows the target already had (an earlier run, or a resumed one). */
  present: number;
  /** Source rows that cannot be copied (messages of a session the source does not have). */
  skipped: number;
}

export interface TransferReport {
  tables: TableCopy[];
  /** True when every copyable source row is in the target. */
  verified: boolean;
  /** What failed verification, when it did. */
  problems: string[];
}

export class TransferError extends Error {
  override name = "TransferError";
}

export interface TransferOptions {
  /** Rows per batch (and per transaction). Default 500. */
  batch?: number;
  /** Called after each batch with the table and the rows done so far. */
  onProgress?: (table: string, done: number, total: number) => void;
}

type Row = Record<string, unknown>;

const TABLES = ["sessions", "messages"] as const;

function sqliteColumns(db: BetterSqlite3.Database, table: string): string[] {
  return (db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>).map((c) => c.name);
}

async function pgColumnTypes(db: PgDatabase, table: string): Promise<Map<string, string>> {
  const rows = await db.query<{ name: string; type: string }>(
    "SELECT column_name AS name, data_type AS type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 AND is_generated = 'NEVER' ORDER BY ordinal_position",
    [table],
  );
  return new Map(rows.map((r) => [r.name, r.type]));
}

async function pgColumns(db: PgDatabase, table: string): Promise<string[]> {
  return [...(await pgColumnTypes(db, table)).keys()];
}

function shared(a: readonly string[], b: readonly string[]): string[] {
  const other = new Set(b);
  return a.filter((c) => other.has(c));
}

/** Parents before children, so lineage reads right even while a copy is half done. */
function parentsFirst(rows: Array<{ id: string; parent: string | null }>): string[] {
  const byId = new Map(rows.map((r) => [r.id, r.parent]));
  const done = new Set<string>();
  const out: string[] = [];
  const visit = (id: string) => {
    const chain: string[] = [];
    let cur: string | null | undefined = id;
    while (cur && !done.has(cur) && byId.has(cur) && !chain.includes(cur)) {
      chain.push(cur);
      cur = byId.get(cur);
    }
    for (const c of chain.reverse()) {
      if (!done.has(c)) {
        done.add(c);
        out.push(c);
      }
    }
  };
  for (const r of rows) visit(r.id);
  return out;
}

function quoteIdent(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name))
    throw new TransferError(`unexpected column name ${JSON.stringify(name)}`);
  return `"${name}"`;
}

function insertSql(table: string, columns: string[], rows: number, key: string): string {
  const values: string[] = [];
  for (let r = 0; r < rows; r++) {
    values.push(`(${columns.map((_, c) => `$${r * columns.length + c + 1}`).join(", ")})`);
  }
  return `INSERT INTO ${table} (${columns.map(quoteIdent).join(", ")}) VALUES ${values.join(", ")} ON CONFLICT (${key}) DO NOTHING RETURNING ${key}`;
}

/** SQLite keeps whatever type a value came with; PostgreSQL wants the column's. */
function pgValue(value: unknown): unknown {
  if (typeof value === "bigint") return value.toString();
  if (Buffer.isBuffer(value)) return value.toString("utf8");
  return value;
}

function openSource(path: string): BetterSqlite3.Database {
  if (!existsSync(path)) throw new TransferError(`${path} does not exist: there is no state.db to migrate`);
  return new BetterSqlite3(path, { readonly: true, fileMustExist: true });
}

/** Copies `sessions` and `messages` from the SQLite file at `path` into PostgreSQL (migrated). */
export async function copySqliteToPg(
  path: string,
  db: PgDatabase,
  options: TransferOptions = {},
): Promise<TransferReport> {
  const batch = Math.max(1, options.batch ?? 500);
  const src = openSource(path);
  try {
    const tables: TableCopy[] = [];
    // Sessions, parents first.
    const sessionCols = shared(sqliteColumns(src, "sessions"), await pgColumns(db, "sessions"));
    const lineage = src
      .prepare("SELECT id, parent_session_id AS parent FROM sessions ORDER BY started_at, rowid")
      .all() as Array<{
      id: string;
      parent: string | null;
    }>;
    const order = parentsFirst(lineage);
    const sessionIds = new Set(order);
    await refuseForeignIds(src, db, order);
    const getSession = src.prepare(
      `SELECT ${sessionCols.map(quoteIdent).join(", ")} FROM sessions WHERE id = ?`,
    );
    const sessions: TableCopy = {
      table: "sessions",
      source: order.length,
      copied: 0,
      present: 0,
      skipped: 0,
    };
    for (let i = 0; i < order.length; i += batch) {
      const ids = order.slice(i, i + batch);
      const rows = ids.map((id) => getSession.get(id) as Row);
      const params = rows.flatMap((r) => sessionCols.map((c) => pgValue(r[c])));
      const inserted = await db.query(insertSql("sessions", sessionCols, rows.length, "id"), params);
      sessions.copied += inserted.length;
      sessions.present += rows.length - inserted.length;
      options.onProgress?.("sessions", Math.min(i + batch, order.length), order.length);
    }
    tables.push(sessions);

    // Messages in id order, ids kept.
    const messageCols = shared(sqliteColumns(src, "messages"), await pgColumns(db, "messages"));
    const total = (src.prepare("SELECT count(*) AS n FROM messages").get() as { n: number }).n;
    const messages: TableCopy = { table: "messages", source: total, copied: 0, present: 0, skipped: 0 };
    const page = src.prepare(
      `SELECT ${messageCols.map(quoteIdent).join(", ")} FROM messages WHERE id > ? ORDER BY id LIMIT ?`,
    );
    let after = 0;
    let done = 0;
    for (;;) {
      const chunk = page.all(after, batch) as Row[];
      const last = chunk.at(-1);
      if (!last) break;
      after = Number(last["id"]);
      done += chunk.length;
      const rows = chunk.filter((r) => sessionIds.has(String(r["session_id"])));
      messages.skipped += chunk.length - rows.length;
      if (rows.length === 0) continue;
      const params = rows.flatMap((r) => messageCols.map((c) => pgValue(r[c])));
      const inserted = await db.query<{ id: string }>(
        insertSql("messages", messageCols, rows.length, "id"),
        params,
      );
      messages.copied += inserted.length;
      if (inserted.length < rows.length) {
        const mine = new Set(inserted.map((r) => String(r.id)));
        const existing = rows.filter((r) => !mine.has(String(r["id"])));
        const found = await db.query<{ id: string; session_id: string }>(
          "SELECT id::text AS id, session_id FROM messages WHERE id = ANY($1::bigint[])",
          [existing.map((r) => String(r["id"]))],
        );
        const owner = new Map(found.map((r) => [r.id, r.session_id]));
        const clash = existing.find((r) => owner.get(String(r["id"])) !== String(r["session_id"]));
        if (clash) {
          throw new TransferError(
            `the database already holds a different message under id ${String(clash["id"])} (another home was migrated into it?); ` +
              "migrate into an empty database, or export that one first. Nothing of this message was overwritten.",
          );
        }
        messages.present += existing.length;
      }
      options.onProgress?.("messages", Math.min(done, total), total);
    }
    // The sequence continues after the highest id, so new messages never reuse a migrated id.
    await db.query(
      "SELECT setval('messages_id_seq', GREATEST((SELECT COALESCE(max(id), 0) FROM messages), 1))",
    );
    tables.push(messages);

    const problems = await verify(src, db, order);
    return { tables, verified: problems.length === 0, problems };
  } finally {
    src.close();
  }
}

/**
 * Before anything is written: the target may hold messages under the source's ids only if they
 * belong to the source's own sessions (an earlier run of this copy).
 */
async function refuseForeignIds(
  src: BetterSqlite3.Database,
  db: PgDatabase,
  sessionIds: string[],
): Promise<void> {
  const range = src.prepare("SELECT min(id) AS lo, max(id) AS hi FROM messages").get() as {
    lo: number | null;
    hi: number | null;
  };
  if (range.lo === null || range.hi === null) return;
  const clash = await db.query<{ id: string }>(
    "SELECT id::text AS id FROM messages WHERE id BETWEEN $1 AND $2 AND NOT (session_id = ANY($3::text[])) LIMIT 1",
    [range.lo, range.hi, sessionIds],
  );
  if (clash.length > 0) {
    throw new TransferError(
      `the database already holds a different message under id ${clash[0]!.id} (another home was migrated into it?); ` +
        "migrate into an empty database, or export that one first. Nothing was written.",
    );
  }
}

/** Every source session in the target with the same number of messages. */
async function verify(src: BetterSqlite3.Database, db: PgDatabase, ids: string[]): Promise<string[]> {
  const problems: string[] = [];
  const expected = new Map(
    (
      src.prepare("SELECT session_id AS id, count(*) AS n FROM messages GROUP BY session_id").all() as Array<{
        id: string;
        n: number;
      }>
    ).map((r) => [r.id, r.n]),
  );
  for (let i = 0; i < ids.length; i += 5000) {
    const chunk = ids.slice(i, i + 5000);
    const have = await db.query<{ id: string; n: string | null; here: boolean }>(
      `SELECT s.id, (SELECT count(*) FROM messages m WHERE m.session_id = s.id) AS n, true AS here
         FROM sessions s WHERE s.id = ANY($1::text[])`,
      [chunk],
    );
    const got = new Map(have.map((r) => [r.id, Number(r.n ?? 0)]));
    for (const id of chunk) {
      if (!got.has(id)) problems.push(`session ${id} is missing`);
      else if ((expected.get(id) ?? 0) > got.get(id)!) {
        problems.push(`session ${id} has ${got.get(id)} of its ${expected.get(id)} messages`);
      }
      if (problems.length >= 20) return problems;
    }
  }
  return problems;
}

/**
 * Writes PostgreSQL's sessions and messages into the SQLite file at `path` (created with the
 * current schema when missing; an existing one gains what it lacks). SQLite's triggers index the
 * messages for search as they arrive.
 */
export async function copyPgToSqlite(
  db: PgDatabase,
  path: string,
  options: TransferOptions = {},
): Promise<TransferReport> {
  const batch = Math.max(1, options.batch ?? 500);
  openSqliteStore(path).close();
  const dst = new BetterSqlite3(path);
  try {
    dst.pragma("journal_mode = WAL");
    const tables: TableCopy[] = [];
    for (const table of TABLES) {
      const types = await pgColumnTypes(db, table);
      const cols = shared([...types.keys()], sqliteColumns(dst, table));
      // `pg` hands bigint columns over as strings; SQLite's integer columns want numbers.
      const bigints = new Set(cols.filter((c) => types.get(c) === "bigint"));
      const total = Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`))[0]?.n ?? 0);
      const copy: TableCopy = { table, source: total, copied: 0, present: 0, skipped: 0 };
      const insert = dst.prepare(
        `INSERT OR IGNORE INTO ${table} (${cols.map(quoteIdent).join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`,
      );
      const write = dst.transaction((rows: Row[]) => {
        for (const r of rows) {
          const result = insert.run(...cols.map((c) => sqliteValue(r[c], bigints.has(c))));
          if (result.changes > 0) copy.copied++;
          else copy.present++;
        }
      });
      // Keyset pages: sessions by id (text), messages by id (bigint).
      let after: string | null = null;
      let done = 0;
      for (;;) {
        const rows: Row[] = await db.query(
          table === "sessions"
            ? `SELECT ${cols.map(quoteIdent).join(", ")} FROM sessions WHERE ($1::text IS NULL OR id > $1) ORDER BY id LIMIT ${batch}`
            : `SELECT ${cols.map(quoteIdent).join(", ")} FROM messages WHERE id > COALESCE($1::bigint, 0) ORDER BY id LIMIT ${batch}`,
          [after],
        );
        if (rows.length === 0) break;
        write(rows);
        after = String(rows.at(-1)!["id"]);
        done += rows.length;
        options.onProgress?.(table, done, total);
      }
      tables.push(copy);
    }
    const counts = TABLES.map(
      (t) => (dst.prepare(`SELECT count(*) AS n FROM ${t}`).get() as { n: number }).n,
    );
    const problems = tables
      .map((t, i) => (counts[i]! < t.source ? `${t.table}: ${counts[i]} of ${t.source} rows in ${path}` : ""))
      .filter(Boolean);
    return { tables, verified: problems.length === 0, problems };
  } finally {
    dst.close();
  }
}

function sqliteValue(value: unknown, bigint: boolean): unknown {
  if (bigint && typeof value === "string") {
    const n = Number(value);
    return Number.isSafeInteger(n) ? n : BigInt(value);
  }
  if (typeof value === "boolean") return value ? 1 : 0;
  return value ?? null;
}
