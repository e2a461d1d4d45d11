/**
 * `/reload-mcp`: re-reads `mcp_servers` from config.yaml (and `.env`), reconnects every server,
 * re-registers their tools and says what changed. When the tool list changed, the session's agent
 * is rebuilt (history and system prompt kept) so the model sees the new list from the next
 * message; that costs one prompt-cache miss, which the output says.
 */
import { loadEnvFile } from "../config/env-file.js";
import { loadConfig } from "../config/load.js";
import type { McpReloadReport, ServerStatus } from "../tools/mcp/manager.js";
import type { CommandDef, Paint } from "./types.js";

const SHOWN_NAMES = 12;

const reloadMcpCommand: CommandDef = {
  name: "reload-mcp",
  aliases: ["reload_mcp"],
  description: "re-read mcp_servers from config.yaml, reconnect the MCP servers and refresh their tools",
  category: "Settings",
  adminOnly: true,
  async run(_args, ctx) {
    const s = ctx.paint;
    if (!ctx.mcp) {
      ctx.reply(s.dim("MCP servers are not available in this session."));
      return;
    }
    const home = ctx.session.agent.home;
    let servers: unknown;
    let env: Record<string, string | undefined>;
    try {
      env = loadEnvFile(home, process.env).env;
      servers = loadConfig({ home, env }).config["mcp_servers"];
    } catch (error) {
      ctx.reply(
        `${s.red("✗")} config.yaml was not reloaded: ${error instanceof Error ? error.message : String(error)}`,
      );
      return;
    }
    ctx.reply(s.dim("Reloading MCP servers…"));
    const manager = await ctx.mcp();
    const report = await manager.reload(servers, env);
    ctx.reply(...formatReloadReport(report, s));
    if (report.added.length === 0 && report.removed.length === 0) {
      ctx.reply(s.dim("The tool list did not change."));
      return;
    }
    // Rebuilding with the same model re-freezes the tool list on the next message and keeps the
    // conversation and the system prompt as they are.
    await ctx.session.setModel(ctx.session.model);
    ctx.sessionChanged();
    ctx.reply(
      s.dim(
        "The model sees the new tool list from your next message (the provider's prompt cache starts over once).",
      ),
    );
  },
};

/** The reload's outcome: one line per server, problems, then the tools added and removed. */
export function formatReloadReport(report: McpReloadReport, s: Paint): string[] {
  const lines: string[] = [];
  if (report.servers.length === 0)
    lines.push(s.dim("No MCP servers are configured (mcp_servers in config.yaml)."));
  for (const server of report.servers) lines.push(serverLine(server, s));
  for (const problem of report.problems) {
    if (!problem.startsWith("MCP server ")) lines.push(s.yellow(`  ${problem}`));
  }
  if (report.added.length > 0) lines.push(`${s.green("+")} ${names(report.added)}`);
  if (report.removed.length > 0) lines.push(`${s.red("-")} ${names(report.removed)}`);
  return lines;
}

function serverLine(server: ServerStatus, s: Paint): string {
  switch (server.state) {
    case "connected": {
      const count = `${server.tools.length} tool${server.tools.length === 1 ? "" : "s"}`;
      const time = server.connectMs !== undefined ? ` · ${server.connectMs} ms` : "";
      return `${s.green("✓")} ${s.bold(server.name)} ${s.dim(`${server.transport} · ${count}${time}`)}`;
    }
    case "disabled":
      return `${s.dim("○")} ${server.name} ${s.dim("disabled (enabled: false)")}`;
    default: {
      const output = server.stderr
        ? s.dim(` (server output: ${server.stderr.split(/\r?\n/).slice(-2).join(" | ")})`)
        : "";
      return `${s.red("✗")} ${s.bold(server.name)} ${server.state}: ${server.error ?? "unknown error"}${output}`;
    }
  }
}

function names(list: readonly string[]): string {
  const shown = list.slice(0, SHOWN_NAMES).join(", ");
  return list.length > SHOWN_NAMES ? `${shown} and ${list.length - SHOWN_NAMES} more` : shown;
}

export const MCP_COMMANDS: readonly CommandDef[] = [reloadMcpCommand];
