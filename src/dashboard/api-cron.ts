/**
 * `/api/cron…`: cron jobs through `CronStore` (the cronjob tool's prompt scan on create), and
 * running one now through the gateway's ticker or a background `hermes cron run`.
 */
import type { CronStore } from "../knowledge/cron/store.js";
import { CronStoreError } from "../knowledge/cron/store.js";
import { cronPromptRefusal } from "../tools/cronjob.js";
import { ApiError, field, optionalField, type Route } from "./http.js";

export interface CronDeps {
  cron: CronStore;
  /** Whether this home's gateway is running (its ticker runs due cron jobs). */
  gatewayRunning: () => Promise<boolean>;
  /** Starts `hermes cron run <id>` in the background (used when no gateway runs the job). */
  runCronJob?: ((id: string) => void) | undefined;
}

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

export function cronRoutes(deps: CronDeps): Route[] {
  return [
    {
      method: "GET",
      path: "/api/cron",
      summary: "cron jobs with schedule, state, next and last run, last status and error",
      handler: async () => ({
        json: { jobs: deps.cron.list(), gateway_running: await deps.gatewayRunning() },
      }),
    },
    {
      method: "POST",
      path: "/api/cron",
      summary:
        'create a job: {"schedule", "prompt", "name"?, "deliver"?, "skills"?: []} (the cronjob tool\'s prompt scan applies)',
      handler: async ({ body }) => {
        const prompt = field(body, "prompt");
        const refusal = cronPromptRefusal(prompt);
        if (refusal) throw new ApiError(422, refusal);
        const name = optionalField(body, "name");
        const deliver = optionalField(body, "deliver");
        const skills = body["skills"];
        if (skills !== undefined && !(Array.isArray(skills) && skills.every((s) => typeof s === "string"))) {
          throw new ApiError(400, '"skills" must be a list of skill names');
        }
        const job = await cronCall(() =>
          deps.cron.create({
            schedule: field(body, "schedule"),
            prompt,
            ...(name ? { name } : {}),
            ...(deliver ? { deliver } : {}),
            ...(Array.isArray(skills) ? { skills: skills as string[] } : {}),
          }),
        );
        return { json: { job }, status: 201 };
      },
    },
    {
      method: "POST",
      path: "/api/cron/:id/pause",
      summary: 'pause a job until resumed ({"reason"?})',
      handler: async ({ params, body }) => ({
        json: {
          job: await cronCall(() => deps.cron.pause(params["id"] ?? "", optionalField(body, "reason"))),
        },
      }),
    },
    {
      method: "POST",
      path: "/api/cron/:id/resume",
      summary: "let a paused job run again",
      handler: async ({ params }) => ({
        json: { job: await cronCall(() => deps.cron.resume(params["id"] ?? "")) },
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
            job,
            runs_by: gateway ? "gateway" : deps.runCronJob ? "hermes cron run" : "the next hermes cron tick",
          },
          status: 202,
        };
      },
    },
  ];
}
