/**
 * Start-up of a non-local execution environment before a surface's first model call: when the
 * session offers terminal or file tools and `terminal.backend` is not local, the environment is
 * started now, so a wrong setting, a missing runtime or an unreachable host is an error at
 * start-up (with its fix), never a quiet run on the host. The local backend stays lazy.
 */
import type { HermesConfig } from "../config/defaults.js";
import { backendKind } from "../environments/index.js";
import type { Environment } from "../environments/types.js";
import { prepareEnvironment } from "../tools/environment.js";
import { resolveToolsets } from "../tools/toolsets.js";
import type { ToolRuntime } from "../tools/types.js";

/** The tools that act in the environment. */
const ENVIRONMENT_TOOLS = new Set([
  "terminal",
  "process",
  "read_file",
  "write_file",
  "patch",
  "search_files",
]);

export interface EnvironmentStartInput {
  runtime: ToolRuntime;
  config: HermesConfig;
  home: string;
  cwd: string;
  /** The tools' environment (secrets stripped). */
  env: Readonly<Record<string, string | undefined>>;
  /** Hermes's own environment (for backend settings such as TERMINAL_SSH_*). */
  secrets: Readonly<Record<string, string | undefined>>;
  /** The session's toolsets (default `config.toolsets`). */
  toolsets?: readonly string[] | undefined;
}

/** Whether the session's toolsets include a tool that acts in the environment. */
export function usesEnvironment(config: HermesConfig, toolsets: readonly string[] | undefined): boolean {
  const { tools } = resolveToolsets(toolsets ?? config.toolsets, {
    custom: config.custom_toolsets,
    disabled: config.agent.disabled_toolsets,
  });
  return tools.some((t) => ENVIRONMENT_TOOLS.has(t));
}

/**
 * Starts the environment when it is not local and the session's tools use it. Resolves with it
 * (undefined otherwise); rejects with the `EnvironmentError` (`environmentFailure` turns it into
 * the message and exit code).
 */
export async function startSessionEnvironment(
  input: EnvironmentStartInput,
): Promise<Environment | undefined> {
  const config = input.config as unknown as Record<string, unknown>;
  if (backendKind(config) === "local") return undefined;
  if (!usesEnvironment(input.config, input.toolsets)) return undefined;
  return prepareEnvironment({
    runtime: input.runtime,
    cwd: input.cwd,
    env: input.env,
    secrets: input.secrets,
    config,
    home: input.home,
  });
}
