/**
 * Strict checks of config.yaml that loading does not make: keys Hermes does not know (at any
 * depth of a closed section, see schema-keys.ts) and words a key does not accept. Loading stays
 * lenient (an unknown key is kept and ignored, so a home shared with Python Hermes still starts);
 * `hermes doctor`, `hermes config check` and `hermes config set` use these to call them errors,
 * each with a did-you-mean when one is close.
 */
import { isMap, isScalar } from "yaml";
import { isPlainObject } from "./coerce.js";
import { defaultConfig } from "./defaults.js";
import { closestName, KNOWN_TOP_LEVEL_KEYS } from "./known-keys.js";
import { getOwn } from "./merge.js";
import { CLOSED_SECTIONS, VALUE_CHOICES } from "./schema-keys.js";
import { type ParsedYaml, parseYaml } from "./yaml-doc.js";

export interface ConfigProblem {
  /** The dotted key at fault (`agent.max_turn`). */
  key: string;
  kind: "unknown_key" | "bad_value";
  /** One line: what is wrong, with the did-you-mean. */
  message: string;
  /** The known key or word meant, when one is close. */
  suggestion?: string;
}

/**
 * The children a section at `path` may have, or undefined when it is open (anything goes). A
 * top-level section is closed when schema-keys.ts lists it; a nested mapping is closed when its
 * built-in default is a non-empty mapping (`limits.tool_output`, `curator.backup`), so a key
 * added to defaults.ts is known at once.
 */
export function knownChildren(path: readonly string[]): ReadonlySet<string> | undefined {
  if (path.length === 0) return KNOWN_TOP_LEVEL_KEYS;
  const fromDefaults = defaultAt(path);
  const defaultKeys = isPlainObject(fromDefaults) ? Object.keys(fromDefaults) : [];
  if (path.length === 1) {
    const upstream = CLOSED_SECTIONS[path[0] ?? ""];
    if (upstream === undefined || !Object.hasOwn(CLOSED_SECTIONS, path[0] ?? "")) return undefined;
    return new Set([...defaultKeys, ...upstream]);
  }
  // Below a closed top-level section only: `mcp_servers.x.tools` must stay open.
  if (knownChildren(path.slice(0, 1)) === undefined) return undefined;
  return defaultKeys.length > 0 ? new Set(defaultKeys) : undefined;
}

function defaultAt(path: readonly string[]): unknown {
  let node: unknown = defaultConfig();
  for (const segment of path) node = getOwn(node, segment);
  return node;
}

/** The problem with the dotted `key` itself (not its value), or undefined when Hermes knows it. */
export function checkKey(key: string): ConfigProblem | undefined {
  const path = key.split(".");
  for (let depth = 0; depth < path.length; depth++) {
    const known = knownChildren(path.slice(0, depth));
    if (known === undefined) return undefined;
    const segment = path[depth] ?? "";
    if (known.has(segment)) continue;
    const near = closestName(segment, known);
    const prefix = path.slice(0, depth).join(".");
    const suggestion = near === undefined ? undefined : prefix ? `${prefix}.${near}` : near;
    const dotted = path.slice(0, depth + 1).join(".");
    const where = prefix ? `in ${prefix}` : "at the top level";
    const message =
      suggestion === undefined
        ? `unknown key ${JSON.stringify(dotted)}: Hermes has no such setting ${where}`
        : `unknown key ${JSON.stringify(dotted)} (did you mean ${JSON.stringify(suggestion)}?)`;
    return { key: dotted, kind: "unknown_key", message, ...(suggestion ? { suggestion } : {}) };
  }
  return undefined;
}

/** The problem with `value` for `key` when the key takes one of a few words, else undefined. */
export function checkValue(key: string, value: unknown): ConfigProblem | undefined {
  const choices = VALUE_CHOICES[key];
  if (choices === undefined || !Object.hasOwn(VALUE_CHOICES, key)) return undefined;
  if (value === null || value === undefined) return undefined;
  // `${VAR}` is checked after substitution, when the config is loaded.
  if (typeof value === "string" && value.includes("${")) return undefined;
  const word = typeof value === "string" ? value.trim().toLowerCase() : undefined;
  if (word !== undefined && choices.includes(word)) return undefined;
  const shown = choices.filter((c) => c !== "").join(", ");
  const near = word === undefined ? undefined : closestName(word, choices);
  const hint = near === undefined ? "" : ` (did you mean ${JSON.stringify(near)}?)`;
  return {
    key,
    kind: "bad_value",
    message: `${key} is ${JSON.stringify(value)}${hint}; it takes one of: ${shown}`,
    ...(near ? { suggestion: near } : {}),
  };
}

/**
 * Every unknown key and unaccepted word in a parsed config.yaml tree (as written, before the
 * defaults are merged in), in file order. An empty or non-mapping tree has none.
 */
export function findConfigProblems(raw: unknown): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  if (!isPlainObject(raw)) return problems;
  walk(raw, [], problems);
  return problems;
}

function walk(node: Record<string, unknown>, path: string[], problems: ConfigProblem[]): void {
  const known = knownChildren(path);
  for (const [key, value] of Object.entries(node)) {
    const childPath = [...path, key];
    const dotted = childPath.join(".");
    if (known !== undefined && !known.has(key)) {
      const problem = checkKey(dotted);
      if (problem) problems.push(problem);
      continue;
    }
    const bad = checkValue(dotted, value);
    if (bad) problems.push(bad);
    if (isPlainObject(value) && known !== undefined) walk(value, childPath, problems);
  }
}

/** A problem with the 1-based line of its key in config.yaml, when found. */
export interface LocatedConfigProblem extends ConfigProblem {
  line?: number;
}

/**
 * {@link findConfigProblems} over config.yaml text, each with its key's line. Throws ConfigError
 * when the text does not parse (`file` labels it).
 */
export function configTextProblems(text: string, file: string): LocatedConfigProblem[] {
  const parsed = parseYaml(text, file, { allowDuplicateKeys: true });
  const raw: unknown = parsed.doc.toJS({ maxAliasCount: 1000 });
  return findConfigProblems(raw).map((problem) => {
    const line = keyLine(parsed, problem.key.split("."));
    return line === undefined ? problem : { ...problem, line };
  });
}

function keyLine(parsed: ParsedYaml, path: readonly string[]): number | undefined {
  const parent = path.length > 1 ? parsed.doc.getIn(path.slice(0, -1), true) : parsed.doc.contents;
  if (!isMap(parent)) return undefined;
  const last = path[path.length - 1];
  const pair = parent.items.find((item) => isScalar(item.key) && String(item.key.value) === last);
  const offset = isScalar(pair?.key) ? pair.key.range?.[0] : undefined;
  return offset === undefined ? undefined : parsed.lineCounter.linePos(offset).line;
}
