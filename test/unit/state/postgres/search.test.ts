/**
 * PostgreSQL search against SQLite search on the same rows: a store-built state.db and a
 * Python-written one are copied into PostgreSQL (ids kept), then a fixed table of queries (words,
 * phrases, prefixes, OR/NOT, punctuation, CJK, emoji, substrings, injection attempts, filters) must
 * find the same messages, so the same sessions, in both (ranking may differ).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Message } from "../../../../src/ai/types.js";
import { openPgDatabase, type PgDatabase } from "../../../../src/state/postgres/database.js";
import { migrate } from "../../../../src/state/postgres/migrate.js";
import { MIGRATIONS } from "../../../../src/state/postgres/migrations/index.js";
import { pgSearch } from "../../../../src/state/postgres/search.js";
import { openSqliteStore } from "../../../../src/state/sqlite-store.js";
import type { SearchOptions, SyncSessionStore } from "../../../../src/state/types.js";
import { copySqliteStateToPg } from "../../../support/pg-copy-state.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../../../support/postgres.js";
import { createPythonStateDb } from "../../../support/python-state-db.js";
import { manualClock } from "../helpers.js";

const dir = mkdtempSync(join(tmpdir(), "hermes-pg-search-"));

/** The store-built fixture: every kind of text the query table below looks for. */
function buildSqlite(path: string): { store: SyncSessionStore; ids: Record<string, number>; main: string } {
  const clock = manualClock(1_750_000_000);
  const store = openSqliteStore(path, { now: clock.now });
  const ids: Record<string, number> = {};
  const sessions = {
    main: store.createSession({ source: "cli", title: "Main work", model: "m/a" }).id,
    tg: store.createSession({ source: "telegram", model: "m/b" }).id,
    api: store.createSession({ source: "api-server" }).id,
  };
  const add = (session: keyof typeof sessions, key: string, message: Message) => {
    clock.advance(1);
    ids[key] = store.appendMessage(sessions[session], message);
  };
  const user = (content: string): Message => ({ role: "user", content });
  const assistant = (content: string): Message => ({ role: "assistant", content });
  add("main", "quote", user('Why does deploy.sh fail with an "unbalanced quote?'));
  add("main", "prefix", assistant("The foobar helper and foo*bar globbing are unrelated."));
  add("main", "dash", user("Run it with -bar to skip the progress bar."));
  add("main", "colon", assistant("Set a:b in the config, then restart."));
  add("main", "paren", user("Call f(x) and g(y) please"));
  add("main", "and", assistant("Apples AND oranges, or apples OR pears, NOT bananas."));
  add("main", "cpp", user("I write c++ and C# at work."));
  add("main", "whats", user("what's the weather like"));
  add("main", "emoji", user("party time 🎉 with friends 😀"));
  add("main", "cjk", assistant("今天天气很好，我们去公园吧"));
  add("main", "tool", {
    role: "tool",
    content: "zebra crossing found in logs",
    tool_call_id: "c1",
    name: "search_files",
  });
  add("main", "docker", user("Edit the Dockerfile and rebuild the image"));
  add("main", "url", user("See https://example.com/docs/connection-pool.html for details"));
  add("main", "path", assistant("The bug is in src/state/search.ts line 40"));
  add("main", "pool", assistant("Raise the connection pool size to 20"));
  add("main", "split", user("the connection, then the pool"));
  add("main", "call", {
    role: "assistant",
    content: "",
    tool_calls: [
      { id: "c2", type: "function", function: { name: "read_file", arguments: '{"path":"/etc/hosts"}' } },
    ],
  });
  add("main", "case", user("PostgreSQL Replication Lag"));
  add("main", "numbers", assistant("version 3.14 released"));
  add("main", "percent", user("100% done with under_score names"));
  add("main", "parts", { role: "user", content: [{ type: "text", text: "a walrus in a content part" }] });
  add("main", "cafe", user("Meet me at the café by the Église at noon"));
  add("main", "creme", assistant("CRÈME BRÛLÉE for a naïve Bayes party"));
  add("main", "racer", user("a cafe racer motorbike"));
  add("tg", "tgzebra", user("a zebra at the zoo"));
  add("tg", "tgdocker", assistant("docker compose up -d restarts the stack"));
  add("tg", "tgjp", user("東京の天気は晴れです"));
  add("tg", "tgko", user("안녕하세요 반갑습니다"));
  add("api", "system", { role: "system", content: "You are a zebra expert" });
  add("api", "market", user("apples and pears at the market"));
  add("api", "narwhal", assistant("a narwhal was summarised away"));
  add("api", "undone", user("hippopotamus"));
  store.undoTurns(sessions.api, 1);
  return { store, ids, main: sessions.main };
}

