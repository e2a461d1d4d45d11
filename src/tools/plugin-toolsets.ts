/**
 * Plugin toolsets as the session sees them: one `plugin-<name>` toolset per plugin, holding the
 * tools it registered (src/plugins/). Derived from the registry like MCP's toolsets, so a session
 * offers a plugin's tools exactly when the plugin loaded. Only plugins the user enabled load.
 */
import type { ToolRegistry } from "./registry.js";

/** The toolset-name prefix of every plugin's toolset. */
export const PLUGIN_TOOLSET_PREFIX = "plugin-";

/** `{ "plugin-<name>": { tools: [...] } }` for every plugin toolset in `registry`; `{}` when none. */
export function pluginToolsets(registry: Pick<ToolRegistry, "list">): Record<string, { tools: string[] }> {
  const out: Record<string, { tools: string[] }> = {};
  for (const tool of registry.list()) {
    if (!tool.toolset.startsWith(PLUGIN_TOOLSET_PREFIX)) continue;
    const toolset = out[tool.toolset] ?? { tools: [] };
    toolset.tools.push(tool.name);
    out[tool.toolset] = toolset;
  }
  return out;
}
