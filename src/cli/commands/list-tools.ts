/**
 * `hermes --list-tools` and `hermes --list-toolsets`: what a chat with this configuration (and
 * `-t`) would offer the model, MCP servers included, without opening a session. Tools on stdout,
 * unknown toolsets and MCP warnings on stderr.
 */
import type { ConfigContext } from "../command.js";
import { startMcp } from "./chat-mcp.js";

/** One line per toolset: name and description. */
export async function listToolsets(ctx: ConfigContext): Promise<number> {
  const { TOOLSETS } = await import("../../tools/toolsets.js");
  for (const [name, spec] of Object.entries(TOOLSETS)) ctx.io.out(`${name.padEnd(20)} ${spec.description}`);
  return 0;
}

/** One line per tool the model would get: name, toolset and the first sentence of its description. */
export async function listTools(ctx: ConfigContext, toolsets: readonly string[]): Promise<number> {
  const { config, env, io } = ctx;
  const { createBuiltinRegistry } = await import("../../tools/builtin.js");
  const { resolveToolsets } = await import("../../tools/toolsets.js");
  const { mcpToolsets } = await import("../../tools/mcp/toolsets.js");
  const mcp = await startMcp(config, env, (m) => io.err(`hermes: warning: ${m}`), false, { home: ctx.home });
  try {
    await mcp.manager?.ready;
    const registry = mcp.registry ?? createBuiltinRegistry();
    const servers = mcpToolsets(registry);
    const resolved = resolveToolsets(
      toolsets.length > 0 ? [...toolsets, ...Object.keys(servers)] : toolsets,
      {
        custom: { ...servers, ...config.custom_toolsets },
        disabled: config.agent.disabled_toolsets,
        knownTools: new Set(registry.names()),
      },
    );
    const names = await registry.available(resolved.tools, { env, config, home: ctx.home });
    for (const name of names) {
      const tool = registry.get(name);
      const summary = (tool?.description.split(/(?<=\.)\s/)[0] ?? "").slice(0, 90);
      io.out(`${name.padEnd(16)} ${tool?.toolset.padEnd(10) ?? ""} ${summary}`);
    }
    if (resolved.unknown.length > 0) io.err(`unknown toolsets: ${resolved.unknown.join(", ")}`);
    return 0;
  } finally {
    await mcp.manager?.close();
  }
}
