/** The local backend: `createLocalEnvironment` and its `hermes doctor` checks. */
import { hostname } from "node:os";
import type { BackendContext, DoctorCheck } from "../types.js";
import { LocalEnvironment } from "./environment.js";
import { bashAvailable } from "./shell-session.js";

export { LocalEnvironment, type LocalEnvironmentOptions } from "./environment.js";
export { bashAvailable, quote, ShellSession } from "./shell-session.js";

/** `terminal.<key>` as a positive number of seconds, or undefined when unset or invalid. */
export function terminalSeconds(config: Readonly<Record<string, unknown>>, key: string): number | undefined {
  const terminal = config.terminal;
  const value =
    typeof terminal === "object" && terminal !== null
      ? (terminal as Record<string, unknown>)[key]
      : undefined;
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : undefined;
}

/** The local environment for `ctx`: shells start in `ctx.cwd` with `ctx.childEnv`. */
export function createLocalEnvironment(ctx: BackendContext): LocalEnvironment {
  const grace = terminalSeconds(ctx.config, "daemon_term_grace_seconds");
  const lifetime = terminalSeconds(ctx.config, "lifetime_seconds");
  return new LocalEnvironment({
    cwd: ctx.cwd,
    env: ctx.childEnv,
    ...(grace === undefined ? {} : { killGraceMs: grace * 1000 }),
    ...(lifetime === undefined ? {} : { idleLifetimeMs: lifetime * 1000 }),
  });
}

export async function localDoctor(ctx: BackendContext): Promise<DoctorCheck[]> {
  const bash = bashAvailable(ctx.childEnv);
  return [
    {
      name: "bash",
      ok: bash,
      detail: bash ? `found on PATH (host ${hostname()})` : "bash is not on PATH",
      ...(bash ? {} : { fix: "Install bash, or add its directory to PATH." }),
    },
  ];
}
