/** The landing page: this week at a glance and whether the gateway runs, with links onward. */
import { Badge, ErrorNote, Facts, Loading, PageHeader } from "../components/ui.js";
import { fmtCompact, fmtCost, fmtNumber } from "../format.js";
import { useApi } from "../hooks.js";
import type { PageDef } from "./types.js";

/** The part of `GET /api/usage` (the insights data) this page shows. */
interface Usage {
  sessions: number;
  messages: number;
  toolCalls: number;
  costUsd: number | null;
  unpricedSessions: number;
}

function Overview() {
  const usage = useApi<Usage>("usage", { days: 7 });
  const gateway = useApi<Record<string, unknown>>("gateway");
  const running = gateway.data ? gateway.data["running"] === true : null;
  return (
    <section>
      <PageHeader title="Overview">The last 7 days of this Hermes home.</PageHeader>
      {usage.error ? <ErrorNote error={usage.error} onRetry={usage.reload} /> : null}
      {usage.loading && !usage.data ? <Loading /> : null}
      {usage.data ? (
        <div class="cards">
          <div class="card stat">
            <span class="stat-value">{fmtNumber(usage.data.sessions)}</span>
            <span class="muted">sessions</span>
          </div>
          <div class="card stat">
            <span class="stat-value">{fmtCompact(usage.data.messages)}</span>
            <span class="muted">messages</span>
          </div>
          <div class="card stat">
            <span class="stat-value">{fmtCompact(usage.data.toolCalls)}</span>
            <span class="muted">tool calls</span>
          </div>
          <div class="card stat">
            <span class="stat-value">{usage.data.costUsd === null ? "–" : fmtCost(usage.data.costUsd)}</span>
            <span class="muted">
              cost
              {usage.data.unpricedSessions > 0 ? ` (${usage.data.unpricedSessions} sessions unpriced)` : ""}
            </span>
          </div>
        </div>
      ) : null}
      <h2>Gateway</h2>
      {gateway.error ? <ErrorNote error={gateway.error} onRetry={gateway.reload} /> : null}
      {running === null ? null : (
        <Facts
          items={[
            ["state", running ? <Badge tone="ok">running</Badge> : <Badge tone="warn">not running</Badge>],
            ["start it", <code key="c">hermes gateway</code>],
          ]}
        />
      )}
    </section>
  );
}

export const overviewPage: PageDef = { id: "overview", title: "Overview", order: 0, component: Overview };
