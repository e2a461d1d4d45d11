/**
 * Usage: what the agent did and cost over 7, 30, 90 or 365 days (`#/usage?days=30&source=cli`),
 * from `GET /api/usage` (the insights data with per-day tokens, cost and tool calls). Totals as
 * cards, time charts per day, breakdowns by model, source and tool; every chart has its table.
 */
import { BarChart } from "../components/chart-bars.js";
import { TimeChart, type TimeSeries } from "../components/chart-time.js";
import { Empty, ErrorNote, Loading, PageHeader } from "../components/ui.js";
import { fmtCompact, fmtCost, fmtNumber } from "../format.js";
import { useApi } from "../hooks.js";
import { type Route, setQuery } from "../router.js";
import type { PageDef } from "./types.js";

interface UsageDay {
  day: string;
  sessions: number;
  messages: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  reasoningTokens: number;
  apiCalls: number;
  costUsd: number | null;
  unpricedSessions: number;
  toolCalls: number;
}

interface ModelUsage {
  model: string;
  sessions: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number | null;
  unpricedSessions: number;
}

/** The page's view of `GET /api/usage`. */
export interface UsageAnswer {
  days: number;
  sessions: number;
  messages: number;
  toolCalls: number;
  costUsd: number | null;
  unpricedSessions: number;
  tools: Array<{ name: string; calls: number }>;
  byModel: ModelUsage[];
  bySource: Array<{ source: string; sessions: number; inputTokens: number; outputTokens: number }>;
  perDay: UsageDay[];
  perDayByModel: Array<{
    day: string;
    model: string;
    costUsd: number | null;
    inputTokens: number;
    outputTokens: number;
  }>;
  sources: Array<{ source: string; sessions: number }>;
}

export const PERIODS = [7, 30, 90, 365] as const;
/** Models drawn as their own series in the per-day cost chart; the rest add up as "other". */
const TOP_MODELS = 5;

const shortDay = (day: string) => {
  const [, m, d] = day.split("-");
  return m && d ? `${Number(d)}/${Number(m)}` : day;
};

function costByModel(answer: UsageAnswer): TimeSeries[] {
  const models = answer.byModel.filter((m) => m.costUsd !== null).map((m) => m.model);
  const top = models.slice(0, TOP_MODELS);
  const index = new Map(answer.perDay.map((d, i) => [d.day, i]));
  const series = top.map((name) => ({ name, values: answer.perDay.map(() => null as number | null) }));
  const other: TimeSeries = { name: "other models", values: answer.perDay.map(() => null) };
  for (const row of answer.perDayByModel) {
    const i = index.get(row.day);
    if (i === undefined || row.costUsd === null) continue;
    const target = series.find((s) => s.name === row.model) ?? other;
    target.values[i] = (target.values[i] ?? 0) + row.costUsd;
  }
  return other.values.some((v) => v !== null) ? [...series, other] : series;
}

function Period({ days, source }: { days: number; source: string }) {
  return (
    <fieldset class="segmented">
      <legend class="sr-only">Period</legend>
      {PERIODS.map((p) => (
        <button
          key={p}
          type="button"
          class={`btn ${p === days ? "primary" : ""}`}
          aria-pressed={p === days}
          onClick={() => setQuery({ days: String(p), source: source || undefined })}
        >
          {p === 365 ? "1 year" : `${p} days`}
        </button>
      ))}
    </fieldset>
  );
}

function Totals({ u }: { u: UsageAnswer }) {
  const input = u.byModel.reduce((n, m) => n + m.inputTokens, 0);
  const output = u.byModel.reduce((n, m) => n + m.outputTokens, 0);
  return (
    <div class="cards usage-totals">
      <div class="card stat">
        <span class="stat-value">{fmtNumber(u.sessions)}</span>
        <span class="muted">sessions · {fmtCompact(u.messages)} messages</span>
      </div>
      <div class="card stat">
        <span class="stat-value">{fmtCompact(input + output)}</span>
        <span class="muted">
          tokens · {fmtCompact(input)} in, {fmtCompact(output)} out
        </span>
      </div>
      <div class="card stat">
        <span class="stat-value">{u.costUsd === null ? "–" : fmtCost(u.costUsd)}</span>
        <span class="muted">
          cost{u.unpricedSessions > 0 ? ` · ${u.unpricedSessions} sessions without a known price` : ""}
        </span>
      </div>
      <div class="card stat">
        <span class="stat-value">{fmtNumber(u.toolCalls)}</span>
        <span class="muted">tool calls</span>
      </div>
    </div>
  );
}

