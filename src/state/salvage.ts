/**
 * `hermes sessions repair --from FILE`: what can still be read from a damaged (or just another)
 * state.db, copied into this store. SQLite's `.recover` is not reachable through better-sqlite3,
 * so this reads by hand: each table in one pass, and when a damaged page stops the pass, row by
 * row from the next rowid on (`WHERE rowid > ?`), stepping further each time a seek fails so one
 * bad page costs what it holds and no more.
 *
 * The source is never written: it is copied (with its `-wal`) into a temporary directory and read
 * from there, because even a read-only SQLite connection may replay or checkpoint a WAL.
 */
import {
  closeSync,
  copyFileSync,
  existsSync,
  mkdtempSync,
  openSync,
  readSync,
  rmSync,
  statSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Row } from "./codec.js";
import { type Db, isCorrupt, loadDriver } from "./connection.js";
import type { StoreContext } from "./context.js";
import { sessionRow } from "./listing.js";
import { recountSession } from "./maintenance.js";
import { type RecoveryReport, SessionStoreError } from "./types.js";

const SQLITE_HEADER = "SQLite format 3\u0000";

export function emptyReport(kind: RecoveryReport["kind"], reason?: string): RecoveryReport {
  return {
    kind,
    readable: reason === undefined,
    ...(reason !== undefined ? { reason } : {}),
    sessions: { recovered: 0, skipped: 0, unreadable: 0 },
    messages: { recovered: 0, skipped: 0, unreadable: 0 },
    placeholders: 0,
  };
}

/** What kind of file `file` is, from its first bytes; throws `not_found` when it is missing. */
export function sniffRecoverySource(file: string): { kind: "sqlite" | "unsaved" | "none"; reason?: string } {
  let size: number;
  try {
    const st = statSync(file);
    if (st.isDirectory()) return { kind: "none", reason: `${file} is a directory, not a database` };
    size = st.size;
  } catch {
    throw new SessionStoreError("not_found", `${file} does not exist; there is nothing to recover from.`);
  }
  if (size === 0) return { kind: "none", reason: `${file} is empty (0 bytes): there is nothing to recover` };
  const head = Buffer.alloc(64);
  const fd = openSync(file, "r");
  let n: number;
  try {
    n = readSync(fd, head, 0, 64, 0);
  } finally {
    closeSync(fd);
  }
  const text = head.subarray(0, n).toString("latin1");
  if (text.startsWith(SQLITE_HEADER)) return { kind: "sqlite" };
  if (text.startsWith('{"hermes_unsaved_writes"')) return { kind: "unsaved" };
  return {
    kind: "none",
    reason: `${file} is neither a SQLite database nor a Hermes unsaved-writes file: nothing can be recovered from it`,
  };
}

/** Rows of `table` that can be read, in rowid order, and how many reads failed on damaged pages. */
export function readableRows(db: Db, table: string): { rows: Row[]; errors: number } {
  const rows: Row[] = [];
  let errors = 0;
  let last = Number.NEGATIVE_INFINITY;
  try {
    for (const row of db.prepare(`SELECT rowid AS __rowid, * FROM "${table}" ORDER BY rowid`).iterate()) {
      rows.push(row as Row);
      last = Number((row as Row)["__rowid"]);
    }
    return { rows, errors };
  } catch (error) {
    if (!isCorrupt(error)) throw error;
    errors++;
  }
  const seek = db.prepare(
    `SELECT rowid AS __rowid, * FROM "${table}" WHERE rowid > ? ORDER BY rowid LIMIT 1`,
  );
  let from = Number.isFinite(last) ? last : 0;
  let step = 1;
  // Rowids are 64-bit, but Hermes's are small; 2^40 bounds the walk past a damaged tail.
  while (from < 2 ** 40) {
    let row: Row | undefined;
    try {
      row = seek.get(from) as Row | undefined;
    } catch (error) {
      if (!isCorrupt(error)) throw error;
      errors++;
      from += step;
      step = Math.min(step * 2, 2 ** 20);
      continue;
    }
    if (!row) break;
    rows.push(row);
    from = Number(row["__rowid"]);
    step = 1;
  }
  return { rows, errors };
}

function columnsOf(db: Db, table: string): Set<string> {
  try {
    return new Set(
      (db.prepare(`PRAGMA table_info("${table}")`).all() as Array<{ name: string }>).map((r) => r.name),
    );
  } catch {
    return new Set();
  }
}

