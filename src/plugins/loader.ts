/**
 * Loads the enabled plugins of a home into a process: each plugin's ESM entry is required
 * (Node's require of ES modules: the bundled CLI has no dynamic-import hook) and its
 * `register(ctx)` called. A plugin that throws while loading, or later in a hook, tool or command,
 * is disabled for the process with one message; the agent goes on without it.
 *
 * Loaded once per process and home (`loadPluginsOnce`): every conversation of a gateway shares
 * the same plugins, hooks and tools.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve, sep } from "node:path";
import { type HookBus, processHooks } from "../agent/hooks.js";
import { addPluginCommand, type PluginSummary, setPluginSummaries } from "../commands/plugin-commands.js";
import type { HermesConfig } from "../config/defaults.js";
import type { MemoryProvider } from "../knowledge/memory/providers/types.js";
import type { ToolRegistry } from "../tools/registry.js";
import { createPluginContext, type PluginRecord, pluginSource } from "./context.js";
import { type DiscoveredPlugin, discoverPlugins, enabledPluginNames } from "./discover.js";

/** How long one plugin's `register(ctx)` may take. */
const REGISTER_TIMEOUT_MS = 10_000;

export interface LoadPluginsOptions {
  home: string;
  config: Pick<HermesConfig, "plugins">;
  env: Readonly<Record<string, string | undefined>>;
  /** Plugin tools are registered here (the session's registry). */
  registry: ToolRegistry;
  /** Default: the process's hook bus. */
  bus?: HookBus;
  /** One line per problem (a plugin disabled, a requirement missing). */
  onWarning: (message: string) => void;
}

export interface LoadedPlugins {
  records: PluginRecord[];
  /** Every plugin folder, loaded or not (for `/plugins`). */
  discovered: DiscoveredPlugin[];
  /** Memory providers plugins registered, by lower-case name. */
  memoryProviders: Map<string, MemoryProvider>;
  summaries(): PluginSummary[];
}

/** Whether this run loads plugins at all: some are enabled and safe mode is off. Reads no file. */
export function pluginsWanted(
  config: Pick<HermesConfig, "plugins">,
  env: Readonly<Record<string, string | undefined>>,
  safeMode = false,
): boolean {
  return !safeMode && !isSafeModeEnv(env) && enabledPluginNames(config).length > 0;
}

/** `HERMES_SAFE_MODE=1` (or true/yes): no plugins. */
export function isSafeModeEnv(env: Readonly<Record<string, string | undefined>>): boolean {
  return /^(1|true|yes|on)$/i.test(env["HERMES_SAFE_MODE"]?.trim() ?? "");
}

const loaded = new Map<string, Promise<LoadedPlugins>>();

/**
 * Loads the home's enabled plugins once per process (later calls get the same result; tools are
 * registered into the first caller's registry, and `registerInto` copies them into another).
 * The load is announced to the hook bus, so events fired meanwhile wait for it.
 */
export function loadPluginsOnce(options: LoadPluginsOptions): Promise<LoadedPlugins> {
  const key = resolve(options.home);
  let pending = loaded.get(key);
  if (!pending) {
    pending = loadPlugins(options);
    loaded.set(key, pending);
    (options.bus ?? processHooks()).whenLoaded(pending);
  }
  return pending;
}

/** Copies the plugin tools of `from` into `to` (another conversation's registry). */
export function registerPluginTools(result: LoadedPlugins, from: ToolRegistry, to: ToolRegistry): void {
  if (from === to) return;
  for (const record of result.records) {
    for (const name of record.tools) {
      const tool = from.get(name);
      if (tool && !to.has(name)) to.register(tool);
    }
  }
}

