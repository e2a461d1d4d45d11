/**
 * Which plugins a home holds and which of them the user enabled. A folder under
 * `<home>/plugins/` is a plugin when it holds a `plugin.yaml` or the package.json of a
 * `hermes-plugin-*` package; it loads only when `plugins.enabled` names it and `plugins.disabled`
 * does not (a plugin runs with every secret the process holds, so appearing is not consent).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { setPluginSummaries } from "../commands/plugin-commands.js";
import type { HermesConfig } from "../config/defaults.js";
import { ManifestError, type PluginManifest, parseManifest } from "./manifest.js";

/** Folders under `plugins/` that are not plugins (upstream keeps model providers there). */
const NOT_PLUGINS = new Set(["model-providers", "node_modules"]);

/** Where `hermes plugins install` records a plugin's origin, inside its folder. */
export const INSTALL_RECORD = ".hermes-install.json";

export interface DiscoveredPlugin {
  /** The folder's name: what `hermes plugins enable NAME` takes. */
  name: string;
  dir: string;
  /** Absent when the manifest is broken (`error` says why). */
  manifest?: PluginManifest;
  error?: string;
  enabled: boolean;
}

export function pluginsDir(home: string): string {
  return join(home, "plugins");
}

/** `plugins.enabled` minus `plugins.disabled`, as config.yaml holds them (non-lists read as empty). */
export function enabledPluginNames(
  config: Pick<HermesConfig, "plugins"> | Record<string, unknown>,
): string[] {
  const section = (config as { plugins?: unknown }).plugins;
  if (typeof section !== "object" || section === null) return [];
  const list = (value: unknown) =>
    Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
  const disabled = new Set(list((section as Record<string, unknown>)["disabled"]));
  return list((section as Record<string, unknown>)["enabled"]).filter((n) => !disabled.has(n));
}

/** Every plugin folder of the home, sorted by name; never throws for one broken plugin. */
export function discoverPlugins(
  home: string,
  config: { plugins?: { enabled?: unknown; disabled?: unknown } },
): DiscoveredPlugin[] {
  const root = pluginsDir(home);
  let names: string[];
  try {
    names = readdirSync(root, { withFileTypes: true })
      .filter((e) => e.isDirectory() && !e.name.startsWith(".") && !NOT_PLUGINS.has(e.name))
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
  const enabled = new Set(enabledPluginNames(config));
  return names.map((name) => readPlugin(join(root, name), name, enabled.has(name)));
}

/** One plugin folder's manifest (or the reason it cannot be read). */
export function readPlugin(dir: string, name: string, enabled: boolean): DiscoveredPlugin {
  const read = (file: string) =>
    existsSync(join(dir, file)) ? readFileSync(join(dir, file), "utf8") : undefined;
  try {
    const manifest = parseManifest(
      { pluginYaml: read("plugin.yaml"), packageJson: read("package.json") },
      name,
    );
    return { name, dir, manifest, enabled };
  } catch (error) {
    const message = error instanceof ManifestError ? error.message : String(error);
    return { name, dir, error: `${join(dir)}: ${message}`, enabled };
  }
}

/**
 * When this process loads no plugin (none enabled, or safe mode): `/plugins` still lists the
 * folders found, unloaded, so a user sees what is there and how to turn one on. The folders are
 * read when `/plugins` runs, never at start-up.
 */
export function listUnloadedPlugins(
  home: string,
  config: { plugins?: { enabled?: unknown; disabled?: unknown } },
  safeMode: boolean,
): void {
  setPluginSummaries(() =>
    discoverPlugins(home, config).map((plugin) => ({
      name: plugin.name,
      version: plugin.manifest?.version ?? "?",
      status: !plugin.manifest
        ? "broken"
        : plugin.enabled && safeMode
          ? "not loaded (safe mode)"
          : plugin.enabled
            ? "not loaded"
            : "not enabled",
      ...(plugin.error ? { detail: plugin.error } : {}),
      tools: [],
      hooks: [],
      commands: [],
    })),
  );
}
