/**
 * `/api/cron…`: cron jobs through `CronStore` (the same calls as `hermes cron`; the cronjob tool's
 * prompt scan on create and edit), running one now through the gateway's ticker or a background
 * `hermes cron run`, and a job's saved outputs (`cron/output/<id>/<stamp>.md`), read by validated
 * name and redacted.
 */
import { OUTPUT_NAME } from "../knowledge/cron/outputs.js";
import type { CronJobs } from "../knowledge/cron/store.js";
import { CronStoreError, isRunnable, nextRunMs } from "../knowledge/cron/store.js";
import type { CronJob, CronJobPatch } from "../knowledge/cron/types.js";
import { cronPromptRefusal } from "../tools/cronjob.js";
import { redactText } from "../util/redact.js";
import { describeSchedule } from "./cron-describe.js";
import { ApiError, field, intParam, optionalField, type Route } from "./http.js";

export interface CronDeps {
  /** The cron jobs (the state backend's). */
  cron: CronJobs;
  /** Whether this home's gateway is running (its ticker runs due cron jobs). */
  gatewayRunning: () => Promise<boolean>;
  /** Starts `hermes cron run <id>` in the background (used when no gateway runs the job). */
  runCronJob?: ((id: string) => void) | undefined;
}

/** Largest part of one output the API answers (the rest is cut, `truncated: true`). */
export const MAX_OUTPUT_BYTES = 256 * 1024;

async function cronCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof CronStoreError) {
      throw new ApiError(/No cron job/.test(error.message) ? 404 : 409, error.message);
    }
    if (error instanceof Error && error.name === "CronScheduleError") throw new ApiError(400, error.message);
    throw error;
  }
}

/** A job as the API shows it: the record plus its schedule in words and whether it would run. */
function view(
  job: CronJob,
): CronJob & { schedule_human: string; runnable: boolean; next_run_ms: number | null } {
  return {
    ...job,
    schedule_human: describeSchedule(job.schedule, job.schedule_display),
    runnable: isRunnable(job),
    next_run_ms: nextRunMs(job) ?? null,
  };
}

function skillsOf(body: Record<string, unknown>): string[] | undefined {
  const skills = body["skills"];
  if (skills === undefined || skills === null) return undefined;
  if (!(Array.isArray(skills) && skills.every((s) => typeof s === "string"))) {
    throw new ApiError(400, '"skills" must be a list of skill names');
  }
  return skills as string[];
}

function refusePrompt(prompt: string | undefined): void {
  if (prompt === undefined) return;
  const refusal = cronPromptRefusal(prompt);
  if (refusal) throw new ApiError(422, refusal);
}

/** The job (by id or name); 404 for an unknown one. */
async function jobOf(deps: CronDeps, idOrName: string): Promise<CronJob> {
  const job = await deps.cron.find(idOrName);
  if (!job) throw new ApiError(404, `No cron job with id or name "${idOrName}".`);
  return job;
}

