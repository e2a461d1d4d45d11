/** A job's buttons: pause or resume, run now, edit, delete (after a confirmation). */
import { apiSend } from "../api.js";
import { confirmAction } from "../components/dialog.js";
import { notify, notifyError } from "../components/toast.js";
import type { CronJobView } from "./cron-types.js";

const path = (job: CronJobView, action = "") =>
  `cron/${encodeURIComponent(job.id)}${action ? `/${action}` : ""}`;

export function CronActions({
  job,
  onChanged,
  onEdit,
  onDeleted,
}: {
  job: CronJobView;
  onChanged: () => void;
  onEdit?: (() => void) | undefined;
  onDeleted?: (() => void) | undefined;
}) {
  const paused = !job.enabled || job.state === "paused";
  const completed = job.state === "completed";
  const act = (promise: Promise<unknown>, done: string) =>
    promise.then(() => {
      notify(done);
      onChanged();
    }, notifyError);
  const runNow = () =>
    apiSend<{ runs_by: string }>("POST", path(job, "run")).then((answer) => {
      notify(
        answer.runs_by === "gateway"
          ? `${job.name} runs at the gateway's next tick (within a minute)`
          : `${job.name} is running now (${answer.runs_by})`,
      );
      onChanged();
    }, notifyError);
  const remove = async () => {
    const ok = await confirmAction({
      title: `Delete ${job.name}?`,
      body: "The job and its saved outputs are removed. This cannot be undone.",
      confirm: "Delete",
      danger: true,
    });
    if (!ok) return;
    await apiSend("DELETE", path(job)).then(() => {
      notify(`Deleted ${job.name}`);
      (onDeleted ?? onChanged)();
    }, notifyError);
  };
  const label = (verb: string) => `${verb} ${job.name}`;
  return (
    <div class="actions cron-actions">
      {paused ? (
        <button
          type="button"
          class="btn small"
          aria-label={label("Resume")}
          onClick={() => act(apiSend("POST", path(job, "resume")), `Resumed ${job.name}`)}
        >
          Resume
        </button>
      ) : (
        <button
          type="button"
          class="btn small"
          aria-label={label("Pause")}
          disabled={completed}
          onClick={() => act(apiSend("POST", path(job, "pause")), `Paused ${job.name}`)}
        >
          Pause
        </button>
      )}
      <button
        type="button"
        class="btn small"
        aria-label={label("Run now")}
        disabled={paused || completed}
        title={paused ? "Resume it first" : completed ? "It has completed; edit its schedule" : undefined}
        onClick={runNow}
      >
        Run now
      </button>
      {onEdit ? (
        <button type="button" class="btn small" aria-label={label("Edit")} onClick={onEdit}>
          Edit
        </button>
      ) : null}
      <button type="button" class="btn small danger" aria-label={label("Delete")} onClick={remove}>
        Delete
      </button>
    </div>
  );
}
