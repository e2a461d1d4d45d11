import pc from "picocolors";
import { sessionStorePath } from "../../state/sqlite-store.js";
import { type Insights, SessionStoreError } from "../../state/types.js";
import { CliFailure, defineCommand, type HomeContext, type RunOptions } from "../command.js";
import { renderTable } from "../format/table.js";
import { formatCost, formatCount, formatDay, formatTokens } from "../format/time.js";
import { openHomeSessions } from "./home-sessions.js";

export interface InsightsCommandOptions extends RunOptions {
  /** Raw `--days` value (validated by the command). */
  days?: string;
  source?: string;
  json?: boolean;
}

const BAR = "█";
const SPARKS = "▁▂▃▄▅▆▇█";
const TOP_TOOLS = 10;
const SPARK_COLUMNS = 60;

/** `hermes insights [--days N] [--source S] [--json]`. */
export const insightsCommand = defineCommand({
  name: "insights",
  description: "usage report from recorded sessions: tokens, cost, tools, activity",
  needs: "home",
  parse: (cmd) =>
    cmd
      .option("--days <n>", "look back this many days", "30")
      .option("--source <source>", "only sessions from this source (cli, telegram, cron, …)")
      .option("--json", "print the report as JSON"),
  run: (ctx, flags: { days: string; source?: string; json?: boolean }) => insights(ctx, flags),
});

/** Runs `hermes insights` with these options (tests); returns the exit code. */
export function runInsightsCommand(options: InsightsCommandOptions): Promise<number> {
  const argv = [
    ...(options.days !== undefined ? ["--days", options.days] : []),
    ...(options.source ? ["--source", options.source] : []),
    ...(options.json ? ["--json"] : []),
  ];
  return insightsCommand.run(argv, options);
}

/** Prints the report and returns the exit code (0 ok, 1 store failure, 2 bad arguments). */
async function insights(
  ctx: HomeContext,
  flags: { days: string; source?: string; json?: boolean },
): Promise<number> {
  const { io, home } = ctx;
  const days = Number(flags.days);
  if (!Number.isInteger(days) || days < 1) {
    throw new CliFailure(`--days expects a whole number of at least 1, got "${flags.days}".`, 2);
  }
  const now = io.now();
  const path = sessionStorePath(home);
  let report: Insights;
  try {
    // state.db, or the shared PostgreSQL database when the home's config names one.
    const store = await openHomeSessions(home, { readonly: true, env: io.env });
    if (!store) {
      if (flags.json) io.out(JSON.stringify(emptyInsights(days, now)));
      else io.out("No sessions yet.");
      return 0;
    }
    try {
      report = await store.insights({ days, now, ...(flags.source ? { source: flags.source } : {}) });
    } finally {
      await store.close();
    }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new CliFailure(error instanceof SessionStoreError ? message : `could not read ${path}: ${message}`);
  }
  if (flags.json) {
    io.out(JSON.stringify(report, null, 2));
    return 0;
  }
  io.out(
    renderInsights(report, { days, ...(flags.source ? { source: flags.source } : {}), color: io.color }),
  );
  return 0;
}

function emptyInsights(days: number, now: number): Insights {
  return {
    since: now - days * 86_400,
    until: now,
    sessions: 0,
    messages: 0,
    userMessages: 0,
    toolCalls: 0,
    tools: [],
    costUsd: null,
    unpricedSessions: 0,
    byModel: [],
    bySource: [],
    perDay: [],
  };
}

