/**
 * Which toolsets a platform offers, shown and changed: the text of `hermes tools list` and
 * `hermes tools --summary`, and `/tools list|enable|disable` (plain `/tools` still lists the
 * session's tools; control-commands.ts delegates the subcommands here).
 *
 * A change is written to config.yaml at once and applies to the running conversation from its
 * next message: the session's agent is rebuilt with the new toolsets and a new system prompt,
 * history kept. The tool schemas are part of the prompt the provider caches, so that costs one
 * cache miss (upstream resets the session instead; here the conversation survives it).
 */
import type { HermesConfig } from "../config/defaults.js";
import { loadEnvFile } from "../config/env-file.js";
import { loadConfig } from "../config/load.js";
import {
  CONFIGURABLE_TOOLSETS,
  DEFAULT_OFF_TOOLSETS,
  enabledToolsets,
  explicitPlatformToolsets,
  TOOL_PLATFORMS,
} from "../tools/platform-tools.js";
import { changeTools, type ToolChangeResult } from "../tools/tool-config.js";
import type { CommandContext, Paint } from "./types.js";

const record = (value: unknown): Record<string, unknown> =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

const fallbackFor = (config: HermesConfig, platform: string) =>
  platform === "cli" ? config.toolsets : undefined;

/**
 * `Toolsets (<platform>):` with one ✓/✗ line per configurable toolset (✗ with "disabled in
 * agent.disabled_toolsets" when that key withholds it everywhere), then the MCP servers and
 * their tool filters.
 */
export function formatToolsList(config: HermesConfig, platform: string, s: Paint): string[] {
  const raw = config as unknown as Record<string, unknown>;
  const enabled = enabledToolsets(raw, platform, fallbackFor(config, platform));
  const globallyOff = new Set(config.agent.disabled_toolsets);
  const width = Math.max(...CONFIGURABLE_TOOLSETS.map((t) => t.key.length)) + 2;
  const lines = [s.bold(`Toolsets (${platform}):`)];
  for (const { key, label } of CONFIGURABLE_TOOLSETS) {
    const on = enabled.has(key) && !globallyOff.has(key);
    const mark = on ? s.green("✓ enabled ") : s.red("✗ disabled");
    const why = enabled.has(key) && globallyOff.has(key) ? s.yellow(" (agent.disabled_toolsets)") : "";
    lines.push(`  ${mark}  ${key.padEnd(width)}${s.dim(label)}${why}`);
  }
  const servers = record(raw["mcp_servers"]);
  if (Object.keys(servers).length > 0) {
    lines.push("", s.bold("MCP servers:"));
    for (const [name, server] of Object.entries(servers)) {
      const filters = record(record(server)["tools"]);
      const include = Array.isArray(filters["include"]) ? (filters["include"] as string[]) : [];
      const exclude = Array.isArray(filters["exclude"]) ? (filters["exclude"] as string[]) : [];
      const detail =
        include.length > 0
          ? `include only: ${include.join(", ")}`
          : exclude.length > 0
            ? `excluded: ${exclude.join(", ")}`
            : "all tools enabled";
      const off =
        record(server)["enabled"] === false || globallyOff.has(`mcp-${name}`) ? s.yellow(" (off)") : "";
      lines.push(`  ${name}  ${s.dim(`[${detail}]`)}${off}`);
    }
  }
  return lines;
}

/**
 * One line per platform with its own `platform_toolsets` entry (the CLI always): how many of the
 * configurable toolsets it offers, and which are off.
 */
export function formatToolsSummary(config: HermesConfig, s: Paint): string[] {
  const raw = config as unknown as Record<string, unknown>;
  const lines = [s.bold("Tool summary")];
  const total = CONFIGURABLE_TOOLSETS.length;
  for (const platform of TOOL_PLATFORMS) {
    const explicit = explicitPlatformToolsets(raw, platform);
    if (platform !== "cli" && !explicit) continue;
    const enabled = enabledToolsets(raw, platform, fallbackFor(config, platform));
    for (const key of config.agent.disabled_toolsets) enabled.delete(key);
    const off = CONFIGURABLE_TOOLSETS.map((t) => t.key).filter((k) => !enabled.has(k));
    const source = explicit ? "platform_toolsets" : "default";
    lines.push(
      `  ${platform.padEnd(14)} ${enabled.size}/${total} toolsets ${s.dim(`(${source})`)}` +
        (off.length > 0 ? `  off: ${off.join(", ")}` : ""),
    );
  }
  const others = TOOL_PLATFORMS.filter((p) => p !== "cli" && !explicitPlatformToolsets(raw, p));
  if (others.length > 0) {
    const defaultOff = [...DEFAULT_OFF_TOOLSETS].join(", ");
    lines.push(s.dim(`  Other platforms use their default bundle (all toolsets but ${defaultOff}).`));
  }
  return lines;
}

