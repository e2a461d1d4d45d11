/**
 * A Python-written state.db moved into PostgreSQL stays searchable (issue 27): a home with the
 * file Python Hermes writes (test/support/python-state-db.ts) is migrated with
 * `hermes state migrate --to postgres URL`, and a second home whose config.yaml says
 * `state.backend: postgres` (its .env names the database, as every gateway instance's does)
 * runs the same `hermes sessions search --json` queries. Each query finds the same sessions in
 * PostgreSQL as in the SQLite file (ranking may differ, so sessions are compared as sets), and
 * the table is not trivially "both find nothing".
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runHermes, tempHome } from "../support/cli.js";
import { clusterHome } from "../support/gateway-cluster.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../support/postgres.js";
import { createPythonStateDb, type PythonSessionSeed } from "../support/python-state-db.js";

const T0 = 1_760_000_000;

/** Sessions as Python Hermes would have written them: words, code, paths, CJK, tool calls. */
const SEEDS: PythonSessionSeed[] = [
  {
    source: "cli",
    title: "Docker build cache",
    startedAt: T0,
    messages: [
      { role: "user", content: "Why does the Dockerfile rebuild every layer?" },
      { role: "assistant", content: "The COPY of the whole context busts the build cache." },
    ],
  },
  {
    source: "telegram",
    title: null,
    startedAt: T0 + 100,
    userId: "551",
    chatId: "551",
    messages: [
      { role: "user", content: "今天天气很好，我们去公园散步吧" },
      { role: "assistant", content: "好主意！公园里的樱花开了。" },
    ],
  },
  {
    source: "cli",
    title: "Connection pool sizing",
    startedAt: T0 + 200,
    messages: [
      { role: "user", content: "How large should the PostgreSQL connection pool be for replication?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "call_1",
            type: "function",
            function: { name: "read_file", arguments: '{"path": "src/state/pool.ts"}' },
          },
        ],
      },
      {
        role: "tool",
        tool_call_id: "call_1",
        tool_name: "read_file",
        content: "export const POOL_MAX = 10;",
      },
      { role: "assistant", content: "Ten connections per instance is plenty for replication lag checks." },
    ],
  },
  {
    source: "discord",
    title: "Apples and pears",
    startedAt: T0 + 300,
    messages: [
      { role: "user", content: "I have apples and pears but no bananas." },
      { role: "assistant", content: "A pear and apple crumble then." },
    ],
  },
  {
    source: "cli",
    title: "Bananas only",
    startedAt: T0 + 400,
    messages: [
      { role: "user", content: "Bananas are on sale; buy apples too?" },
      { role: "assistant", content: "Buy the bananas; skip the apples this week." },
    ],
  },
  {
    source: "slack",
    title: "Tokyo trip",
    startedAt: T0 + 500,
    messages: [
      { role: "user", content: "東京の天気は晴れですか？ Also check example.com for the hotel." },
      {
        role: "assistant",
        content: "Sunny in Tokyo tomorrow; the hotel page at example.com lists late check-in.",
      },
    ],
  },
];

/** The fixed query table: words, prefixes, phrases, boolean operators, substrings, CJK, tools. */
const QUERIES = [
  "dockerfile",
  "docker*",
  "cache",
  "build cache",
  '"build cache"',
  "apples",
  "apples OR pears",
  "apples NOT bananas",
  "apples AND pears",
  "bananas",
  "pool",
  "connection pool",
  "replication",
  "replic*",
  "read_file",
  "POOL_MAX",
  "天气",
  "今天天气",
  "公园",
  "東京",
  "天気は晴れ",
  "example.com",
  "tokyo",
  "nothing-matches-this-zzz",
];

let pg: PostgresFixture;
let sqliteHome: { home: string; cwd: string };
let pgHome: { home: string; cwd: string };
let ids: string[];

beforeAll(async () => {
  if (postgresSkipReason) return;
  pg = await startPostgres();
  sqliteHome = tempHome();
  ids = createPythonStateDb(join(sqliteHome.home, "state.db"), { sessions: SEEDS }).sessionIds;
  const url = await pg.createDatabase();
  const migrated = await runHermes(["state", "migrate", "--to", "postgres", url], sqliteHome);
  expect(migrated.code, migrated.stderr).toBe(0);
  // A home that keeps nothing itself: config.yaml says postgres, .env names the database.
  pgHome = clusterHome({ databaseUrl: url, llmUrl: "http://127.0.0.1:9/v1", apiServer: false });
}, 120_000);

afterAll(async () => {
  await pg?.dispose();
}, 60_000);

async function sessionsFound(h: { home: string; cwd: string }, query: string): Promise<string[]> {
  const result = await runHermes(["sessions", "search", query, "--json", "--limit", "100"], h);
  expect(result.code, `${query}: ${result.stderr}`).toBe(0);
  const hits = JSON.parse(result.stdout) as Array<{ sessionId: string }>;
  return [...new Set(hits.map((hit) => hit.sessionId))].sort();
}

describe.skipIf(postgresSkipReason)("a migrated Python state.db searched in PostgreSQL", () => {
  it("finds the same sessions as SQLite for every query of the table", async () => {
    const differences: string[] = [];
    let nonEmpty = 0;
    for (const query of QUERIES) {
      const [lite, post] = await Promise.all([
        sessionsFound(sqliteHome, query),
        sessionsFound(pgHome, query),
      ]);
      if (JSON.stringify(lite) !== JSON.stringify(post))
        differences.push(`${query}: sqlite ${JSON.stringify(lite)} postgres ${JSON.stringify(post)}`);
      if (lite.length > 0) nonEmpty++;
    }
    expect(differences).toEqual([]);
    // Most queries find something: the agreement is not on empty answers.
    expect(nonEmpty).toBeGreaterThanOrEqual(QUERIES.length - 3);
  }, 120_000);

  it("finds the Python file's sessions by their own ids", async () => {
    expect(await sessionsFound(pgHome, "今天天气")).toEqual([ids[1]]);
    expect(await sessionsFound(pgHome, "read_file")).toEqual([ids[2]]);
    expect(await sessionsFound(pgHome, "apples AND pears")).toEqual([ids[3]]);
  }, 30_000);
});
