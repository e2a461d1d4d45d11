/**
 * The Jobs API over `cron/jobs.json`, shaped as Python Hermes serves it: `GET|POST /api/jobs`,
 * `GET|PATCH|DELETE /api/jobs/{id}`, `POST /api/jobs/{id}/pause|resume|run`. Answers `{jobs}` /
 * `{job}` / `{ok: true}`, and errors as `{error: "<message>"}` (upstream's shape for these
 * routes). `run` makes the job due now: the gateway's cron ticker runs it on its next tick, as
 * `hermes cron run` does. The same store and locking as `hermes cron`, so the two never clash.
 */
import type { ServerResponse } from "node:http";
import { CronScheduleError } from "../../knowledge/cron/schedule.js";
import { type CronJobs, CronStoreError } from "../../knowledge/cron/store.js";
import type { CronJob, CronJobPatch } from "../../knowledge/cron/types.js";
import type { RouteContext } from "./context.js";
import { sendJson } from "./http.js";

type Json = Record<string, unknown>;

const JOB_ID = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_NAME = 200;
const MAX_PROMPT = 5000;
/** Fields PATCH may change (upstream's allowlist): anything else is ignored, never written. */
const PATCHABLE = ["name", "schedule", "prompt", "deliver", "skills", "skill", "repeat", "enabled"] as const;

class JobsError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function storeOf(ctx: RouteContext): CronJobs {
  const tz = (ctx.config as unknown as Record<string, unknown>)["timezone"];
  return ctx.cronJobs(typeof tz === "string" && tz ? { timezone: tz } : {});
}

function checkText(input: Json): void {
  const name = input["name"];
  const prompt = input["prompt"];
  if (name !== undefined && (typeof name !== "string" || name.length > MAX_NAME)) {
    throw new JobsError(400, `Name must be a string of at most ${MAX_NAME} characters`);
  }
  if (prompt !== undefined && (typeof prompt !== "string" || prompt.length > MAX_PROMPT)) {
    throw new JobsError(400, `Prompt must be a string of at most ${MAX_PROMPT} characters`);
  }
  const skills = input["skills"];
  if (
    skills !== undefined &&
    skills !== null &&
    (!Array.isArray(skills) || !skills.every((s) => typeof s === "string"))
  ) {
    throw new JobsError(400, "Skills must be an array of skill names");
  }
  const repeat = input["repeat"];
  if (repeat !== undefined && repeat !== null && (!Number.isInteger(repeat) || (repeat as number) < 1)) {
    throw new JobsError(400, "Repeat must be a positive integer");
  }
}

async function byId(store: CronJobs, id: string): Promise<CronJob> {
  const job = JOB_ID.test(id) ? (await store.list()).find((j) => j.id === id) : undefined;
  if (!JOB_ID.test(id)) throw new JobsError(400, "Invalid job ID format");
  if (!job) throw new JobsError(404, "Job not found");
  return job;
}

/** Routes `/api/jobs…`; returns false when the path is not one of them. */
export async function jobsRoute(
  ctx: RouteContext,
  method: string,
  path: string,
  query: URLSearchParams,
  body: () => Promise<Json>,
  res: ServerResponse,
  expect: (allowed: string[]) => void,
): Promise<boolean> {
  const match = /^\/api\/jobs(?:\/([^/]+)(\/pause|\/resume|\/run)?)?$/.exec(path);
  if (!match) return false;
  const id = match[1] ? decodeURIComponent(match[1]) : undefined;
  const action = match[2];
  expect(!id ? ["GET", "POST"] : action ? ["POST"] : ["GET", "PATCH", "DELETE"]);
  const store = storeOf(ctx);
  try {
    if (!id && method === "GET") {
      const all = ["true", "1"].includes((query.get("include_disabled") ?? "").toLowerCase());
      sendJson(res, 200, { jobs: (await store.list()).filter((j) => all || j.enabled) });
    } else if (!id) {
      const input = await body();
      checkText(input);
      const name = typeof input["name"] === "string" ? input["name"].trim() : "";
      const schedule = typeof input["schedule"] === "string" ? input["schedule"].trim() : "";
      if (!name) throw new JobsError(400, "Name is required");
      if (!schedule) throw new JobsError(400, "Schedule is required");
      const job = await store.create({
        name,
        schedule,
        prompt: typeof input["prompt"] === "string" ? input["prompt"] : "",
        deliver: typeof input["deliver"] === "string" ? input["deliver"] : "local",
        ...(Array.isArray(input["skills"]) ? { skills: input["skills"] as string[] } : {}),
        ...(typeof input["repeat"] === "number" ? { repeat: input["repeat"] } : {}),
      });
      sendJson(res, 200, { job });
    } else if (!action && method === "GET") {
      sendJson(res, 200, { job: await byId(store, id) });
    } else if (!action && method === "DELETE") {
      await byId(store, id);
      await store.remove(id);
      sendJson(res, 200, { ok: true });
    } else if (!action) {
      await byId(store, id);
      const input = await body();
      const fields = Object.fromEntries(
        Object.entries(input).filter(([k]) => (PATCHABLE as readonly string[]).includes(k)),
      );
      if (Object.keys(fields).length === 0) throw new JobsError(400, "No valid fields to update");
      checkText(fields);
      sendJson(res, 200, { job: await applyPatch(store, id, fields) });
    } else if (action === "/pause") {
      await byId(store, id);
      sendJson(res, 200, { job: await store.pause(id) });
    } else if (action === "/resume") {
      await byId(store, id);
      sendJson(res, 200, { job: await store.resume(id) });
    } else {
      await byId(store, id);
      sendJson(res, 200, { job: await store.markDue(id) });
    }
  } catch (error) {
    if (error instanceof JobsError) sendJson(res, error.status, { error: error.message });
    else if (error instanceof CronScheduleError || error instanceof CronStoreError) {
      sendJson(res, 400, { error: error.message });
    } else throw error;
  }
  return true;
}

async function applyPatch(store: CronJobs, id: string, fields: Json): Promise<CronJob> {
  const patch: CronJobPatch = {};
  if (typeof fields["name"] === "string") patch.name = fields["name"];
  if (typeof fields["schedule"] === "string") patch.schedule = fields["schedule"];
  if (typeof fields["prompt"] === "string") patch.prompt = fields["prompt"];
  if (typeof fields["deliver"] === "string") patch.deliver = fields["deliver"];
  if (Array.isArray(fields["skills"])) patch.skills = fields["skills"] as string[];
  else if (typeof fields["skill"] === "string") patch.skills = [fields["skill"]];
  if (fields["repeat"] === null || typeof fields["repeat"] === "number") patch.repeat = fields["repeat"];
  let job = Object.keys(patch).length > 0 ? await store.edit(id, patch) : await byId(store, id);
  if (fields["enabled"] === false && job.enabled) job = await store.pause(id);
  else if (fields["enabled"] === true && !job.enabled) job = await store.resume(id);
  return job;
}
