/**
 * Minimal text edits to a YAML file. Re-serialising a document through the `yaml` Document API keeps
 * comments and key order but normalises spacing (`x  # note` becomes `x # note`) and indentation
 * everywhere; editing only the bytes that change leaves the rest of a user's file exactly as
 * written. The caller must verify the result (re-parse and compare) and fall back to the Document
 * API when this returns undefined or a text that does not read back as intended.
 */
import { Document, isCollection, isMap, isScalar, type LineCounter, type Node, type YAMLMap } from "yaml";
import { YAML_SCHEMA } from "./yaml-doc.js";

export interface SpliceInput {
  text: string;
  /** The document parsed from `text`, not modified. */
  doc: Document;
  lineCounter: LineCounter;
  path: readonly string[];
  value: unknown;
  /** Spaces per nesting level and list style to use for new lines, matching the file's. */
  indent: number;
  indentSeq: boolean;
}

/** The text with `path` set to `value`, or undefined when no simple edit applies. */
export function spliceSet(input: SpliceInput): string | undefined {
  const { doc, path, text } = input;
  const existing = doc.getIn(path, true);
  if (existing !== undefined) return replaceValue(input, existing);
  for (let depth = path.length - 1; depth >= 0; depth--) {
    const ancestor = depth === 0 ? doc.contents : doc.getIn(path.slice(0, depth), true);
    if (ancestor === undefined) continue;
    const tree = nest(path.slice(depth), input.value);
    if (ancestor === null) {
      if (depth !== 0) return undefined;
      const separator = text === "" || text.endsWith("\n") ? "" : "\n";
      return text + separator + render(tree, input);
    }
    if (isMap(ancestor)) return insertIntoMap(input, ancestor, tree);
    if (isScalar(ancestor) && ancestor.value === null) return fillBlankKey(input, path.slice(0, depth), tree);
    return undefined;
  }
  return undefined;
}

/** `agent:` with nothing under it (maybe a comment): the new lines go right below the key. */
function fillBlankKey(
  input: SpliceInput,
  keyPath: readonly string[],
  tree: Record<string, unknown>,
): string | undefined {
  const { doc, text } = input;
  const parent = keyPath.length === 1 ? doc.contents : doc.getIn(keyPath.slice(0, -1), true);
  if (!isMap(parent) || parent.flow) return undefined;
  const pair = parent.items.find(
    (item) => isScalar(item.key) && item.key.value === keyPath[keyPath.length - 1],
  );
  const keyStart = isScalar(pair?.key) ? pair.key.range?.[0] : undefined;
  if (keyStart === undefined) return undefined;
  const indent = input.lineCounter.linePos(keyStart).col - 1 + input.indent;
  const newline = text.indexOf("\n", keyStart);
  const offset = newline === -1 ? text.length : newline + 1;
  const separator = newline === -1 ? "\n" : "";
  return text.slice(0, offset) + separator + indentLines(render(tree, input), indent) + text.slice(offset);
}

function indentLines(text: string, indent: number): string {
  return text
    .split("\n")
    .map((line) => (line === "" ? line : " ".repeat(indent) + line))
    .join("\n");
}

function replaceValue(input: SpliceInput, existing: unknown): string | undefined {
  const { text, value } = input;
  const range = (existing as Node).range;
  if (!range) return undefined;
  const [start, end] = range;
  const isPlainValue = value === null || typeof value !== "object";
  if (isScalar(existing)) {
    if (existing.value === null || !isPlainValue) return undefined;
    if (typeof value === "string" && /[\r\n]/.test(value)) return undefined;
    const node = new Document(value, YAML_SCHEMA);
    const contents = node.contents;
    // Keep the user's quoting style for strings (`'...'` stays single-quoted when it can).
    if (isScalar(contents) && typeof value === "string" && existing.type?.startsWith("QUOTE")) {
      contents.type = existing.type;
    }
    return text.slice(0, start) + trimEol(node.toString({ lineWidth: 0 })) + text.slice(end);
  }
  if (!isCollection(existing) || isPlainValue || isEmpty(value)) return undefined;
  const rendered = new Document(value, YAML_SCHEMA);
  if (existing.flow) {
    if (isCollection(rendered.contents)) rendered.contents.flow = true;
    return text.slice(0, start) + trimEol(rendered.toString({ lineWidth: 0 })) + text.slice(end);
  }
  // A block collection's range runs from its first item to the end of its last line.
  const column = input.lineCounter.linePos(start).col - 1;
  const lines = rendered
    .toString({ lineWidth: 0, indent: input.indent, indentSeq: input.indentSeq })
    .split("\n");
  const body = lines.map((line, i) => (i === 0 || line === "" ? line : " ".repeat(column) + line)).join("\n");
  return text.slice(0, start) + body + text.slice(end);
}

function insertIntoMap(input: SpliceInput, map: YAMLMap, tree: Record<string, unknown>): string | undefined {
  const { text } = input;
  const first = map.items[0]?.key;
  if (map.flow || !first || !isScalar(first) || !first.range || !map.range) return undefined;
  const indent = input.lineCounter.linePos(first.range[0]).col - 1;
  const offset = map.range[1];
  const separator = offset === 0 || text[offset - 1] === "\n" ? "" : "\n";
  return text.slice(0, offset) + separator + indentLines(render(tree, input), indent) + text.slice(offset);
}

function render(value: unknown, style: { indent: number; indentSeq: boolean }): string {
  return new Document(value, YAML_SCHEMA).toString({
    lineWidth: 0,
    indent: style.indent,
    indentSeq: style.indentSeq,
  });
}

function nest(path: readonly string[], value: unknown): Record<string, unknown> {
  let tree: unknown = value;
  for (let i = path.length - 1; i >= 0; i--) tree = { [path[i] ?? ""]: tree };
  return tree as Record<string, unknown>;
}

function isEmpty(value: unknown): boolean {
  return Array.isArray(value) ? value.length === 0 : Object.keys(value as object).length === 0;
}

function trimEol(text: string): string {
  return text.endsWith("\n") ? text.slice(0, -1) : text;
}
