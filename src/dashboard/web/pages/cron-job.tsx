/**
 * One cron job (`#/cron/<id>`): its settings, last run and error, and its saved outputs (newest
 * first), one of which opens below the list, rendered as markdown (already redacted by the server).
 */
import { useState } from "preact/hooks";
import { Markdown } from "../components/markdown.js";
import { Badge, Empty, ErrorNote, Facts, Loading, PageHeader } from "../components/ui.js";
import { fmtBytes, fmtRelative, fmtTime } from "../format.js";
import { useApi } from "../hooks.js";
import { href } from "../router.js";
import { CronActions } from "./cron-actions.js";
import { CronForm } from "./cron-form.js";
import { LastRun, When } from "./cron-parts.js";
import { type CronList, type CronOutput, type CronOutputs, jobState } from "./cron-types.js";

function OutputView({ id, name }: { id: string; name: string }) {
  const output = useApi<CronOutput>(`cron/${encodeURIComponent(id)}/outputs/${encodeURIComponent(name)}`);
  if (output.error) return <ErrorNote error={output.error} onRetry={output.reload} />;
  if (!output.data) return <Loading />;
  return (
    <article class="card cron-output" aria-label={`Output ${name}`}>
      <h3>{name}</h3>
      {output.data.truncated ? (
        <p class="note">Only the first part of this output ({fmtBytes(output.data.size)}) is shown.</p>
      ) : null}
      <Markdown text={output.data.text} />
    </article>
  );
}

function Outputs({ id }: { id: string }) {
  const outputs = useApi<CronOutputs>(`cron/${encodeURIComponent(id)}/outputs`, { limit: 50 });
  const [open, setOpen] = useState<string | null>(null);
  if (outputs.error) return <ErrorNote error={outputs.error} onRetry={outputs.reload} />;
  if (!outputs.data) return <Loading />;
  const list = outputs.data.outputs;
  if (list.length === 0) return <Empty>No saved outputs yet: each run saves one here.</Empty>;
  return (
    <>
      <ul class="cron-outputs">
        {list.map((o) => (
          <li key={o.name}>
            <button
              type="button"
              class={`btn small ${open === o.name ? "primary" : ""}`}
              aria-pressed={open === o.name}
              onClick={() => setOpen(open === o.name ? null : o.name)}
            >
              {o.name.replace(/\.md$/, "")}
            </button>{" "}
            <span class="muted small-text">
              {fmtRelative(o.modified_at)} · {fmtBytes(o.size)}
            </span>
          </li>
        ))}
      </ul>
      {outputs.data.total > list.length ? (
        <p class="muted">
          The newest {list.length} of {outputs.data.total} are listed.
        </p>
      ) : null}
      {open ? <OutputView id={id} name={open} /> : null}
    </>
  );
}

export function CronJobPage({ id, onGone }: { id: string; onGone: () => void }) {
  const list = useApi<CronList>("cron");
  const [editing, setEditing] = useState(false);
  const job = list.data?.jobs.find((j) => j.id === id);
  if (list.error) return <ErrorNote error={list.error} onRetry={list.reload} />;
  if (!list.data) return <Loading />;
  if (!job) {
    return (
      <section class="cron-page">
        <PageHeader title="Cron job" />
        <ErrorNote error={`No cron job "${id}".`} />
        <a href={href("cron")}>All jobs</a>
      </section>
    );
  }
  const state = jobState(job);
  return (
    <section class="cron-page">
      <PageHeader
        title={job.name}
        actions={
          <CronActions job={job} onChanged={list.reload} onEdit={() => setEditing(true)} onDeleted={onGone} />
        }
      >
        <a href={href("cron")}>← All jobs</a>
      </PageHeader>
      {editing ? (
        <CronForm
          job={job}
          onDone={() => {
            setEditing(false);
            list.reload();
          }}
          onCancel={() => setEditing(false)}
        />
      ) : null}
      <Facts
        items={[
          ["id", <code key="id">{job.id}</code>],
          [
            "state",
            <Badge key="s" tone={state.tone}>
              {state.label}
            </Badge>,
          ],
          ["schedule", `${job.schedule_human} (${job.schedule_display})`],
          ["next run", state.label === "scheduled" ? <When key="n" value={job.next_run_at} /> : "–"],
          ["last run", <LastRun key="l" job={job} />],
          ["deliver", job.deliver],
          ["skills", job.skills.length ? job.skills.join(", ") : "–"],
          ["runs", `${job.repeat.completed}${job.repeat.times === null ? "" : ` of ${job.repeat.times}`}`],
          ["created", fmtTime(job.created_at)],
        ]}
      />
      {job.paused_reason ? <p class="note">Paused: {job.paused_reason}</p> : null}
      <h2>Prompt</h2>
      <pre class="cron-prompt">{job.prompt || "(none: skills or a script only)"}</pre>
      {job.last_error ? (
        <>
          <h2>Last error</h2>
          <pre class="cron-prompt">{job.last_error}</pre>
        </>
      ) : null}
      <h2>Outputs</h2>
      <Outputs id={job.id} />
    </section>
  );
}