function Charts({ u }: { u: UsageAnswer }) {
  const xs = u.perDay.map((d) => d.day);
  const cost = costByModel(u);
  return (
    <>
      <div class="chart-grid-2">
        <div class="card">
          <TimeChart
            title="Tokens per day"
            xs={xs}
            formatX={shortDay}
            format={fmtCompact}
            formatTable={fmtNumber}
            series={[
              { name: "input", values: u.perDay.map((d) => d.inputTokens) },
              { name: "output", values: u.perDay.map((d) => d.outputTokens) },
            ]}
          />
        </div>
        <div class="card">
          {cost.length > 0 ? (
            <TimeChart title="Cost per day (USD)" xs={xs} formatX={shortDay} format={fmtCost} series={cost} />
          ) : (
            <Empty>
              No priced usage in this period: add the model's prices under `pricing:` in config.yaml.
            </Empty>
          )}
        </div>
        <div class="card">
          <TimeChart
            title="Tool calls per day"
            xs={xs}
            formatX={shortDay}
            format={fmtCompact}
            formatTable={fmtNumber}
            series={[{ name: "tool calls", values: u.perDay.map((d) => d.toolCalls) }]}
          />
        </div>
        <div class="card">
          <TimeChart
            title="Sessions per day"
            kind="line"
            xs={xs}
            formatX={shortDay}
            format={fmtCompact}
            formatTable={fmtNumber}
            series={[{ name: "sessions", values: u.perDay.map((d) => d.sessions) }]}
          />
        </div>
      </div>
      <h2>Breakdowns</h2>
      <div class="chart-grid-2">
        <div class="card">
          <BarChart
            title="Tokens by model"
            format={fmtCompact}
            formatTable={fmtNumber}
            items={u.byModel
              .map((m) => ({ label: m.model, value: m.inputTokens + m.outputTokens }))
              .sort((a, b) => b.value - a.value)}
          />
        </div>
        <div class="card">
          <BarChart
            title="Cost by model (USD)"
            format={fmtCost}
            color={1}
            items={u.byModel
              .filter((m) => m.costUsd !== null || m.unpricedSessions > 0)
              .map((m) => ({
                label: m.model,
                value: m.costUsd ?? 0,
                ...(m.unpricedSessions > 0 ? { note: `${m.unpricedSessions} unpriced` } : {}),
              }))
              .sort((a, b) => b.value - a.value)}
          />
        </div>
        <div class="card">
          <BarChart
            title="Sessions by source"
            format={fmtNumber}
            color={2}
            items={u.bySource.map((s) => ({ label: s.source, value: s.sessions }))}
          />
        </div>
        <div class="card">
          <BarChart
            title="Top tools"
            format={fmtNumber}
            color={3}
            items={u.tools.map((t) => ({ label: t.name, value: t.calls }))}
          />
        </div>
      </div>
    </>
  );
}

function Usage({ route }: { route: Route }) {
  const asked = Number(route.query.get("days"));
  const days = (PERIODS as readonly number[]).includes(asked) ? asked : 30;
  const source = route.query.get("source") ?? "";
  const usage = useApi<UsageAnswer>("usage", { days, source });
  const u = usage.data;
  const sources = u?.sources ?? [];
  return (
    <section>
      <PageHeader title="Usage">
        Tokens, cost, tool calls and sessions per day, by model and source.
      </PageHeader>
      <div class="toolbar">
        <Period days={days} source={source} />
        <label>
          <span class="sr-only">Source</span>
          <select
            aria-label="Source"
            value={source}
            onChange={(e) =>
              setQuery({
                days: String(days),
                source: (e.currentTarget as HTMLSelectElement).value || undefined,
              })
            }
          >
            <option value="">All sources</option>
            {source && !sources.some((s) => s.source === source) ? (
              <option value={source}>{source}</option>
            ) : null}
            {sources.map((s) => (
              <option key={s.source} value={s.source}>
                {s.source} ({fmtNumber(s.sessions)})
              </option>
            ))}
          </select>
        </label>
        {usage.loading && u ? <span class="muted">Updating…</span> : null}
      </div>
      {usage.error ? <ErrorNote error={usage.error} onRetry={usage.reload} /> : null}
      {usage.loading && !u ? <Loading /> : null}
      {u ? (
        <div class={usage.loading ? "stale" : ""} data-days={String(u.days)}>
          <Totals u={u} />
          {u.sessions === 0 ? (
            <Empty>
              No sessions {source ? `from ${source} ` : ""}in the last {days} days. Chat with `hermes` (or
              pick a longer period) and they show up here.
            </Empty>
          ) : (
            <Charts u={u} />
          )}
        </div>
      ) : null}
    </section>
  );
}

export const usagePage: PageDef = { id: "usage", title: "Usage", order: 30, component: Usage };
