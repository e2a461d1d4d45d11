/**
 * Whether another process has a SQLite file open, so nothing replaces it underneath a live
 * connection (`hermes import`): a connection keeps writing to the file it opened, and a rename
 * would silently drop what it writes next.
 */
import { existsSync } from "node:fs";
import { isBusy, loadDriver } from "./connection.js";

/**
 * True when another connection has `path` open. In WAL mode every open connection holds a shared
 * lock on the shared-memory index, even when idle, so an exclusive-mode exclusive transaction is
 * refused at once while any other connection exists; in rollback mode a writer or reader in a
 * transaction refuses it. False for a missing file. Never waits and never changes the file.
 */
export function sqliteInUse(path: string): boolean {
  if (!existsSync(path)) return false;
  const Driver = loadDriver();
  let db: InstanceType<typeof Driver> | undefined;
  try {
    db = new Driver(path, { timeout: 0, fileMustExist: true });
    db.pragma("locking_mode = EXCLUSIVE");
    db.exec("BEGIN EXCLUSIVE");
    db.exec("ROLLBACK");
    return false;
  } catch (error) {
    if (isBusy(error)) return true;
    // Not a database we can open (damaged, not SQLite): no live writer can be using it either.
    return false;
  } finally {
    db?.close();
  }
}
