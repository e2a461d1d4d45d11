/**
 * Gateway hooks as upstream lays them out: `<home>/hooks/<name>/HOOK.yaml` (name, description,
 * `events:`) beside a JS handler (`handler.js`, `handler.mjs` or `handler.cjs`). Upstream loads every
 * folder it finds; here a folder runs only when `gateway_hooks.enabled` in config.yaml names it,
 * the same consent plugins need, since a handler runs with every secret the gateway holds.
 * Pure reading: nothing here runs a handler.
 */
import { existsSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { parse as parseYaml } from "yaml";

/** The events upstream's gateway fires (`command:<name>` and `command:*` besides). */
export const GATEWAY_HOOK_EVENTS = [
  "gateway:startup",
  "session:start",
  "session:end",
  "session:reset",
  "agent:start",
  "agent:step",
  "agent:end",
] as const;

const HANDLER_FILES = ["handler.js", "handler.mjs", "handler.cjs"];

export interface GatewayHookFolder {
  /** The folder's name: what `gateway_hooks.enabled` lists. */
  name: string;
  dir: string;
  description: string;
  events: string[];
  /** The handler file, absent when the folder has none. */
  handler?: string;
  enabled: boolean;
  /** Why the folder cannot load (bad HOOK.yaml, no handler, unknown event). */
  error?: string;
}

export function gatewayHooksDir(home: string): string {
  return join(home, "hooks");
}

/** `gateway_hooks.enabled` (a list, or one comma-separated string), lower-cased. */
export function enabledGatewayHooks(config: Record<string, unknown>): string[] {
  const section = config["gateway_hooks"];
  const raw =
    section && typeof section === "object" && !Array.isArray(section)
      ? (section as Record<string, unknown>)["enabled"]
      : undefined;
  const list = Array.isArray(raw) ? raw : typeof raw === "string" ? raw.split(",") : [];
  return list.map((n) => String(n).trim().toLowerCase()).filter(Boolean);
}

/** Whether `event` is one a hook may subscribe to. */
export function isGatewayHookEvent(event: string): boolean {
  return (GATEWAY_HOOK_EVENTS as readonly string[]).includes(event) || /^command:(\*|[\w.-]+)$/.test(event);
}

/** Every folder under `<home>/hooks/` that holds a HOOK.yaml, enabled or not, sorted by name. */
export function discoverGatewayHooks(home: string, config: Record<string, unknown>): GatewayHookFolder[] {
  const root = gatewayHooksDir(home);
  let names: string[];
  try {
    names = readdirSync(root, { withFileTypes: true })
      .filter((d) => d.isDirectory() && existsSync(join(root, d.name, "HOOK.yaml")))
      .map((d) => d.name)
      .sort();
  } catch {
    return [];
  }
  const enabled = new Set(enabledGatewayHooks(config));
  return names.map((name) => readHookFolder(join(root, name), name, enabled.has(name.toLowerCase())));
}

/** The real path `file` resolves to when that is outside `dir` (a link out); undefined when inside. */
export function leavesFolder(dir: string, file: string): string | undefined {
  let real: string;
  let root: string;
  try {
    real = realpathSync(file);
    root = realpathSync(dir);
  } catch {
    return file;
  }
  const rel = relative(root, real);
  return rel === ".." || rel.startsWith(`..${sep}`) || rel.startsWith(sep) ? real : undefined;
}

export function readHookFolder(dir: string, name: string, enabled: boolean): GatewayHookFolder {
  const folder: GatewayHookFolder = { name, dir, description: "", events: [], enabled };
  const yamlOut = leavesFolder(dir, join(dir, "HOOK.yaml"));
  if (yamlOut) {
    folder.error = `HOOK.yaml is a link to ${yamlOut}, outside the folder; it is not loaded`;
    return folder;
  }
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(join(dir, "HOOK.yaml"), "utf8"));
  } catch (error) {
    folder.error = `HOOK.yaml is not valid YAML: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`;
    return folder;
  }
  const meta = doc && typeof doc === "object" && !Array.isArray(doc) ? (doc as Record<string, unknown>) : {};
  folder.description = typeof meta["description"] === "string" ? meta["description"] : "";
  const events = Array.isArray(meta["events"]) ? meta["events"].map((e) => String(e).trim()) : [];
  folder.events = events.filter(Boolean);
  const handler = HANDLER_FILES.map((f) => join(dir, f)).find((f) => existsSync(f));
  if (handler) folder.handler = handler;
  const handlerOut = handler ? leavesFolder(dir, handler) : undefined;
  const unknown = folder.events.filter((e) => !isGatewayHookEvent(e));
  if (handlerOut)
    folder.error = `its handler is a link to ${handlerOut}, outside the folder; it is not loaded`;
  else if (folder.events.length === 0) folder.error = "HOOK.yaml lists no events";
  else if (unknown.length > 0) folder.error = `unknown event ${unknown.join(", ")} in HOOK.yaml`;
  else if (!handler) folder.error = `no handler (${HANDLER_FILES.join(", ")}) beside HOOK.yaml`;
  return folder;
}