/** Copies `file` (and its WAL) somewhere it can be opened without touching the original. */
function privateCopy(file: string): { path: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "hermes-recover-"));
  const path = join(dir, "source.db");
  copyFileSync(file, path);
  if (existsSync(`${file}-wal`)) copyFileSync(`${file}-wal`, `${path}-wal`);
  return { path, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

const REDACTED_SESSION_COLUMNS = new Set(["system_prompt", "title"]);
const REDACTED_MESSAGE_COLUMNS = new Set(["content", "tool_calls", "reasoning", "reasoning_content"]);

/** Salvages a SQLite file into the store behind `ctx` (inside one write). */
export function recoverSqlite(ctx: StoreContext, file: string): RecoveryReport {
  const report = emptyReport("sqlite");
  const copy = privateCopy(file);
  let db: Db | undefined;
  try {
    const Database = loadDriver();
    try {
      db = new Database(copy.path);
      db.prepare("SELECT name FROM sqlite_master").all();
    } catch (error) {
      return emptyReport(
        "sqlite",
        `${file} has a SQLite header but its schema cannot be read (${error instanceof Error ? error.message : String(error)}): nothing can be recovered`,
      );
    }
    const sessionCols = columnsOf(db, "sessions");
    const messageCols = columnsOf(db, "messages");
    if (!sessionCols.has("id") && !messageCols.has("session_id")) {
      return emptyReport("sqlite", `${file} has no Hermes sessions or messages table: nothing to recover`);
    }
    const sessions = sessionCols.has("id") ? readableRows(db, "sessions") : { rows: [], errors: 0 };
    const messages = messageCols.has("session_id") ? readableRows(db, "messages") : { rows: [], errors: 0 };
    report.sessions.unreadable = sessions.errors;
    report.messages.unreadable = messages.errors;
    ctx.write(() => copyRows(ctx, sessions.rows, messages.rows, report));
    return report;
  } finally {
    db?.close();
    copy.cleanup();
  }
}

function copyRows(ctx: StoreContext, sessions: Row[], messages: Row[], report: RecoveryReport): void {
  const targetSession = ctx.shape.sessionColumns;
  const targetMessage = ctx.shape.messageColumns;
  /** id → true when imported here, false when skipped (already present or unusable). */
  const fate = new Map<string, boolean>();
  const parents = new Map<string, string>();
  for (const row of sessions) {
    const id = row["id"];
    if (typeof id !== "string" || !id || typeof row["source"] !== "string") {
      report.sessions.unreadable++;
      continue;
    }
    if (fate.has(id) || sessionRow(ctx, id)) {
      fate.set(id, fate.get(id) ?? false);
      report.sessions.skipped++;
      continue;
    }
    const values: Record<string, unknown> = {};
    for (const [col, value] of Object.entries(row)) {
      if (col === "__rowid" || col === "parent_session_id" || !targetSession.has(col)) continue;
      values[col] =
        REDACTED_SESSION_COLUMNS.has(col) && typeof value === "string" ? ctx.redact(value) : value;
    }
    if (typeof values["started_at"] !== "number") values["started_at"] = ctx.now();
    const title = values["title"];
    if (typeof title === "string" && ctx.get("SELECT 1 AS x FROM sessions WHERE title = ?", title)) {
      values["title"] = null; // the title belongs to a session here already; ids stay the link
    }
    insertRow(ctx, "sessions", values);
    fate.set(id, true);
    if (typeof row["parent_session_id"] === "string") parents.set(id, row["parent_session_id"]);
    report.sessions.recovered++;
  }
  const touched = new Set<string>();
  for (const row of messages) {
    const sessionId = row["session_id"];
    const role = row["role"];
    if (typeof sessionId !== "string" || typeof role !== "string" || typeof row["timestamp"] !== "number") {
      report.messages.unreadable++;
      continue;
    }
    if (!fate.has(sessionId)) {
      // The session's row was on a damaged page; its messages are still worth having.
      if (sessionRow(ctx, sessionId)) {
        fate.set(sessionId, false);
      } else {
        insertRow(ctx, "sessions", {
          id: sessionId,
          source: "recovered",
          started_at: row["timestamp"],
          end_reason: "recovered",
        });
        fate.set(sessionId, true);
        report.placeholders++;
        report.sessions.recovered++;
      }
    }
    if (!fate.get(sessionId)) {
      report.messages.skipped++;
      continue;
    }
    const values: Record<string, unknown> = {};
    for (const [col, value] of Object.entries(row)) {
      if (col === "__rowid" || col === "id" || !targetMessage.has(col)) continue;
      values[col] =
        REDACTED_MESSAGE_COLUMNS.has(col) && typeof value === "string" ? ctx.redact(value) : value;
    }
    // New ids here (the old ones may be taken); the FTS triggers index each row as it goes in.
    insertRow(ctx, "messages", values);
    touched.add(sessionId);
    report.messages.recovered++;
  }
  for (const [id, parent] of parents) {
    if (sessionRow(ctx, parent))
      ctx.stmt("UPDATE sessions SET parent_session_id = ? WHERE id = ?").run(parent, id);
  }
  for (const id of touched) recountSession(ctx, id);
}

function insertRow(ctx: StoreContext, table: string, values: Record<string, unknown>): void {
  const cols = Object.keys(values);
  ctx.db
    .prepare(
      `INSERT INTO ${table} (${cols.map((c) => `"${c}"`).join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`,
    )
    .run(...cols.map((c) => normalise(values[c])));
}

/** better-sqlite3 binds numbers, strings, bigints, buffers and null; booleans become 0/1. */
function normalise(value: unknown): unknown {
  if (value === undefined) return null;
  if (typeof value === "boolean") return value ? 1 : 0;
  return value;
}
