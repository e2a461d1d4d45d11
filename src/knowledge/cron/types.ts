/**
 * The cron domain as Python Hermes stores it in `cron/jobs.json`. Field names are Hermes's
 * (snake_case) because the record is written back as is: a job read from a Python home and saved
 * here keeps every field, known or not.
 */

/**
 * A parsed schedule, stored under a job's `schedule` key. A one-shot delay ("30m", "in 2h") and an
 * ISO timestamp both become `once` with an absolute `run_at`, as Hermes stores them.
 */
export type CronSchedule =
  | { kind: "once"; run_at: string; display: string }
  | { kind: "interval"; minutes: number; display: string }
  | {
      kind: "cron";
      /** Five fields: minute hour day-of-month month day-of-week. */
      expr: string;
      display: string;
      /**
       * IANA zone the expression is read in. Not a Python Hermes field (Python reads every
       * expression in the configured `timezone`); absent means the same here.
       */
      tz?: string;
    };

/** `repeat`: how many runs in total (`times: null` = forever) and how many have started. */
export interface CronRepeat {
  times: number | null;
  completed: number;
}

/** Where a job was created from, for `deliver: "origin"`. */
export interface CronOrigin {
  platform: string;
  chat_id?: string | number | null;
  thread_id?: string | number | null;
  [key: string]: unknown;
}

/**
 * One job record. Only the fields Hermes-TS reads are typed; every other field of the record is
 * kept and written back unchanged.
 */
export interface CronJob {
  id: string;
  name: string;
  prompt: string;
  skills: string[];
  /** Legacy single-skill field: always the first of `skills`, or null. */
  skill: string | null;
  schedule: CronSchedule;
  schedule_display: string;
  repeat: CronRepeat;
  enabled: boolean;
  /** `scheduled`, `paused`, `completed`, `error`, ... */
  state: string;
  paused_at: string | null;
  paused_reason: string | null;
  created_at: string;
  next_run_at: string | null;
  last_run_at: string | null;
  /** `ok` or `error` after a run; null before the first. */
  last_status: string | null;
  last_error: string | null;
  last_delivery_error: string | null;
  /** `local`, `origin`, `all`, `<platform>[:chat[:thread]]`, or a comma list of those. */
  deliver: string;
  origin: CronOrigin | null;
  enabled_toolsets: string[] | null;
  model?: string | null;
  provider?: string | null;
  base_url?: string | null;
  workdir?: string | null;
  /** A file in `<home>/scripts`, relative to it, run before the agent (its output is the prompt's context). */
  script?: string | null;
  /** Deliver the script's output as is; no agent runs. */
  no_agent?: boolean;
  /** Job ids whose last output is put before the prompt (`self`: this job's own). */
  context_from?: string[] | string | null;
  [key: string]: unknown;
}

/** Fields a caller may set when creating a job. */
export interface NewCronJob {
  prompt: string;
  schedule: string;
  name?: string;
  skills?: string[];
  deliver?: string;
  origin?: CronOrigin | null;
  repeat?: number | null;
  enabled_toolsets?: string[] | null;
  model?: string | null;
  provider?: string | null;
  workdir?: string | null;
  script?: string | null;
  no_agent?: boolean;
  context_from?: string[] | null;
}

/** Fields a caller may change with `edit`/`update`. */
export interface CronJobPatch {
  prompt?: string;
  schedule?: string;
  name?: string;
  skills?: string[];
  deliver?: string;
  repeat?: number | null;
  enabled_toolsets?: string[] | null;
  model?: string | null;
  /** null or "" removes the script. */
  script?: string | null;
  no_agent?: boolean;
  /** null or [] removes it. */
  context_from?: string[] | null;
}
