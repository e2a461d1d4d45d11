/**
 * `hermes config set` and `get`: typed edits to config.yaml that keep the user's comments and key
 * order, with secrets routed to `.env`.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import { type Document, isAlias, isCollection, isMap, isScalar } from "yaml";
import { atomicWriteFileSync } from "../util/atomic-write.js";
import { isPlainObject, parseRawValue } from "./coerce.js";
import { defaultConfig, type HermesConfig } from "./defaults.js";
import { setEnvVar } from "./env-file.js";
import { ConfigError } from "./errors.js";
import { configPath } from "./home.js";
import { getOwn } from "./merge.js";
import { ENV_BINDINGS } from "./precedence.js";
import { rangeProblem } from "./ranges.js";
import { isSecretKey } from "./secrets.js";
import { describeValue, locate, parseYaml } from "./yaml-doc.js";
import { spliceSet } from "./yaml-splice.js";

export interface SetConfigResult {
  /** Where the value went: config.yaml, or `.env` for environment-variable names. */
  target: "config" | "env";
  /** The file written. */
  path: string;
  /** The key actually set (`model` given as a name is stored as `model.default`). */
  key: string;
  /** The typed value written. */
  value: unknown;
  /** Advice worth showing the user (on stderr), e.g. that a secret is stored in plain text. */
  hint?: string;
}

const ENV_STYLE_KEY = /^[A-Z][A-Z0-9_]*$/;
const ENV_REFERENCE = /\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}/;
const RESERVED_SEGMENTS = new Set(["__proto__", "prototype", "constructor"]);

/** True for keys written like environment variables (`OPENROUTER_API_KEY`): they go to `.env`. */
export function isEnvStyleKey(key: string): boolean {
  return ENV_STYLE_KEY.test(key);
}

/**
 * Sets one value. An UPPER_CASE name is stored in `<home>/.env` (mode 0600). A dotted key is
 * stored in config.yaml: `rawValue` is parsed to the type of the key's default (numbers, booleans,
 * lists as `a,b` or `[a, b]`, mappings as JSON or YAML flow) and the file is edited in place, so
 * comments and key order stay. The file is created when missing. Throws {@link ConfigError}, with
 * the file left byte-for-byte unchanged, when config.yaml does not parse or the value has the wrong
 * type. Writes are atomic.
 */
export function setConfigValue(home: string, dottedKey: string, rawValue: string): SetConfigResult {
  const key = dottedKey.trim();
  if (isEnvStyleKey(key)) {
    const path = setEnvVar(home, key, rawValue);
    const binding = ENV_BINDINGS.find((b) => b.env === key);
    const hint = binding
      ? `${key} is only a fallback: a ${binding.key} value in config.yaml takes precedence over it`
      : undefined;
    return { target: "env", path, key, value: rawValue, ...(hint ? { hint } : {}) };
  }
  const file = configPath(home);
  let text = "";
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ENOENT") throw new ConfigError(`cannot read the file (${code ?? String(error)})`, { file });
  }
  const edit = editConfigText(text, file, key, rawValue);
  mkdirSync(home, { recursive: true });
  atomicWriteFileSync(file, edit.text);
  const last = edit.key.split(".").pop() ?? "";
  const hint =
    isSecretKey(last) && !rawValue.includes("${")
      ? `${edit.key} is stored in config.yaml as plain text; secrets are safer in .env (mode 0600): ` +
        // biome-ignore lint/suspicious/noTemplateCurlyInString: literal config syntax shown to the user
        "hermes config set SOME_API_KEY <value>, then write ${SOME_API_KEY} in config.yaml"
      : undefined;
  return { target: "config", path: file, key: edit.key, value: edit.value, ...(hint ? { hint } : {}) };
}

export interface ConfigTextEdit {
  /** The new file content. */
  text: string;
  /** The key actually set. */
  key: string;
  /** The typed value. */
  value: unknown;
}

/**
 * Pure core of {@link setConfigValue}: config.yaml `text` with `dottedKey` set from `rawValue`.
 * Edits only the bytes that change when it can, else re-serialises through the Document API
 * (comments and key order kept); either way the result is verified to read back as intended.
 * `file` labels error messages. Throws {@link ConfigError}.
 */
export function editConfigText(
  text: string,
  file: string,
  dottedKey: string,
  rawValue: string,
): ConfigTextEdit {
  const parsed = parseYaml(text, file);
  const { doc } = parsed;
  if (doc.contents !== null && !isMap(doc.contents)) {
    throw new ConfigError(
      "the top level must be a mapping of sections (key: value); fix it before setting values",
      {
        file,
        ...locate(parsed, []),
      },
    );
  }
  let path = splitKey(dottedKey);
  let value: unknown;
  if (path.length === 1 && path[0] === "model" && !rawValue.trim().startsWith("{")) {
    // `hermes config set model provider/name`: a string-form `model:` stays a string.
    const model = doc.get("model", true);
    if (!(isScalar(model) && typeof model.value === "string")) path = ["model", "default"];
    value = rawValue;
  } else {
    const defaultValue = defaultAt(path);
    // A key with no built-in default (mcp_servers.<name>) may take a mapping that holds `${VAR}`.
    const scalarDefault =
      defaultValue === null || (defaultValue !== undefined && typeof defaultValue !== "object");
    // `${VAR}` is resolved and type-checked when the config is loaded, so store it as written.
    value =
      scalarDefault && ENV_REFERENCE.test(rawValue)
        ? rawValue
        : parseRawValue(rawValue, defaultValue, path.join("."));
  }
  const problem = rangeProblem(path.join("."), value);
  if (problem)
    throw new ConfigError(`${problem} config.yaml was not changed.`, { file, key: path.join(".") });
  const style = { indent: detectIndent(text), indentSeq: usesIndentedSequences(text) };
  const spliced = spliceSet({ text, doc, lineCounter: parsed.lineCounter, path, value, ...style });
  prepareParents(doc, path, file);
  setNode(doc, path, value);
  const expected: unknown = doc.toJS();
  // New lines follow the file's line endings (YAML reads CRLF and LF alike).
  const eol = (t: string): string => (text.includes("\r\n") ? t.replace(/\r?\n/g, "\r\n") : t);
  if (spliced !== undefined && readsAs(eol(spliced), file, expected)) {
    return { text: eol(spliced), key: path.join("."), value };
  }
  const output = eol(doc.toString({ lineWidth: 0, ...style }));
  if (!readsAs(output, file, expected)) {
    throw new ConfigError(`could not update ${path.join(".")} safely; edit config.yaml by hand`, { file });
  }
  return { text: output, key: path.join("."), value };
}

