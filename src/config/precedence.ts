/**
 * The environment layer of config precedence: command-line flags > config.yaml > environment >
 * built-in defaults. Python Hermes still honours a few legacy environment mirrors of config keys
 * (`HERMES_MAX_ITERATIONS`, `TERMINAL_*`); they apply only where `config.yaml` is silent.
 */
import { parseBoolean, parseRawValue } from "./coerce.js";
import { defaultConfig, type HermesConfig } from "./defaults.js";
import { ConfigError } from "./errors.js";
import { getOwn, setOwn } from "./merge.js";

export interface EnvBinding {
  /** Environment variable name. */
  env: string;
  /** Dotted config key it fills. */
  key: string;
}

function terminalBindings(): EnvBinding[] {
  // Upstream keeps a TERMINAL_<KEY> mirror for every terminal.* key, and names the backend
  // TERMINAL_ENV (applied last, so it wins over TERMINAL_BACKEND when both are set).
  return [
    ...Object.keys(defaultConfig().terminal).map((key) => ({
      env: `TERMINAL_${key.toUpperCase()}`,
      key: `terminal.${key}`,
    })),
    { env: "TERMINAL_ENV", key: "terminal.backend" },
  ];
}

/** Every environment variable that can stand in for a config key. */
export const ENV_BINDINGS: readonly EnvBinding[] = [
  { env: "HERMES_INFERENCE_MODEL", key: "model.default" },
  { env: "HERMES_MAX_ITERATIONS", key: "agent.max_turns" },
  ...terminalBindings(),
];

export interface EnvironmentDefaultsResult {
  config: HermesConfig;
  /** Dotted keys that took their value from the environment. */
  applied: string[];
  /** One line per variable whose value could not be used (wrong type); it is ignored. */
  warnings: string[];
}

/**
 * Fills config keys from their environment variables, but only keys not in `userKeys` (the keys
 * `config.yaml` or a flag set explicitly), so the file and flags keep precedence. Empty variables
 * count as unset. Returns a new config; `config` is not modified. `loadConfig` already calls this;
 * call it yourself only for a config built some other way.
 */
export function applyEnvironmentDefaults(
  config: HermesConfig,
  env: Readonly<Record<string, string | undefined>>,
  userKeys: ReadonlySet<string> = new Set(),
): EnvironmentDefaultsResult {
  const defaults = defaultConfig();
  let result = config;
  const applied: string[] = [];
  const warnings: string[] = [];
  for (const binding of ENV_BINDINGS) {
    const raw = env[binding.env];
    if (raw === undefined || raw.trim() === "" || userKeys.has(binding.key)) continue;
    const path = binding.key.split(".");
    let value: unknown;
    try {
      value = parseRawValue(raw, readPath(defaults, path), binding.key);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      warnings.push(`ignoring ${binding.env}: ${error.message}`);
      continue;
    }
    result = writePath(result, path, value) as HermesConfig;
    applied.push(binding.key);
  }
  return { config: result, applied, warnings };
}

/**
 * True when `HERMES_YOLO_MODE` asks to skip dangerous-command approval. A per-run flag, never a
 * config value: it must not be saved or shown as configuration.
 */
export function isYoloMode(env: Readonly<Record<string, string | undefined>>): boolean {
  const raw = env["HERMES_YOLO_MODE"];
  return raw !== undefined && parseBoolean(raw) === true;
}

function readPath(tree: unknown, path: readonly string[]): unknown {
  let node = tree;
  for (const segment of path) node = getOwn(node, segment);
  return node;
}

/** Copy-on-write set: clones only the objects along `path`. */
function writePath(tree: unknown, path: readonly string[], value: unknown): unknown {
  const [head, ...rest] = path;
  if (head === undefined) return value;
  const copy: Record<string, unknown> = {};
  if (typeof tree === "object" && tree !== null && !Array.isArray(tree)) {
    for (const [key, child] of Object.entries(tree)) setOwn(copy, key, child);
  }
  setOwn(copy, head, writePath(getOwn(tree, head), rest, value));
  return copy;
}
