/**
 * The cron job form, for a new job and for editing one: schedule, prompt, name, delivery and
 * skills. The server's refusal (the prompt scan, a schedule that does not parse) is shown in the
 * form, with what was typed kept so it can be fixed.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { apiSend } from "../api.js";
import { notify } from "../components/toast.js";
import { ErrorNote, Field } from "../components/ui.js";
import type { CronJobView } from "./cron-types.js";

const SCHEDULE_HINT =
  '"30m" (once, in 30 minutes), "every 2h", "0 9 * * *" (cron), "2026-02-03T14:00" (once)';

const splitList = (text: string): string[] =>
  text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

export function CronForm({
  job,
  onDone,
  onCancel,
}: {
  /** The job to edit; a new job when absent. */
  job?: CronJobView;
  onDone: (job: CronJobView) => void;
  onCancel: () => void;
}) {
  const [schedule, setSchedule] = useState(job?.schedule_display ?? "");
  const [prompt, setPrompt] = useState(job?.prompt ?? "");
  const [name, setName] = useState(job?.name ?? "");
  const [deliver, setDeliver] = useState(job?.deliver ?? "local");
  const [skills, setSkills] = useState((job?.skills ?? []).join(", "));
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => first.current?.focus(), []);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body: Record<string, unknown> = {
        prompt,
        name: name.trim() || undefined,
        deliver: deliver.trim() || undefined,
        skills: splitList(skills),
      };
      // An edit sends the schedule only when it changed: the stored display of a one-shot is not
      // something the parser reads back.
      if (!job || schedule !== job.schedule_display) body["schedule"] = schedule;
      const answer = job
        ? await apiSend<{ job: CronJobView }>("PATCH", `cron/${encodeURIComponent(job.id)}`, body)
        : await apiSend<{ job: CronJobView }>("POST", "cron", body);
      notify(job ? `Saved ${answer.job.name}` : `Created ${answer.job.name}`);
      onDone(answer.job);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="card cron-form" onSubmit={submit} aria-label={job ? "Edit cron job" : "New cron job"}>
      <h2>{job ? `Edit ${job.name}` : "New cron job"}</h2>
      {error ? <ErrorNote error={error} /> : null}
      <Field label="Schedule" hint={SCHEDULE_HINT}>
        <input
          ref={first}
          name="schedule"
          required={!job}
          value={schedule}
          onInput={(e) => setSchedule((e.currentTarget as HTMLInputElement).value)}
        />
      </Field>
      <Field label="Prompt" hint="What the agent does at each run. It runs unattended, with tools.">
        <textarea
          name="prompt"
          required
          value={prompt}
          onInput={(e) => setPrompt((e.currentTarget as HTMLTextAreaElement).value)}
        />
      </Field>
      <div class="cron-form-row">
        <Field label="Name" hint="Default: the start of the prompt">
          <input
            name="name"
            value={name}
            onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)}
          />
        </Field>
        <Field label="Deliver to" hint="local, origin, telegram, telegram:CHAT, … (comma list)">
          <input
            name="deliver"
            value={deliver}
            onInput={(e) => setDeliver((e.currentTarget as HTMLInputElement).value)}
          />
        </Field>
        <Field label="Skills" hint="Comma-separated skill names to load">
          <input
            name="skills"
            value={skills}
            onInput={(e) => setSkills((e.currentTarget as HTMLInputElement).value)}
          />
        </Field>
      </div>
      <div class="actions">
        <button type="submit" class="btn primary" disabled={busy}>
          {job ? "Save" : "Create job"}
        </button>
        <button type="button" class="btn" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
