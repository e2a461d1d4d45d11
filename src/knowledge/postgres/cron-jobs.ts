/**
 * Cron jobs and their run history in PostgreSQL, behind `CronJobs` and `CronRunHistory`: one row
 * per job (`cron_jobs`, the record as JSON text so fields this code does not know are kept, in
 * list order by `position`) and one per saved run output (`cron_outputs`, the redacted text as
 * bytes). Every read-modify-write takes one transaction-scoped advisory lock, the counterpart of
 * jobs.json's flock, so instances changing jobs at once (a create here, the ticker's claim
 * there) apply one after the other on what the other committed. The rules (validation, ids,
 * schedules, pause/resume/markDue) are `cron/job-ops.ts`, the same as the file store's.
 */

import type { PgDatabase, PgQueryable } from "../../state/postgres/database.js";
import { redactText } from "../../util/redact.js";
import {
  CRON_OUTPUT_NAME,
  type CronOutputInfo,
  type CronOutputText,
  type CronRunHistory,
  MAX_OUTPUT_READ_BYTES,
  outputStamp,
} from "../cron/history.js";
import {
  buildJob,
  type CronRules,
  CronStoreError,
  cronIso,
  isRecord,
  jobIndex,
  jobNotFound,
  markJobDue,
  normalizeJob,
  pauseJob,
  prepareEdit,
  resumeJob,
  SAFE_JOB_ID,
} from "../cron/job-ops.js";
import { type CronJobs, DEFAULT_OUTPUT_RETENTION } from "../cron/store.js";
import { systemTimezone } from "../cron/time.js";
import type { CronJob } from "../cron/types.js";

export interface PgCronOptions {
  /**
   * This instance's HERMES_HOME: a job's script must resolve inside its `scripts/`. Without it,
   * a job with a script is refused (its path cannot be checked).
   */
  home?: string;
  /** config.yaml `timezone`; default this machine's zone. */
  timezone?: string;
  now?: () => number;
  userHome?: string;
}

export type PgCronJobs = CronJobs &
  CronRunHistory & {
    readonly timezone: string;
    iso(ms?: number): string;
    /** Copies jobs in as they are (`hermes state migrate`), after those already there; ids kept. */
    importJobs(jobs: readonly CronJob[]): Promise<{ imported: number; present: number }>;
    /** Copies one saved output in under its name; false when the job already has one by that name. */
    importOutput(id: string, name: string, text: string, at: number): Promise<boolean>;
  };

/** Advisory-lock key of the jobs table ("HERCRONJ" in ASCII). */
const JOBS_LOCK = "5207658993221062218";

function parseJob(text: string): CronJob | undefined {
  try {
    const data: unknown = JSON.parse(text);
    return isRecord(data) ? normalizeJob(data) : undefined;
  } catch {
    return undefined;
  }
}

async function readJobs(db: PgQueryable): Promise<CronJob[]> {
  const rows = await db.query<{ id: string; record: string }>(
    "SELECT id, record FROM cron_jobs ORDER BY position, id",
  );
  const jobs: CronJob[] = [];
  for (const row of rows) {
    const job = parseJob(row.record);
    if (!job)
      throw new CronStoreError(
        `The cron job row "${row.id}" does not hold a JSON record; nothing was changed.`,
      );
    jobs.push(job);
  }
  return jobs;
}

function outputRef(id: string, name: string): string {
  return `cron/output/${id}/${name}`;
}

