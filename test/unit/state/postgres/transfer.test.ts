import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPgDatabase, type PgDatabase } from "../../../../src/state/postgres/database.js";
import { migrate } from "../../../../src/state/postgres/migrate.js";
import { MIGRATIONS } from "../../../../src/state/postgres/migrations/index.js";
import { copyPgToSqlite, copySqliteToPg, TransferError } from "../../../../src/state/postgres/transfer.js";
import { openSqliteStore } from "../../../../src/state/sqlite-store.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../../../support/postgres.js";
import { createPythonStateDb } from "../../../support/python-state-db.js";

describe.skipIf(postgresSkipReason)("moving state.db into PostgreSQL and back", () => {
  let pg: PostgresFixture;
  const dirs: string[] = [];
  const temp = () => {
    const d = mkdtempSync(join(tmpdir(), "hermes-transfer-"));
    dirs.push(d);
    return d;
  };
  beforeAll(async () => {
    pg = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await pg?.dispose();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  async function freshDb(): Promise<PgDatabase> {
    const db = await openPgDatabase(await pg.createDatabase());
    await migrate(db, MIGRATIONS);
    return db;
  }

  function rows(path: string, table: string): Record<string, unknown>[] {
    const db = new BetterSqlite3(path, { readonly: true });
    try {
      return db
        .prepare(`SELECT * FROM ${table} ORDER BY ${table === "sessions" ? "id" : "id"}`)
        .all() as Record<string, unknown>[];
    } finally {
      db.close();
    }
  }

  it("copies a Python-written state.db unchanged, resumes idempotently, and exports it back row for row", async () => {
    const path = join(temp(), "state.db");
    const { sessionIds } = createPythonStateDb(path);
    const db = await freshDb();
    const first = await copySqliteToPg(path, db, { batch: 2 });
    expect(first.verified).toBe(true);
    const sourceMessages = rows(path, "messages").length;
    expect(first.tables).toEqual([
      { table: "sessions", source: 4, copied: 4, present: 0, skipped: 0 },
      { table: "messages", source: sourceMessages, copied: sourceMessages, present: 0, skipped: 0 },
    ]);
    // Lineage and the undone turn survive.
    const child = await db.query("SELECT parent_session_id FROM sessions WHERE id = $1", [sessionIds[1]]);
    expect(child).toEqual([{ parent_session_id: sessionIds[0] }]);
    const inactive = await db.query<{ n: string }>("SELECT count(*) AS n FROM messages WHERE active = 0");
    expect(Number(inactive[0]!.n)).toBeGreaterThan(0);

    // Running it again copies nothing and still verifies.
    const again = await copySqliteToPg(path, db);
    expect(again.tables.map((t) => [t.copied, t.present])).toEqual([
      [0, 4],
      [0, sourceMessages],
    ]);
    expect(again.verified).toBe(true);

    // New messages take ids after the migrated ones.
    const next = await db.query<{ id: string }>(
      "INSERT INTO messages (session_id, role, content, timestamp) VALUES ($1, 'user', 'after', 1) RETURNING id::text AS id",
      [sessionIds[0]],
    );
    expect(Number(next[0]!.id)).toBeGreaterThan(
      Math.max(...rows(path, "messages").map((r) => Number(r["id"]))),
    );
    await db.query("DELETE FROM messages WHERE id = $1", [next[0]!.id]);

    // Back out to a normal file: the same rows, and searchable through our store.
    const out = join(temp(), "state.db");
    const exported = await copyPgToSqlite(db, out);
    expect(exported.verified).toBe(true);
    const original = rows(path, "messages");
    const back = rows(out, "messages");
    for (const [i, r] of original.entries()) {
      for (const [k, v] of Object.entries(r)) expect([k, back[i]![k]]).toEqual([k, v]);
    }
    const sessionsBack = rows(out, "sessions");
    for (const [i, r] of rows(path, "sessions").entries()) {
      for (const [k, v] of Object.entries(r)) expect([k, sessionsBack[i]![k]]).toEqual([k, v]);
    }
    const store = openSqliteStore(out);
    try {
      expect(store.search({ query: "今天天气" }).map((h) => h.sessionId)).toEqual([sessionIds[2]]);
    } finally {
      store.close();
    }
    await db.close();
  });

  it("refuses to mix a second home's messages into the same ids, writing nothing", async () => {
    const db = await freshDb();
    const a = join(temp(), "state.db");
    createPythonStateDb(a);
    await copySqliteToPg(a, db);
    const snapshot = async () => [
      await db.query("SELECT id, session_id, content FROM messages ORDER BY id"),
      await db.query("SELECT id FROM sessions ORDER BY id"),
    ];
    const before = await snapshot();
    const b = join(temp(), "state.db");
    createPythonStateDb(b, {
      sessions: [{ source: "cli", messages: [{ role: "user", content: "other home" }] }],
    });
    await expect(copySqliteToPg(b, db)).rejects.toThrow(TransferError);
    await expect(copySqliteToPg(b, db)).rejects.toThrow(/already holds a different message/);
    expect(await snapshot()).toEqual(before);
    await db.close();
  });

  it("says clearly when there is no state.db", async () => {
    const db = await freshDb();
    await expect(copySqliteToPg(join(temp(), "missing.db"), db)).rejects.toThrow(/does not exist/);
    await db.close();
  });
});
