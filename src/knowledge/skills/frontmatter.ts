/**
 * SKILL.md parsing: a `---` fenced YAML frontmatter, then a markdown body. Read as Python Hermes
 * reads it (a leading BOM is ignored, duplicate keys keep the last value, unknown keys such as
 * `allowed-tools` are kept), with errors that name the file and the line.
 */
import { isScalar, parseDocument, stringify } from "yaml";
import type { RequiredEnvVar, SkillFrontmatter } from "./types.js";

/** A SKILL.md that cannot be used: no frontmatter, invalid YAML, or a missing required field. */
export class SkillParseError extends Error {
  readonly path: string | undefined;
  /** 1-based line in the file, when known. */
  readonly line: number | undefined;
  constructor(message: string, path?: string, line?: number) {
    super(message);
    this.name = "SkillParseError";
    this.path = path;
    this.line = line;
  }
}

export interface ParsedSkill {
  frontmatter: SkillFrontmatter;
  body: string;
}

export interface ParseSkillOptions {
  /**
   * Lenient reading for discovery, as Python Hermes lists skills: a missing `name` becomes this
   * (the folder name) and a missing `description` the first non-heading line of the body.
   * Without it both fields are required.
   */
  fallbackName?: string;
}

interface Split {
  yaml: string;
  body: string;
}

/** The frontmatter text and the body, or a reason why there is no frontmatter. */
function splitFrontmatter(text: string): Split | { error: "missing" | "unclosed" } {
  const firstBreak = text.indexOf("\n");
  const firstLine = (firstBreak < 0 ? text : text.slice(0, firstBreak)).trimEnd();
  if (firstLine !== "---") return { error: "missing" };
  if (firstBreak < 0) return { error: "unclosed" };
  const rest = text.slice(firstBreak + 1);
  const close = /^---[ \t]*$/m.exec(rest);
  if (!close) return { error: "unclosed" };
  const afterFence = close.index + close[0].length;
  const body = rest.slice(afterFence).replace(/^\r?\n/, "");
  return { yaml: rest.slice(0, close.index), body };
}

/**
 * Parses a SKILL.md. Throws {@link SkillParseError} for a file without frontmatter, invalid
 * YAML (with its line in the file), a frontmatter that is not a mapping, or a missing
 * name/description (unless `options.fallbackName` is given). `category` and `tags` fall back to
 * `metadata.hermes.category` / `metadata.hermes.tags`; `platforms`, `tags` and
 * `required_environment_variables` are normalised to arrays.
 */
export function parseSkillMarkdown(
  text: string,
  path?: string,
  options: ParseSkillOptions = {},
): ParsedSkill {
  const where = path ?? "SKILL.md";
  const source = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const split = splitFrontmatter(source);
  if ("error" in split) {
    throw new SkillParseError(
      split.error === "missing"
        ? `${where}: no YAML frontmatter. A SKILL.md starts with a line "---", then "name:" and ` +
            '"description:" lines, then a closing "---" line, then the instructions.'
        : `${where}: the frontmatter is not closed. Add a line "---" after the last frontmatter field.`,
      path,
      1,
    );
  }
  const doc = parseDocument(split.yaml, { uniqueKeys: false });
  const yamlError = doc.errors[0];
  if (yamlError) {
    // +1: the opening fence is line 1 of the file.
    const line = (yamlError.linePos?.[0]?.line ?? 1) + 1;
    const detail = yamlError.message.split("\n")[0]?.replace(/ at line \d+, column \d+:?$/, "");
    throw new SkillParseError(
      `${where} line ${line}: invalid YAML in the frontmatter: ${detail}.`,
      path,
      line,
    );
  }
  const data: unknown = doc.toJS();
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    throw new SkillParseError(
      `${where}: the frontmatter must be a YAML mapping of "key: value" lines, got ${data === null ? "nothing" : Array.isArray(data) ? "a list" : typeof data}.`,
      path,
      2,
    );
  }
  const raw = data as Record<string, unknown>;
  // YAML reads `version: 1.0` as the number 1; keep what the author wrote.
  const versionNode = doc.get("version", true);
  if (
    isScalar(versionNode) &&
    typeof versionNode.value === "number" &&
    typeof versionNode.source === "string"
  ) {
    raw.version = versionNode.source;
  }
  const name = scalarText(raw.name) || options.fallbackName || "";
  if (!name) {
    throw new SkillParseError(`${where}: the frontmatter has no "name:" field.`, path, 2);
  }
  let description = scalarText(raw.description);
  if (!description && options.fallbackName !== undefined) description = firstBodyLine(split.body);
  if (!description) {
    throw new SkillParseError(
      `${where}: the frontmatter has no "description:" field (one line saying what the skill does and when to use it).`,
      path,
      2,
    );
  }
  return { frontmatter: normalise(raw, name, description), body: split.body };
}

