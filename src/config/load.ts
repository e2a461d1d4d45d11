/**
 * Reads `config.yaml` into an effective {@link HermesConfig}. Never writes anything.
 */
import { readFileSync } from "node:fs";
import { isMap, isSeq } from "yaml";
import { isPlainObject } from "./coerce.js";
import { defaultConfig, type HermesConfig } from "./defaults.js";
import { substituteEnv } from "./env-subst.js";
import { ConfigError } from "./errors.js";
import { configPath } from "./home.js";
import { mergeOverDefaults, setOwn } from "./merge.js";
import { applyEnvironmentDefaults } from "./precedence.js";
import { checkRanges } from "./ranges.js";
import { formatPath, locate, type ParsedYaml, parseYaml, scalarSource, type YamlPath } from "./yaml-doc.js";

type Env = Readonly<Record<string, string | undefined>>;

/** A partial config in the shape of {@link HermesConfig}, e.g. built from command-line flags. */
export type ConfigOverrides = DeepPartial<HermesConfig>;
export type DeepPartial<T> = T extends readonly unknown[]
  ? T
  : T extends object
    ? { [K in keyof T]?: DeepPartial<T[K]> | undefined }
    : T;

export interface LoadConfigOptions {
  home: string;
  /** Environment for `${VAR}` substitution and env-derived defaults: the real env plus `.env`. */
  env: Env;
  /** Highest-precedence values (command-line flags). Undefined leaves are ignored. */
  overrides?: ConfigOverrides | undefined;
  /** Fill keys config.yaml leaves unset from `HERMES_*`/`TERMINAL_*` variables. Default true. */
  applyEnvironment?: boolean | undefined;
}

export interface LoadedConfig {
  config: HermesConfig;
  /** Path of config.yaml, whether or not it exists. */
  path: string;
  exists: boolean;
  /** Non-fatal problems (unset `${VAR}`, duplicate keys, unusable env values), one line each. */
  warnings: string[];
  /** Dotted paths present in config.yaml with a non-null value (`agent`, `agent.max_turns`). */
  userKeys: Set<string>;
  /** Dotted keys that took their value from an environment variable. */
  envKeys: string[];
}

/**
 * Loads `<home>/config.yaml` over the defaults, then the environment layer, then `overrides`:
 * flags > config.yaml > environment > defaults. A missing or empty file gives the defaults.
 * Throws {@link ConfigError} (file, line, key) when the YAML does not parse, the top level is not
 * a mapping, or a value has the wrong type.
 */
export function loadConfig(options: LoadConfigOptions): LoadedConfig {
  const path = configPath(options.home);
  let text: string | undefined;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ENOENT")
      throw new ConfigError(`cannot read the file (${code ?? String(error)})`, { file: path });
  }
  const parsed = parseConfigText(text ?? "", { file: path, env: options.env });
  let config = parsed.config;
  const warnings = [...parsed.warnings];
  let envKeys: string[] = [];
  if (options.applyEnvironment ?? true) {
    const layered = applyEnvironmentDefaults(config, options.env, parsed.userKeys);
    config = layered.config;
    envKeys = layered.applied;
    warnings.push(...layered.warnings);
  }
  if (options.overrides) {
    const overrides = normalizeModel(stripUndefined(options.overrides));
    config = mergeOverDefaults(config, overrides, { locate: () => ({}) }) as HermesConfig;
  }
  // Overrides are checked again: a flag can set what the file had right.
  checkRanges(config);
  return { config, path, exists: text !== undefined, warnings, userKeys: parsed.userKeys, envKeys };
}

export interface ParsedConfig {
  config: HermesConfig;
  warnings: string[];
  userKeys: Set<string>;
}

/**
 * Parses config.yaml text (no file access, no environment layer): YAML → `${VAR}` substitution →
 * type-checked merge over the defaults. `file` only labels messages.
 */
export function parseConfigText(text: string, options: { file: string; env: Env }): ParsedConfig {
  const { file, env } = options;
  const parsed = parseYaml(text, file, { allowDuplicateKeys: true });
  const { doc } = parsed;
  const warnings = parsed.duplicates.map(
    ({ key, line }) =>
      `${file}${line === undefined ? "" : ` line ${line}`}: duplicate key ${JSON.stringify(key)}; the last value wins`,
  );
  const userKeys = new Set<string>();
  if (doc.contents !== null && !isMap(doc.contents)) {
    const got = isSeq(doc.contents) ? "a list" : "a single value";
    throw new ConfigError(`the top level must be a mapping of sections (key: value), got ${got}`, {
      file,
      ...locate(parsed, []),
    });
  }
  const raw: unknown = doc.toJS({ maxAliasCount: 1000 });
  if (raw === null || raw === undefined) return { config: defaultConfig(), warnings, userKeys };
  const substituted = substituteTree(raw, env, [], (path, names) => {
    const where = locate(parsed, path).line;
    const vars = names.map((name) => `\${${name}}`).join(", ");
    warnings.push(
      `${file}${where === undefined ? "" : ` line ${where}`}: ${vars} in ${formatPath(path)} is not set; using an empty string`,
    );
  });
  const config = mergeOverDefaults(defaultConfig(), normalizeModel(substituted), {
    locate: (path) => ({ file, ...locate(parsed, path) }),
    source: (path) => sourceOf(parsed, path),
    userKeys,
  });
  checkRanges(config as HermesConfig, (path) => ({ file, ...locate(parsed, path) }));
  return { config: config as HermesConfig, warnings, userKeys };
}

function sourceOf(parsed: ParsedYaml, path: YamlPath): string | undefined {
  // A string `model:` was rewritten to {default: ...}; its text lives one level up.
  if (path.length === 2 && path[0] === "model" && path[1] === "default") {
    return scalarSource(parsed.doc, path) ?? scalarSource(parsed.doc, ["model"]);
  }
  return scalarSource(parsed.doc, path);
}

/** Hermes allows `model: "provider/name"`; it means `model: {default: "provider/name"}`. */
function normalizeModel(tree: unknown): unknown {
  if (!isPlainObject(tree)) return tree;
  const model = tree["model"];
  if (model === null || model === undefined || isPlainObject(model) || Array.isArray(model)) return tree;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(tree)) setOwn(copy, key, value);
  setOwn(copy, "model", { default: model });
  return copy;
}

function substituteTree(
  value: unknown,
  env: Env,
  path: YamlPath,
  onMissing: (path: YamlPath, names: string[]) => void,
): unknown {
  if (typeof value === "string") {
    const result = substituteEnv(value, env);
    if (result.missing.length > 0) onMissing(path, result.missing);
    return result.value;
  }
  if (Array.isArray(value))
    return value.map((item, index) => substituteTree(item, env, [...path, index], onMissing));
  if (isPlainObject(value)) {
    const copy: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value)) {
      setOwn(copy, key, substituteTree(child, env, [...path, key], onMissing));
    }
    return copy;
  }
  return value;
}

function stripUndefined(value: unknown): unknown {
  if (!isPlainObject(value)) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    if (child !== undefined) setOwn(copy, key, stripUndefined(child));
  }
  return copy;
}
