/**
 * `/api/usage`: the insights data (`hermes insights`) over time for the Usage page's charts. The
 * totals, models, sources and tools are `insights()`; each `perDay` row also carries that day's
 * tokens, cost and tool calls, and `perDayByModel` splits them by model (state/usage-series.ts,
 * aggregated in SQLite).
 */
import type { SessionStore } from "../state/types.js";
import { intParam, type Route } from "./http.js";

/** The store the route reads: insights and the per-day series. */
export type UsageStore = Pick<SessionStore, "insights" | "usageSeries">;

const EMPTY_DAY = {
  apiCalls: 0,
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  reasoningTokens: 0,
  costUsd: null as number | null,
  unpricedSessions: 0,
  toolCalls: 0,
};

export function usageRoutes(store: UsageStore): Route[] {
  return [
    {
      method: "GET",
      path: "/api/usage",
      summary:
        "usage over time (the insights data): tokens, cost, tool calls and sessions by model, source and day (days ≤ 3650, source)",
      handler: async ({ query }) => {
        const days = Math.max(1, intParam(query, "days", 30, 3650));
        const source = query.get("source") || undefined;
        const options = { days, ...(source ? { source } : {}) };
        // Awaited, so the route reads a store whose queries answer promises as well.
        const totals = await store.insights(options);
        // The same window as insights, so a day's numbers add up to the totals.
        const series = await store.usageSeries({ ...options, now: totals.until });
        const byDay = new Map(series.days.map((d) => [d.day, d]) ?? []);
        const perDay = totals.perDay.map((d) => {
          const extra = byDay.get(d.day);
          return {
            ...EMPTY_DAY,
            ...(extra ? { ...extra } : {}),
            day: d.day,
            sessions: d.sessions,
            messages: d.messages,
          };
        });
        return {
          json: {
            ...totals,
            days,
            source: source ?? null,
            perDay,
            perDayByModel: series?.byModel ?? [],
            sources:
              series?.sources ?? totals.bySource.map((s) => ({ source: s.source, sessions: s.sessions })),
          },
        };
      },
    },
  ];
}