/** The fixed query table: text plus options, each run against both backends. */
const QUERIES: Array<[string, Partial<SearchOptions>?]> = [
  ['"unbalanced'],
  ["foo*"],
  ["foobar"],
  ["-bar"],
  ["a:b"],
  ["f(x)"],
  ["AND"],
  ["apples OR pears"],
  ["apples NOT bananas"],
  ["NOT bananas"],
  ["apples AND pears"],
  ["c++"],
  ["what's"],
  ["🎉"],
  ["😀"],
  ["天气"],
  ["今天天气"],
  ["天气很好"],
  ["東京"],
  ["天気は晴れ"],
  ["안녕하세요"],
  ["ockerfi"],
  ["dockerfile"],
  ["docker"],
  ["dock*"],
  ['"connection pool"'],
  ["connection pool"],
  ["example.com"],
  ["example"],
  ["connection-pool"],
  ["search.ts"],
  ["src/state"],
  ["read_file"],
  ["hosts"],
  ["postgresql"],
  ["REPLICATION"],
  ["replic*"],
  ["3.14"],
  ["100%"],
  ["under_score"],
  ["_"],
  ["%"],
  ["*"],
  ["()"],
  ["walrus"],
  ["zebra"],
  ["zebra", { roles: ["tool"] }],
  ["zebra", { roles: ["system", "user"] }],
  ["zebra", { source: "telegram" }],
  ["docker", { source: "cli" }],
  ["narwhal"],
  ["hippopotamus"],
  ["xyzzy"],
  ["'); DROP TABLE messages; --"],
  ["a & b | !c:*"],
  ["<->"],
  ["\\"],
  ['x" OR "y'],
  ["NEAR(a b)"],
  ["cafe"],
  ["café"],
  ["CAFÉ"],
  ["caf*"],
  ["eglise"],
  ["creme brulee"],
  ['"crème brûlée"'],
  ["brûl*"],
  ["naive"],
  ["apples", { sort: "newest", limit: 1 }],
  ["apples", { sort: "oldest", limit: 1 }],
  ["the", { sort: "oldest", limit: 3 }],
];

async function openMigrated(pg: PostgresFixture): Promise<PgDatabase> {
  const db = await openPgDatabase(await pg.createDatabase());
  await migrate(db, MIGRATIONS);
  return db;
}

