/**
 * Turning gateway hook folders on and off: `gateway_hooks.enabled` in config.yaml names the
 * folders under `<home>/hooks/` that run. Enabling checks the folder first, since its handler runs
 * with every secret the gateway holds: the name must be one folder directly under `hooks/` (no
 * path, no `..`), a real directory (a symbolic link could point anywhere, and the loader never
 * follows one), whose HOOK.yaml and handler stay inside it. A folder that fails any of these is
 * refused with the reason; nothing is written.
 */
import { existsSync, lstatSync, mkdirSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "../../config/errors.js";
import { configPath } from "../../config/home.js";
import { editConfigText } from "../../config/write.js";
import { parseYaml } from "../../config/yaml-doc.js";
import { atomicWriteFileSync } from "../../util/atomic-write.js";
import { enabledGatewayHooks, gatewayHooksDir, readHookFolder } from "./discover.js";

export class HookFolderError extends Error {}

/** A folder name as `gateway_hooks.enabled` may hold it: one path segment, no dot start. */
const NAME_RE = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$/;

/**
 * Why `name` cannot be enabled, or undefined when it can. Reads the folder; runs nothing.
 */
export function enableRefusal(home: string, name: string): string | undefined {
  if (!NAME_RE.test(name)) {
    return `"${name}" is not a hook folder name: give the name of one folder under ${gatewayHooksDir(home)} (letters, digits, ".", "_", "-"; no path)`;
  }
  const root = gatewayHooksDir(home);
  const dir = join(root, name);
  let stat: ReturnType<typeof lstatSync>;
  try {
    stat = lstatSync(dir);
  } catch {
    return `there is no hook folder ${dir}`;
  }
  if (stat.isSymbolicLink()) {
    let target = "an unreadable target";
    try {
      target = realpathSync(dir);
    } catch {
      // A dangling link: said as such.
    }
    return `${dir} is a symbolic link (to ${target}); the gateway loads only real folders under ${root}. Copy the hook there instead`;
  }
  if (!stat.isDirectory()) return `${dir} is not a folder`;
  if (!existsSync(join(dir, "HOOK.yaml"))) return `${dir} has no HOOK.yaml`;
  const folder = readHookFolder(dir, name, true);
  if (folder.error) return `${dir}: ${folder.error}`;
  return undefined;
}

/** `gateway_hooks.enabled` as config.yaml holds it (folder names, as written). */
export function readEnabledHooks(home: string): string[] {
  const file = configPath(home);
  const text = existsSync(file) ? readFileSync(file, "utf8") : "";
  const raw: unknown = parseYaml(text, file).doc.toJS();
  const config =
    raw && typeof raw === "object" && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  const section = config["gateway_hooks"];
  if (section !== undefined && section !== null && (typeof section !== "object" || Array.isArray(section))) {
    throw new ConfigError("gateway_hooks must be a mapping with enabled: [...]", { file });
  }
  return enabledGatewayHooks(config);
}

/**
 * Enables (`on`) or disables hook folder `name` in config.yaml (comments and other keys kept).
 * Returns whether the list changed. Enabling a folder that fails `enableRefusal` throws
 * HookFolderError; disabling needs no folder (a removed folder can still be turned off).
 */
export function setHookEnabled(home: string, name: string, on: boolean): boolean {
  if (on) {
    const refusal = enableRefusal(home, name);
    if (refusal) throw new HookFolderError(refusal);
  } else if (!NAME_RE.test(name)) {
    throw new HookFolderError(`"${name}" is not a hook folder name`);
  }
  const current = readEnabledHooks(home);
  const key = name.toLowerCase();
  const has = current.includes(key);
  if (has === on) return false;
  const next = on ? [...current, key] : current.filter((n) => n !== key);
  const file = configPath(home);
  const text = existsSync(file) ? readFileSync(file, "utf8") : "";
  const edited = editConfigText(text, file, "gateway_hooks.enabled", JSON.stringify(next)).text;
  mkdirSync(home, { recursive: true });
  atomicWriteFileSync(file, edited);
  return true;
}