/** The user's lines for a change: what changed, and what was not found (each an error line). */
export function formatToolChange(
  result: ToolChangeResult,
  action: "enable" | "disable",
  platform: string,
  s: Paint,
): { done: string[]; errors: string[] } {
  const errors: string[] = [];
  const names = CONFIGURABLE_TOOLSETS.map((t) => t.key).join(", ");
  for (const name of result.unknownToolsets)
    errors.push(s.red(`Unknown toolset "${name}". Toolsets: ${names}`));
  for (const server of result.missingServers) {
    errors.push(s.red(`MCP server "${server}" is not in mcp_servers (hermes mcp list shows them).`));
  }
  const verb = action === "enable" ? "Enabled" : "Disabled";
  const done =
    result.changed.length > 0 ? [s.green(`${verb} for ${platform}: ${result.changed.join(", ")}`)] : [];
  return { done, errors };
}

/**
 * `/tools list` and `/tools enable|disable NAME...` (the CLI platform). Returns false when `args`
 * is none of these, so plain `/tools` keeps listing the session's tools.
 */
export async function runToolsSubcommand(args: string, ctx: CommandContext): Promise<boolean> {
  const [sub = "", ...names] = args.split(/\s+/).filter(Boolean);
  const s = ctx.paint;
  const platform = ctx.surface.platform === "cli" ? "cli" : ctx.surface.platform;
  if (sub === "list") {
    ctx.reply(...formatToolsList(ctx.session.agent.config, platform, s));
    return true;
  }
  if (sub !== "enable" && sub !== "disable") return false;
  if (names.length === 0) {
    ctx.reply(s.yellow(`Usage: /tools ${sub} <toolset|server:tool> ...`));
    return true;
  }
  if (ctx.running) {
    // Checked before config.yaml is touched, so a refusal changes nothing.
    ctx.reply(s.yellow(`A turn is running; wait for it or /stop it, then /tools ${sub} again.`));
    return true;
  }
  const { home, config } = ctx.session.agent;
  const result = changeTools({ home, platform, names, action: sub });
  const { done, errors } = formatToolChange(result, sub, platform, s);
  ctx.reply(...errors, ...done);
  if (done.length === 0) return true;
  // The session's config is the one it started with: keep it in step so `/tools list` and new
  // agents of this conversation see the change.
  if (result.list) {
    const raw = config as unknown as Record<string, unknown>;
    raw["platform_toolsets"] = { ...record(raw["platform_toolsets"]), [platform]: [...result.list] };
  }
  const mcpChanged = result.changed.some((n) => n.includes(":"));
  if (mcpChanged && ctx.mcp) {
    // A server's tool filter is applied when it connects: reconnect with the file as it is now.
    const problem = await reloadMcpServers(home, ctx);
    if (problem) ctx.reply(s.yellow(`The MCP tool change applies from the next start: ${problem}`));
  }
  const toolsets = result.list ?? ctx.session.toolsets ?? config.toolsets;
  await ctx.session.setToolsets(toolsets);
  ctx.sessionChanged();
  ctx.reply(
    s.dim(
      "Saved to config.yaml. The model gets the new tool list from your next message; the conversation is kept, and the system prompt is rebuilt with the tools, so the provider's prompt cache starts over once.",
    ),
  );
  return true;
}

/** Reconnects the MCP servers as config.yaml now lists them; the reason when it could not. */
async function reloadMcpServers(home: string, ctx: CommandContext): Promise<string | undefined> {
  if (!ctx.mcp) return "MCP servers are not available here";
  try {
    const env = loadEnvFile(home, process.env).env;
    const servers = loadConfig({ home, env }).config["mcp_servers"];
    const manager = await ctx.mcp();
    await manager.reload(servers, env);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
