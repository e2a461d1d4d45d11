/**
 * `/api/memory`, `/api/skills`, `/api/cron…`: MEMORY.md/USER.md through `MemoryStore` (the memory
 * tool's injection scan, char limits and file lock), skills from discovery and `.usage.json`, cron
 * jobs through `CronStore` (the cronjob tool's prompt scan on create).
 */
import type { CronStore } from "../knowledge/cron/store.js";
import { CronStoreError } from "../knowledge/cron/store.js";
import type { MemoryStore } from "../knowledge/memory/store.js";
import type { MemoryTarget } from "../knowledge/memory/types.js";
import { discoverSkills } from "../knowledge/skills/discovery.js";
import { readUsage } from "../knowledge/skills/provenance.js";
import type { SkillsConfig } from "../knowledge/skills/types.js";
import { cronPromptRefusal } from "../tools/cronjob.js";
import { FileLockTimeoutError } from "../util/file-lock.js";
import { ApiError, field, optionalField, type Route } from "./http.js";

export interface KnowledgeDeps {
  home: string;
  memory: MemoryStore;
  cron: CronStore;
  skillsConfig: SkillsConfig | undefined;
  env: Record<string, string | undefined>;
  /** Whether this home's gateway is running (its ticker runs due cron jobs). */
  gatewayRunning: () => Promise<boolean>;
  /** Starts `hermes cron run <id>` in the background (used when no gateway runs the job). */
  runCronJob?: ((id: string) => void) | undefined;
}

const TARGETS: readonly MemoryTarget[] = ["memory", "user"];

function target(raw: string | undefined): MemoryTarget {
  if (raw === "memory" || raw === "user") return raw;
  throw new ApiError(404, 'memory target must be "memory" (MEMORY.md) or "user" (USER.md)');
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

export function knowledgeRoutes(deps: KnowledgeDeps): Route[] {
  return [
    {
      method: "GET",
      path: "/api/memory",
      summary:
        "MEMORY.md and USER.md: entries (a blocked one shown as its [BLOCKED: ...] line), usage and char limits",
      handler: () => ({
        json: {
          limits: deps.memory.limits,
          targets: TARGETS.map((t) => {
            const read = deps.memory.read(t);
            return {
              target: t,
              limit: deps.memory.limits[t],
              usage: read.usage,
              entries: read.current_entries ?? [],
              blocked: deps.memory.blockedEntries(t).map((b) => b.reason),
            };
          }),
        },
      }),
    },
    {
      method: "POST",
      path: "/api/memory/:target",
      summary:
        'edit through the memory tool\'s checks: {"action": "add", "content"} | {"action": "replace", "old_text", "content"} | {"action": "remove", "old_text"}',
      handler: async ({ params, body }) => {
        const t = target(params["target"]);
        const action = field(body, "action");
        try {
          const result =
            action === "add"
              ? await deps.memory.add(t, field(body, "content"))
              : action === "replace"
                ? await deps.memory.replace(t, field(body, "old_text"), field(body, "content"))
                : action === "remove"
                  ? await deps.memory.remove(t, field(body, "old_text"))
                  : undefined;
          if (!result) throw new ApiError(400, 'action must be "add", "replace" or "remove"');
          return { json: result, status: result.success ? 200 : 422 };
        } catch (error) {
          if (error instanceof FileLockTimeoutError)
            throw new ApiError(503, "memory is locked by another process; try again");
          throw error;
        }
      },
    },
    {
      method: "GET",
      path: "/api/skills",
      summary: "installed skills with category, origin, usage counters, state, pinned and created_by",
      handler: () => {
        const { skills, warnings } = discoverSkills({
          home: deps.home,
          config: deps.skillsConfig,
          env: deps.env,
          includeDisabled: true,
          includeOtherPlatforms: true,
        });
        const usage = readUsage(deps.home);
        const disabled = new Set(deps.skillsConfig?.disabled ?? []);
        return {
          json: {
            warnings,
            skills: skills.map((s) => {
              const u = usage[s.name] ?? {};
              return {
                name: s.name,
                description: s.description,
                category: s.category,
                origin: s.origin,
                source: s.source,
                version: s.version ?? null,
                disabled: disabled.has(s.name),
                state: u.state ?? "active",
                pinned: u.pinned === true,
                created_by: u.created_by ?? null,
                use_count: u.use_count ?? 0,
                view_count: u.view_count ?? 0,
                patch_count: u.patch_count ?? 0,
                last_used_at: u.last_used_at ?? null,
                missing_env: s.missingEnv,
              };
            }),
          },
        };
      },
    },
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
