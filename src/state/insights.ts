/**
 * `hermes insights`: what happened in the last N days, from state.db alone. A session belongs to
 * the window when it started inside it; its messages and tool calls count with it (all stored
 * messages, undone ones included: the work happened and the tokens were spent).
 */
import type { StoreContext } from "./context.js";
import { type Insights, type InsightsOptions, type ModelUsage, SessionStoreError } from "./types.js";

function localDay(seconds: number): string {
  const d = new Date(seconds * 1000);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

/** Every local calendar day from `since` to `until`, oldest first. */
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

export function insights(ctx: StoreContext, options: InsightsOptions = {}): Insights {
  const until = options.now ?? ctx.now();
  const days = options.days ?? 30;
  if (!Number.isFinite(days) || days <= 0) {
    throw new SessionStoreError("invalid", `insights needs a positive number of days, got ${days}.`);
  }
  const since = until - days * 86_400;
  const window = `s.started_at >= ? AND s.started_at <= ?${options.source !== undefined ? " AND s.source = ?" : ""}`;
  const params: unknown[] = [since, until, ...(options.source !== undefined ? [options.source] : [])];
  const num = (v: unknown) => (v === null || v === undefined ? 0 : Number(v));

  return ctx.read(() => {
    const sessions = ctx.all(
      `SELECT s.id, s.source, s.model, s.started_at, s.input_tokens, s.output_tokens, s.cache_read_tokens,
              ${ctx.s("reasoning_tokens", "0")} AS reasoning_tokens, ${ctx.s("api_call_count", "0")} AS api_call_count,
              ${ctx.s("estimated_cost_usd", "NULL")} AS estimated_cost, ${ctx.s("actual_cost_usd", "NULL")} AS actual_cost,
              ${ctx.s("cost_status", "NULL")} AS cost_status,
              (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id) AS messages,
              (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id AND m.role = 'user') AS user_messages
       FROM sessions s WHERE ${window} ORDER BY s.started_at`,
      ...params,
    );

    const tools = new Map<string, number>();
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

      const source = String(r["source"]);
      const s = bySource.get(source) ?? {
        source,
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
      bySource.set(source, s);

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
      byModel: [...byModel.values()].sort(
        (a, b) => b.sessions - a.sessions || a.model.localeCompare(b.model),
      ),
      bySource: [...bySource.values()].sort(
        (a, b) => b.sessions - a.sessions || a.source.localeCompare(b.source),
      ),
      perDay: [...perDay.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([day, v]) => ({ day, ...v })),
    };
  });
}
