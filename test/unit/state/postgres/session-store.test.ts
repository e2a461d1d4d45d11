/**
 * What only the PostgreSQL session store has or does differently: `importSession` (ids, times and
 * message ids kept; idempotent), the schema check on open, unreachable servers, a crashed server,
 * and recovery / legacy import routed through SQLite's readers.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openPgDatabase, type PgDatabase } from "../../../../src/state/postgres/database.js";
import { migrate } from "../../../../src/state/postgres/migrate.js";
import { MIGRATIONS } from "../../../../src/state/postgres/migrations/index.js";
import { SESSION_MIGRATIONS } from "../../../../src/state/postgres/migrations/sessions.js";
import { openPgSessionStore, type PgSessionStore } from "../../../../src/state/postgres/session-store.js";
import { openSessionStore } from "../../../../src/state/sqlite-store.js";
import { type ExportedSession, type SessionStore, SessionStoreError } from "../../../../src/state/types.js";
import { writeUnsavedFile } from "../../../../src/state/unsaved-writes.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../../../support/postgres.js";
import { createPythonStateDb } from "../../../support/python-state-db.js";

async function all(store: SessionStore): Promise<ExportedSession[]> {
  const out: ExportedSession[] = [];
  for await (const e of store.exportSessions()) out.push(e);
  return out;
}

async function failure(p: Promise<unknown>): Promise<SessionStoreError> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SessionStoreError);
  return error as SessionStoreError;
}

describe.skipIf(postgresSkipReason)("PostgreSQL session store", () => {
  let pg: PostgresFixture;
  let dir: string;
  let url: string;
  const dbs: PgDatabase[] = [];
  beforeAll(async () => {
    pg = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await pg?.dispose();
  });
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "hermes-pg-store-"));
    url = await pg.createDatabase();
  });
  afterEach(async () => {
    for (const db of dbs.splice(0)) await db.close().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  });

  async function open(migrated = true): Promise<{ db: PgDatabase; store: PgSessionStore }> {
    const db = await openPgDatabase(url, { max: 4 });
    dbs.push(db);
    if (migrated) await migrate(db, MIGRATIONS);
    return { db, store: await openPgSessionStore(db) };
  }

  it("imports a Python-written home with ids, times and message ids kept, and again changes nothing", async () => {
    const path = join(dir, "state.db");
    const { sessionIds } = createPythonStateDb(path);
    const sqlite = openSessionStore(path);
    const exported = await all(sqlite);
    await sqlite.close();
    const { store } = await open();
    // Children before parents must work too (the parent link is kept as it is).
    const fates = await Promise.all([...exported].reverse().map((e) => store.importSession(e)));
    expect(fates).toEqual(exported.map(() => "imported"));
    expect(await all(store)).toEqual(exported);
    expect(await Promise.all(exported.map((e) => store.importSession(e)))).toEqual(
      exported.map(() => "present"),
    );
    expect((await store.stats()).sessions).toBe(sessionIds.length);
    // New writes continue above the imported ids and keep the lineage working.
    const maxId = Math.max(...exported.flatMap((e) => e.messages.map((m) => m.id)));
    const next = await store.appendMessage(sessionIds[1]!, { role: "user", content: "after the move" });
    expect(next).toBeGreaterThan(maxId);
    expect((await store.resolveSession("Refactor the parser")).id).toBe(sessionIds[1]);
    expect(await store.nextLineageTitle("Refactor the parser")).toBe("Refactor the parser #3");
    expect((await store.check()).problems).toEqual([]);
  });

  it("refuses an import whose title or message ids belong to another session here", async () => {
    const sqlite = openSessionStore(join(dir, "state.db"));
    const s = await sqlite.createSession({ source: "cli", title: "mine" });
    await sqlite.appendMessage(s.id, { role: "user", content: "x" });
    const [e] = await all(sqlite);
    await sqlite.close();
    const { store } = await open();
    const holder = await store.createSession({ source: "cli", title: "mine" });
    const taken = await failure(store.importSession(e!));
    expect(taken.code).toBe("title_taken");
    expect(taken.message).toContain(holder.id);
    await store.setTitle(holder.id, null);
    const other = await store.createSession({ source: "cli" });
    const clash = { ...e!, messages: e!.messages.map((m) => ({ ...m, id: 1 })) };
    await store.appendMessage(other.id, { role: "user", content: "holds id 1" });
    expect((await failure(store.importSession(clash))).code).toBe("invalid");
    expect(await store.getSession(e!.session.id)).toBeNull();
    expect(await store.importSession(e!, { keepMessageIds: false })).toBe("imported");
  });

  it("says what to do on a database without the schema, and masks the password of an unreachable one", async () => {
    const bare = await openPgDatabase(url);
    dbs.push(bare);
    const missing = await failure(openPgSessionStore(bare));
    expect(missing.code).toBe("invalid");
    expect(missing.message).toMatch(/migration/);
    const away = await openPgDatabase("postgres://hermes:hunter2secret@127.0.0.1:1/none", {
      connectTimeoutMs: 2000,
    });
    dbs.push(away);
    const refused = await failure(openPgSessionStore(away));
    expect(refused.code).toBe("locked");
    expect(refused.message).toContain("127.0.0.1:1");
    expect(refused.message).not.toContain("hunter2secret");
    // Refused at sign-in (no such database, no such role): where, and what to check.
    for (const wrong of [
      url.replace(/\/[^/]+$/, "/no_such_db"),
      url.replace("postgres://postgres@", "postgres://nobody:hunter2secret@"),
    ]) {
      const db = await openPgDatabase(wrong, { connectTimeoutMs: 2000 });
      dbs.push(db);
      const signIn = await failure(openPgSessionStore(db));
      expect(signIn.code).toBe("locked");
      expect(signIn.message).toMatch(
        /refused the connection .*(no_such_db|nobody).*check the URL, user and password/,
      );
      expect(signIn.message).not.toContain("hunter2secret");
    }
  });

  it("refuses a database a newer Hermes migrated, so nothing reads or writes it under an older schema", async () => {
    const { db, store } = await open();
    const s = await store.createSession({ source: "cli" });
    await db.query("INSERT INTO hermes_migrations (version, name) VALUES (9000, 'from the future')");
    const newer = await failure(openPgSessionStore(db));
    expect(newer.code).toBe("invalid");
    expect(newer.message).toMatch(/versions this Hermes does not know \(9000\).*newer Hermes; upgrade/);
    // The session written before is still there for the newer Hermes.
    await db.query("DELETE FROM hermes_migrations WHERE version = 9000");
    expect((await (await openPgSessionStore(db)).getSession(s.id))?.id).toBe(s.id);
  });

  it("survives a crashed server: calls fail as locked meanwhile, then work again with nothing lost", async () => {
    const { store } = await open();
    const s = await store.createSession({ source: "cli" });
    await store.appendMessage(s.id, { role: "user", content: "before" });
    await pg.kill();
    const during = await failure(store.appendMessage(s.id, { role: "user", content: "while down" }));
    expect(during.code).toBe("locked");
    await pg.start();
    await store.appendMessage(s.id, { role: "user", content: "after" });
    expect((await store.conversation(s.id)).map((m) => m.content)).toEqual(["before", "after"]);
  }, 60_000);

  it("recovers sessions from another state.db into PostgreSQL, skipping those already here", async () => {
    const path = join(dir, "old.db");
    const { sessionIds } = createPythonStateDb(path);
    const { store } = await open();
    const sqlite = openSessionStore(path);
    const [first] = await all(sqlite);
    await sqlite.close();
    await store.importSession(first!);
    const report = await store.recoverFrom(path);
    expect(report).toMatchObject({ kind: "sqlite", readable: true });
    expect(report.sessions).toMatchObject({ recovered: sessionIds.length - 1, skipped: 1 });
    expect(report.messages.skipped).toBe(first!.messages.length);
    expect((await store.stats()).sessions).toBe(sessionIds.length);
    expect(
      (await store.conversation(sessionIds[2]!)).some((m) => String(m.content).includes("今天天气很好")),
    ).toBe(true);
    const again = await store.recoverFrom(path);
    expect(again.sessions.recovered).toBe(0);

    const unsaved = writeUnsavedFile(dir, path, []);
    const refused = await failure(store.recoverFrom(unsaved));
    expect(refused.code).toBe("invalid");
    expect(refused.message).toMatch(/unsaved-writes/);
    expect((await failure(store.recoverFrom(join(dir, "missing.db")))).code).toBe("not_found");
    writeFileSync(join(dir, "notes.txt"), "hello");
    expect(await store.recoverFrom(join(dir, "notes.txt"))).toMatchObject({ kind: "none", readable: false });
  });

  it("imports legacy JSONL transcripts once", async () => {
    const legacy = join(dir, "sessions");
    mkdirSync(legacy);
    writeFileSync(
      join(legacy, "20250101_120000_abcdef.jsonl"),
      [
        JSON.stringify({ role: "session_meta", platform: "telegram", model: "m", timestamp: 1_735_732_800 }),
        JSON.stringify({ role: "user", content: "old question" }),
        "not json",
        JSON.stringify({ role: "assistant", content: "old answer" }),
      ].join("\n"),
    );
    const { store } = await open();
    expect(await store.importLegacyJsonl(legacy)).toEqual({ sessions: 1, messages: 2, skipped: 1 });
    expect(await store.getSession("20250101_120000_abcdef")).toMatchObject({
      source: "telegram",
      model: "m",
      messageCount: 2,
    });
    expect(await store.importLegacyJsonl(legacy)).toEqual({ sessions: 0, messages: 0, skipped: 0 });
  });

  it("reports what PostgreSQL has: table bytes, and a word or trigram index only when one exists", async () => {
    const db = await openPgDatabase(url, { max: 2 });
    dbs.push(db);
    await migrate(db, SESSION_MIGRATIONS);
    const store = await openPgSessionStore(db);
    const stats = await store.stats();
    expect(stats).toMatchObject({ sessions: 0, fts: false, trigram: false, schemaVersion: 102 });
    expect(stats.bytes).toBeGreaterThan(0);
    await db.query("CREATE EXTENSION IF NOT EXISTS pg_trgm");
    await db.query("CREATE INDEX t_trgm ON messages USING gin (content gin_trgm_ops)");
    await db.query("CREATE INDEX t_fts ON messages USING gin (to_tsvector('simple', coalesce(content, '')))");
    expect(await store.stats()).toMatchObject({ fts: true, trigram: true });
    expect(store.path).toContain("127.0.0.1");
  });

  it("closing the store leaves the shared pool open unless asked to end it", async () => {
    const { db, store } = await open();
    await store.close();
    await store.close();
    expect(await db.query("SELECT 1 AS one")).toEqual([{ one: 1 }]);
    expect((await failure(store.getSession("x"))).code).toBe("invalid");
    const own = await openPgDatabase(url, { max: 1 });
    const owning = await openPgSessionStore(own, { closeDatabase: true });
    await owning.createSession({ id: "kept", source: "cli" });
    await owning.close();
    await expect(own.query("SELECT 1")).rejects.toThrow();
    expect(await (await open(false)).store.getSession("kept")).toMatchObject({ id: "kept", source: "cli" });
  });
});
