/**
 * A plugin's description of itself: `<home>/plugins/<name>/plugin.yaml` in upstream's fields
 * (name, version, description, entry, kind, requires_env), or, for an npm package named
 * `hermes-plugin-*` without one, its package.json. Pure parsing: the caller reads the files.
 */
import { parse as parseYaml } from "yaml";

/** An npm package is a plugin when its name carries this prefix (scoped or not). */
export const NPM_PLUGIN_PREFIX = "hermes-plugin-";

/** A plugin folder name and a plugin's `name`: what `hermes plugins enable NAME` takes. */
const NAME_RE = /^[a-z0-9][a-z0-9._-]{0,63}$/;

export interface PluginManifest {
  name: string;
  version: string;
  description: string;
  /** Path of the ESM entry, relative to the plugin folder. */
  entry: string;
  /** Upstream's kinds: general (default), memory, platform... */
  kind: string;
  /** Environment variables the plugin needs; it is not loaded while one is unset. */
  requiresEnv: string[];
}

export class ManifestError extends Error {}

export function isValidPluginName(name: string): boolean {
  return NAME_RE.test(name);
}

/** `hermes-plugin-foo` and `@scope/hermes-plugin-foo` → `foo`; anything else unchanged. */
export function pluginNameFromPackage(packageName: string): string {
  const bare = packageName.replace(/^@[^/]+\//, "");
  return bare.startsWith(NPM_PLUGIN_PREFIX) ? bare.slice(NPM_PLUGIN_PREFIX.length) : bare;
}

/**
 * Reads a plugin's manifest from the text of its `plugin.yaml` and/or `package.json` (either may be
 * undefined). `folder` is the folder's name, used when neither names the plugin. Throws
 * `ManifestError` with what is wrong and where.
 */
export function parseManifest(
  sources: { pluginYaml?: string | undefined; packageJson?: string | undefined },
  folder: string,
): PluginManifest {
  const yaml = sources.pluginYaml !== undefined ? readYaml(sources.pluginYaml) : undefined;
  const pkg = sources.packageJson !== undefined ? readPackageJson(sources.packageJson) : undefined;
  if (!yaml && !pkg) throw new ManifestError("no plugin.yaml (or package.json of a hermes-plugin-* package)");
  if (!yaml && pkg && !pluginPackage(pkg)) {
    throw new ManifestError(
      `package.json names "${String(pkg["name"])}", which is not a ${NPM_PLUGIN_PREFIX}* package, and there is no plugin.yaml`,
    );
  }
  const name = str(yaml?.["name"], "plugin.yaml name") ?? pkgName(pkg) ?? folder;
  if (!isValidPluginName(name)) {
    throw new ManifestError(
      `the plugin name "${name}" is not valid: use lower-case letters, digits, ".", "_" or "-" (at most 64)`,
    );
  }
  const entry = str(yaml?.["entry"], "plugin.yaml entry") ?? packageEntry(pkg) ?? "index.js";
  if (entry.startsWith("/") || entry.split(/[\\/]/).includes("..")) {
    throw new ManifestError(`entry "${entry}" must be a path inside the plugin folder`);
  }
  return {
    name,
    version: str(yaml?.["version"], "plugin.yaml version") ?? str(pkg?.["version"], "version") ?? "0.0.0",
    description:
      str(yaml?.["description"], "plugin.yaml description") ?? str(pkg?.["description"], "description") ?? "",
    entry,
    kind: str(yaml?.["kind"], "plugin.yaml kind") ?? "general",
    requiresEnv: requiresEnv(yaml?.["requires_env"]),
  };
}

/**
 * YAML's core-schema scalars that are not strings (numbers, booleans, null): a flat manifest
 * holding one goes to the YAML library, so `version: 1.0` reads as YAML reads it.
 */
const NON_STRING_SCALAR =
  /^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|0o[0-7]+|0x[0-9a-fA-F]+|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)|null|Null|NULL|true|True|TRUE|false|False|FALSE)$/;
/** `key: value` with a plain value that cannot mean anything but its own text. */
const FLAT_LINE = /^([A-Za-z_][A-Za-z0-9_]*): +([A-Za-z0-9_(/][^#:\t]*)$/;

/**
 * The common manifest, flat `key: plain text` lines (and blank or comment lines), read without
 * the YAML library: its first parse in a process runs cold code (~6 ms for three manifests,
 * measured with --cpu-prof), which a plugin's start would pay. Anything else (quotes, lists,
 * `#` or `:` in a value, indentation, numbers, booleans, duplicate keys) returns undefined and
 * goes to the full parser, so both readers agree on every text this one accepts.
 */
export function readFlatYaml(text: string): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const raw of text.split("\n")) {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (/^[ \t]*$/.test(line) || line.startsWith("#")) continue;
    const match = FLAT_LINE.exec(line);
    if (!match) return undefined;
    const key = match[1] as string;
    const value = (match[2] as string).trimEnd();
    if (NON_STRING_SCALAR.test(value) || Object.hasOwn(out, key)) return undefined;
    out[key] = value;
  }
  return out;
}

function readYaml(text: string): Record<string, unknown> {
  const flat = readFlatYaml(text);
  if (flat) return flat;
  let value: unknown;
  try {
    value = parseYaml(text);
  } catch (error) {
    throw new ManifestError(`plugin.yaml does not parse: ${(error as Error).message.split("\n")[0]}`);
  }
  if (value === null || value === undefined) return {};
  if (!isRecord(value)) throw new ManifestError("plugin.yaml must be a mapping (name: ..., entry: ...)");
  return value;
}

function readPackageJson(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ManifestError(`package.json does not parse: ${(error as Error).message}`);
  }
  if (!isRecord(value)) throw new ManifestError("package.json must be an object");
  return value;
}

function pluginPackage(pkg: Record<string, unknown>): boolean {
  return (
    typeof pkg["name"] === "string" && pkg["name"].replace(/^@[^/]+\//, "").startsWith(NPM_PLUGIN_PREFIX)
  );
}

function pkgName(pkg: Record<string, unknown> | undefined): string | undefined {
  return pkg && typeof pkg["name"] === "string" ? pluginNameFromPackage(pkg["name"]) : undefined;
}

/** package.json's `exports` (a string or `"."`'s import/default) or `main`. */
function packageEntry(pkg: Record<string, unknown> | undefined): string | undefined {
  if (!pkg) return undefined;
  const exp = pkg["exports"];
  if (typeof exp === "string") return exp.replace(/^\.\//, "");
  if (isRecord(exp)) {
    const dot = isRecord(exp["."]) ? exp["."] : typeof exp["."] === "string" ? { default: exp["."] } : exp;
    for (const key of ["import", "default", "require"]) {
      const value = (dot as Record<string, unknown>)[key];
      if (typeof value === "string") return value.replace(/^\.\//, "");
    }
  }
  return typeof pkg["main"] === "string" ? pkg["main"].replace(/^\.\//, "") : undefined;
}

/** Upstream writes `requires_env` as names or as `{name, description, ...}` entries. */
function requiresEnv(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new ManifestError("plugin.yaml requires_env must be a list");
  return value.map((item) => {
    if (typeof item === "string") return item;
    if (isRecord(item) && typeof item["name"] === "string") return item["name"];
    throw new ManifestError("plugin.yaml requires_env entries are names or {name: ...}");
  });
}

function str(value: unknown, what: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "number") return String(value);
  if (typeof value !== "string") throw new ManifestError(`${what} must be a string`);
  return value.trim() || undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
