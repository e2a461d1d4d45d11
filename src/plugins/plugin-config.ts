/**
 * `plugins.enabled` / `plugins.disabled` in config.yaml, as upstream records a user's choice:
 * enabling names the plugin in `enabled` (and takes it out of `disabled`), disabling the reverse.
 * Comment-keeping writes through the config editor; atomic.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { ConfigError } from "../config/errors.js";
import { configPath } from "../config/home.js";
import { editConfigText } from "../config/write.js";
import { parseYaml } from "../config/yaml-doc.js";
import { atomicWriteFileSync } from "../util/atomic-write.js";

export interface PluginLists {
  enabled: string[];
  disabled: string[];
}

/** The two lists as config.yaml holds them (no defaults applied). Throws ConfigError. */
export function readPluginLists(home: string): PluginLists {
  const file = configPath(home);
  const text = existsSync(file) ? readFileSync(file, "utf8") : "";
  const raw: unknown = parseYaml(text, file).doc.toJS();
  const section =
    raw && typeof raw === "object" && !Array.isArray(raw)
      ? (raw as Record<string, unknown>)["plugins"]
      : undefined;
  const list = (value: unknown) =>
    Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
  if (section === undefined || section === null) return { enabled: [], disabled: [] };
  if (typeof section !== "object" || Array.isArray(section)) {
    throw new ConfigError("plugins must be a mapping with enabled: [...] and disabled: [...]", { file });
  }
  const s = section as Record<string, unknown>;
  return { enabled: list(s["enabled"]), disabled: list(s["disabled"]) };
}

/** Pure: the lists after enabling or disabling `name`. */
export function applyPluginChoice(lists: PluginLists, name: string, enable: boolean): PluginLists {
  const without = (l: string[]) => l.filter((n) => n !== name);
  return enable
    ? { enabled: [...without(lists.enabled), name], disabled: without(lists.disabled) }
    : { enabled: without(lists.enabled), disabled: [...without(lists.disabled), name] };
}

/** Pure: the lists with `name` in neither (the plugin was removed). */
export function forgetPlugin(lists: PluginLists, name: string): PluginLists {
  return {
    enabled: lists.enabled.filter((n) => n !== name),
    disabled: lists.disabled.filter((n) => n !== name),
  };
}

/** Writes both lists into config.yaml (other keys and comments kept). Throws ConfigError. */
export function writePluginLists(home: string, lists: PluginLists): void {
  const file = configPath(home);
  let text = existsSync(file) ? readFileSync(file, "utf8") : "";
  text = editConfigText(text, file, "plugins.enabled", JSON.stringify(lists.enabled)).text;
  text = editConfigText(text, file, "plugins.disabled", JSON.stringify(lists.disabled)).text;
  mkdirSync(home, { recursive: true });
  atomicWriteFileSync(file, text);
}
