/**
 * The protected-path guard for tools that write where the model says: write_file, patch,
 * text_to_speech's output_path, MCP filesystem servers. The list itself is
 * `approval/protected-paths.ts`; this file turns its verdict into what the tool does:
 *
 * - `secret` (credentials: `.env`, `auth.json`, SSH keys...): refused outright, no prompt. A
 *   prompt-injected "fix" to one of these is how an agent gets turned against its user.
 * - `guarded` (Hermes's config, memory, skills, cron jobs, the user's shell start-up files, /etc...):
 *   the user is asked; without an explicit yes (and in non-interactive runs, where nobody can
 *   answer) the write is refused with an error that says what to do instead.
 *
 * The memory, skill_manage and cronjob tools write their own files without this guard: they are
 * the sanctioned way to change those files, with their own validation.
 *
 * In an isolated environment (a container) the path is the environment's: only a write that lands
 * on a host directory mounted there is judged, as the host path behind it (symlinks resolved by
 * the environment itself, since it is the environment that follows them). Container-only paths
 * need no guard: they endanger nothing but the container.
 */
import { relative, sep } from "node:path";
import { hostPathOf } from "../../environments/mounts.js";
import type { Environment } from "../../environments/types.js";
import { withAdvice } from "../approval/denial.js";
import {
  type GuardRoots,
  guardPath,
  guardRoots,
  type PathProtection,
  realPathOf,
} from "../approval/protected-paths.js";
import type { ToolContext } from "../types.js";
import { displayPath } from "./shared.js";

/** Pattern key of every protected-write approval request. */
export const PROTECTED_WRITE_KEY = "protected_write";

/** The tools that own a part of Hermes's home, by the home's top-level folder. */
const OWNING_TOOL: Record<string, string> = {
  memories: "Use the memory tool to add, replace or remove memory entries instead.",
  skills:
    "Use the skill_manage tool (create, edit, patch, write_file, remove_file) to change skills instead.",
  cron: "Use the cronjob tool to create, update or remove scheduled jobs instead.",
};

/**
 * What the model should do instead of writing `abs` itself: the tool that owns that part of
 * Hermes's home, or asking the user. Pure.
 */
export function protectedWriteAdvice(abs: string, roots: GuardRoots): string {
  for (const path of [abs, realPathOf(abs)]) {
    for (const home of roots.hermesHomes) {
      const rel = relative(home, path);
      if (rel === "" || rel === ".." || rel.startsWith(`..${sep}`)) continue;
      let parts = rel.split(sep);
      if (parts[0] === "profiles" && parts.length > 2) parts = parts.slice(2);
      const advice = OWNING_TOOL[parts[0] ?? ""];
      if (advice) return advice;
    }
  }
  return "If the change is really needed, tell the user what to change and let them make it.";
}

/** The error for a write to a `secret` path: never done, whatever the approval mode. */
export function secretRefusal(shown: string, protection: PathProtection): string {
  return (
    `Refusing to write ${shown}: it is ${protection.reason}. The agent's tools never modify credential ` +
    "files, with or without approval; do not retry. Ask the user to make this change."
  );
}

/** The error for a `guarded` write the user did not approve (or nobody could be asked). */
export function deniedProtectedWrite(shown: string, protection: PathProtection, advice: string): string {
  return (
    `Not written: ${shown} is ${protection.reason}, which the agent may change only with the user's ` +
    `approval, and it was not approved (denied, or nobody could be asked). Nothing was changed. ${advice}`
  );
}

/**
 * Throws the refusal when writing `abs` would touch a `secret` path. Cheap and prompt-free, so
 * tools call it before any other work; {@link guardWrite} does it too.
 */
export function refuseSecretWrite(ctx: ToolContext, abs: string, env?: Environment): void {
  // In an isolated environment the symlink-resolved host path is judged by `guardWrite`.
  const host = env?.isolation === "isolated" ? hostPathOf(abs, env.mounts)?.hostPath : abs;
  if (host === undefined) return;
  const protection = guardPath(host, guardRoots(ctx.home, ctx.env));
  if (protection?.level === "secret") throw new Error(secretRefusal(displayPath(abs, ctx.cwd), protection));
}

/**
 * The host path a write of `abs` in `env` lands on, or undefined when it stays inside an isolated
 * environment. On the host (or with no environment) it is `abs` itself.
 */
export async function hostTargetOf(abs: string, env: Environment | undefined): Promise<string | undefined> {
  if (!env || env.isolation === "host") return abs;
  if (env.mounts.length === 0) return undefined;
  let resolved = abs;
  try {
    // -m: the file (and parents) may not exist yet; the environment follows its own symlinks.
    const r = await env.exec(`realpath -m -- '${abs.replace(/'/g, `'\\''`)}'`, { timeoutMs: 10_000 });
    const out = r.stdout.toString("utf8").trim();
    if (r.exitCode === 0 && out.startsWith("/")) resolved = out;
  } catch {
    // Judged by the path as written.
  }
  // Either spelling on a mount counts: a link out of the mount is judged where it points, and a
  // path the environment could not resolve is judged as written.
  return hostPathOf(resolved, env.mounts)?.hostPath ?? hostPathOf(abs, env.mounts)?.hostPath;
}

/**
 * Checks a write (or delete, or move) of `abs` against the protected list, asking the user about
 * a `guarded` path. `action` is how the request is shown to the user ("write_file", "patch");
 * `effect`, when given, says what the action does to the file ("deleted by the patch"). Resolves
 * when the write may go ahead; throws an error the model can act on when it may not.
 */
export async function guardWrite(
  ctx: ToolContext,
  envAbs: string,
  action: string,
  effect?: string,
  env?: Environment,
): Promise<void> {
  const abs = await hostTargetOf(envAbs, env);
  if (abs === undefined) return;
  const roots = guardRoots(ctx.home, ctx.env);
  const protection = guardPath(abs, roots);
  if (!protection) return;
  const shown = displayPath(abs, ctx.cwd);
  if (protection.level === "secret") throw new Error(secretRefusal(shown, protection));
  const decision = await ctx
    .requestApproval({
      command: `${action} ${abs}`,
      reason: effect ? `${protection.reason}, ${effect}` : protection.reason,
      patternKey: PROTECTED_WRITE_KEY,
      protectedPath: true,
    })
    .catch((error: unknown) => {
      throw withAdvice(error, protectedWriteAdvice(abs, roots));
    });
  if (decision === "deny") {
    throw new Error(deniedProtectedWrite(shown, protection, protectedWriteAdvice(abs, roots)));
  }
}
