/** Small pieces of the cron views: a time as "in 5 min" over its date, and a job's last run. */
import { Badge } from "../components/ui.js";
import { fmtRelative, fmtTime } from "../format.js";
import type { CronJobView } from "./cron-types.js";

export function When({ value }: { value: string | number | null }) {
  if (value === null || value === "") return <span class="muted">–</span>;
  return (
    <span class="when">
      <span>{fmtRelative(value)}</span>
      <span class="muted small-text">{fmtTime(value)}</span>
    </span>
  );
}

export function LastRun({ job }: { job: CronJobView }) {
  if (!job.last_run_at) return <span class="muted">never</span>;
  return (
    <span class="when">
      <span>
        {fmtRelative(job.last_run_at)}{" "}
        <Badge tone={job.last_status === "ok" ? "ok" : "bad"}>{job.last_status ?? "?"}</Badge>
      </span>
      {job.last_error ? <span class="cron-error small-text">{job.last_error.split("\n")[0]}</span> : null}
      {job.last_delivery_error ? (
        <span class="cron-error small-text">delivery: {job.last_delivery_error.split("\n")[0]}</span>
      ) : null}
    </span>
  );
}