function normalise(raw: Record<string, unknown>, name: string, description: string): SkillFrontmatter {
  const fm: SkillFrontmatter = { ...raw, name, description };
  const hermes = hermesMetadata(raw);
  if (raw.version !== undefined && raw.version !== null) fm.version = String(raw.version);
  else delete fm.version;
  const tags = stringList(raw.tags);
  const metaTags = stringList(hermes?.tags);
  if (tags.length > 0) fm.tags = tags;
  else if (metaTags.length > 0) fm.tags = metaTags;
  else delete fm.tags;
  const category = scalarText(raw.category) || scalarText(hermes?.category);
  if (category) fm.category = category;
  else delete fm.category;
  const platforms = stringList(raw.platforms).map((p) => p.toLowerCase());
  if (platforms.length > 0) fm.platforms = platforms;
  else delete fm.platforms;
  const env = requiredEnv(raw.required_environment_variables);
  if (env.length > 0) fm.required_environment_variables = env;
  else delete fm.required_environment_variables;
  return fm;
}

/** `metadata.hermes` when it is a mapping. */
export function hermesMetadata(fm: Record<string, unknown>): Record<string, unknown> | undefined {
  const metadata = fm.metadata;
  if (!metadata || typeof metadata !== "object" || Array.isArray(metadata)) return undefined;
  const hermes = (metadata as Record<string, unknown>).hermes;
  if (!hermes || typeof hermes !== "object" || Array.isArray(hermes)) return undefined;
  return hermes as Record<string, unknown>;
}

function scalarText(value: unknown): string {
  if (typeof value === "string") return value.trim();
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return "";
}

/** A list from a YAML list, a `[a, b]` string or a `a, b` string. */
export function stringList(value: unknown): string[] {
  if (value === undefined || value === null || value === "") return [];
  if (Array.isArray(value)) {
    return value.map((v) => scalarText(v)).filter((v) => v !== "");
  }
  if (typeof value === "string") {
    const inner = value.trim().replace(/^\[(.*)\]$/s, "$1");
    return inner
      .split(",")
      .map((t) => t.trim().replace(/^["']|["']$/g, ""))
      .filter((t) => t !== "");
  }
  const single = scalarText(value);
  return single ? [single] : [];
}

function requiredEnv(value: unknown): RequiredEnvVar[] {
  if (!Array.isArray(value)) return typeof value === "string" && value.trim() ? [{ name: value.trim() }] : [];
  const out: RequiredEnvVar[] = [];
  for (const item of value) {
    if (typeof item === "string") {
      if (item.trim()) out.push({ name: item.trim() });
      continue;
    }
    if (!item || typeof item !== "object") continue;
    const entry = item as Record<string, unknown>;
    const name = scalarText(entry.name);
    if (!name) continue;
    const env: RequiredEnvVar = { name };
    for (const key of ["prompt", "help", "required_for"] as const) {
      const text = scalarText(entry[key]);
      if (text) env[key] = text;
    }
    out.push(env);
  }
  return out;
}

function firstBodyLine(body: string): string {
  for (const line of body.split("\n")) {
    const text = line.trim();
    if (text && !text.startsWith("#")) return text;
  }
  return "";
}

/**
 * A SKILL.md from frontmatter and body: the fields in the order given, long strings kept on one
 * line, one blank line between the closing fence and the body, a final newline.
 */
export function serializeSkill(frontmatter: SkillFrontmatter, body: string): string {
  const yaml = stringify(frontmatter, { lineWidth: 0 });
  const text = body.replace(/^\s*\n/, "").trimEnd();
  return `---\n${yaml}---\n\n${text}\n`;
}
