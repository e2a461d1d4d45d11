/** The page's view of `GET /api/cron` and the outputs routes. */

export interface CronJobView {
  id: string;
  name: string;
  prompt: string;
  skills: string[];
  schedule_display: string;
  schedule_human: string;
  enabled: boolean;
  state: string;
  runnable: boolean;
  paused_at: string | null;
  paused_reason: string | null;
  created_at: string;
  next_run_at: string | null;
  next_run_ms: number | null;
  last_run_at: string | null;
  last_status: string | null;
  last_error: string | null;
  last_delivery_error: string | null;
  deliver: string;
  repeat: { times: number | null; completed: number };
  script?: string | null;
}

export interface CronList {
  jobs: CronJobView[];
  timezone: string;
  gateway_running: boolean;
}

export interface CronOutputs {
  job: string;
  outputs: Array<{ name: string; size: number; modified_at: string }>;
  total: number;
}

export interface CronOutput {
  job: string;
  name: string;
  text: string;
  size: number;
  truncated: boolean;
}

/** What a job's state reads as, and its badge tone. */
export function jobState(job: CronJobView): { label: string; tone: "ok" | "warn" | "bad" | "info" } {
  if (job.state === "completed") return { label: "completed", tone: "info" };
  if (!job.enabled || job.state === "paused") return { label: "paused", tone: "warn" };
  return { label: "scheduled", tone: "ok" };
}
