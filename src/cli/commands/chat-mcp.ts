/**
 * The MCP servers of a chat (and of `hermes --list-tools`): started from config.yaml's
 * `mcp_servers` only when one is enabled, so a chat without MCP loads nothing of it.
 */
import type { ResolvedRuntime } from "../../ai/resolve.js";
import type { HermesConfig } from "../../config/defaults.js";
import type { McpManager } from "../../tools/mcp/manager.js";
import type { ToolRegistry } from "../../tools/registry.js";

export interface ChatMcp {
  /** The session's registry: built-ins plus MCP tools (absent: the agent builds its own). */
  registry?: ToolRegistry;
  /** The running servers, once started. */
  manager?: McpManager;
  /** The manager, started (with no servers) on first use: `/reload-mcp` in a chat that had none. */
  start?: () => Promise<McpManager>;
}

/** What the servers may use besides their config: tokens, the model for sampling, the root. */
export interface ChatMcpContext {
  /** The active home (`auth: oauth` tokens under `mcp-tokens/`, the model's OAuth login). */
  home?: string;
  /** The session's working directory, offered as the servers' root. */
  cwd?: string;
  /** The session's resolved model: servers' sampling requests are answered by it. */
  runtime?: ResolvedRuntime;
}

/**
 * Starts config.yaml's MCP servers when any is enabled. An interactive chat always gets a registry
 * of its own so `/reload-mcp` can add servers later; with no server nothing MCP is loaded.
 */
export async function startMcp(
  config: HermesConfig,
  env: Record<string, string | undefined>,
  onWarning: (message: string) => void,
  interactive: boolean,
  context: ChatMcpContext = {},
): Promise<ChatMcp> {
  const servers = config["mcp_servers"];
  const configured = servers !== undefined && servers !== null;
  if (!configured && !interactive) return {};
  const { hasEnabledMcpServers } = await import("../../tools/mcp/config.js");
  const enabled = configured && hasEnabledMcpServers(servers);
  if (!enabled && !interactive) return {};
  const { createBuiltinRegistry } = await import("../../tools/builtin.js");
  const registry = createBuiltinRegistry();
  const out: ChatMcp = { registry };
  const launch = async (initial: unknown) => {
    const { startMcpServers } = await import("../../tools/mcp/manager.js");
    const { modelSampler } = await import("../../tools/mcp/sampling-model.js");
    const { home, cwd, runtime } = context;
    const sampler = modelSampler({ config, env, home, ...(runtime ? { runtime } : {}) });
    out.manager = startMcpServers({
      config: initial,
      registry,
      env,
      onWarning,
      sampler,
      ...(home ? { home } : {}),
      ...(cwd ? { cwd } : {}),
    });
    return out.manager;
  };
  if (enabled) await launch(servers);
  if (interactive) out.start = async () => out.manager ?? launch({});
  return out;
}
