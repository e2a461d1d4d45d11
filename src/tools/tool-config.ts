/**
 * `hermes tools enable|disable` and `/tools enable|disable`: one change to which toolsets a
 * platform offers, computed from config.yaml as it is on disk now (not a config loaded when a
 * session started) and written back in one atomic edit that keeps the file's comments.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { ConfigError } from "../config/errors.js";
import { configPath } from "../config/home.js";
import { editConfigText } from "../config/write.js";
import { parseYaml } from "../config/yaml-doc.js";
import { atomicWriteFileSync } from "../util/atomic-write.js";
import { applyMcpChange, applyToolsetChange, TOOL_PLATFORMS } from "./platform-tools.js";

export interface ToolChangeResult {
  /** Names changed (toolsets and `server:tool` targets), in the order given. */
  changed: string[];
  /** Names that are not configurable toolsets. */
  unknownToolsets: string[];
  /** `server:tool` targets whose server is not in `mcp_servers`. */
  missingServers: string[];
  /** The platform's new `platform_toolsets` list, when toolsets changed. */
  list?: string[];
}

/** Thrown for a platform `--platform` does not know; the message lists the valid ones. */
export class UnknownPlatformError extends Error {
  constructor(platform: string) {
    super(`unknown platform "${platform}". Valid: ${TOOL_PLATFORMS.join(", ")}`);
    this.name = "UnknownPlatformError";
  }
}

/**
 * Enables or disables toolsets (`web`) and MCP tools (`github:create_issue`) on `platform` and
 * writes config.yaml when anything valid was named. Unknown names are returned, not thrown, so
 * the valid part of a mixed list still applies (as upstream does). Throws `UnknownPlatformError`
 * and `ConfigError` (config.yaml unreadable; then nothing is written).
 */
export function changeTools(options: {
  home: string;
  platform: string;
  names: readonly string[];
  action: "enable" | "disable";
}): ToolChangeResult {
  const { home, platform, action } = options;
  if (!TOOL_PLATFORMS.includes(platform)) throw new UnknownPlatformError(platform);
  const file = configPath(home);
  const text = readConfigText(file);
  // The file as written (no defaults, no ${VAR} substitution): only the tool keys are read.
  const parsed: unknown = parseYaml(text, file).doc.toJS();
  const raw =
    parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  const toolsetNames = options.names.filter((n) => !n.includes(":"));
  const mcpTargets = options.names.filter((n) => n.includes(":"));
  // The CLI falls back to `toolsets:` (default hermes-cli) when platform_toolsets.cli is unset.
  const configured = raw["toolsets"];
  const fallback =
    platform !== "cli"
      ? undefined
      : Array.isArray(configured) && configured.every((t) => typeof t === "string")
        ? (configured as string[])
        : ["hermes-cli"];
  const toolsets = applyToolsetChange(raw, platform, toolsetNames, action, fallback);
  const mcp = applyMcpChange(raw, mcpTargets, action);

  const edits: Array<[string, unknown]> = [];
  const validToolsets = toolsetNames.filter((n) => !toolsets.unknown.includes(n));
  if (validToolsets.length > 0) edits.push([`platform_toolsets.${platform}`, toolsets.list]);
  for (const [server, exclude] of Object.entries(mcp.excludes)) {
    if (server.includes(".")) {
      throw new ConfigError(
        `the MCP server name "${server}" holds a dot, which a dotted key cannot address; edit mcp_servers.${server}.tools.exclude in config.yaml by hand`,
      );
    }
    edits.push([`mcp_servers.${server}.tools.exclude`, exclude]);
  }
  if (edits.length > 0) {
    let next = text;
    // Each value goes in as JSON, which the editor reads as a YAML flow list.
    for (const [key, value] of edits) next = editConfigText(next, file, key, JSON.stringify(value)).text;
    mkdirSync(home, { recursive: true });
    atomicWriteFileSync(file, next);
  }

  const missing = new Set(mcp.missing);
  return {
    changed: options.names.filter((n) =>
      n.includes(":") ? !missing.has(n.slice(0, n.indexOf(":")) || n) : validToolsets.includes(n),
    ),
    unknownToolsets: toolsets.unknown,
    missingServers: mcp.missing,
    ...(validToolsets.length > 0 ? { list: toolsets.list } : {}),
  };
}

function readConfigText(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return "";
    throw new ConfigError(`cannot read the file (${code ?? String(error)})`, { file });
  }
}