/**
 * The value at a dotted key (`agent.max_turns`, `toolsets.0`), or undefined when there is none.
 * Only own properties are followed.
 */
export function getConfigValue(config: HermesConfig | Record<string, unknown>, dottedKey: string): unknown {
  let node: unknown = config;
  for (const segment of dottedKey.split(".")) {
    if (Array.isArray(node) && /^\d+$/.test(segment)) node = node[Number(segment)];
    else node = getOwn(node, segment);
    if (node === undefined) return undefined;
  }
  return node;
}

function splitKey(key: string): string[] {
  const segments = key.split(".");
  if (key.length === 0 || segments.some((s) => s.trim().length === 0)) {
    throw new ConfigError(
      `invalid config key ${JSON.stringify(key)}: use a dotted name like agent.max_turns`,
    );
  }
  const reserved = segments.find((s) => RESERVED_SEGMENTS.has(s));
  if (reserved !== undefined) {
    throw new ConfigError(`invalid config key ${JSON.stringify(key)}: "${reserved}" cannot be a key`);
  }
  return segments;
}

/** The default at `path`: undefined for keys Hermes has no default for. */
function defaultAt(path: readonly string[]): unknown {
  let node: unknown = defaultConfig();
  for (let i = 0; i < path.length; i++) {
    if (node !== undefined && !isPlainObject(node)) {
      const parent = path.slice(0, i).join(".");
      throw new ConfigError(
        `cannot set ${path.join(".")}: ${parent} holds ${describeKind(node)}, not a section`,
        { key: path.join(".") },
      );
    }
    node = getOwn(node, path[i] ?? "");
  }
  return node;
}

function describeKind(value: unknown): string {
  if (value === null) return "a single value";
  if (Array.isArray(value)) return "a list";
  return `a ${typeof value}`;
}

/**
 * Makes every ancestor of `path` a mapping in the document: a blank (`agent:`) becomes an empty
 * mapping and a string-form `model:` becomes `{default: ...}`; any other value in the way is an
 * error rather than something to overwrite.
 */
function prepareParents(doc: Document, path: readonly string[], file: string): void {
  for (let i = 1; i < path.length; i++) {
    const prefix = path.slice(0, i);
    const node = doc.getIn(prefix, true);
    if (node === undefined || isMap(node)) continue;
    const where = prefix.join(".");
    if (isAlias(node)) {
      throw new ConfigError(
        `${where} is a YAML alias (*${node.source}); edit config.yaml by hand to change it`,
        {
          file,
          key: where,
        },
      );
    }
    if (isScalar(node) && (node.value === null || node.value === undefined)) {
      doc.setIn(prefix, doc.createNode({}));
      continue;
    }
    if (isScalar(node) && where === "model") {
      doc.setIn(prefix, doc.createNode({ default: node.value }));
      continue;
    }
    const got = isScalar(node) ? describeValue(node.value) : "a list";
    throw new ConfigError(`cannot set ${path.join(".")}: ${where} is ${got} in config.yaml, not a section`, {
      file,
      key: where,
    });
  }
}

function setNode(doc: Document, path: readonly string[], value: unknown): void {
  const existing = doc.getIn(path, true);
  if (typeof value !== "object" || value === null) {
    // A plain value updates an existing scalar node in place, keeping its trailing comment.
    doc.setIn(path, value);
    return;
  }
  const node = doc.createNode(value);
  if (isCollection(existing) && existing.flow && isCollection(node)) node.flow = true;
  doc.setIn(path, node);
}

/** Never write a file that would not read back as exactly the intended data. */
function readsAs(text: string, file: string, expected: unknown): boolean {
  try {
    return isDeepStrictEqual(parseYaml(text, file).doc.toJS(), expected);
  } catch {
    return false;
  }
}

/** Spaces per nesting level in the file: the indentation of its first nested mapping, else 2. */
function detectIndent(text: string): number {
  const match = /^[^\s#-][^\n]*:[ \t]*(?:#[^\n]*)?\r?\n( +)[^\s#-]/m.exec(text);
  const width = match?.[1]?.length ?? 2;
  return width >= 1 && width <= 8 ? width : 2;
}

/** Whether the file indents list items under their key (`key:\n  - a`) or not (PyYAML's style). */
function usesIndentedSequences(text: string): boolean {
  const indented = /^( *)[^\s#-][^\n]*:[ \t]*(?:#[^\n]*)?\r?\n\1 +- /m.test(text);
  const flush = /^( *)[^\s#-][^\n]*:[ \t]*(?:#[^\n]*)?\r?\n\1- /m.test(text);
  return indented && !flush;
}
