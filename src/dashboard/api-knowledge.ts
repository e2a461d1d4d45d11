/**
 * `/api/memory`, `/api/skills`: MEMORY.md/USER.md through `MemoryStore` (the memory tool's
 * injection scan, char limits and file lock), skills from discovery and `.usage.json`. One skill,
 * the curator and the staged writes awaiting approval are in api-skills.ts.
 */
import type { HermesConfig } from "../config/defaults.js";
import { entryBlockReason, usedChars } from "../knowledge/memory/format.js";
import type { MemoryRecords } from "../knowledge/memory/store.js";
import type { MemoryTarget } from "../knowledge/memory/types.js";
import { discoverSkills } from "../knowledge/skills/discovery.js";
import type { SkillsConfig } from "../knowledge/skills/types.js";
import { knowledgeStores } from "../knowledge/stores.js";
import { writeApprovalEnabled } from "../knowledge/write-approval/gate.js";
import { countWrites } from "../knowledge/write-approval/pending-shared.js";
import { FileLockTimeoutError } from "../util/file-lock.js";
import { skillRoutes } from "./api-skills.js";
import { ApiError, field, type Route } from "./http.js";

export interface KnowledgeDeps {
  home: string;
  /** MEMORY.md / USER.md (the state backend's store). */
  memory: MemoryRecords;
  skillsConfig: SkillsConfig | undefined;
  env: Record<string, string | undefined>;
  /** The current config.yaml (re-read after a config change), for the curator and approvals. */
  config?: () => HermesConfig;
  /** Starts `hermes curator run [--dry-run]` detached (the CLI's `--background`); returns its pid. */
  startCuratorRun?: (dryRun: boolean) => number;
}

const TARGETS: readonly MemoryTarget[] = ["memory", "user"];

function target(raw: string | undefined): MemoryTarget {
  if (raw === "memory" || raw === "user") return raw;
  throw new ApiError(404, 'memory target must be "memory" (MEMORY.md) or "user" (USER.md)');
}

export function knowledgeRoutes(deps: KnowledgeDeps): Route[] {
  return [
    {
      method: "GET",
      path: "/api/memory",
      summary:
        "MEMORY.md and USER.md: entries (a blocked one shown as its [BLOCKED: ...] line), usage and char limits",
      handler: async () => ({
        json: {
          limits: deps.memory.limits,
          write_approval: deps.config
            ? writeApprovalEnabled(deps.config() as unknown as Record<string, unknown>, "memory")
            : false,
          pending: await countWrites(deps.home, "memory"),
          targets: await Promise.all(
            TARGETS.map(async (t) => {
              const read = await deps.memory.read(t);
              const raw = await deps.memory.entries(t);
              const blocked = await deps.memory.blockedEntries(t);
              return {
                target: t,
                limit: deps.memory.limits[t],
                chars: usedChars(raw),
                usage: read.usage,
                entries: read.current_entries ?? [],
                blocked: blocked.map((b) => b.reason),
                // The file's own text for the person (a blocked entry is shown as such, never to the model).
                items: raw.map((text) => ({
                  text,
                  chars: usedChars([text]),
                  blocked: entryBlockReason(text) ?? null,
                })),
              };
            }),
          ),
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
      handler: async () => {
        const skillsConfig = deps.config ? deps.config().skills : deps.skillsConfig;
        // The home's usage store: skills/.usage.json, or the shared database on a postgres home.
        const usage = await knowledgeStores(deps.home).skillUsage.read();
        const { skills, warnings } = discoverSkills({
          home: deps.home,
          config: skillsConfig,
          env: deps.env,
          includeDisabled: true,
          includeOtherPlatforms: true,
          usage,
        });
        const disabled = new Set(skillsConfig?.disabled ?? []);
        return {
          json: {
            write_approval: deps.config
              ? writeApprovalEnabled(deps.config() as unknown as Record<string, unknown>, "skills")
              : false,
            pending: await countWrites(deps.home, "skills"),
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
                last_activity_at: u.last_activity_at ?? null,
                missing_env: s.missingEnv,
              };
            }),
          },
        };
      },
    },
    ...skillRoutes(deps),
  ];
}
