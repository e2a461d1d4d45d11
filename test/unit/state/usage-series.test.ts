/**
 * The per-day usage series behind the dashboard's charts: its days add up to `insights` over the
 * same window, costs follow insights' rules (actual over estimate, `unknown` with 0 is no price),
 * tool calls count per day, the source filter narrows everything but the list of sources, and the
 * query plan stays a GROUP BY over the window (no per-day queries).
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openSqliteStore } from "../../../src/state/sqlite-store.js";
import type { SqliteSessionStoreHandle } from "../../../src/state/types.js";
import { localOffsets } from "../../../src/state/usage-series.js";
import { useTempStores } from "./helpers.js";

const temp = useTempStores();
const DAY = 86_400;
// Noon UTC on a fixed date; days are local, so the test derives its expected days the same way.
const NOW = Date.UTC(2026, 10, 20, 12) / 1000;
const localDay = (s: number) => {
  const d = new Date(s * 1000);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
};

function seeded(): SqliteSessionStoreHandle {
  let clock = NOW - 3 * DAY;
  const store = openSqliteStore(join(temp.dir(), "state.db"), { now: () => clock });
  temp.track(store);
  const session = (at: number, source: "cli" | "telegram", model: string) => {
    clock = at;
    return store.createSession({ source, model, startedAt: at });
  };
  const a = session(NOW - 3 * DAY, "cli", "model-a");
  store.appendMessages(a.id, [
    { role: "user", content: "list files" },
    {
      role: "assistant",
      content: "",
      tool_calls: [
        { id: "c1", type: "function", function: { name: "terminal", arguments: "{}" } },
        { id: "c2", type: "function", function: { name: "read_file", arguments: "{}" } },
      ],
    },
    { role: "tool", tool_call_id: "c1", name: "terminal", content: "ok" },
    { role: "tool", tool_call_id: "c2", name: "read_file", content: "ok" },
  ]);
  store.recordUsage(a.id, { inputTokens: 1000, outputTokens: 200, costUsd: 0.5, costStatus: "estimated" });
  const b = session(NOW - 3 * DAY + 60, "telegram", "model-b");
  store.recordUsage(b.id, { inputTokens: 300, outputTokens: 30, costUsd: 0, costStatus: "unknown" });
  const c = session(NOW - DAY, "cli", "model-a");
  store.appendMessages(c.id, [
    { role: "user", content: "hi" },
    {
      role: "assistant",
      content: "",
      tool_calls: [{ id: "c3", type: "function", function: { name: "terminal", arguments: "{}" } }],
    },
    { role: "tool", tool_call_id: "c3", name: "terminal", content: "ok" },
  ]);
  store.recordUsage(c.id, { inputTokens: 50, outputTokens: 5, costUsd: 0.25, costStatus: "estimated" });
  // Outside a 7-day window.
  const old = session(NOW - 40 * DAY, "cli", "model-a");
  store.recordUsage(old.id, { inputTokens: 9999, outputTokens: 9999, costUsd: 9 });
  clock = NOW;
  return store;
}

describe("usageSeries", () => {
  it("adds up to insights per day and in total, by model, with insights' cost rules", () => {
    const store = seeded();
    const series = store.usageSeries({ days: 7, now: NOW });
    const totals = store.insights({ days: 7, now: NOW });
    expect(series.days.map((d) => d.day)).toEqual([localDay(NOW - 3 * DAY), localDay(NOW - DAY)]);
    const [first, second] = series.days;
    expect(first).toMatchObject({
      sessions: 2,
      inputTokens: 1300,
      outputTokens: 230,
      costUsd: 0.5,
      unpricedSessions: 1,
      toolCalls: 2,
    });
    expect(second).toMatchObject({ sessions: 1, inputTokens: 50, costUsd: 0.25, toolCalls: 1 });
    const sum = (f: (d: (typeof series.days)[number]) => number) => series.days.reduce((n, d) => n + f(d), 0);
    expect(sum((d) => d.sessions)).toBe(totals.sessions);
    expect(sum((d) => d.toolCalls)).toBe(totals.toolCalls);
    expect(sum((d) => d.costUsd ?? 0)).toBeCloseTo(totals.costUsd ?? 0);
    expect(sum((d) => d.unpricedSessions)).toBe(totals.unpricedSessions);
    expect(sum((d) => d.inputTokens)).toBe(totals.byModel.reduce((n, m) => n + m.inputTokens, 0));
    expect(series.byModel.map((m) => [m.day, m.model, m.sessions, m.costUsd])).toEqual([
      [localDay(NOW - 3 * DAY), "model-a", 1, 0.5],
      [localDay(NOW - 3 * DAY), "model-b", 1, null],
      [localDay(NOW - DAY), "model-a", 1, 0.25],
    ]);
    expect(series.sources).toEqual([
      { source: "cli", sessions: 2 },
      { source: "telegram", sessions: 1 },
    ]);
  });

  it("narrows to a source but still lists every source, and refuses a bad window", () => {
    const store = seeded();
    const series = store.usageSeries({ days: 7, now: NOW, source: "telegram" });
    expect(series.days).toHaveLength(1);
    expect(series.days[0]).toMatchObject({ sessions: 1, toolCalls: 0, costUsd: null });
    expect(series.sources.map((s) => s.source)).toEqual(["cli", "telegram"]);
    expect(store.usageSeries({ days: 365, now: NOW }).days).toHaveLength(3);
    expect(() => store.usageSeries({ days: 0 })).toThrow(/positive number of days/);
    expect(() => store.usageSeries({ days: Number.NaN })).toThrow(/positive number of days/);
  });

  it("is empty for a window without sessions", () => {
    const store = seeded();
    const series = store.usageSeries({ days: 1, now: NOW + 100 * DAY });
    expect(series).toMatchObject({ days: [], byModel: [] });
  });
});

describe("localOffsets", () => {
  it("finds the second a daylight-saving change happens, and one offset where there is none", () => {
    const zone = process.env["TZ"];
    try {
      process.env["TZ"] = "Europe/Berlin";
      // 2026-03-29 01:00 UTC: CET (+1 h) becomes CEST (+2 h).
      const change = Date.UTC(2026, 2, 29, 1) / 1000;
      const segments = localOffsets(change - 10 * DAY, change + 10 * DAY);
      expect(segments).toEqual([
        { end: change, offset: 3600 },
        { end: Number.POSITIVE_INFINITY, offset: 7200 },
      ]);
      process.env["TZ"] = "UTC";
      expect(localOffsets(change - 400 * DAY, change)).toEqual([
        { end: Number.POSITIVE_INFINITY, offset: 0 },
      ]);
    } finally {
      if (zone === undefined) delete process.env["TZ"];
      else process.env["TZ"] = zone;
    }
  });

  it("names the days a DST change falls between as insights does", () => {
    const zone = process.env["TZ"];
    try {
      process.env["TZ"] = "America/New_York";
      const change = Date.UTC(2026, 10, 1, 6) / 1000; // 2026-11-01 02:00 EDT → 01:00 EST
      let clock = change - 5 * DAY;
      const store = openSqliteStore(join(temp.dir(), "state.db"), { now: () => clock });
      temp.track(store);
      for (const at of [
        change - 2 * 3600,
        change - 60,
        change + 60,
        change + 5 * 3600,
        change - 4 * DAY - 3,
      ]) {
        clock = at;
        store.createSession({ source: "cli", startedAt: at });
      }
      const now = change + DAY;
      const series = store.usageSeries({ days: 7, now });
      const insights = store.insights({ days: 7, now });
      expect(series.days.map((d) => [d.day, d.sessions])).toEqual(
        insights.perDay.filter((d) => d.sessions > 0).map((d) => [d.day, d.sessions]),
      );
    } finally {
      if (zone === undefined) delete process.env["TZ"];
      else process.env["TZ"] = zone;
    }
  });
});
