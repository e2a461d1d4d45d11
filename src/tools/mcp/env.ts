/**
 * The environment a stdio MCP server starts with. A server is third-party code: it gets what a
 * program needs to run (PATH, HOME, locale, terminal, temp and XDG directories) plus what its own
 * `env:` entry gives it, never Hermes's API keys or anything else in the parent's environment.
 */

const PASSED_THROUGH = new Set(["PATH", "HOME", "USER", "LANG", "LC_ALL", "TERM", "SHELL", "TMPDIR"]);

/** Whether `name` is inherited from the parent by every stdio server. */
export function isInheritedVariable(name: string): boolean {
  return PASSED_THROUGH.has(name) || name.startsWith("XDG_");
}

/**
 * The child's environment: the inherited variables of `parent` that are set, then the server's
 * own `env` over them. Pure.
 */
export function childEnvironment(
  parent: Readonly<Record<string, string | undefined>>,
  serverEnv: Readonly<Record<string, string>> = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(parent)) {
    // A value starting with "()" is an exported shell function: code, not configuration.
    if (value !== undefined && isInheritedVariable(name) && !value.startsWith("()")) env[name] = value;
  }
  return { ...env, ...serverEnv };
}
