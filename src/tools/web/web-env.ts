/**
 * Where the web tools read their keys and endpoints: `keyEnv(ctx)` (the agent's environment with the
 * context's own names on top; see src/tools/key-env.ts). Tests inject their own source.
 */
import { type Env, keyEnv } from "../key-env.js";
import type { ToolContext } from "../types.js";

export type { Env };

/** How a web tool obtains the environment it reads keys and endpoints from (tests inject one). */
export type WebEnvSource = (ctx: Pick<ToolContext, "env" | "secrets">) => Env;

export const resolveWebEnv: WebEnvSource = keyEnv;

/** The trimmed value of `name`, or undefined when unset or blank. */
export function envValue(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

/** A section of config.yaml (`web`, `auxiliary`...) as a record; empty when absent or not a map. */
export function configSection(
  config: Readonly<Record<string, unknown>>,
  name: string,
): Record<string, unknown> {
  const section = config[name];
  return section && typeof section === "object" && !Array.isArray(section)
    ? (section as Record<string, unknown>)
    : {};
}
