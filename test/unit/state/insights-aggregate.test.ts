/**
 * `insights` aggregates in SQLite; this compares it with the session-by-session implementation it
 * replaced (kept here, verbatim in its rules, as the reference) on a varied seeded store: models
 * with and without prices (and a blank model), several sources, days across a DST change, recorded
 * actual costs, `unknown` statuses with 0, text and infinite cost cells, tool calls from assistant
 * rows and from tool rows of older writers. Everything must match exactly except cost sums, whose
 * floating-point additions happen in another order.
 */
import { join } from "node:path";
import type BetterSqlite3 from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Message } from "../../../src/ai/types.js";
import { sessionCost } from "../../../src/state/insights.js";
import { openSqliteStore } from "../../../src/state/sqlite-store.js";
import type { Insights, InsightsOptions, ModelUsage } from "../../../src/state/types.js";
import { rawDb, useTempStores } from "./helpers.js";

const temp = useTempStores();
const DAY = 86_400;

function localDay(seconds: number): string {
  const d = new Date(seconds * 1000);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

function daysBetween(since: number, until: number): string[] {
  const out: string[] = [];
  const d = new Date(since * 1000);
  d.setHours(12, 0, 0, 0);
  const last = localDay(until);
  for (let i = 0; i < 20_000; i++) {
    const day = localDay(d.getTime() / 1000);
    out.push(day);
    if (day >= last) break;
    d.setDate(d.getDate() + 1);
  }
  return out;
}

const addCost = (a: number | null, b: number | null): number | null => (b === null ? a : (a ?? 0) + b);
const num = (v: unknown) => (v === null || v === undefined ? 0 : Number(v));
type Row = Record<string, unknown>;

/** The previous implementation: every session row of the window, two counting sub-queries each. */
function reference(db: BetterSqlite3.Database, until: number, days: number, source?: string): Insights {
  const since = until - days * DAY;
  const window = `s.started_at >= ? AND s.started_at <= ?${source !== undefined ? " AND s.source = ?" : ""}`;
  const params: unknown[] = [since, until, ...(source !== undefined ? [source] : [])];
  const sessions = db
    .prepare(
      `SELECT s.id, s.source, s.model, s.started_at, s.input_tokens, s.output_tokens, s.cache_read_tokens,
              s.reasoning_tokens, s.api_call_count, s.estimated_cost_usd AS estimated_cost,
              s.actual_cost_usd AS actual_cost, s.cost_status,
              (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id) AS messages,
              (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id AND m.role = 'user') AS user_messages
       FROM sessions s WHERE ${window} ORDER BY s.started_at`,
    )
    .all(...params) as Row[];
  const tools = new Map<string, number>();
  const fromCalls = db
    .prepare(
      `SELECT json_extract(j.value, '$.function.name') AS name, COUNT(*) AS n
       FROM sessions s JOIN messages m ON m.session_id = s.id,
            json_each(CASE WHEN json_valid(m.tool_calls) AND json_type(m.tool_calls) = 'array' THEN m.tool_calls ELSE '[]' END) j
       WHERE ${window} AND m.role = 'assistant' AND m.tool_calls IS NOT NULL GROUP BY name`,
    )
    .all(...params) as Row[];
  const fromResults = db
    .prepare(
      `SELECT m.tool_name AS name, COUNT(*) AS n FROM sessions s JOIN messages m ON m.session_id = s.id
       WHERE ${window} AND m.role = 'tool' AND m.tool_name IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM messages a WHERE a.session_id = s.id AND a.role = 'assistant' AND a.tool_calls IS NOT NULL)
       GROUP BY m.tool_name`,
    )
    .all(...params) as Row[];
  for (const r of [...fromCalls, ...fromResults]) {
    if (typeof r["name"] !== "string" || r["name"] === "") continue;
    tools.set(r["name"], (tools.get(r["name"]) ?? 0) + num(r["n"]));
  }
  const byModel = new Map<string, ModelUsage>();
  const bySource = new Map<string, Insights["bySource"][number]>();
  const perDay = new Map<string, { sessions: number; messages: number }>(
    daysBetween(since, until).map((d) => [d, { sessions: 0, messages: 0 }]),
  );
  let messages = 0;
  let userMessages = 0;
  let totalCost: number | null = null;
  let unpricedSessions = 0;
  for (const r of sessions) {
    const cost = sessionCost({
      actual: r["actual_cost"],
      estimated: r["estimated_cost"],
      status: r["cost_status"],
      tokens: num(r["input_tokens"]) + num(r["output_tokens"]),
    });
    const unpriced = cost.unpriced ? 1 : 0;
    totalCost = addCost(totalCost, cost.usd);
    unpricedSessions += unpriced;
    const model = typeof r["model"] === "string" && r["model"] ? r["model"] : "unknown";
    const m = byModel.get(model) ?? {
      model,
      sessions: 0,
      apiCalls: 0,
      inputTokens: 0,
      outputTokens: 0,
      cacheReadTokens: 0,
      reasoningTokens: 0,
      costUsd: null,
      unpricedSessions: 0,
    };
    m.sessions++;
    m.apiCalls += num(r["api_call_count"]);
    m.inputTokens += num(r["input_tokens"]);
    m.outputTokens += num(r["output_tokens"]);
    m.cacheReadTokens += num(r["cache_read_tokens"]);
    m.reasoningTokens += num(r["reasoning_tokens"]);
    m.costUsd = addCost(m.costUsd, cost.usd);
    m.unpricedSessions += unpriced;
    byModel.set(model, m);
    const src = String(r["source"]);
    const s = bySource.get(src) ?? {
      source: src,
      sessions: 0,
      messages: 0,
      inputTokens: 0,
      outputTokens: 0,
      costUsd: null,
      unpricedSessions: 0,
    };
    s.sessions++;
    s.messages += num(r["messages"]);
    s.inputTokens += num(r["input_tokens"]);
    s.outputTokens += num(r["output_tokens"]);
    s.costUsd = addCost(s.costUsd, cost.usd);
    s.unpricedSessions += unpriced;
    bySource.set(src, s);
    const day = localDay(Number(r["started_at"]));
    const d = perDay.get(day) ?? { sessions: 0, messages: 0 };
    d.sessions++;
    d.messages += num(r["messages"]);
    perDay.set(day, d);
    messages += num(r["messages"]);
    userMessages += num(r["user_messages"]);
  }
  const toolList = [...tools.entries()]
    .map(([name, calls]) => ({ name, calls }))
    .sort((a, b) => b.calls - a.calls || a.name.localeCompare(b.name));
  return {
    since,
    until,
    sessions: sessions.length,
    messages,
    userMessages,
    toolCalls: toolList.reduce((sum, t) => sum + t.calls, 0),
    tools: toolList,
    costUsd: totalCost,
    unpricedSessions,
    byModel: [...byModel.values()].sort((a, b) => b.sessions - a.sessions || a.model.localeCompare(b.model)),
    bySource: [...bySource.values()].sort(
      (a, b) => b.sessions - a.sessions || a.source.localeCompare(b.source),
    ),
    perDay: [...perDay.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([day, v]) => ({ day, ...v })),
  };
}

/** Costs compared to 12 significant digits; everything else exactly. */
function expectSame(actual: Insights, expected: Insights): void {
  const costs = (i: Insights) => [
    i.costUsd,
    ...i.byModel.map((m) => m.costUsd),
    ...i.bySource.map((s) => s.costUsd),
  ];
  const strip = (i: Insights) => ({
    ...i,
    costUsd: i.costUsd === null,
    byModel: i.byModel.map((m) => ({ ...m, costUsd: m.costUsd === null })),
    bySource: i.bySource.map((s) => ({ ...s, costUsd: s.costUsd === null })),
  });
  expect(strip(actual)).toEqual(strip(expected));
  const a = costs(actual);
  const e = costs(expected);
  expect(a.length).toBe(e.length);
  a.forEach((v, i) => {
    const want = e[i] ?? null;
    if (v === null || want === null) expect(v).toBe(want);
    else expect(Math.abs(v - want)).toBeLessThanOrEqual(1e-12 * Math.max(1, Math.abs(want)));
  });
}

// A fixed sequence: the store is the same on every run.
function random(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1_103_515_245 + 12_345) % 2_147_483_648;
    return x / 2_147_483_648;
  };
}

