/**
 * `hermes insights`: what happened in the last N days, from state.db alone. A session belongs to
 * the window when it started inside it; its messages and tool calls count with it (all stored
 * messages, undone ones included: the work happened and the tokens were spent).
 */
import type { StoreContext } from "./context.js";
import { type Insights, type InsightsOptions, type ModelUsage, SessionStoreError } from "./types.js";
import { localDaySql, localOffsets } from "./usage-series.js";

function localDay(seconds: number): string {
  const d = new Date(seconds * 1000);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

/** Every local calendar day from `since` to `until`, oldest first. */
export function daysBetween(since: number, until: number): string[] {
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
const money = (v: unknown) => (v === null || v === undefined ? null : Number(v));

/**
 * One session's cost as insights counts it: the invoiced amount when recorded, else the estimate;
 * null when unknown. `unpriced` when some of its usage had no known price: status `unknown` (Python
 * Hermes then stores 0, which is not a price), or tokens spent with no cost recorded at all.
 */
export function sessionCost(row: { actual: unknown; estimated: unknown; status: unknown; tokens: number }): {
  usd: number | null;
  unpriced: boolean;
} {
  const value = (v: unknown) => (v === null || v === undefined || v === "" ? null : Number(v));
  let usd = value(row.actual) ?? value(row.estimated);
  if (usd !== null && !Number.isFinite(usd)) usd = null;
  const unknown = row.status === "unknown";
  if (unknown && usd === 0) usd = null;
  return { usd, unpriced: unknown || (usd === null && row.tokens > 0) };
}

/** The connections that have `hermes_session_cost_usd` (see `costSql`). */
const withCostFunction = new WeakSet<object>();

/**
 * SQL for one session's cost and whether it is unpriced, exactly as `sessionCost` decides them.
 * Numbers and NULLs are decided in SQL; a text or blob cost (hand-edited or very old rows) goes to
 * `sessionCost` itself through a registered function, so its parsing rules stay the one source.
 */
function costSql(ctx: StoreContext): { usd: string; unpriced: string } {
  if (!withCostFunction.has(ctx.db)) {
    ctx.db.function(
      "hermes_session_cost_usd",
      { deterministic: true },
      (actual, estimated, status) => sessionCost({ actual, estimated, status, tokens: 0 }).usd,
    );
    withCostFunction.add(ctx.db);
  }
  const a = ctx.s("actual_cost_usd", "NULL");
  const e = ctx.s("estimated_cost_usd", "NULL");
  const status = ctx.s("cost_status", "NULL");
  const raw = `COALESCE(${a}, ${e})`;
  const usd = `(CASE WHEN typeof(${a}) IN ('text', 'blob') OR typeof(${e}) IN ('text', 'blob')
      THEN hermes_session_cost_usd(${a}, ${e}, ${status})
    WHEN ${raw} IS NULL OR abs(${raw}) > 1.7976931348623157e308 THEN NULL
    WHEN ${status} = 'unknown' AND ${raw} = 0 THEN NULL ELSE ${raw} END)`;
  const tokens = "(COALESCE(s.input_tokens, 0) + COALESCE(s.output_tokens, 0))";
  const unpriced = `(CASE WHEN ${status} = 'unknown' OR (${usd} IS NULL AND ${tokens} > 0) THEN 1 ELSE 0 END)`;
  return { usd, unpriced };
}

/**
 * Aggregated in SQLite: one GROUP BY over the window's sessions (by local day, model and source),
 * one over their messages (by day and source) and the two tool-call counts, so no session row
 * comes into JavaScript. Costs are summed per group in SQL and the groups added here: the cost
 * rule is per session and reads only stored columns (no price lookup by model), so grouping keeps
 * it; only the order of floating-point additions differs from a session-by-session sum. Days are
 * named as usage-series names them (the local UTC offsets as SQL literals).
 */
export function insights(ctx: StoreContext, options: InsightsOptions = {}): Insights {
  const until = options.now ?? ctx.now();
  const days = options.days ?? 30;
  if (!Number.isFinite(days) || days <= 0) {
    throw new SessionStoreError("invalid", `insights needs a positive number of days, got ${days}.`);
  }
  const since = until - days * 86_400;
  const window = `s.started_at >= ? AND s.started_at <= ?${options.source !== undefined ? " AND s.source = ?" : ""}`;
  const params: unknown[] = [since, until, ...(options.source !== undefined ? [options.source] : [])];
  const day = localDaySql("s.started_at", localOffsets(since, until));
  const cost = costSql(ctx);

  return ctx.read(() => {
    const groups = ctx.all(
      `SELECT ${day} AS day, COALESCE(NULLIF(s.model, ''), 'unknown') AS model, s.source AS source,
              COUNT(*) AS sessions, SUM(${ctx.s("api_call_count", "0")}) AS api_calls,
              SUM(s.input_tokens) AS input_tokens, SUM(s.output_tokens) AS output_tokens,
              SUM(s.cache_read_tokens) AS cache_read_tokens, SUM(${ctx.s("reasoning_tokens", "0")}) AS reasoning_tokens,
              SUM(${cost.usd}) AS cost, SUM(${cost.unpriced}) AS unpriced
       FROM sessions s WHERE ${window} GROUP BY day, model, source`,
      ...params,
    );
    const messageGroups = ctx.all(
      `SELECT ${day} AS day, s.source AS source, COUNT(*) AS messages, SUM(m.role = 'user') AS user_messages
       FROM sessions s JOIN messages m ON m.session_id = s.id WHERE ${window} GROUP BY day, source`,
      ...params,
    );

    const fromCalls = ctx.all(
      `SELECT json_extract(j.value, '$.function.name') AS name, COUNT(*) AS n
       FROM sessions s JOIN messages m ON m.session_id = s.id,
            json_each(CASE WHEN json_valid(m.tool_calls) AND json_type(m.tool_calls) = 'array' THEN m.tool_calls ELSE '[]' END) j
       WHERE ${window} AND m.role = 'assistant' AND m.tool_calls IS NOT NULL
       GROUP BY name`,
      ...params,
    );
    // Sessions whose assistant rows carry no tool_calls (older writers) still have their tool rows.
    const fromResults = ctx.all(
      `SELECT m.tool_name AS name, COUNT(*) AS n FROM sessions s JOIN messages m ON m.session_id = s.id
       WHERE ${window} AND m.role = 'tool' AND m.tool_name IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM messages a WHERE a.session_id = s.id AND a.role = 'assistant' AND a.tool_calls IS NOT NULL)
       GROUP BY m.tool_name`,
      ...params,
    );
    return insightsFromGroups(since, until, groups, messageGroups, [...fromCalls, ...fromResults]);
  });
}

type Row = Record<string, unknown>;

/**
 * The report from the aggregated rows both backends compute in SQL: `groups` per day, model and
 * source (sessions, calls, tokens, cost), `messageGroups` per day and source, `toolRows` tool
 * names with counts (a name may come twice: from calls and from tool results).
 */
export function insightsFromGroups(
  since: number,
  until: number,
  groups: readonly Row[],
  messageGroups: readonly Row[],
  toolRows: readonly Row[],
): Insights {
  const tools = new Map<string, number>();
  for (const r of toolRows) {
    if (typeof r["name"] !== "string" || r["name"] === "") continue;
    tools.set(r["name"], (tools.get(r["name"]) ?? 0) + num(r["n"]));
  }

  const byModel = new Map<string, ModelUsage>();
  const bySource = new Map<string, Insights["bySource"][number]>();
  const perDay = new Map<string, { sessions: number; messages: number }>(
    daysBetween(since, until).map((d) => [d, { sessions: 0, messages: 0 }]),
  );
  const sourceOf = (r: Record<string, unknown>) => {
    const name = String(r["source"]);
    const s = bySource.get(name) ?? {
      source: name,
      sessions: 0,
      messages: 0,
      inputTokens: 0,
      outputTokens: 0,
      costUsd: null,
      unpricedSessions: 0,
    };
    bySource.set(name, s);
    return s;
  };
  const dayOf = (r: Record<string, unknown>) => {
    const name = String(r["day"]);
    const d = perDay.get(name) ?? { sessions: 0, messages: 0 };
    perDay.set(name, d);
    return d;
  };
  let sessions = 0;
  let messages = 0;
  let userMessages = 0;
  let totalCost: number | null = null;
  let unpricedSessions = 0;
  for (const r of groups) {
    const n = num(r["sessions"]);
    const usd = money(r["cost"]);
    const unpriced = num(r["unpriced"]);
    sessions += n;
    totalCost = addCost(totalCost, usd);
    unpricedSessions += unpriced;
    const model = String(r["model"]);
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
    m.sessions += n;
    m.apiCalls += num(r["api_calls"]);
    m.inputTokens += num(r["input_tokens"]);
    m.outputTokens += num(r["output_tokens"]);
    m.cacheReadTokens += num(r["cache_read_tokens"]);
    m.reasoningTokens += num(r["reasoning_tokens"]);
    m.costUsd = addCost(m.costUsd, usd);
    m.unpricedSessions += unpriced;
    byModel.set(model, m);

    const s = sourceOf(r);
    s.sessions += n;
    s.inputTokens += num(r["input_tokens"]);
    s.outputTokens += num(r["output_tokens"]);
    s.costUsd = addCost(s.costUsd, usd);
    s.unpricedSessions += unpriced;

    dayOf(r).sessions += n;
  }
  for (const r of messageGroups) {
    const n = num(r["messages"]);
    sourceOf(r).messages += n;
    dayOf(r).messages += n;
    messages += n;
    userMessages += num(r["user_messages"]);
  }

  const toolList = [...tools.entries()]
    .map(([name, calls]) => ({ name, calls }))
    .sort((a, b) => b.calls - a.calls || a.name.localeCompare(b.name));
  return {
    since,
    until,
    sessions,
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
