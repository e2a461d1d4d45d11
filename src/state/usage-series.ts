/**
 * Usage over time for the dashboard's charts: per local calendar day (and per day and model) the
 * sessions started, their tokens, API calls, cost and tool calls, counted the way `insights` counts
 * them (a session belongs to the day it started; its cost is the invoiced amount when recorded,
 * else the estimate, unknown when neither or when the status says `unknown` with 0). Aggregated in
 * SQLite with one GROUP BY pass over the window's sessions plus one over their tool calls, never a
 * query per day, so a year over 100k sessions stays a few index range scans. Days are local
 * calendar days, as `insights` names them.
 */
import type { StoreContext } from "./context.js";
import { SessionStoreError } from "./types.js";
import type { UsagePoint, UsageSeries, UsageSeriesOptions } from "./usage-series-types.js";

export type { UsagePoint, UsageSeries, UsageSeriesOptions };

/**
 * The local UTC offsets over [since, until] as segments (each offset in seconds holds until `end`),
 * found by checking each day and bisecting to the second where the offset changes (DST). SQLite's
 * own `'localtime'` calls the C library once per row, about ten times slower over a year of
 * sessions than adding the offset; and JavaScript's clock is the one `insights` names days by.
 */
export function localOffsets(since: number, until: number): Array<{ end: number; offset: number }> {
  const offset = (s: number) => 0 - new Date(s * 1000).getTimezoneOffset() * 60;
  const out: Array<{ end: number; offset: number }> = [];
  let current = offset(since);
  let previous = Math.floor(since);
  for (let i = 0; i < 20_000 && previous < until; i++) {
    const next = Math.min(previous + 86_400, Math.ceil(until));
    const o = offset(next);
    if (o !== current) {
      let lo = previous;
      let hi = next;
      while (hi - lo > 1) {
        const mid = Math.floor((lo + hi) / 2);
        if (offset(mid) === current) lo = mid;
        else hi = mid;
      }
      out.push({ end: hi, offset: current });
      current = o;
    }
    previous = next;
  }
  out.push({ end: Number.POSITIVE_INFINITY, offset: current });
  return out;
}

/** SQL for the local calendar day of `column` (epoch seconds) with the offsets as literals. */
export function localDaySql(column: string, offsets: ReadonlyArray<{ end: number; offset: number }>): string {
  const last = offsets[offsets.length - 1]?.offset ?? 0;
  const shift =
    offsets.length === 1
      ? String(last)
      : `CASE ${offsets
          .slice(0, -1)
          .map((o) => `WHEN ${column} < ${o.end} THEN ${o.offset}`)
          .join(" ")} ELSE ${last} END`;
  return `date(${column} + ${shift}, 'unixepoch')`;
}

const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));
const money = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