export function pgCronJobs(db: PgDatabase, options: PgCronOptions = {}): PgCronJobs {
  const rules: CronRules = {
    home: options.home ?? "",
    timezone: options.timezone || systemTimezone(),
    now: options.now ?? Date.now,
    userHome: options.userHome,
  };

  async function update<T>(fn: (jobs: CronJob[]) => T | Promise<T>): Promise<T> {
    return db.tx(async (client) => {
      await client.query("SELECT pg_advisory_xact_lock($1)", [JOBS_LOCK]);
      const jobs = await readJobs(client);
      const before = new Map(jobs.map((job, i) => [job.id, { json: JSON.stringify(job), position: i }]));
      const result = await fn(jobs);
      const seen = new Set<string>();
      for (const job of jobs) {
        if (!job.id || seen.has(job.id)) {
          throw new CronStoreError(`Two cron jobs would share the id "${job.id}"; nothing was changed.`);
        }
        seen.add(job.id);
      }
      const gone = [...before.keys()].filter((id) => !seen.has(id));
      if (gone.length > 0) await client.query("DELETE FROM cron_jobs WHERE id = ANY($1::text[])", [gone]);
      const at = rules.now() / 1000;
      for (const [position, job] of jobs.entries()) {
        const json = JSON.stringify(job);
        const old = before.get(job.id);
        if (old && old.json === json && old.position === position) continue;
        await client.query(
          `INSERT INTO cron_jobs (id, position, record, updated_at) VALUES ($1, $2, $3, $4)
           ON CONFLICT (id) DO UPDATE SET position = EXCLUDED.position, record = EXCLUDED.record,
             updated_at = EXCLUDED.updated_at`,
          [job.id, position, json, at],
        );
      }
      return result;
    });
  }

  function withJob(idOrName: string, fn: (job: CronJob) => void): Promise<CronJob> {
    return update((jobs) => {
      const at = jobIndex(jobs, idOrName);
      if (at < 0) throw jobNotFound(idOrName, jobs);
      const job = jobs[at] as CronJob;
      fn(job);
      return { ...job };
    });
  }

  const list = () => readJobs(db);

  async function insertOutput(client: PgQueryable, id: string, stamp: string, body: Buffer, at: number) {
    for (let n = 1; n < 10_000; n++) {
      const name = n === 1 ? `${stamp}.md` : `${stamp}-${n}.md`;
      const rows = await client.query(
        `INSERT INTO cron_outputs (job_id, name, created_at, body) VALUES ($1, $2, $3, $4)
         ON CONFLICT (job_id, name) DO NOTHING RETURNING name`,
        [id, name, at / 1000, body],
      );
      if (rows.length > 0) return name;
    }
    throw new CronStoreError(`Job ${id} has too many outputs saved at ${stamp}.`);
  }

  return {
    get timezone() {
      return rules.timezone;
    },
    iso: (ms) => cronIso(rules, ms),
    list,
    async find(idOrName) {
      const jobs = await list();
      return jobs.find((j) => j.id === idOrName) ?? jobs.find((j) => j.name === idOrName);
    },
    async create(input) {
      const known = input.context_from?.length ? await list() : [];
      const job = buildJob(rules, input, () => known);
      await update((jobs) => {
        jobs.push(job);
      });
      return job;
    },
    async edit(idOrName, patch) {
      const known = patch.context_from?.length ? await list() : [];
      return withJob(
        idOrName,
        prepareEdit(rules, patch, () => known),
      );
    },
    pause: (idOrName, reason) => withJob(idOrName, (job) => pauseJob(rules, job, reason)),
    resume: (idOrName) => withJob(idOrName, (job) => resumeJob(rules, job)),
    markDue: (idOrName) => withJob(idOrName, (job) => markJobDue(rules, job)),
    async remove(idOrName) {
      return db.tx(async (client) => {
        await client.query("SELECT pg_advisory_xact_lock($1)", [JOBS_LOCK]);
        const jobs = await readJobs(client);
        const at = jobIndex(jobs, idOrName);
        if (at < 0) throw jobNotFound(idOrName, jobs);
        const removed = jobs[at] as CronJob;
        await client.query("DELETE FROM cron_jobs WHERE id = $1", [removed.id]);
        await client.query("DELETE FROM cron_outputs WHERE job_id = $1", [removed.id]);
        return removed;
      });
    },
    update,

    async saveOutput(id, text, at, retention = DEFAULT_OUTPUT_RETENTION) {
      if (!SAFE_JOB_ID.test(id)) throw new CronStoreError(`Job id "${id}" cannot name an output folder.`);
      // A run's answer is history like any other: known secrets and key shapes never reach the row.
      const body = Buffer.from(redactText(text), "utf8");
      const keep = Math.max(1, Math.floor(retention) || 1);
      return db.tx(async (client) => {
        const name = await insertOutput(client, id, outputStamp(cronIso(rules, at)), body, at);
        await client.query(
          `DELETE FROM cron_outputs WHERE job_id = $1 AND name NOT IN (
             SELECT name FROM cron_outputs WHERE job_id = $1 ORDER BY name COLLATE "C" DESC LIMIT $2)`,
          [id, keep],
        );
        return outputRef(id, name);
      });
    },

    async listOutputs(id): Promise<CronOutputInfo[]> {
      if (!SAFE_JOB_ID.test(id)) return [];
      const rows = await db.query<{ name: string; size: number; created_at: number }>(
        `SELECT name, octet_length(body) AS size, created_at FROM cron_outputs WHERE job_id = $1
         ORDER BY name COLLATE "C" DESC`,
        [id],
      );
      return rows.map((r) => ({
        name: r.name,
        size: Number(r.size),
        modified_at: new Date(Number(r.created_at) * 1000).toISOString(),
      }));
    },

    async readOutput(id, name, maxBytes = MAX_OUTPUT_READ_BYTES): Promise<CronOutputText | undefined> {
      if (!SAFE_JOB_ID.test(id) || !CRON_OUTPUT_NAME.test(name)) return undefined;
      const limit = Math.max(0, Math.floor(maxBytes));
      const rows = await db.query<{ size: number; part: Buffer }>(
        `SELECT octet_length(body) AS size, substring(body FROM 1 FOR $3) AS part
         FROM cron_outputs WHERE job_id = $1 AND name = $2`,
        [id, name, limit],
      );
      const row = rows[0];
      if (!row) return undefined;
      const size = Number(row.size);
      return { text: row.part.toString("utf8"), size, truncated: size > row.part.length };
    },

    async importJobs(incoming) {
      return update((jobs) => {
        let imported = 0;
        let present = 0;
        for (const raw of incoming) {
          if (!isRecord(raw)) continue;
          const job = normalizeJob(structuredClone(raw) as Record<string, unknown>);
          if (!SAFE_JOB_ID.test(job.id)) {
            throw new CronStoreError(`Cannot import a cron job with id "${job.id}": not a job id.`);
          }
          if (jobs.some((j) => j.id === job.id)) present++;
          else {
            jobs.push(job);
            imported++;
          }
        }
        return { imported, present };
      });
    },

    async importOutput(id, name, text, at) {
      if (!SAFE_JOB_ID.test(id) || !CRON_OUTPUT_NAME.test(name)) {
        throw new CronStoreError(`Cannot import cron output "${id}/${name}": not a job id and output name.`);
      }
      const rows = await db.query(
        `INSERT INTO cron_outputs (job_id, name, created_at, body) VALUES ($1, $2, $3, $4)
         ON CONFLICT (job_id, name) DO NOTHING RETURNING name`,
        [id, name, at / 1000, Buffer.from(redactText(text), "utf8")],
      );
      return rows.length > 0;
    },
  };
}
