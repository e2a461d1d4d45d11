/**
 * Another process holding `state.db`'s write lock, for the locked-database tests.
 * Usage: node --import tsx state-lock-worker.ts PATH HOLD_MS
 * Opens the file as any SQLite program would, takes `BEGIN EXCLUSIVE`, prints `locked`, keeps the
 * lock for HOLD_MS, then rolls back, prints `released` and exits.
 */
import { createRequire } from "node:module";
import type BetterSqlite3 from "better-sqlite3";

const [path, holdMs] = process.argv.slice(2);
const Database = createRequire(import.meta.url)("better-sqlite3") as typeof BetterSqlite3;
const db = new Database(path as string);
db.pragma("busy_timeout = 5000");
db.exec("BEGIN EXCLUSIVE");
process.stdout.write("locked\n");
setTimeout(() => {
  db.exec("ROLLBACK");
  db.close();
  process.stdout.write("released\n");
  process.exit(0);
}, Number(holdMs));
