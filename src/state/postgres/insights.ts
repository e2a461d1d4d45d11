/**
 * `insights` and `usageSeries` for PostgreSQL, aggregated in SQL like their SQLite counterparts
 * (insights.ts, usage-series.ts): a session belongs to the window (and the local day) it started
 * in; its cost is the invoiced amount when recorded, else the estimate, none when unknown (see
 * `sessionCost`); tool calls come from the assistant rows' `tool_calls`, or from the tool rows of
 * sessions whose assistant rows carry none. Days are local calendar days of this process, named
 * with the same offsets as SQLite's (`localOffsets`), so both backends put a session on one day.
 */

import { insightsFromGroups } from "../insights.js";
import type { Insights, InsightsOptions } from "../types.js";
import { SessionStoreError } from "../types.js";
import { localOffsets, usageSeriesFromRows } from "../usage-series.js";
import type { UsageSeries, UsageSeriesOptions } from "../usage-series-types.js";
import type { PgQueryable } from "./database.js";

/** SQL for the local calendar day (`YYYY-MM-DD`) of `column` (epoch seconds); offsets are our own integers. */
export function pgLocalDaySql(
  column: string,
  offsets: ReadonlyArray<{ end: number; offset: number }>,
): string {
  const int = (n: number) => String(Math.trunc(n));
  const last = offsets[offsets.length - 1]?.offset ?? 0;
  const shift =
    offsets.length === 1
      ? int(last)
      : `CASE ${offsets
          .slice(0, -1)
          .map((o) => `WHEN ${column} < ${int(o.end)} THEN ${int(o.offset)}`)
          .join(" ")} ELSE ${int(last)} END`;
  return `to_char(to_timestamp(${column} + ${shift}) AT TIME ZONE 'UTC', 'YYYY-MM-DD')`;
}

/** One session's cost and whether it is unpriced, as `sessionCost` decides them. */
const RAW = "COALESCE(s.actual_cost_usd, s.estimated_cost_usd)";
const COST = `(CASE WHEN ${RAW} IS NULL OR ${RAW} IN ('Infinity'::float8, '-Infinity'::float8, 'NaN'::float8) THEN NULL
  WHEN s.cost_status = 'unknown' AND ${RAW} = 0 THEN NULL ELSE ${RAW} END)`;
const TOKENS = "(COALESCE(s.input_tokens, 0) + COALESCE(s.output_tokens, 0))";
const UNPRICED = `(CASE WHEN s.cost_status = 'unknown' OR (${COST} IS NULL AND ${TOKENS} > 0) THEN 1 ELSE 0 END)`;

/** Each element of an assistant row's `tool_calls` array (nothing for invalid JSON or a non-array). */
const CALLS = `jsonb_array_elements(CASE WHEN jsonb_typeof(hermes_try_jsonb(m.tool_calls)) = 'array'
  THEN hermes_try_jsonb(m.tool_calls) ELSE '[]'::jsonb END) AS j(value)`;
const CALL_NAME = `(CASE WHEN jsonb_typeof(j.value -> 'function' -> 'name') = 'string' THEN j.value -> 'function' ->> 'name' END)`;
const NO_CALL_ROWS =
  "NOT EXISTS (SELECT 1 FROM messages a WHERE a.session_id = s.id AND a.role = 'assistant' AND a.tool_calls IS NOT NULL)";

const _addCost = (a: number | null, b: number | null): number | null => (b === null ? a : (a ?? 0) + b);

interface Window {
  since: number;
  until: number;
  where: string;
  params: unknown[];
  day: string;
}

function windowOf(
  options: { days?: number; source?: string; now?: number },
  now: number,
  what: string,
): Window {
  const until = options.now ?? now;
  const days = options.days ?? 30;
  if (!Number.isFinite(days) || days <= 0) {
    throw new SessionStoreError("invalid", `${what} needs a positive number of days, got ${days}.`);
  }
  const since = until - days * 86_400;
  const filtered = options.source !== undefined;
  return {
    since,
    until,
    where: `s.started_at >= $1 AND s.started_at <= $2${filtered ? " AND s.source = $3" : ""}`,
    params: [since, until, ...(filtered ? [options.source] : [])],
    day: pgLocalDaySql("s.started_at", localOffsets(since, until)),
  };
}

