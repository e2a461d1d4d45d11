import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { SnapshotError, snapshotDatabase } from "../../../src/state/snapshot.js";

describe("snapshotDatabase", () => {
  it("copies a WAL database with its uncheckpointed writes while a connection holds it open", () => {
    const d = mkdtempSync(join(tmpdir(), "hermes-snap-"));
    const live = new Database(join(d, "state.db"));
    live.pragma("journal_mode = WAL");
    live.pragma("wal_autocheckpoint = 0");
    live.exec("create table t(x); create virtual table f using fts5(body)");
    live.prepare("insert into t values (?)").run(1);
    live.prepare("insert into f values (?)").run("hello world");
    live.exec("begin; insert into t values (2);");
    snapshotDatabase(join(d, "state.db"), join(d, "copy.db"));
    live.exec("commit");
    live.close();
    const copy = new Database(join(d, "copy.db"), { readonly: true });
    // The open transaction's row is not in the copy: one consistent moment, never half a commit.
    expect(copy.prepare("select x from t").all()).toEqual([{ x: 1 }]);
    expect(copy.prepare("select body from f where f match 'hello'").all()).toHaveLength(1);
    copy.close();
  });

  it("refuses a file that is not SQLite and leaves nothing behind", () => {
    const d = mkdtempSync(join(tmpdir(), "hermes-snap-"));
    writeFileSync(join(d, "state.db"), "not sqlite, just text that is long enough to be read");
    expect(() => snapshotDatabase(join(d, "state.db"), join(d, "copy.db"))).toThrow(SnapshotError);
    expect(existsSync(join(d, "copy.db"))).toBe(false);
    expect(existsSync(join(d, "copy.db.partial"))).toBe(false);
  });
});
