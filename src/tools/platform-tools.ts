/**
 * Which toolsets each surface offers, as Python Hermes's `hermes tools` keeps them in config.yaml:
 *
 * - `platform_toolsets.<platform>`: a list of toolset names (the configurable ones below, plus any
 *   custom or `mcp-<server>` toolsets the user wrote there). Absent or not a list: the platform's
 *   default bundle (`hermes-<platform>`), minus the default-off toolsets.
 * - `mcp_servers.<server>.tools.exclude`: the MCP tools `hermes tools disable server:tool` withholds.
 * - `agent.disabled_toolsets`: withheld everywhere (applied at resolution, not written here).
 *
 * Everything here is pure: it reads a config object and returns the list to store. Writing the
 * file is `tool-config.ts`.
 */
import { CORE_TOOLSET_PLATFORMS, resolveToolsets, TOOLSETS } from "./toolsets.js";

/** The toolsets `hermes tools` turns on and off, in the order it lists them (upstream's order). */
export const CONFIGURABLE_TOOLSETS: readonly { key: string; label: string }[] = [
  { key: "web", label: "Web search and page extraction" },
  { key: "browser", label: "Browser automation" },
  { key: "terminal", label: "Terminal and background processes" },
  { key: "file", label: "Read, write, patch and search files" },
  { key: "code_execution", label: "Scripts that call tools (execute_code)" },
  { key: "vision", label: "Image analysis" },
  { key: "image_gen", label: "Image generation" },
  { key: "tts", label: "Text to speech" },
  { key: "skills", label: "List, view and manage skills" },
  { key: "todo", label: "Task planning" },
  { key: "memory", label: "Persistent memory" },
  { key: "session_search", label: "Search past sessions" },
  { key: "clarify", label: "Ask the user a question" },
  { key: "delegation", label: "Subagent delegation" },
  { key: "cronjob", label: "Scheduled jobs" },
  { key: "homeassistant", label: "Home Assistant control" },
];

/** Off unless enabled explicitly, as upstream ships them (`_DEFAULT_OFF_TOOLSETS`). */
export const DEFAULT_OFF_TOOLSETS: ReadonlySet<string> = new Set(["homeassistant"]);

/** The surfaces `--platform` accepts: the CLI, cron, and every messaging platform and server. */
export const TOOL_PLATFORMS: readonly string[] = [
  ...CORE_TOOLSET_PLATFORMS,
  "discord",
  "api_server",
  "webhook",
];

type Config = Readonly<Record<string, unknown>>;

const record = (value: unknown): Record<string, unknown> =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

const stringList = (value: unknown): string[] | undefined =>
  Array.isArray(value) && value.every((v) => typeof v === "string") ? [...value] : undefined;

/** The platform's default bundle: `hermes-<platform>` (`hermes-api-server` for `api_server`). */
export function defaultPlatformToolset(platform: string): string {
  return platform === "api_server" ? "hermes-api-server" : `hermes-${platform}`;
}

/** `platform_toolsets.<platform>` when the config holds a list of names there, else undefined. */
export function explicitPlatformToolsets(config: Config, platform: string): string[] | undefined {
  return stringList(record(config["platform_toolsets"])[platform]);
}

/**
 * The toolset names a session on `platform` starts from: `platform_toolsets.<platform>` when set,
 * else `fallback` (the CLI passes its `toolsets:` key, which defaults to `hermes-cli`), else the
 * platform's default bundle.
 */
export function platformToolsets(config: Config, platform: string, fallback?: readonly string[]): string[] {
  return (
    explicitPlatformToolsets(config, platform) ??
    (fallback ? [...fallback] : [defaultPlatformToolset(platform)])
  );
}

/**
 * The configurable toolsets enabled on `platform`: those whose every tool the platform's list
 * covers. Without an explicit list, default-off toolsets count as off even when the default
 * bundle holds their tools.
 */
export function enabledToolsets(config: Config, platform: string, fallback?: readonly string[]): Set<string> {
  const explicit = explicitPlatformToolsets(config, platform);
  const names = explicit ?? (fallback ? [...fallback] : [defaultPlatformToolset(platform)]);
  const custom = record(config["custom_toolsets"]) as Record<
    string,
    { tools?: string[]; includes?: string[] }
  >;
  const covered = new Set(resolveToolsets(names, { custom }).tools);
  const enabled = new Set<string>();
  for (const { key } of CONFIGURABLE_TOOLSETS) {
    if (!explicit && DEFAULT_OFF_TOOLSETS.has(key)) continue;
    const tools = resolveToolsets([key], { custom }).tools;
    if (tools.length > 0 && tools.every((t) => covered.has(t))) enabled.add(key);
  }
  return enabled;
}

export interface ToolsetChange {
  /** The list to store at `platform_toolsets.<platform>`. */
  list: string[];
  /** Names that are not configurable toolsets (reported, left out of the change). */
  unknown: string[];
}

/**
 * The new `platform_toolsets.<platform>` after enabling or disabling `names`: the enabled
 * configurable toolsets, sorted, then the entries of the old list that are neither configurable
 * nor a platform default bundle (custom and `mcp-<server>` toolsets stay). A default bundle is
 * dropped because it holds every tool and would undo the change on the next read.
 */
export function applyToolsetChange(
  config: Config,
  platform: string,
  names: readonly string[],
  action: "enable" | "disable",
  fallback?: readonly string[],
): ToolsetChange {
  const configurable = new Set(CONFIGURABLE_TOOLSETS.map((t) => t.key));
  const unknown = names.filter((n) => !configurable.has(n));
  const valid = names.filter((n) => configurable.has(n));
  const enabled = enabledToolsets(config, platform, fallback);
  for (const name of valid) {
    if (action === "enable") enabled.add(name);
    else enabled.delete(name);
  }
  const isBundle = (name: string) => name.startsWith("hermes-") && name in TOOLSETS;
  const kept = (explicitPlatformToolsets(config, platform) ?? []).filter(
    (name) => !configurable.has(name) && !isBundle(name),
  );
  return { list: [...[...enabled].sort(), ...kept.filter((n, i) => kept.indexOf(n) === i)], unknown };
}

export interface McpChange {
  /** Server → its new `tools.exclude` list, for the servers that changed. */
  excludes: Record<string, string[]>;
  /** Servers named that are not in `mcp_servers`. */
  missing: string[];
}

/**
 * `server:tool` targets applied to `mcp_servers.<server>.tools.exclude`: disable adds the tool,
 * enable removes it. Upstream's notation; the server must be configured.
 */
export function applyMcpChange(
  config: Config,
  targets: readonly string[],
  action: "enable" | "disable",
): McpChange {
  const servers = record(config["mcp_servers"]);
  const excludes: Record<string, string[]> = {};
  const missing: string[] = [];
  for (const target of targets) {
    const at = target.indexOf(":");
    const server = target.slice(0, at);
    const tool = target.slice(at + 1);
    // Own keys only: `constructor:x` or `__proto__:x` must not find Object's prototype.
    if (!Object.hasOwn(servers, server) || tool === "") {
      if (!missing.includes(server || target)) missing.push(server || target);
      continue;
    }
    const current = excludes[server] ?? stringList(record(record(servers[server])["tools"])["exclude"]) ?? [];
    excludes[server] =
      action === "disable"
        ? current.includes(tool)
          ? current
          : [...current, tool]
        : current.filter((t) => t !== tool);
  }
  return { excludes, missing };
}
