/**
 * A consistent copy of a live SQLite database, for backups and profile exports: `VACUUM INTO`
 * runs inside one read transaction, so the copy is the database as of one moment even while
 * another process keeps writing (WAL readers never block writers), and it never includes a
 * half-written page or a WAL that belongs to another image. Copying the file bytes instead could
 * catch a writer mid-checkpoint and produce a database that does not open.
 */
import { existsSync, renameSync, rmSync } from "node:fs";
import { isBusy, loadDriver, sleepSync } from "./connection.js";

export class SnapshotError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SnapshotError";
  }
}

/**
 * Writes a consistent copy of the SQLite database `source` to `target` (which must not exist yet;
 * it is written under `<target>.partial` and renamed when checked), then verifies the copy with
 * `PRAGMA quick_check`. Waits up to `busyMs` for a writer holding an exclusive lock (a rollback
 * journal database mid-commit). Throws SnapshotError naming the file when it cannot be read.
 */
export function snapshotDatabase(source: string, target: string, busyMs = 10_000): void {
  const Database = loadDriver();
  const partial = `${target}.partial`;
  rmSync(partial, { force: true });
  let db: ReturnType<typeof Database> | undefined;
  try {
    db = new Database(source, { readonly: true, fileMustExist: true, timeout: busyMs });
    const started = Date.now();
    for (;;) {
      try {
        db.prepare("VACUUM INTO ?").run(partial);
        break;
      } catch (error) {
        if (!isBusy(error) || Date.now() - started > busyMs) throw error;
        rmSync(partial, { force: true });
        sleepSync(50);
      }
    }
  } catch (error) {
    rmSync(partial, { force: true });
    throw new SnapshotError(
      `could not copy ${source} safely: ${error instanceof Error ? error.message : String(error)}`,
    );
  } finally {
    db?.close();
  }
  let copy: ReturnType<typeof Database> | undefined;
  try {
    copy = new Database(partial, { readonly: true, fileMustExist: true });
    const rows = copy.pragma("quick_check", { simple: false }) as Array<Record<string, unknown>>;
    const result = rows.map((row) => String(Object.values(row)[0])).join("; ");
    if (result !== "ok") throw new Error(`integrity check of the copy failed: ${result}`);
  } catch (error) {
    copy?.close();
    copy = undefined;
    rmSync(partial, { force: true });
    throw new SnapshotError(
      `the copy of ${source} did not verify: ${error instanceof Error ? error.message : String(error)}`,
    );
  } finally {
    copy?.close();
  }
  if (existsSync(target)) rmSync(target, { force: true });
  renameSync(partial, target);
}
