/**
 * One skill (`GET /api/skills/:name`), the skill curator (`/api/curator`, pin/unpin/archive/restore
 * per skill) and the agent's staged writes awaiting approval (`/api/pending/:subsystem`). Every
 * change goes through the library the CLI uses: `runCuratorVerb` (as `hermes curator …`) and
 * `approvePending`/`rejectPending` (as `hermes skills|memory approve|reject`). Skill names are
 * checked against a strict pattern and resolved through skills discovery (or the archive listing),
 * never joined onto a path; pending ids go through `isPendingId`.
 */
import { readFileSync } from "node:fs";
import type { HermesConfig } from "../config/defaults.js";
import { foreignOwner, homeSkills, listArchived } from "../knowledge/curator/archive.js";
import { listBackups } from "../knowledge/curator/backup.js";
import { curatorDue } from "../knowledge/curator/lifecycle.js";
import { curatorSettings } from "../knowledge/curator/settings.js";
import { readCuratorState } from "../knowledge/curator/state.js";
import { type CuratorRequest, runCuratorVerb } from "../knowledge/curator/verbs.js";
import { findSkill } from "../knowledge/skills/discovery.js";
import type { SkillsConfig } from "../knowledge/skills/types.js";
import { isCuratorManaged } from "../knowledge/skills/usage.js";
import { knowledgeStores } from "../knowledge/stores.js";
import { writeApprovalEnabled } from "../knowledge/write-approval/gate.js";
import { isPendingId, type Subsystem } from "../knowledge/write-approval/pending.js";
import { listWrites } from "../knowledge/write-approval/pending-shared.js";
import { approvePending, pendingDiff, rejectPending } from "../tools/write-approval/apply.js";
import { ApiError, type Route } from "./http.js";

export interface SkillRouteDeps {
  home: string;
  skillsConfig: SkillsConfig | undefined;
  env: Record<string, string | undefined>;
  config?: () => HermesConfig;
  startCuratorRun?: (dryRun: boolean) => number;
}

/** Skill names as folders and frontmatter spell them: no separators, no leading dot. */
const SKILL_NAME = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$/;

function skillName(raw: string | undefined): string {
  const name = raw ?? "";
  if (!SKILL_NAME.test(name) || name.includes("..")) {
    throw new ApiError(
      400,
      `"${name.slice(0, 80)}" is not a skill name (letters, digits, ".", "_", "+", "-")`,
    );
  }
  return name;
}

function subsystem(raw: string | undefined): Subsystem {
  if (raw === "skills" || raw === "memory") return raw;
  throw new ApiError(404, 'pending writes are under "skills" or "memory"');
}

function pendingId(raw: string | undefined): string {
  const id = raw ?? "";
  // "all" means every record to the library; the page decides one write at a time.
  if (!isPendingId(id) || id.toLowerCase() === "all") {
    throw new ApiError(400, `"${id.slice(0, 80)}" is not a pending write id`);
  }
  return id;
}

function bool(body: Record<string, unknown>, name: string): boolean {
  const value = body[name];
  if (value === undefined || value === null) return false;
  if (typeof value !== "boolean") throw new ApiError(400, `"${name}" must be true or false`);
  return value;
}