/** The text report. Pure: the same insights and options give the same text. */
export function renderInsights(i: Insights, opts: { days: number; source?: string; color: boolean }): string {
  const c = (fn: (s: string) => string, s: string) => (opts.color ? fn(s) : s);
  const heading = (s: string) => c(pc.bold, s);
  const lines: string[] = [];
  const scope = opts.source ? ` · source ${opts.source}` : "";
  lines.push(
    heading(`Hermes insights: last ${opts.days} day${opts.days === 1 ? "" : "s"}`) +
      c(pc.dim, ` (${formatDay(i.since)} → ${formatDay(i.until)}${scope})`),
  );
  if (i.sessions === 0) {
    lines.push("", "No sessions in this period.");
    return lines.join("\n");
  }

  const row = (label: string, value: string) => `  ${label.padEnd(14)}${value}`;
  lines.push("", heading("Overview"));
  lines.push(row("Sessions", formatCount(i.sessions)));
  lines.push(row("Messages", `${formatCount(i.messages)} (${formatCount(i.userMessages)} from you)`));
  lines.push(row("Tool calls", formatCount(i.toolCalls)));
  const totalIn = i.byModel.reduce((a, m) => a + m.inputTokens, 0);
  const totalOut = i.byModel.reduce((a, m) => a + m.outputTokens, 0);
  lines.push(row("Tokens", `${formatTokens(totalIn)} in · ${formatTokens(totalOut)} out`));
  lines.push(row("Cost", overviewCost(i)));

  if (i.tools.length > 0) {
    lines.push("", heading("Top tools"));
    const top = i.tools.slice(0, TOP_TOOLS);
    const most = Math.max(...top.map((t) => t.calls), 1);
    const nameWidth = Math.max(...top.map((t) => t.name.length));
    const countWidth = Math.max(...top.map((t) => formatCount(t.calls).length));
    for (const t of top) {
      const bar = BAR.repeat(Math.max(1, Math.round((t.calls / most) * 24)));
      lines.push(
        `  ${t.name.padEnd(nameWidth)}  ${formatCount(t.calls).padStart(countWidth)}  ${c(pc.cyan, bar)}`,
      );
    }
    if (i.tools.length > TOP_TOOLS) lines.push(c(pc.dim, `  … and ${i.tools.length - TOP_TOOLS} more`));
  }

  if (i.byModel.length > 0) {
    lines.push("", heading("Models"));
    const table = renderTable(
      [
        { header: "MODEL", max: 40 },
        { header: "SESSIONS", align: "right" },
        { header: "CALLS", align: "right" },
        { header: "INPUT", align: "right" },
        { header: "OUTPUT", align: "right" },
        { header: "CACHE READ", align: "right" },
        { header: "COST", align: "right" },
      ],
      i.byModel.map((m) => [
        m.model || "(unknown)",
        formatCount(m.sessions),
        formatCount(m.apiCalls),
        formatTokens(m.inputTokens),
        formatTokens(m.outputTokens),
        formatTokens(m.cacheReadTokens),
        costCell(m.costUsd, m.unpricedSessions),
      ]),
      opts.color ? { paintHeader: pc.dim } : {},
    );
    lines.push(...table.map((l) => `  ${l}`));
  }

  if (i.bySource.length > 0) {
    lines.push("", heading("Sources"));
    const table = renderTable(
      [
        { header: "SOURCE", max: 20 },
        { header: "SESSIONS", align: "right" },
        { header: "MESSAGES", align: "right" },
        { header: "INPUT", align: "right" },
        { header: "OUTPUT", align: "right" },
        { header: "COST", align: "right" },
      ],
      i.bySource.map((s) => [
        s.source,
        formatCount(s.sessions),
        formatCount(s.messages),
        formatTokens(s.inputTokens),
        formatTokens(s.outputTokens),
        costCell(s.costUsd, s.unpricedSessions),
      ]),
      opts.color ? { paintHeader: pc.dim } : {},
    );
    lines.push(...table.map((l) => `  ${l}`));
  }

  if (i.unpricedSessions > 0) {
    lines.push(
      "",
      c(
        pc.dim,
        `  + ${i.unpricedSessions} session${i.unpricedSessions === 1 ? "" : "s"} used a model with no known price, so costs marked + are at least that much.\n` +
          "    Add prices under `pricing:` in config.yaml (USD per million tokens: input, output, cache_read, cache_write).",
      ),
    );
  }

  const days = dayRange(i.since, i.until);
  const perDay = new Map(i.perDay.map((d) => [d.day, d.sessions]));
  const series = days.map((day) => perDay.get(day) ?? 0);
  const active = series.filter((n) => n > 0).length;
  lines.push("", heading("Activity") + c(pc.dim, " (sessions per day)"));
  lines.push(`  ${c(pc.cyan, sparkline(series))}`);
  lines.push(c(pc.dim, `  ${days[0] ?? ""} → ${days[days.length - 1] ?? ""}`));
  const busiest = i.perDay.reduce<{ day: string; sessions: number } | null>(
    (best, d) => (best === null || d.sessions > best.sessions ? d : best),
    null,
  );
  const summary = [`active on ${active} of ${days.length} days`];
  if (busiest)
    summary.push(`busiest ${busiest.day} (${busiest.sessions} session${busiest.sessions === 1 ? "" : "s"})`);
  lines.push(`  ${summary.join(" · ")}`);
  return lines.join("\n");
}

/** A table cell: the cost, `+` when some of it is unpriced (a floor), `—` when none is known. */
function costCell(usd: number | null, unpriced: number): string {
  if (usd === null) return formatCost(null);
  return unpriced > 0 ? `${formatCost(usd)}+` : formatCost(usd);
}

/** `$1.2345 (estimated)`, `$0.50+ (estimated; 2 sessions unpriced)`, `unknown (3 sessions unpriced)`. */
function overviewCost(i: Insights): string {
  const unpriced =
    i.unpricedSessions > 0
      ? `${i.unpricedSessions} session${i.unpricedSessions === 1 ? "" : "s"} unpriced`
      : "";
  if (i.costUsd === null) return unpriced ? `unknown (${unpriced})` : formatCost(null);
  return unpriced
    ? `${formatCost(i.costUsd)}+ (estimated; ${unpriced})`
    : `${formatCost(i.costUsd)} (estimated)`;
}

/** Every local calendar day from `since` to `until`, `YYYY-MM-DD`, oldest first. */
function dayRange(since: number, until: number): string[] {
  const days: string[] = [];
  const d = new Date(since * 1000);
  d.setHours(12, 0, 0, 0);
  const last = formatDay(until);
  for (let guard = 0; guard < 10_000; guard++) {
    const day = formatDay(d.getTime() / 1000);
    days.push(day);
    if (day >= last) break;
    d.setDate(d.getDate() + 1);
  }
  return days;
}

/** One character per day (or per bucket of days when there are more than fit), height by count. */
function sparkline(series: number[]): string {
  if (series.length === 0) return "";
  const bucket = Math.ceil(series.length / SPARK_COLUMNS);
  const values: number[] = [];
  for (let i = 0; i < series.length; i += bucket) {
    values.push(series.slice(i, i + bucket).reduce((a, b) => a + b, 0));
  }
  const max = Math.max(...values);
  return values
    .map((v) => {
      if (v === 0 || max === 0) return "·";
      return SPARKS[Math.min(SPARKS.length - 1, Math.ceil((v / max) * SPARKS.length) - 1)] ?? "█";
    })
    .join("");
}
