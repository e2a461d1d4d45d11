/**
 * The active execution environment of a tool runtime: where terminal, process and the file tools
 * act. One environment per runtime, created from the config on first use and stopped when the
 * runtime is disposed. Each task id gets its own shell in it (on the local machine it starts in
 * the agent's cwd); releasing the task ends that shell.
 *
 * Surfaces that use a non-local backend call `prepareEnvironment` before the first model call, so
 * a missing runtime or an unreachable host is reported at start-up (never a quiet run on the host);
 * tools then find the started environment here.
 */
import { backendKind, createEnvironment } from "../environments/index.js";
import { bashAvailable, createLocalEnvironment, LocalEnvironment } from "../environments/local/index.js";
import type { BackendContext, Environment, EnvShell } from "../environments/types.js";
import type { CheckContext, ToolContext, ToolRuntime } from "./types.js";

type EnvironmentContext = Pick<ToolContext, "runtime" | "cwd" | "env" | "config" | "home"> &
  Partial<Pick<ToolContext, "secrets">>;

interface Holder {
  started?: Promise<Environment>;
  /** Task ids whose release already ends their shell in this environment. */
  tasks: Set<string>;
}

/** `|` rather than `:`: the runtime drops `...:${taskId}` entries when a task is released. */
const HOLDER_KEY = "environment|active";

/** True when the config names the local backend; an invalid name is not local (its error comes later). */
function isLocalConfig(config: Readonly<Record<string, unknown>>): boolean {
  try {
    return backendKind(config) === "local";
  } catch {
    return false;
  }
}

function holder(runtime: ToolRuntime, key: string): Holder {
  return runtime.get<Holder>(key, () => ({ tasks: new Set() }));
}

/** What a backend is given, from a tool context (or a surface's equivalent). */
export function backendContext(ctx: Omit<EnvironmentContext, "runtime">): BackendContext {
  return {
    home: ctx.home,
    cwd: ctx.cwd,
    processEnv: ctx.secrets ?? ctx.env,
    childEnv: ctx.env,
    config: ctx.config,
  };
}

/**
 * The runtime's environment, started. Throws the `EnvironmentError` from `createEnvironment` or
 * `start` (the next call tries again, so a host that was briefly unreachable recovers).
 */
export function environmentFor(ctx: EnvironmentContext): Promise<Environment> {
  const h = holder(ctx.runtime, HOLDER_KEY);
  if (h.started) return h.started;
  const started = (async () => {
    const bctx = backendContext(ctx);
    const env = isLocalConfig(ctx.config) ? createLocalEnvironment(bctx) : await createEnvironment(bctx);
    ctx.runtime.onDispose(() => env.stop());
    try {
      await env.start();
    } catch (error) {
      await env.stop().catch(() => undefined);
      throw error;
    }
    return env;
  })();
  h.started = started;
  started.catch(() => {
    if (h.started === started) h.started = undefined;
  });
  return started;
}

/**
 * Starts the configured environment for a surface before its first model call, when it is not the
 * local machine (the local one stays lazy so `hermes -z` starts fast). Resolves with the started
 * environment (undefined for local); rejects with its `EnvironmentError`.
 */
export async function prepareEnvironment(ctx: EnvironmentContext): Promise<Environment | undefined> {
  if (backendKind(ctx.config) === "local") return undefined;
  return environmentFor(ctx);
}

/** The task's persistent shell in the active environment; its release ends the shell. */
export async function taskShell(ctx: EnvironmentContext & Pick<ToolContext, "taskId">): Promise<{
  env: Environment;
  shell: EnvShell;
}> {
  const env = await environmentFor(ctx);
  const h = holder(ctx.runtime, HOLDER_KEY);
  if (!h.tasks.has(ctx.taskId)) {
    h.tasks.add(ctx.taskId);
    const taskId = ctx.taskId;
    ctx.runtime.onTaskRelease(taskId, async () => {
      h.tasks.delete(taskId);
      await env.releaseTask(taskId);
    });
  }
  const shell =
    env instanceof LocalEnvironment
      ? env.shellFor(ctx.taskId, { cwd: ctx.cwd, env: ctx.env })
      : env.shell(ctx.taskId);
  return { env, shell };
}

/** Whether the environment is the machine hermes runs on (the file tools then use node:fs directly). */
export function isLocal(env: Environment): boolean {
  return env.kind === "local";
}

/**
 * Whether the terminal tools can be offered: a non-local backend brings its own bash (its start
 * reports what is missing); the local one needs bash on PATH.
 */
export function terminalAvailable(c: CheckContext): boolean {
  return !isLocalConfig(c.config) || bashAvailable(c.env);
}