const MODELS = ["claude-sonnet-4", "gpt-5", "local-llama", "", "mystery-model"];
const SOURCES = ["cli", "telegram", "discord", "cron"];
const TOOLS = ["terminal", "read_file", "web_search", "patch", ""];
// Noon UTC on 20 March 2026; New York moved its clocks on 8 March.
const NOW = Date.UTC(2026, 2, 20, 12) / 1000;

describe("insights aggregated in SQLite", () => {
  const saved = process.env["TZ"];
  beforeAll(() => {
    process.env["TZ"] = "America/New_York";
  });
  afterAll(() => {
    if (saved === undefined) delete process.env["TZ"];
    else process.env["TZ"] = saved;
  });

  it("matches the session-by-session implementation on a varied store", () => {
    expect(new Date(Date.UTC(2026, 0, 1)).getTimezoneOffset()).toBe(300);
    const path = join(temp.dir(), "state.db");
    const store = openSqliteStore(path, { now: () => NOW });
    const rnd = random(7);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)] as T;
    const ids: string[] = [];
    for (let i = 0; i < 240; i++) {
      // Spread over 45 days, with a cluster around the DST change (2026-03-08 07:00 UTC).
      const at =
        i % 4 === 0
          ? Date.UTC(2026, 2, 8, 7) / 1000 + Math.floor((rnd() - 0.5) * 12 * 3600)
          : NOW - rnd() * 45 * DAY;
      const s = store.createSession({ source: pick(SOURCES), model: pick(MODELS), startedAt: at });
      ids.push(s.id);
      const messages: Message[] = [];
      const turns = Math.floor(rnd() * 4);
      for (let t = 0; t < turns; t++) {
        messages.push({ role: "user", content: `question ${t}` });
        const older = i % 5 === 0;
        const name = pick(TOOLS);
        if (rnd() < 0.6) {
          messages.push(
            older
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
    // Pinned edges: half an hour after local midnight on each side of the change (a fixed offset
    // would name the wrong day for one of them), and a model whose only price is `unknown` with 0.
    const edges = [Date.UTC(2026, 2, 7, 5, 30) / 1000, Date.UTC(2026, 2, 10, 4, 30) / 1000];
    for (const at of edges) {
      const s = store.createSession({ source: "cli", model: "free-unknown", startedAt: at });
      store.appendMessages(s.id, [{ role: "user", content: "edge" }]);
    }
    store.close();

    const db = rawDb(path);
    const set = db.prepare(
      `UPDATE sessions SET input_tokens = ?, output_tokens = ?, cache_read_tokens = ?, reasoning_tokens = ?,
         api_call_count = ?, estimated_cost_usd = ?, actual_cost_usd = ?, cost_status = ? WHERE id = ?`,
    );
    const costs: Array<[unknown, unknown, string | null]> = [
      [0.0123, null, "estimated"],
      [0.5, 0.4567, "actual"],
      [0, null, "unknown"],
      [0.2, null, "unknown"],
      [null, null, null],
      [0, null, "included"],
      ["garbage", null, null],
      ["", 0.75, "actual"],
      [Number.POSITIVE_INFINITY, null, "estimated"],
      [0.1, 0.2, "estimated"],
    ];
    ids.forEach((id, i) => {
      const model = db.prepare("SELECT model FROM sessions WHERE id = ?").get(id) as { model: string };
      // Unpriced models never carry a cost; the rest cycle through every cost shape.
      const [estimated, actual, status] =
        model.model === "mystery-model"
          ? [null, null, null]
          : (costs[i % costs.length] ?? [null, null, null]);
      const tokens = i % 7 === 0 ? 0 : Math.floor(rnd() * 50_000);
      set.run(tokens, Math.floor(tokens / 10), i * 3, i % 2, i % 9, estimated, actual, status, id);
    });
    db.prepare(
      "UPDATE sessions SET input_tokens = 10, estimated_cost_usd = 0, cost_status = 'unknown' WHERE model = 'free-unknown'",
    ).run();
    db.close();

    const reread = temp.track(openSqliteStore(path, { now: () => NOW }));
    const check = rawDb(path, { readonly: true });
    const cases: InsightsOptions[] = [
      { days: 30 },
      { days: 7 },
      { days: 60 },
      { days: 0.5 },
      { days: 30, source: "telegram" },
      { days: 60, source: "nowhere" },
    ];
    for (const c of cases) {
      const got = reread.insights({ ...c, now: NOW });
      expectSame(got, reference(check, NOW, c.days ?? 30, c.source));
    }
    const wide = reread.insights({ days: 60, now: NOW });
    check.close();
    // The store really is varied: the comparison saw every shape.
    expect(wide.byModel.map((m) => m.model)).toEqual(
      expect.arrayContaining(["unknown", "mystery-model", "gpt-5"]),
    );
    expect(wide.byModel.find((m) => m.model === "mystery-model")?.costUsd).toBeNull();
    expect(wide.unpricedSessions).toBeGreaterThan(0);
    expect(wide.costUsd).toBeGreaterThan(0);
    expect(wide.perDay.map((d) => d.day)).toEqual(expect.arrayContaining(["2026-03-07", "2026-03-08"]));
    expect(wide.tools.length).toBeGreaterThan(2);
    expect(wide.byModel.find((m) => m.model === "free-unknown")).toMatchObject({
      costUsd: null,
      unpricedSessions: 2,
    });
    const day = (d: string) => wide.perDay.find((p) => p.day === d)?.sessions ?? 0;
    expect(day("2026-03-07") + day("2026-03-10")).toBeGreaterThanOrEqual(2);
  });
});