describe.skipIf(postgresSkipReason)("PostgreSQL search finds what SQLite search finds", () => {
  let pg: PostgresFixture;
  let built: ReturnType<typeof buildSqlite>;
  let db: PgDatabase;
  let python: SyncSessionStore;
  let pythonDb: PgDatabase;

  beforeAll(async () => {
    pg = await startPostgres();
    const file = join(dir, "state.db");
    built = buildSqlite(file);
    // The last turn is undone; mark one message as archived by compression (inactive, still searchable).
    built.store.close();
    const { default: Sqlite } = await import("better-sqlite3");
    const raw = new Sqlite(file);
    raw.prepare("UPDATE messages SET active = 0, compacted = 1 WHERE id = ?").run(built.ids["narwhal"]);
    raw.close();
    built.store = openSqliteStore(file);
    db = await openMigrated(pg);
    await copySqliteStateToPg(file, db);

    const pyFile = join(dir, "python", "state.db");
    createPythonStateDb(pyFile, { now: 1_750_000_000 });
    pythonDb = await openMigrated(pg);
    await copySqliteStateToPg(pyFile, pythonDb);
    python = openSqliteStore(pyFile);
  }, 60_000);

  afterAll(async () => {
    built?.store.close();
    python?.close();
    await db?.close();
    await pythonDb?.close();
    await pg?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  const compare = async (
    store: SyncSessionStore,
    pgdb: PgDatabase,
    query: string,
    extra: Partial<SearchOptions>,
  ) => {
    const options = { query, limit: 100, ...extra };
    const lite = store.search(options);
    const post = await pgSearch(pgdb, options);
    return { lite, post };
  };

  it.each(QUERIES)("%j %j: the same messages as SQLite (store-built state.db)", async (query, extra = {}) => {
    const { lite, post } = await compare(built.store, db, query, extra);
    if (extra.sort === "newest" || extra.sort === "oldest") {
      expect(post.map((h) => h.messageId)).toEqual(lite.map((h) => h.messageId));
    } else {
      expect(post.map((h) => h.messageId).sort()).toEqual(lite.map((h) => h.messageId).sort());
    }
    expect(new Set(post.map((h) => h.sessionId))).toEqual(new Set(lite.map((h) => h.sessionId)));
    // Same hit, same fields: snippet markers, titles, sources and models match one for one.
    const byId = new Map(lite.map((h) => [h.messageId, h]));
    for (const hit of post) expect(hit).toEqual(byId.get(hit.messageId));
  });

  it("finds what the table expects, not merely the same nothing on both sides", async () => {
    const ids = async (query: string, extra: Partial<SearchOptions> = {}) =>
      (await pgSearch(db, { query, limit: 100, ...extra })).map(
        (h) => Object.entries(built.ids).find(([, id]) => id === h.messageId)?.[0],
      );
    expect((await ids("天气")).sort()).toEqual(["cjk"]);
    expect(await ids("天気は晴れ")).toEqual(["tgjp"]);
    expect(await ids("ockerfi")).toEqual(["docker"]);
    expect((await ids('"connection pool"')).sort()).toEqual(["pool", "url"]);
    expect((await ids("connection pool")).sort()).toEqual(["pool", "split", "url"]);
    expect(await ids("search.ts")).toEqual(["path"]);
    expect(await ids("hosts")).toEqual(["call"]);
    expect((await ids("replic*")).sort()).toEqual(["case"]);
    expect(await ids("zebra", { roles: ["tool"] })).toEqual(["tool"]);
    expect(await ids("zebra", { source: "telegram" })).toEqual(["tgzebra"]);
    expect(await ids("narwhal")).toEqual(["narwhal"]);
    expect(await ids("hippopotamus")).toEqual([]);
    expect(await ids("walrus")).toEqual(["parts"]);
    expect((await ids("apples NOT bananas")).sort()).toEqual(["market"]);
    // Accents fold as in FTS5's unicode61 tokenizer, both ways and in any case.
    expect((await ids("cafe")).sort()).toEqual(["cafe", "racer"]);
    expect((await ids("CAFÉ")).sort()).toEqual(["cafe", "racer"]);
    expect(await ids("eglise")).toEqual(["cafe"]);
    expect(await ids('"creme brulee"')).toEqual(["creme"]);
    expect(await ids("naive")).toEqual(["creme"]);
    const [hit] = await pgSearch(db, { query: "Dockerfile" });
    expect(hit?.snippet).toBe("Edit the >>>Dockerfile<<< and rebuild the image");
    expect(hit?.sessionTitle).toBe("Main work");
    expect(hit?.model).toBe("m/a");
    expect(hit?.source).toBe("cli");
  });

  it("leaves a session out, honours the limit and finds nothing for blank text", async () => {
    const all = await pgSearch(db, { query: "apples", limit: 100 });
    expect(all.length).toBe(2);
    const outside = await pgSearch(db, { query: "apples", excludeSessionId: built.main });
    expect(outside.map((h) => h.source)).toEqual(["api-server"]);
    expect(await pgSearch(db, { query: "apples", limit: 1 })).toHaveLength(1);
    expect(await pgSearch(db, { query: "   " })).toEqual([]);
    expect(await pgSearch(db, { query: "" })).toEqual([]);
  });

  it("rejects a bad sort or role with the same clear error as SQLite, and injected SQL does nothing", async () => {
    const bad = [
      { query: "docker", sort: "random" as never },
      { query: "docker", roles: ["admin" as never] },
    ];
    for (const options of bad) {
      let lite: unknown;
      try {
        built.store.search(options);
      } catch (error) {
        lite = error;
      }
      expect(lite).toBeInstanceOf(Error);
      await expect(pgSearch(db, options)).rejects.toMatchObject({
        name: "SessionStoreError",
        code: "invalid",
        message: (lite as Error).message,
      });
    }
    for (const query of ["'); DROP TABLE messages; --", "x'::tsquery", "$1", "a:* & !b"]) {
      await expect(pgSearch(db, { query, source: "' OR 1=1 --" })).resolves.toEqual([]);
    }
    const [{ n }] = (await db.query<{ n: string }>("SELECT COUNT(*) AS n FROM messages")) as [{ n: string }];
    expect(Number(n)).toBe(Object.keys(built.ids).length);
  });

  it("stores a huge tool output (a tsvector holds at most 1 MB) and still finds words past the indexed part", async () => {
    const scratch = await openMigrated(pg);
    await scratch.query("INSERT INTO sessions (id, source, started_at) VALUES ('big', 'cli', 1)");
    const words = Array.from({ length: 200_000 }, (_, i) => `w${i.toString(36)}x`).join(" ");
    expect(words.length).toBeGreaterThan(1_000_000);
    await scratch.query(
      "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('big', 'assistant', $1, 2)",
      [`${words} zyzzogeton`],
    );
    const early = await pgSearch(scratch, { query: "w1x" });
    expect(early.map((h) => h.sessionId)).toEqual(["big"]);
    expect(early[0]?.snippet).toContain(">>>w1x<<<");
    // Past the word index's 256 K characters: the substring index answers instead.
    const late = await pgSearch(scratch, { query: "zyzzogeton" });
    expect(late.map((h) => h.sessionId)).toEqual(["big"]);
    expect(late[0]?.snippet).toContain(">>>zyzzogeton<<<");
    await scratch.close();
  });

  it("past the newest-ids probe: a rare word in the oldest row, a common one everywhere, every sort", async () => {
    const scratch = await openMigrated(pg);
    await scratch.query(
      "INSERT INTO sessions (id, source, started_at) VALUES ('a', 'cli', 1), ('b', 'telegram', 1)",
    );
    await scratch.query(
      `INSERT INTO messages (session_id, role, content, timestamp)
       SELECT CASE WHEN i % 2 = 0 THEN 'a' ELSE 'b' END, 'user',
              CASE WHEN i = 1 THEN 'the okapi hides'
                   WHEN i = 59400 THEN 'connection pool, connection pool and the connection pool again'
                   WHEN i = 400 THEN 'sparrow sparrow sparrow sparrow'
                   WHEN i = 30000 THEN 'the common sparrow, sparrow and sparrow connection pool'
                   WHEN i % 40 = 0 THEN 'the common ' || i || ' connection pool sparrow'
                   ELSE 'the common ' || i || ' connection pool' END, i
       FROM generate_series(1, 60000) AS i`,
    );
    const ids = async (query: string, extra: Partial<SearchOptions> = {}) =>
      (await pgSearch(scratch, { query, ...extra })).map((h) => h.messageId);
    expect(await ids("okapi")).toEqual([1]);
    expect(await ids("okapi", { sort: "newest" })).toEqual([1]);
    expect(await ids("okap")).toEqual([1]);
    expect(await ids("the", { sort: "newest", limit: 3 })).toEqual([60000, 59999, 59998]);
    expect(await ids("the", { sort: "oldest", limit: 3 })).toEqual([1, 2, 3]);
    expect(await ids('"connection pool"', { sort: "oldest", limit: 2 })).toEqual([2, 3]);
    expect(await ids("common", { source: "telegram", sort: "newest", limit: 2 })).toEqual([59999, 59997]);
    const ranked = await ids('"connection pool"', { limit: 100 });
    expect(ranked).toHaveLength(100);
    // Ranked within the newest 1000 matches, as SQLite ranks: the best of them comes first.
    expect(ranked.every((id) => id > 60000 - 1000)).toBe(true);
    expect(ranked[0]).toBe(59400);
    // One match in 40 ids: the first walk finds about 400, a second one reaches the newest 1000
    // (back to id 20 000), where the best of them is ranked first; an even better one older than
    // the window is not.
    const sparse = await ids("sparrow", { limit: 5 });
    expect(sparse[0]).toBe(30000);
    expect(sparse).not.toContain(400);
    expect(await ids("sparrow", { sort: "oldest", limit: 2 })).toEqual([40, 80]);
    expect((await ids("sparrow", { sort: "newest", limit: 2 })).slice(0, 2)).toEqual([60000, 59960]);
    await scratch.close();
  });

  it.each([
    ["tokenizer"],
    ["tokenize*"],
    ["parser.py"],
    ["read_file"],
    ["天气"],
    ["好主意"],
    ["grocery list"],
    ['"grocery list"'],
    ["apples OR benchmark"],
    ["regex NOT compiled"],
    ["3.1x"],
    ["first attempt"],
    ["tokenizer", { source: "telegram" }],
    ["tokenizer", { roles: ["tool"] }],
  ] as Array<[string, Partial<SearchOptions>?]>)(
    "%j %j: the same in a Python-written state.db copied into PostgreSQL",
    async (query, extra = {}) => {
      const { lite, post } = await compare(python, pythonDb, query, extra);
      expect(post.map((h) => h.messageId).sort()).toEqual(lite.map((h) => h.messageId).sort());
      expect(new Set(post.map((h) => h.sessionId))).toEqual(new Set(lite.map((h) => h.sessionId)));
    },
  );

  it("finds the Python file's sessions, not only agreeing on none", async () => {
    const sessions = async (query: string) =>
      new Set((await pgSearch(pythonDb, { query, limit: 100 })).map((h) => h.sessionId)).size;
    expect(await sessions("tokenizer")).toBe(2);
    expect(await sessions("天气")).toBe(1);
    expect(await sessions("grocery list")).toBe(1);
    expect(await sessions("first attempt")).toBe(0);
  });
});
