/**
 * YAML parsing shared by the config reader and writer. Python Hermes reads `config.yaml` with
 * PyYAML (YAML 1.1), so the schema here resolves scalars the way PyYAML does: `yes`/`no`/`on`/`off`
 * are booleans (but `y`/`n` stay strings), `0755` is octal. Timestamps, `!!omap`, `!!set` and
 * `!!binary` are left out: Hermes config never needs them, and a date-looking string should stay a
 * string rather than become a `Date`.
 */
import {
  type Document,
  type DocumentOptions,
  isAlias,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  type Node,
  type ParseOptions,
  parseDocument,
  type Scalar,
  type ScalarTag,
  type SchemaOptions,
  type Tags,
  type YAMLError,
} from "yaml";
import { ConfigError } from "./errors.js";

const PY_TRUE = /^(?:[Yy]es|YES|[Tt]rue|TRUE|[Oo]n|ON)$/;
const PY_FALSE = /^(?:[Nn]o|NO|[Ff]alse|FALSE|[Oo]ff|OFF)$/;
const BOOL_TAG = "tag:yaml.org,2002:bool";
const DROPPED_TAGS = new Set(
  ["timestamp", "omap", "pairs", "set", "binary"].map((name) => `tag:yaml.org,2002:${name}`),
);

function boolTag(value: boolean, test: RegExp): ScalarTag {
  return {
    tag: BOOL_TAG,
    default: true,
    test,
    identify: (v) => v === value,
    resolve: () => value,
    // Keep the user's spelling (`yes`, `On`) when an untouched node is written back.
    stringify: (item: Scalar) => (item.source && test.test(item.source) ? item.source : String(value)),
  };
}

function pyyamlTags(tags: Tags): Tags {
  const kept = tags.filter(
    (tag) => typeof tag === "string" || (!DROPPED_TAGS.has(tag.tag) && tag.tag !== BOOL_TAG),
  );
  return [...kept, boolTag(true, PY_TRUE), boolTag(false, PY_FALSE)];
}

/** Schema options giving PyYAML-compatible scalars; use them for every parse and stringify. */
export const YAML_SCHEMA: DocumentOptions & SchemaOptions & ParseOptions = {
  version: "1.1",
  schema: "yaml-1.1",
  customTags: pyyamlTags,
  merge: true,
};

export interface ParsedYaml {
  doc: Document.Parsed;
  lineCounter: LineCounter;
  /** Repeated keys, when parsed with `allowDuplicateKeys`. */
  duplicates: Array<{ key: string; line: number | undefined }>;
}

export interface ParseYamlOptions {
  /**
   * PyYAML accepts a repeated key (the last one wins). Readers pass true to do the same and get
   * the duplicates back as warnings; the writer refuses them, since it could not tell which one
   * the user means to change.
   */
  allowDuplicateKeys?: boolean;
}

/** Parses YAML text; throws {@link ConfigError} naming `file` and the line of the first error. */
export function parseYaml(text: string, file: string, options: ParseYamlOptions = {}): ParsedYaml {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { ...YAML_SCHEMA, lineCounter, prettyErrors: true, uniqueKeys: true });
  const duplicates = doc.errors.filter((error) => error.code === "DUPLICATE_KEY");
  const others = doc.errors.filter((error) => error.code !== "DUPLICATE_KEY");
  const first = others[0] ?? (options.allowDuplicateKeys ? undefined : duplicates[0]);
  if (first) throw yamlErrorToConfigError(first, file, text);
  if (duplicates.length === 0) return { doc, lineCounter, duplicates: [] };
  // Re-parse leniently so the value is the one PyYAML would give (the last occurrence).
  const lenientCounter = new LineCounter();
  const lenient = parseDocument(text, {
    ...YAML_SCHEMA,
    lineCounter: lenientCounter,
    prettyErrors: true,
    uniqueKeys: false,
  });
  return {
    doc: lenient,
    lineCounter: lenientCounter,
    duplicates: duplicates.map((error) => ({
      key: keyAt(text, error.pos[0]),
      line: error.linePos?.[0]?.line,
    })),
  };
}

/** Turns a `yaml` parse error into a one-line ConfigError with the 1-based line and column. */
export function yamlErrorToConfigError(error: YAMLError, file: string, text: string): ConfigError {
  const pos = error.linePos?.[0];
  const detail =
    error.code === "DUPLICATE_KEY"
      ? `duplicate key ${JSON.stringify(keyAt(text, error.pos[0]))}; remove one of them`
      : describeYamlError(error);
  return new ConfigError(detail, { file, line: pos?.line, column: pos?.col });
}

function describeYamlError(error: YAMLError): string {
  const firstLine = (error.message.split("\n")[0] ?? "").replace(/ at line \d+, column \d+:?$/, "");
  const text = firstLine.length > 0 ? firstLine : error.code;
  return `invalid YAML: ${text.charAt(0).toLowerCase()}${text.slice(1)}`;
}

function keyAt(text: string, offset: number): string {
  const rest = text.slice(offset);
  return (rest.split(/[:\n]/)[0] ?? "").trim();
}

/** Describes a YAML node for messages: `a list`, `a mapping`, or the scalar itself. */
export function describeValue(value: unknown): string {
  if (Array.isArray(value)) return "a list";
  if (value === null || value === undefined) return "nothing (null)";
  if (typeof value === "object") return "a mapping";
  if (typeof value === "string") return JSON.stringify(value);
  return String(value);
}

export type YamlPath = ReadonlyArray<string | number>;

/**
 * The deepest node on `path` (the node itself when it exists, else its nearest ancestor), so an
 * error can point at a line even for values that came through a merge key or alias.
 */
export function nodeAt(doc: Document, path: YamlPath): Node | undefined {
  let node: unknown = doc.contents;
  let found: Node | undefined = isNode(node) ? node : undefined;
  for (const segment of path) {
    if (isAlias(node)) node = node.resolve(doc);
    let next: unknown;
    if (isMap(node)) next = node.get(segment, true);
    else if (isSeq(node) && typeof segment === "number") next = node.get(segment, true);
    if (!isNode(next)) break;
    found = next;
    node = next;
  }
  return found;
}

function isNode(value: unknown): value is Node {
  return isMap(value) || isSeq(value) || isScalar(value) || isAlias(value);
}

/** 1-based line and column of the node at (or nearest above) `path`. */
export function locate(
  parsed: Pick<ParsedYaml, "doc" | "lineCounter">,
  path: YamlPath,
): { line?: number; column?: number } {
  const node = nodeAt(parsed.doc, path);
  const offset = node?.range?.[0];
  if (offset === undefined) return {};
  const pos = parsed.lineCounter.linePos(offset);
  return { line: pos.line, column: pos.col };
}

/** The source text of a scalar at `path` exactly as written (`off`, `1.10`), if it is one. */
export function scalarSource(doc: Document, path: YamlPath): string | undefined {
  let node: unknown = doc.getIn(path, true);
  if (isAlias(node)) node = node.resolve(doc);
  return isScalar(node) && typeof node.source === "string" ? node.source : undefined;
}

/** Formats a path for messages: `agent.max_turns`, `toolsets[0]`. */
export function formatPath(path: YamlPath): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else out += out.length === 0 ? segment : `.${segment}`;
  }
  return out;
}