export function skillRoutes(deps: SkillRouteDeps): Route[] {
  const config = (): HermesConfig => (deps.config ? deps.config() : ({} as HermesConfig));
  const configRecord = () => config() as unknown as Record<string, unknown>;
  const skillsConfig = () => (deps.config ? deps.config().skills : deps.skillsConfig);
  const curator = async (request: CuratorRequest, okStatus = 200) => {
    const outcome = await runCuratorVerb(request, {
      home: deps.home,
      config: config(),
      env: deps.env,
      ...(deps.startCuratorRun
        ? { startBackground: (r: CuratorRequest) => deps.startCuratorRun?.(r.dryRun === true) ?? 0 }
        : {}),
    });
    const message = outcome.lines.join("\n");
    if (outcome.exitCode !== 0) throw new ApiError(outcome.exitCode === 2 ? 400 : 422, message);
    return { json: { ok: true, message, lines: outcome.lines }, status: okStatus };
  };
  /** A name the curator may act on: installed in the home, or archived for `restore`. */
  const installed = (name: string): void => {
    if (!homeSkills(deps.home).some((s) => s.name === name)) {
      throw new ApiError(404, `No skill named "${name}" is installed in this home's skills folder.`);
    }
  };
  const skillVerb = (verb: "pin" | "unpin" | "archive" | "restore"): Route => ({
    method: "POST",
    path: `/api/skills/:name/${verb}`,
    summary:
      verb === "restore"
        ? "bring an archived skill back (as `hermes curator restore`)"
        : `${verb} a skill (as \`hermes curator ${verb}\`): bundled and hub skills are refused (422)`,
    handler: ({ params }) => {
      const name = skillName(params["name"]);
      if (verb === "restore") {
        if (!listArchived(deps.home).some((a) => a.name === name))
          throw new ApiError(404, `No archived skill named "${name}".`);
      } else installed(name);
      return curator({ verb, name });
    },
  });

  return [
    {
      method: "GET",
      path: "/api/skills/:name",
      summary:
        "one skill: its SKILL.md (`content`), supporting files, usage and state (`category` narrows a name two categories share)",
      handler: async ({ params, query }) => {
        const name = skillName(params["name"]);
        const category = query.get("category");
        const wanted = category ? `${category}/${name}` : name;
        // The home's usage store: skills/.usage.json, or the shared database on a postgres home.
        const usage = await knowledgeStores(deps.home).skillUsage.read();
        const skill = findSkill(wanted, {
          home: deps.home,
          config: skillsConfig(),
          env: deps.env,
          includeDisabled: true,
          includeOtherPlatforms: true,
          usage,
        });
        if (!skill) throw new ApiError(404, `No skill named "${name}".`);
        let content: string;
        try {
          content = readFileSync(skill.file, "utf8");
        } catch (error) {
          throw new ApiError(422, `Cannot read the skill's SKILL.md: ${(error as Error).message}`);
        }
        const u = usage[skill.name] ?? {};
        return {
          json: {
            skill: {
              name: skill.name,
              description: skill.description,
              category: skill.category,
              tags: skill.tags,
              version: skill.version ?? null,
              platforms: skill.platforms,
              origin: skill.origin,
              source: skill.source,
              disabled: skillsConfig()?.disabled?.includes(skill.name) === true,
              owner: skill.source === "home" ? (foreignOwner(deps.home, skill.name) ?? null) : "external",
              state: u.state ?? "active",
              pinned: u.pinned === true,
              // The curator stales and archives agent-made skills on its own; yours only when you ask.
              curator_managed: skill.source === "home" && isCuratorManaged(u),
              created_by: u.created_by ?? null,
              created_at: u.created_at ?? null,
              use_count: u.use_count ?? 0,
              view_count: u.view_count ?? 0,
              patch_count: u.patch_count ?? 0,
              last_used_at: u.last_used_at ?? null,
              last_viewed_at: u.last_viewed_at ?? null,
              last_patched_at: u.last_patched_at ?? null,
              required_env: skill.requiredEnv.map((r) => r.name),
              missing_env: skill.missingEnv,
              linked_files: skill.linkedFiles,
            },
            content,
          },
        };
      },
    },
    skillVerb("pin"),
    skillVerb("unpin"),
    skillVerb("archive"),
    skillVerb("restore"),
    {
      method: "GET",
      path: "/api/curator",
      summary:
        "the skill curator: settings, state (paused, runs, last run and summary), when it runs next, archived skills, backups, and `hermes curator status` as `lines`",
      handler: async () => {
        const now = new Date();
        const settings = curatorSettings(configRecord());
        const state = readCuratorState(deps.home);
        const due = curatorDue(state, settings, now, Number.POSITIVE_INFINITY);
        const status = await runCuratorVerb(
          { verb: "status" },
          { home: deps.home, config: config(), env: deps.env },
        );
        const usage = await knowledgeStores(deps.home).skillUsage.read();
        return {
          json: {
            enabled: settings.enabled,
            paused: state.paused === true,
            settings,
            run_count: state.run_count ?? 0,
            last_run_at: state.last_run_at ?? null,
            last_run_summary: state.last_run_summary ?? null,
            last_run_duration_seconds: state.last_run_duration_seconds ?? null,
            next_run: due.due ? "due now (waits for idle)" : due.reason,
            archived: listArchived(deps.home).map((a) => ({
              name: a.name,
              description: a.description,
              archived_at: a.archivedAt,
            })),
            pinned: Object.entries(usage)
              .filter(([, r]) => r.pinned === true)
              .map(([n]) => n)
              .sort(),
            backups: listBackups(deps.home).length,
            lines: status.lines,
          },
        };
      },
    },
    {
      method: "POST",
      path: "/api/curator/run",
      summary:
        'start a curator pass in the background (as `hermes curator run --background`): `{"dry_run": true}` previews; `202`, `422` when the curator is disabled',
      handler: ({ body }) => curator({ verb: "run", background: true, dryRun: bool(body, "dry_run") }, 202),
    },
    {
      method: "POST",
      path: "/api/curator/pause",
      summary: "stop scheduled curator runs (as `hermes curator pause`)",
      handler: () => curator({ verb: "pause" }),
    },
    {
      method: "POST",
      path: "/api/curator/resume",
      summary: "allow scheduled curator runs again",
      handler: () => curator({ verb: "resume" }),
    },
    {
      method: "GET",
      path: "/api/pending/:subsystem",
      summary:
        "the agent's staged writes awaiting approval (`skills` or `memory`), oldest first, with `write_approval` on or off",
      handler: async ({ params }) => {
        const sub = subsystem(params["subsystem"]);
        return {
          json: {
            subsystem: sub,
            write_approval: writeApprovalEnabled(configRecord(), sub),
            pending: (await listWrites(deps.home, sub)).map((r) =>
              r.ok
                ? {
                    id: r.record.id,
                    action: r.record.action,
                    summary: r.record.summary,
                    origin: r.record.origin,
                    created_at: r.record.created_at,
                    name: typeof r.record.payload["name"] === "string" ? r.record.payload["name"] : null,
                    target:
                      typeof r.record.payload["target"] === "string" ? r.record.payload["target"] : null,
                  }
                : { id: r.id, error: r.error },
            ),
          },
        };
      },
    },
    {
      method: "GET",
      path: "/api/pending/:subsystem/:id",
      summary:
        "what approving a staged write changes: the new SKILL.md or a unified diff (`text`), `stale` when the file changed since",
      handler: async ({ params }) => {
        const sub = subsystem(params["subsystem"]);
        const id = pendingId(params["id"]);
        const diff = await pendingDiff({ home: deps.home, config: configRecord(), env: deps.env }, sub, id);
        if ("error" in diff) throw new ApiError(diff.error.startsWith("No pending") ? 404 : 422, diff.error);
        return {
          json: {
            id: diff.record.id,
            action: diff.record.action,
            summary: diff.record.summary,
            origin: diff.record.origin,
            created_at: diff.record.created_at,
            text: diff.text,
            stale: diff.stale ?? null,
          },
        };
      },
    },
    {
      method: "POST",
      path: "/api/pending/:subsystem/:id/approve",
      summary:
        'apply a staged write through the same checks as a direct one (`{"force": true}` after reviewing a stale one); `409` stale, `422` refused, `404` gone',
      handler: async ({ params, body }) => {
        const sub = subsystem(params["subsystem"]);
        const id = pendingId(params["id"]);
        const force = bool(body, "force");
        const [outcome] = await approvePending(
          { home: deps.home, config: configRecord(), env: deps.env },
          sub,
          id,
          {
            force,
          },
        );
        return decision(outcome);
      },
    },
    {
      method: "POST",
      path: "/api/pending/:subsystem/:id/reject",
      summary: "drop a staged write unapplied",
      handler: async ({ params }) => {
        const sub = subsystem(params["subsystem"]);
        const id = pendingId(params["id"]);
        const [outcome] = await rejectPending(
          { home: deps.home, config: configRecord(), env: deps.env },
          sub,
          id,
        );
        return decision(outcome);
      },
    },
  ];
}

function decision(outcome: { id: string; ok: boolean; message: string; stale?: boolean } | undefined) {
  if (!outcome) throw new ApiError(404, "No such pending write.");
  if (outcome.ok) return { json: { ok: true, id: outcome.id, message: outcome.message } };
  const gone = /^No pending|no longer pending/.test(outcome.message);
  throw new ApiError(gone ? 404 : outcome.stale ? 409 : 422, outcome.message, { id: outcome.id });
}
