/**
 * The plugins of a chat: loaded only when config.yaml enables some and safe mode is off, so a
 * chat without plugins (and every command that is not a chat) loads nothing of src/plugins/.
 */
import type { MemoryHook } from "../../agent/memory-provider-hook.js";
import type { HermesConfig } from "../../config/defaults.js";
import { enabledPluginNames, listUnloadedPlugins } from "../../plugins/discover.js";
import type { ToolRegistry } from "../../tools/registry.js";

export interface ChatPlugins {
  /** The session's registry with the plugins' tools (absent: no plugin loaded). */
  registry?: ToolRegistry;
  /** A memory provider a plugin registered, when `memory.provider` names it. */
  memory?: MemoryHook;
}

export async function startPlugins(options: {
  home: string;
  config: HermesConfig;
  env: Record<string, string | undefined>;
  cwd: string;
  safeMode: boolean;
  /** The registry MCP already made, if any: plugin tools join it. */
  registry: ToolRegistry | undefined;
  warn: (message: string) => void;
}): Promise<ChatPlugins> {
  const { config, env } = options;
  // Nothing loads; `/plugins` still lists the folders (read only when it runs).
  const unloaded = (safeMode: boolean) => {
    listUnloadedPlugins(options.home, config, safeMode);
    return {};
  };
  if (options.safeMode || enabledPluginNames(config).length === 0) return unloaded(options.safeMode);
  const { isSafeModeEnv, loadPluginsOnce } = await import("../../plugins/loader.js");
  if (isSafeModeEnv(env)) return unloaded(true);
  const { createBuiltinRegistry } = await import("../../tools/builtin.js");
  const registry = options.registry ?? createBuiltinRegistry();
  const loaded = await loadPluginsOnce({
    home: options.home,
    config,
    env,
    registry,
    onWarning: options.warn,
  });
  const wanted = String((config.memory as Record<string, unknown>)["provider"] ?? "")
    .trim()
    .toLowerCase();
  const provider = wanted ? loaded.memoryProviders.get(wanted) : undefined;
  if (!provider) return { registry };
  const { openMemoryHook } = await import("../../agent/memory-provider-hook.js");
  const memory = openMemoryHook({
    config,
    home: options.home,
    env,
    cwd: options.cwd,
    platform: "cli",
    provider,
    onWarning: options.warn,
  });
  return { registry, ...(memory ? { memory } : {}) };
}

/**
 * The enabled plugins of a surface that builds its own registries (ACP sessions, batch prompts,
 * RL rollouts): loaded once, so their hooks guard every agent of the process as they guard a chat.
 * Returns what copies their tools into a registry (undefined: no plugin to load).
 */
export async function startSurfacePlugins(options: {
  home: string;
  config: HermesConfig;
  env: Record<string, string | undefined>;
  warn: (message: string) => void;
}): Promise<((registry: ToolRegistry) => void) | undefined> {
  const { config, env } = options;
  if (enabledPluginNames(config).length === 0) return undefined;
  const { isSafeModeEnv, loadPluginsOnce, registerPluginTools } = await import("../../plugins/loader.js");
  if (isSafeModeEnv(env)) return undefined;
  const { createBuiltinRegistry } = await import("../../tools/builtin.js");
  const own = createBuiltinRegistry();
  const loaded = await loadPluginsOnce({
    home: options.home,
    config,
    env,
    registry: own,
    onWarning: options.warn,
  });
  return (registry) => registerPluginTools(loaded, own, registry);
}
