/**
 * The Cron page: every job with its schedule in words, state, next run (relative and absolute) and
 * last run; create a job (the prompt scan's refusal shows in the form), pause, resume, run now,
 * edit, delete. `#/cron/<id>` shows one job with its saved outputs.
 */
import { useState } from "preact/hooks";
import { Badge, Empty, ErrorNote, Loading, PageHeader } from "../components/ui.js";
import { useApi } from "../hooks.js";
import { href, navigate } from "../router.js";
import { CronActions } from "./cron-actions.js";
import { CronForm } from "./cron-form.js";
import { CronJobPage } from "./cron-job.js";
import { LastRun, When } from "./cron-parts.js";
import { type CronList, jobState } from "./cron-types.js";
import type { PageDef } from "./types.js";

function GatewayNote({ running }: { running: boolean }) {
  if (running) return null;
  return (
    <p class="note">
      No gateway runs this home, so jobs only run when <code>hermes gateway</code> or{" "}
      <code>hermes cron tick</code> does. <strong>Run now</strong> still starts one run in the background.
    </p>
  );
}

function JobsList() {
  const list = useApi<CronList>("cron");
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<string | null>(null);
  const jobs = list.data?.jobs ?? [];
  return (
    <section class="cron-page">
      <PageHeader
        title="Cron"
        actions={
          creating ? null : (
            <button type="button" class="btn primary" onClick={() => setCreating(true)}>
              New job
            </button>
          )
        }
      >
        Scheduled jobs{list.data ? ` (times in ${list.data.timezone})` : ""}.
      </PageHeader>
      {list.data ? <GatewayNote running={list.data.gateway_running} /> : null}
      {creating ? (
        <CronForm
          onDone={() => {
            setCreating(false);
            list.reload();
          }}
          onCancel={() => setCreating(false)}
        />
      ) : null}
      {list.error ? <ErrorNote error={list.error} onRetry={list.reload} /> : null}
      {list.loading && !list.data ? <Loading /> : null}
      {list.data && jobs.length === 0 ? (
        <Empty>
          No cron jobs yet. Create one with <strong>New job</strong>, or{" "}
          <code>hermes cron create "every 1h" "…"</code>.
        </Empty>
      ) : null}
      {jobs.length > 0 ? (
        <div class="table-wrap">
          <table class="cron-table">
            <thead>
              <tr>
                <th>Job</th>
                <th>Schedule</th>
                <th>State</th>
                <th>Next run</th>
                <th class="hide-narrow">Last run</th>
                <th class="hide-narrow">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {jobs.map((job) => {
                const state = jobState(job);
                return editing === job.id ? (
                  <tr key={job.id}>
                    <td colSpan={6}>
                      <CronForm
                        job={job}
                        onDone={() => {
                          setEditing(null);
                          list.reload();
                        }}
                        onCancel={() => setEditing(null)}
                      />
                    </td>
                  </tr>
                ) : (
                  <tr key={job.id} data-job={job.id}>
                    <td>
                      <a href={href("cron", [job.id])}>{job.name}</a>
                      <div class="muted small-text hide-narrow">
                        <code>{job.id}</code> → {job.deliver}
                      </div>
                      {/* On a phone the actions sit under the name instead of in a column off-screen. */}
                      <div class="cron-narrow-actions">
                        <CronActions job={job} onChanged={list.reload} onEdit={() => setEditing(job.id)} />
                      </div>
                    </td>
                    <td>
                      <div>{job.schedule_human}</div>
                      <code class="small-text hide-narrow">{job.schedule_display}</code>
                    </td>
                    <td>
                      <Badge tone={state.tone}>{state.label}</Badge>
                      {job.paused_reason ? <div class="muted small-text">{job.paused_reason}</div> : null}
                    </td>
                    <td>
                      {state.label === "scheduled" ? (
                        <When value={job.next_run_at} />
                      ) : (
                        <span class="muted">–</span>
                      )}
                    </td>
                    <td class="hide-narrow">
                      <LastRun job={job} />
                    </td>
                    <td class="hide-narrow">
                      <CronActions job={job} onChanged={list.reload} onEdit={() => setEditing(job.id)} />
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}

function Cron({ route }: { route: { parts: string[] } }) {
  const id = route.parts[0];
  return id ? <CronJobPage id={id} onGone={() => navigate("cron")} /> : <JobsList />;
}

export const cronPage: PageDef = { id: "cron", title: "Cron", order: 60, component: Cron };