export function cronRoutes(deps: CronDeps): Route[] {
  return [
    {
      method: "GET",
      path: "/api/cron",
      summary:
        "cron jobs with schedule (and schedule_human in words), state, next and last run, last status and error",
      handler: async () => ({
        json: {
          jobs: (await deps.cron.list()).map(view),
          timezone: deps.cron.timezone,
          gateway_running: await deps.gatewayRunning(),
        },
      }),
    },
    {
      method: "POST",
      path: "/api/cron",
      summary:
        'create a job: {"schedule", "prompt", "name"?, "deliver"?, "skills"?: []} (the cronjob tool\'s prompt scan applies)',
      handler: async ({ body }) => {
        const prompt = field(body, "prompt");
        refusePrompt(prompt);
        const name = optionalField(body, "name");
        const deliver = optionalField(body, "deliver");
        const skills = skillsOf(body);
        const job = await cronCall(() =>
          deps.cron.create({
            schedule: field(body, "schedule"),
            prompt,
            ...(name ? { name } : {}),
            ...(deliver ? { deliver } : {}),
            ...(skills ? { skills } : {}),
          }),
        );
        return { json: { job: view(job) }, status: 201 };
      },
    },
    {
      method: "PATCH",
      path: "/api/cron/:id",
      summary:
        'edit a job as `hermes cron edit`: {"schedule"?, "prompt"?, "name"?, "deliver"?, "skills"?} (the prompt scan applies)',
      handler: async ({ params, body }) => {
        const patch: CronJobPatch = {};
        const schedule = optionalField(body, "schedule");
        const prompt = optionalField(body, "prompt");
        const name = optionalField(body, "name");
        const deliver = optionalField(body, "deliver");
        const skills = skillsOf(body);
        refusePrompt(prompt);
        if (schedule !== undefined) patch.schedule = schedule;
        if (prompt !== undefined) patch.prompt = prompt;
        if (name !== undefined) patch.name = name;
        if (deliver !== undefined) patch.deliver = deliver;
        if (skills !== undefined) patch.skills = skills;
        if (Object.keys(patch).length === 0) {
          throw new ApiError(400, "nothing to change: send schedule, prompt, name, deliver or skills");
        }
        const job = await cronCall(() => deps.cron.edit(params["id"] ?? "", patch));
        return { json: { job: view(job) } };
      },
    },
    {
      method: "DELETE",
      path: "/api/cron/:id",
      summary: "delete a job and its saved outputs (`hermes cron remove`)",
      handler: async ({ params }) => {
        const job = await cronCall(() => deps.cron.remove(params["id"] ?? ""));
        return { json: { removed: { id: job.id, name: job.name } } };
      },
    },
    {
      method: "POST",
      path: "/api/cron/:id/pause",
      summary: 'pause a job until resumed ({"reason"?})',
      handler: async ({ params, body }) => ({
        json: {
          job: view(await cronCall(() => deps.cron.pause(params["id"] ?? "", optionalField(body, "reason")))),
        },
      }),
    },
    {
      method: "POST",
      path: "/api/cron/:id/resume",
      summary: "let a paused job run again",
      handler: async ({ params }) => ({
        json: { job: view(await cronCall(() => deps.cron.resume(params["id"] ?? ""))) },
      }),
    },
    {
      method: "POST",
      path: "/api/cron/:id/run",
      summary:
        "run a job now: the running gateway's ticker takes it at its next tick, else a background `hermes cron run` starts at once (202)",
      handler: async ({ params }) => {
        const job = await cronCall(() => deps.cron.markDue(params["id"] ?? ""));
        const gateway = await deps.gatewayRunning();
        if (!gateway && deps.runCronJob) deps.runCronJob(job.id);
        return {
          json: {
            job: view(job),
            runs_by: gateway ? "gateway" : deps.runCronJob ? "hermes cron run" : "the next hermes cron tick",
          },
          status: 202,
        };
      },
    },
    {
      method: "GET",
      path: "/api/cron/:id/outputs",
      summary: "a job's saved run outputs, newest first: {outputs: [{name, size, modified_at}]} (limit ≤ 50)",
      handler: async ({ params, query }) => {
        const job = await jobOf(deps, params["id"] ?? "");
        const limit = intParam(query, "limit", 20, 50);
        const all = await deps.cron.listOutputs(job.id);
        return { json: { job: job.id, outputs: all.slice(0, limit), total: all.length } };
      },
    },
    {
      method: "GET",
      path: "/api/cron/:id/outputs/:name",
      summary: `one saved output by its file name (as listed), redacted; at most ${MAX_OUTPUT_BYTES / 1024} KiB (truncated: true beyond)`,
      handler: async ({ params }) => {
        const name = params["name"] ?? "";
        if (!OUTPUT_NAME.test(name)) {
          throw new ApiError(400, "an output name looks like 2026-01-31_09-00-00.md (from the outputs list)");
        }
        const job = await jobOf(deps, params["id"] ?? "");
        const output = await deps.cron.readOutput(job.id, name, MAX_OUTPUT_BYTES);
        if (!output) throw new ApiError(404, "no such output");
        return { json: { job: job.id, name, ...output, text: redactText(output.text) } };
      },
    },
  ];
}
