/**
 * MCP toolsets as the session sees them: one `mcp-<server>` toolset per server, holding the tools
 * that server registered. Derived from the registry (servers come and go), so it stays data like
 * the built-in toolsets. Imports nothing from the SDK: safe on the start-up path.
 */
import type { ToolRegistry } from "../registry.js";

/** The toolset-name prefix of every MCP server's toolset. */
export const MCP_TOOLSET_PREFIX = "mcp-";

/** `{ "mcp-<server>": { tools: [...] } }` for every MCP toolset with tools in `registry`; `{}` when none. */
export function mcpToolsets(registry: Pick<ToolRegistry, "list">): Record<string, { tools: string[] }> {
  const out: Record<string, { tools: string[] }> = {};
  for (const tool of registry.list()) {
    if (!tool.toolset.startsWith(MCP_TOOLSET_PREFIX)) continue;
    const toolset = out[tool.toolset] ?? { tools: [] };
    toolset.tools.push(tool.name);
    out[tool.toolset] = toolset;
  }
  return out;
}