export function usageSeries(ctx: StoreContext, options: UsageSeriesOptions = {}): UsageSeries {
  const until = options.now ?? ctx.now();
  const days = options.days ?? 30;
  if (!Number.isFinite(days) || days <= 0) {
    throw new SessionStoreError("invalid", `usage needs a positive number of days, got ${days}.`);
  }
  const since = until - days * 86_400;
  const filtered = options.source !== undefined;
  const window = `s.started_at >= ? AND s.started_at <= ?${filtered ? " AND s.source = ?" : ""}`;
  const params: unknown[] = [since, until, ...(filtered ? [options.source] : [])];
  const day = localDaySql("s.started_at", localOffsets(since, until));
  const actual = ctx.s("actual_cost_usd", "NULL");
  const estimated = ctx.s("estimated_cost_usd", "NULL");
  const status = ctx.s("cost_status", "NULL");
  // Per session: actual, else estimated; an `unknown` status with 0 is no price (see sessionCost).
  const cost = `CASE WHEN ${status} = 'unknown' AND COALESCE(${actual}, ${estimated}) = 0 THEN NULL ELSE COALESCE(${actual}, ${estimated}) END`;
  const tokens = "(COALESCE(s.input_tokens, 0) + COALESCE(s.output_tokens, 0))";
  const unpriced = `CASE WHEN ${status} = 'unknown' OR (${cost} IS NULL AND ${tokens} > 0) THEN 1 ELSE 0 END`;

  return ctx.read(() => {
    const rows = ctx.all(
      `SELECT ${day} AS day, COALESCE(NULLIF(s.model, ''), 'unknown') AS model, COUNT(*) AS sessions,
              SUM(${ctx.s("api_call_count", "0")}) AS api_calls,
              SUM(s.input_tokens) AS input_tokens, SUM(s.output_tokens) AS output_tokens,
              SUM(s.cache_read_tokens) AS cache_read_tokens, SUM(${ctx.s("reasoning_tokens", "0")}) AS reasoning_tokens,
              SUM(${cost}) AS cost, SUM(${unpriced}) AS unpriced
       FROM sessions s WHERE ${window}
       GROUP BY day, model ORDER BY day, model`,
      ...params,
    );
    // Tool calls from the assistant rows' tool_calls; sessions whose assistant rows carry none
    // (older writers) count their tool result rows instead, as insights does.
    const calls = ctx.all(
      `SELECT day, SUM(n) AS n FROM (
         SELECT ${day} AS day, COUNT(*) AS n
         FROM sessions s JOIN messages m ON m.session_id = s.id,
              json_each(CASE WHEN json_valid(m.tool_calls) AND json_type(m.tool_calls) = 'array' THEN m.tool_calls ELSE '[]' END) j
         WHERE ${window} AND m.role = 'assistant' AND m.tool_calls IS NOT NULL
           AND json_type(j.value, '$.function.name') = 'text' AND json_extract(j.value, '$.function.name') <> ''
         GROUP BY day
         UNION ALL
         SELECT ${day} AS day, COUNT(*) AS n FROM sessions s JOIN messages m ON m.session_id = s.id
         WHERE ${window} AND m.role = 'tool' AND m.tool_name IS NOT NULL AND m.tool_name <> ''
           AND NOT EXISTS (SELECT 1 FROM messages a WHERE a.session_id = s.id AND a.role = 'assistant' AND a.tool_calls IS NOT NULL)
         GROUP BY day
       ) GROUP BY day`,
      ...params,
      ...params,
    );
    const sources = ctx.all(
      `SELECT s.source AS source, COUNT(*) AS n FROM sessions s
       WHERE s.started_at >= ? AND s.started_at <= ? GROUP BY s.source ORDER BY n DESC, s.source`,
      since,
      until,
    );

    return usageSeriesFromRows(since, until, rows, calls, sources);
  });
}

/**
 * The series from the backend's three aggregates (either dialect's): `rows` per day and model
 * (ordered by day, then model in byte order), `calls` tool calls per day, `sources` sessions per
 * source. Days fold the per-model rows; a day's cost is null until one of its models has one.
 */
export function usageSeriesFromRows(
  since: number,
  until: number,
  rows: ReadonlyArray<Record<string, unknown>>,
  calls: ReadonlyArray<Record<string, unknown>>,
  sources: ReadonlyArray<Record<string, unknown>>,
): UsageSeries {
  const toolCalls = new Map(calls.map((r) => [String(r["day"]), num(r["n"])]));
  const perDay = new Map<string, UsagePoint & { toolCalls: number }>();
  const byModel: UsageSeries["byModel"] = [];
  for (const r of rows) {
    const point: UsagePoint = {
      day: String(r["day"]),
      sessions: num(r["sessions"]),
      apiCalls: num(r["api_calls"]),
      inputTokens: num(r["input_tokens"]),
      outputTokens: num(r["output_tokens"]),
      cacheReadTokens: num(r["cache_read_tokens"]),
      reasoningTokens: num(r["reasoning_tokens"]),
      costUsd: money(r["cost"]),
      unpricedSessions: num(r["unpriced"]),
    };
    byModel.push({ ...point, model: String(r["model"]) });
    const d = perDay.get(point.day);
    if (!d) {
      perDay.set(point.day, { ...point, toolCalls: toolCalls.get(point.day) ?? 0 });
      continue;
    }
    d.sessions += point.sessions;
    d.apiCalls += point.apiCalls;
    d.inputTokens += point.inputTokens;
    d.outputTokens += point.outputTokens;
    d.cacheReadTokens += point.cacheReadTokens;
    d.reasoningTokens += point.reasoningTokens;
    d.costUsd = point.costUsd === null ? d.costUsd : (d.costUsd ?? 0) + point.costUsd;
    d.unpricedSessions += point.unpricedSessions;
  }
  return {
    since,
    until,
    days: [...perDay.values()],
    byModel,
    sources: sources.map((r) => ({ source: String(r["source"]), sessions: num(r["n"]) })),
  };
}
