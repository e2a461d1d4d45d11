/**
 * cronjob: the agent's view of `cron/jobs.json`. `run` only marks a job due (the ticker runs it),
 * so an agent never runs agents inline. Prompts are scanned for injection before they are stored,
 * because each run feeds them to a model with tools and no one watching.
 */
import { type TUnsafe, Type } from "@sinclair/typebox";
import type { CronJob, CronOrigin } from "../knowledge/cron/types.js";
import { knowledgeStores } from "../knowledge/stores.js";
import { describeFindings, scanThreats } from "../knowledge/threats.js";
import description from "./cronjob.md";
import { defineTool } from "./types.js";

function stringEnum<const T extends readonly string[]>(values: T): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: "string", enum: [...values] });
}

const parameters = Type.Object({
  action: stringEnum(["create", "list", "update", "pause", "resume", "run", "remove"] as const),
  job_id: Type.Optional(Type.String()),
  schedule: Type.Optional(Type.String()),
  prompt: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
  skills: Type.Optional(Type.Array(Type.String())),
  deliver: Type.Optional(Type.String()),
  repeat: Type.Optional(Type.Integer({ description: "Runs in total; omit for forever." })),
  // Described in cronjob.md, once.
  script: Type.Optional(Type.String()),
  no_agent: Type.Optional(Type.Boolean()),
  context_from: Type.Optional(Type.Array(Type.String())),
});

function summary(job: CronJob): Record<string, unknown> {
  return {
    job_id: job.id,
    name: job.name,
    schedule: job.schedule_display,
    next_run_at: job.next_run_at,
    state: job.state === "completed" ? "completed" : job.enabled ? "scheduled" : "paused",
    deliver: job.deliver,
    ...(job.script ? { script: job.script } : {}),
    ...(job.no_agent ? { no_agent: true } : {}),
    ...(Array.isArray(job.context_from) && job.context_from.length > 0
      ? { context_from: job.context_from }
      : {}),
    last_status: job.last_status,
    ...(job.last_error ? { last_error: job.last_error } : {}),
  };
}

/** The refusal for a prompt that carries injection, or undefined when it is clean. */
export function cronPromptRefusal(prompt: string): string | undefined {
  const findings = scanThreats(prompt, "strict");
  if (findings.length === 0) return undefined;
  return (
    `Refused: the prompt looks like prompt injection (${describeFindings(findings)}). ` +
    "Scheduled prompts run unattended with tools, so they must not carry instructions to override the " +
    "agent, hidden text or ways to move secrets. Rephrase it as the plain task."
  );
}

export const cronjobTool = defineTool({
  name: "cronjob",
  toolset: "cronjob",
  description,
  parameters,
  parallelSafe: false,
  emoji: "⏰",
  async handler(args, ctx) {
    const tz = typeof ctx.config["timezone"] === "string" ? (ctx.config["timezone"] as string) : undefined;
    const store = knowledgeStores(ctx.home).cronJobs({
      ...(tz ? { timezone: tz } : {}),
      ...(ctx.env.HOME ? { userHome: ctx.env.HOME } : {}),
    });
    const need = (what: string) => ({ error: `${what} is required for action "${args.action}".` });
    for (const text of [args.prompt, args.name]) {
      const refusal = text ? cronPromptRefusal(text) : undefined;
      if (refusal) return { error: refusal };
    }
    try {
      switch (args.action) {
        case "list":
          return {
            jobs: (await store.list()).filter((j) => j.state !== "completed").map(summary),
          };
        case "create": {
          if (!args.schedule) return need("schedule");
          if (!args.prompt && !args.skills?.length && !args.script)
            return need("prompt (or skills, or script)");
          const origin = originOf(ctx.session);
          const job = await store.create({
            schedule: args.schedule,
            prompt: args.prompt ?? "",
            ...(args.name ? { name: args.name } : {}),
            ...(args.skills ? { skills: args.skills } : {}),
            ...(args.deliver ? { deliver: args.deliver } : {}),
            ...(args.repeat !== undefined ? { repeat: args.repeat } : {}),
            ...(args.script ? { script: args.script } : {}),
            ...(args.no_agent !== undefined ? { no_agent: args.no_agent } : {}),
            ...(args.context_from ? { context_from: args.context_from } : {}),
            ...(origin ? { origin } : {}),
          });
          return { created: true, ...summary(job) };
        }
        case "update": {
          if (!args.job_id) return need("job_id");
          const job = await store.edit(args.job_id, {
            ...(args.schedule ? { schedule: args.schedule } : {}),
            ...(args.prompt !== undefined ? { prompt: args.prompt } : {}),
            ...(args.name ? { name: args.name } : {}),
            ...(args.skills ? { skills: args.skills } : {}),
            ...(args.deliver ? { deliver: args.deliver } : {}),
            ...(args.repeat !== undefined ? { repeat: args.repeat } : {}),
            ...(args.script !== undefined ? { script: args.script } : {}),
            ...(args.no_agent !== undefined ? { no_agent: args.no_agent } : {}),
            ...(args.context_from !== undefined ? { context_from: args.context_from } : {}),
          });
          return { updated: true, ...summary(job) };
        }
        case "pause":
          return args.job_id ? { paused: true, ...summary(await store.pause(args.job_id)) } : need("job_id");
        case "resume":
          return args.job_id
            ? { resumed: true, ...summary(await store.resume(args.job_id)) }
            : need("job_id");
        case "run":
          if (!args.job_id) return need("job_id");
          return {
            queued: true,
            note: "Marked due; the scheduler runs it within a minute (while the gateway runs).",
            ...summary(await store.markDue(args.job_id)),
          };
        case "remove":
          if (!args.job_id) return need("job_id");
          return { removed: true, ...summary(await store.remove(args.job_id)) };
        default:
          return { error: "action must be one of create, list, update, pause, resume, run, remove." };
      }
    } catch (error) {
      return { error: error instanceof Error ? error.message : String(error) };
    }
  },
});

/** The chat this session serves (set by the gateway under `cron.origin`), for `deliver: origin`. */
function originOf(session: Map<string, unknown>): CronOrigin | undefined {
  const origin = session.get("cron.origin");
  return typeof origin === "object" && origin !== null && "platform" in origin
    ? (origin as CronOrigin)
    : undefined;
}