/** `SessionStore.insights` for PostgreSQL; `now` (seconds) when `options.now` is not given. */
export async function pgInsights(
  db: PgQueryable,
  options: InsightsOptions = {},
  now: number = Date.now() / 1000,
): Promise<Insights> {
  const w = windowOf(options, now, "insights");
  const [groups, messageGroups, fromCalls, fromResults] = await Promise.all([
    db.query(
      `SELECT ${w.day} AS day, COALESCE(NULLIF(s.model, ''), 'unknown') AS model, s.source AS source,
              COUNT(*) AS sessions, SUM(s.api_call_count) AS api_calls,
              SUM(s.input_tokens) AS input_tokens, SUM(s.output_tokens) AS output_tokens,
              SUM(s.cache_read_tokens) AS cache_read_tokens, SUM(s.reasoning_tokens) AS reasoning_tokens,
              SUM(${COST}) AS cost, SUM(${UNPRICED}) AS unpriced
       FROM sessions s WHERE ${w.where} GROUP BY 1, 2, 3`,
      w.params,
    ),
    db.query(
      `SELECT ${w.day} AS day, s.source AS source, COUNT(*) AS messages,
              COUNT(*) FILTER (WHERE m.role = 'user') AS user_messages
       FROM sessions s JOIN messages m ON m.session_id = s.id WHERE ${w.where} GROUP BY 1, 2`,
      w.params,
    ),
    db.query(
      `SELECT ${CALL_NAME} AS name, COUNT(*) AS n
       FROM sessions s JOIN messages m ON m.session_id = s.id CROSS JOIN LATERAL ${CALLS}
       WHERE ${w.where} AND m.role = 'assistant' AND m.tool_calls IS NOT NULL GROUP BY 1`,
      w.params,
    ),
    db.query(
      `SELECT m.tool_name AS name, COUNT(*) AS n FROM sessions s JOIN messages m ON m.session_id = s.id
       WHERE ${w.where} AND m.role = 'tool' AND m.tool_name IS NOT NULL AND ${NO_CALL_ROWS}
       GROUP BY m.tool_name`,
      w.params,
    ),
  ]);

  return insightsFromGroups(w.since, w.until, groups, messageGroups, [...fromCalls, ...fromResults]);
}

/** `SessionStore.usageSeries` for PostgreSQL; `now` (seconds) when `options.now` is not given. */
export async function pgUsageSeries(
  db: PgQueryable,
  options: UsageSeriesOptions = {},
  now: number = Date.now() / 1000,
): Promise<UsageSeries> {
  const w = windowOf(options, now, "usage");
  // usage-series.ts prices without the infinity guard insights has; kept identical here.
  const cost = `(CASE WHEN s.cost_status = 'unknown' AND ${RAW} = 0 THEN NULL ELSE ${RAW} END)`;
  const unpriced = `(CASE WHEN s.cost_status = 'unknown' OR (${cost} IS NULL AND ${TOKENS} > 0) THEN 1 ELSE 0 END)`;
  const [rows, calls, sources] = await Promise.all([
    db.query(
      `SELECT ${w.day} AS day, COALESCE(NULLIF(s.model, ''), 'unknown') AS model, COUNT(*) AS sessions,
              SUM(s.api_call_count) AS api_calls,
              SUM(s.input_tokens) AS input_tokens, SUM(s.output_tokens) AS output_tokens,
              SUM(s.cache_read_tokens) AS cache_read_tokens, SUM(s.reasoning_tokens) AS reasoning_tokens,
              SUM(${cost}) AS cost, SUM(${unpriced}) AS unpriced
       FROM sessions s WHERE ${w.where}
       GROUP BY 1, 2`,
      w.params,
    ),
    db.query(
      `SELECT day, SUM(n) AS n FROM (
         SELECT ${w.day} AS day, COUNT(*) AS n
         FROM sessions s JOIN messages m ON m.session_id = s.id CROSS JOIN LATERAL ${CALLS}
         WHERE ${w.where} AND m.role = 'assistant' AND m.tool_calls IS NOT NULL AND ${CALL_NAME} <> ''
         GROUP BY 1
         UNION ALL
         SELECT ${w.day} AS day, COUNT(*) AS n FROM sessions s JOIN messages m ON m.session_id = s.id
         WHERE ${w.where} AND m.role = 'tool' AND m.tool_name IS NOT NULL AND m.tool_name <> '' AND ${NO_CALL_ROWS}
         GROUP BY 1
       ) t GROUP BY day`,
      w.params,
    ),
    db.query(
      `SELECT s.source AS source, COUNT(*) AS n FROM sessions s
       WHERE s.started_at >= $1 AND s.started_at <= $2 GROUP BY s.source ORDER BY n DESC, s.source COLLATE "C"`,
      [w.since, w.until],
    ),
  ]);
  // Day, then model in byte order (SQLite's BINARY collation), whatever the database's collation.
  const order = (a: unknown, b: unknown) => (String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0);
  rows.sort((a, b) => order(a["day"], b["day"]) || order(a["model"], b["model"]));
  return usageSeriesFromRows(w.since, w.until, rows, calls, sources);
}
