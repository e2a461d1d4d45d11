/**
 * PostgreSQL insights, usage series and pruning against SQLite's on the same rows: a varied store
 * (models with and without prices, a blank model, several sources, days across a DST change,
 * actual and estimated costs, `unknown` with 0, an infinite cost, tool calls from assistant rows
 * and from older writers' tool rows, a Python-written file) copied into PostgreSQL, ids kept.
 * Everything must match exactly except cost sums, whose float additions may happen in another order.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Message } from "../../../../src/ai/types.js";
import { openPgDatabase, type PgDatabase } from "../../../../src/state/postgres/database.js";
import { pgInsights, pgUsageSeries } from "../../../../src/state/postgres/insights.js";
import { migrate } from "../../../../src/state/postgres/migrate.js";
import { MIGRATIONS } from "../../../../src/state/postgres/migrations/index.js";
import { openSqliteStore } from "../../../../src/state/sqlite-store.js";
import type { Insights, SyncSessionStore } from "../../../../src/state/types.js";
import { copySqliteStateToPg } from "../../../support/pg-copy-state.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../../../support/postgres.js";
import { createPythonStateDb } from "../../../support/python-state-db.js";
import { rawDb } from "../helpers.js";

const DAY = 86_400;
// Noon UTC on 20 March 2026; New York moved its clocks on 8 March.
const NOW = Date.UTC(2026, 2, 20, 12) / 1000;
const MODELS = ["claude-sonnet-4", "gpt-5", "local-llama", "", "mystery-model"];
const SOURCES = ["cli", "telegram", "discord", "cron"];
const TOOLS = ["terminal", "read_file", "web_search", "patch", ""];

function random(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1_103_515_245 + 12_345) % 2_147_483_648;
    return x / 2_147_483_648;
  };
}

function buildVaried(path: string): void {
  const store = openSqliteStore(path, { now: () => NOW });
  const rnd = random(11);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)] as T;
  const ids: string[] = [];
  for (let i = 0; i < 160; i++) {
    const at =
      i % 4 === 0
        ? Date.UTC(2026, 2, 8, 7) / 1000 + Math.floor((rnd() - 0.5) * 12 * 3600)
        : NOW - rnd() * 45 * DAY;
    const s = store.createSession({ source: pick(SOURCES), model: pick(MODELS), startedAt: at });
    ids.push(s.id);
    const messages: Message[] = [];
    for (let t = 0; t < Math.floor(rnd() * 4); t++) {
      messages.push({ role: "user", content: `question ${t}` });
      const name = pick(TOOLS);
      if (rnd() < 0.6) {
        messages.push(
          i % 5 === 0
            ? { role: "assistant", content: "" }
            : {
                role: "assistant",
                content: "",
                tool_calls: [{ id: `c${i}-${t}`, type: "function", function: { name, arguments: "{}" } }],
              },
        );
        messages.push({ role: "tool", tool_call_id: `c${i}-${t}`, name, content: "ok" });
      }
      messages.push({ role: "assistant", content: "done" });
    }
    if (messages.length) store.appendMessages(s.id, messages);
  }
  for (const at of [Date.UTC(2026, 2, 7, 5, 30) / 1000, Date.UTC(2026, 2, 10, 4, 30) / 1000]) {
    const s = store.createSession({ source: "cli", model: "free-unknown", startedAt: at });
    store.appendMessages(s.id, [{ role: "user", content: "edge" }]);
  }
  store.close();
  const db = rawDb(path);
  const set = db.prepare(
    `UPDATE sessions SET input_tokens = ?, output_tokens = ?, cache_read_tokens = ?, reasoning_tokens = ?,
       api_call_count = ?, estimated_cost_usd = ?, actual_cost_usd = ?, cost_status = ? WHERE id = ?`,
  );
  const costs: Array<[number | null, number | null, string | null]> = [
    [0.0123, null, "estimated"],
    [0.5, 0.4567, "actual"],
    [0, null, "unknown"],
    [0.2, null, "unknown"],
    [null, null, null],
    [0, null, "included"],
    [Number.POSITIVE_INFINITY, null, "estimated"],
    [0.1, 0.2, "estimated"],
  ];
  ids.forEach((id, i) => {
    const model = db.prepare("SELECT model FROM sessions WHERE id = ?").get(id) as { model: string };
    const [estimated, actual, status] =
      model.model === "mystery-model" ? [null, null, null] : (costs[i % costs.length] ?? [null, null, null]);
    const tokens = i % 7 === 0 ? 0 : Math.floor(rnd() * 50_000);
    set.run(tokens, Math.floor(tokens / 10), i * 3, i % 2, i % 9, estimated, actual, status, id);
  });
  // A malformed tool_calls cell from some other writer: counts nothing on either side.
  db.prepare(
    "UPDATE messages SET tool_calls = '{not json' WHERE id = (SELECT MIN(id) FROM messages WHERE role = 'assistant' AND tool_calls IS NOT NULL)",
  ).run();
  db.prepare(
    "UPDATE sessions SET input_tokens = 10, estimated_cost_usd = 0, cost_status = 'unknown' WHERE model = 'free-unknown'",
  ).run();
  db.close();
}

function costsOf(i: {
  costUsd: number | null;
  byModel?: Array<{ costUsd: number | null }>;
  bySource?: Array<{ costUsd: number | null }>;
}) {
  return [i.costUsd, ...(i.byModel ?? []).map((m) => m.costUsd), ...(i.bySource ?? []).map((s) => s.costUsd)];
}

function expectCloseCosts(actual: Array<number | null>, expected: Array<number | null>): void {
  expect(actual.length).toBe(expected.length);
  actual.forEach((v, i) => {
    const want = expected[i] ?? null;
    if (v === null || want === null || !Number.isFinite(want)) expect(v).toBe(want);
    else expect(Math.abs(v - want)).toBeLessThanOrEqual(1e-12 * Math.max(1, Math.abs(want)));
  });
}

function expectSameInsights(actual: Insights, expected: Insights): void {
  const strip = (i: Insights) => ({
    ...i,
    costUsd: i.costUsd === null,
    byModel: i.byModel.map((m) => ({ ...m, costUsd: m.costUsd === null })),
    bySource: i.bySource.map((s) => ({ ...s, costUsd: s.costUsd === null })),
  });
  expect(strip(actual)).toEqual(strip(expected));
  expectCloseCosts(costsOf(actual), costsOf(expected));
}

describe.skipIf(postgresSkipReason)("PostgreSQL insights and usage series equal SQLite's", () => {
  const saved = process.env["TZ"];
  const dir = mkdtempSync(join(tmpdir(), "hermes-pg-insights-"));
  let pg: PostgresFixture;
  let store: SyncSessionStore;
  let db: PgDatabase;
  let python: SyncSessionStore;
  let pythonDb: PgDatabase;

  beforeAll(async () => {
    process.env["TZ"] = "America/New_York";
    pg = await startPostgres();
    const file = join(dir, "state.db");
    buildVaried(file);
    store = openSqliteStore(file, { now: () => NOW });
    db = await openPgDatabase(await pg.createDatabase());
    await migrate(db, MIGRATIONS);
    await copySqliteStateToPg(file, db);
    const pyFile = join(dir, "py", "state.db");
    createPythonStateDb(pyFile, { now: NOW - 3 * DAY });
    python = openSqliteStore(pyFile, { now: () => NOW });
    pythonDb = await openPgDatabase(await pg.createDatabase());
    await migrate(pythonDb, MIGRATIONS);
    await copySqliteStateToPg(pyFile, pythonDb);
  }, 60_000);

  afterAll(async () => {
    store?.close();
    python?.close();
    await db?.close();
    await pythonDb?.close();
    await pg?.dispose();
    rmSync(dir, { recursive: true, force: true });
    if (saved === undefined) delete process.env["TZ"];
    else process.env["TZ"] = saved;
  });

  it.each([
    [{ days: 30 }],
    [{ days: 7 }],
    [{ days: 60 }],
    [{ days: 0.5 }],
    [{ days: 60, source: "telegram" }],
    [{ days: 60, source: "nowhere" }],
  ] as Array<[{ days: number; source?: string }]>)("insights %j", async (options) => {
    const lite = store.insights(options);
    const post = await pgInsights(db, options, NOW);
    expect(post.sessions).toBeGreaterThanOrEqual(options.source === "nowhere" ? 0 : 1);
    expectSameInsights(post, lite);
  });

  it.each([[{ days: 30 }], [{ days: 60 }], [{ days: 60, source: "cli" }], [{ days: 3 }]])(
    "usage series %j",
    async (options) => {
      const lite = store.usageSeries(options);
      const post = await pgUsageSeries(db, options, NOW);
      const strip = (u: typeof lite) => ({
        ...u,
        days: u.days.map((d) => ({ ...d, costUsd: d.costUsd === null })),
        byModel: u.byModel.map((d) => ({ ...d, costUsd: d.costUsd === null })),
      });
      expect(strip(post)).toEqual(strip(lite));
      expectCloseCosts(
        post.days.map((d) => d.costUsd),
        lite.days.map((d) => d.costUsd),
      );
      expect(post.days.length).toBeGreaterThan(0);
    },
  );

  it("counts a Python-written file's tools, messages and days the same", async () => {
    const lite = python.insights({ days: 30 });
    const post = await pgInsights(pythonDb, { days: 30 }, NOW);
    expect(post.tools).toEqual([{ name: "read_file", calls: 1 }]);
    expectSameInsights(post, lite);
    expect(await pgUsageSeries(pythonDb, { days: 30 }, NOW)).toEqual(python.usageSeries({ days: 30 }));
  });

  it("rejects a window that is not a positive number of days, as SQLite does", async () => {
    for (const days of [0, -1, Number.NaN]) {
      const lite = (() => {
        try {
          store.insights({ days });
        } catch (error) {
          return (error as Error).message;
        }
        return "";
      })();
      await expect(pgInsights(db, { days }, NOW)).rejects.toThrow(lite);
      await expect(pgUsageSeries(db, { days }, NOW)).rejects.toMatchObject({ code: "invalid" });
    }
  });
});