export async function loadPlugins(options: LoadPluginsOptions): Promise<LoadedPlugins> {
  const bus = options.bus ?? processHooks();
  const discovered = discoverPlugins(options.home, options.config);
  const records: PluginRecord[] = [];
  const memoryProviders = new Map<string, MemoryProvider>();
  const notes = new Map<string, { status: string; detail?: string }>();

  const disable = (record: PluginRecord, where: string, error: unknown) => {
    if (record.status === "disabled") return;
    const message = error instanceof Error ? error.message : String(error);
    record.status = "disabled";
    record.reason = `${where} failed: ${firstLine(message)}`;
    bus.unregisterSource(pluginSource(record.name));
    if (record.failClosed) {
      // Its guard can no longer answer, and it asked to block when it cannot: keep blocking.
      bus.register(
        "pre_tool_call",
        () => ({
          action: "block",
          reason: `the plugin "${record.name}" guards tool calls and was disabled (${record.reason}); fix it or run hermes plugins disable ${record.name}`,
        }),
        { source: pluginSource(record.name) },
      );
    }
    options.onWarning(
      `plugin "${record.name}" was disabled for this run: ${record.reason}. Fix it, or turn it off with: hermes plugins disable ${record.name}`,
    );
  };
  bus.onError(({ source, error, event }) => {
    const record = records.find((r) => pluginSource(r.name) === source);
    if (record) disable(record, `its ${event} hook`, error);
  });

  const require = createRequire(import.meta.url);
  for (const plugin of discovered) {
    if (!plugin.enabled) continue;
    if (!plugin.manifest) {
      notes.set(plugin.name, { status: "broken", detail: plugin.error ?? "unreadable" });
      options.onWarning(`plugin "${plugin.name}" is not loaded: ${plugin.error}`);
      continue;
    }
    const missing = plugin.manifest.requiresEnv.filter((name) => !options.env[name]);
    if (missing.length > 0) {
      notes.set(plugin.name, { status: `needs ${missing.join(", ")}` });
      options.onWarning(
        `plugin "${plugin.name}" is not loaded: it needs ${missing.join(", ")} (set it in ${join(options.home, ".env")}).`,
      );
      continue;
    }
    const record: PluginRecord = {
      name: plugin.name,
      dir: plugin.dir,
      manifest: plugin.manifest,
      status: "loaded",
      tools: [],
      hooks: [],
      commands: [],
      memoryProviders: [],
      failClosed: false,
    };
    records.push(record);
    const ctx = createPluginContext(record, {
      home: options.home,
      bus,
      registry: options.registry,
      addCommand: addPluginCommand,
      memoryProviders,
      warn: options.onWarning,
      fail: disable,
    });
    try {
      const register = entryRegister(require, plugin.dir, plugin.manifest.entry);
      await withTimeout(
        Promise.resolve().then(() => register(ctx)),
        REGISTER_TIMEOUT_MS,
      );
    } catch (error) {
      // Whatever it registered before the throw goes with it.
      for (const name of record.tools) options.registry.unregister(name);
      record.tools = [];
      disable(record, "loading it", error);
    }
  }

  const result: LoadedPlugins = {
    records,
    discovered,
    memoryProviders,
    summaries: () =>
      discovered.map((plugin) => {
        const record = records.find((r) => r.name === plugin.name);
        const note = notes.get(plugin.name);
        return {
          name: plugin.name,
          version: plugin.manifest?.version ?? "?",
          status: record ? record.status : (note?.status ?? (plugin.enabled ? "broken" : "not enabled")),
          ...(record?.reason ? { detail: record.reason } : note?.detail ? { detail: note.detail } : {}),
          tools: record?.tools ?? [],
          hooks: record?.hooks ?? [],
          commands: record?.commands ?? [],
        };
      }),
  };
  setPluginSummaries(result.summaries);
  return result;
}

/** The `register` function of a plugin's entry (named export, default export, or default function). */
function entryRegister(require: NodeJS.Require, dir: string, entry: string): (ctx: unknown) => unknown {
  const root = resolve(dir);
  const file = resolve(root, entry);
  if (!file.startsWith(root + sep)) throw new Error(`entry "${entry}" leaves the plugin folder`);
  if (!existsSync(file)) throw new Error(`its entry ${file} does not exist`);
  let mod: Record<string, unknown>;
  try {
    mod = require(file) as Record<string, unknown>;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ERR_REQUIRE_ASYNC_MODULE") {
      throw new Error(`${file} uses top-level await, which Hermes cannot load; move it into register(ctx)`);
    }
    throw error;
  }
  const candidates = [
    mod["register"],
    (mod["default"] as Record<string, unknown> | undefined)?.["register"],
    mod["default"],
  ];
  const register = candidates.find((c) => typeof c === "function");
  if (!register) throw new Error(`${file} exports no register(ctx) function`);
  return register as (ctx: unknown) => unknown;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`register(ctx) did not finish within ${ms / 1000} s`)), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function firstLine(text: string): string {
  return (text.split("\n")[0] ?? "").slice(0, 300) || "unknown error";
}
