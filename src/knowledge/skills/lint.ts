/**
 * Skill quality checks (`hermes skills lint`, and the test that holds every bundled skill to them):
 * the frontmatter parses and says what Hermes needs, the body has the sections an agent follows,
 * every support file the body names exists and every shipped one is named, scripts parse, and the
 * hub scanner finds nothing dangerous. Strict mode (bundled and optional skills) turns the
 * house-style rules into errors; for a user's own skills they are warnings.
 */
import { spawnSync } from "node:child_process";
import { existsSync, lstatSync, readdirSync, readFileSync } from "node:fs";
import { basename, dirname, extname, join } from "node:path";
import { parseSkillMarkdown } from "./frontmatter.js";
import { scanSkillBundle } from "./hub/scan.js";
import { MAX_SKILL_MD_CHARS, nameProblem, SUPPORT_DIRS } from "./paths.js";

export type LintSeverity = "error" | "warning";

export interface LintProblem {
  severity: LintSeverity;
  message: string;
}

export interface SkillLintResult {
  /** The skill's name from its frontmatter, or its folder name when the frontmatter is unreadable. */
  name: string;
  dir: string;
  problems: LintProblem[];
}

export interface LintOptions {
  /** House rules as errors (bundled and optional skills): author, license, version, tags, sections. */
  strict?: boolean;
  /** The category the folder layout implies; the frontmatter must agree when it names one. */
  expectedCategory?: string;
  /** Toolset names `requires_toolsets`/`fallback_for_toolsets` may use; unchecked when absent. */
  knownToolsets?: ReadonlySet<string>;
  /** Skill names `related_skills` may use; unchecked when absent. */
  knownSkills?: ReadonlySet<string>;
  /** Run the interpreters' syntax checks on scripts (default true). */
  checkScripts?: boolean;
}

/** The description limit of the repository standard (one sentence the prompt index shows). */
export const LINT_MAX_DESCRIPTION = 60;
const PLATFORMS = new Set(["linux", "macos", "windows"]);
const SEMVER = /^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$/;
const REQUIRED_SECTIONS = ["When to use", "Procedure", "Verification"] as const;
const STYLE_SECTIONS = ["Pitfalls"] as const;
/** A support file named in prose or a command: `references/x.md`, `scripts/run.sh`. */
const SUPPORT_MENTION = new RegExp(
  `(?:^|[\\s\`'"(\\[/])((?:${SUPPORT_DIRS.join("|")})/[\\w.@+-]+(?:/[\\w.@+-]+)*)`,
  "g",
);

/** Every file below the skill's support folders, as paths relative to the skill. */
function supportFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const entry of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const child = `${rel}/${entry.name}`;
      if (entry.isDirectory()) walk(child);
      else out.push(child);
    }
  };
  for (const sub of SUPPORT_DIRS) {
    if (existsSync(join(dir, sub)) && lstatSync(join(dir, sub)).isDirectory()) walk(sub);
  }
  return out.sort();
}

/** The syntax check for a script, by extension; undefined when there is none here. */
function syntaxCheck(path: string): { command: string; args: string[] } | undefined {
  const ext = extname(path).toLowerCase();
  if (ext === ".js" || ext === ".mjs" || ext === ".cjs")
    return { command: process.execPath, args: ["--check", path] };
  if (ext === ".sh" || ext === ".bash") return { command: "bash", args: ["-n", path] };
  if (ext === ".py") {
    return {
      command: "python3",
      args: ["-c", "import ast,sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])", path],
    };
  }
  return undefined;
}

function scriptProblem(path: string): string | undefined {
  const check = syntaxCheck(path);
  if (!check) return undefined;
  const result = spawnSync(check.command, check.args, { encoding: "utf8", timeout: 15_000 });
  if (result.error) return undefined; // interpreter missing here: nothing to say about the script
  if (result.status === 0) return undefined;
  const detail = `${result.stderr ?? ""}`.trim().split("\n").slice(-3).join(" ").slice(0, 300);
  return detail || `exit ${result.status}`;
}

function stringList(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value)) return value.map(String);
  if (typeof value === "string") return [value];
  return undefined;
}

function hasSection(body: string, title: string): boolean {
  const wanted = title.toLowerCase();
  return body.split("\n").some((line) => {
    const m = /^#{2,3}\s+(.+?)\s*$/.exec(line);
    return m?.[1]?.toLowerCase().startsWith(wanted) === true;
  });
}

/** Lints one skill folder (the folder holding SKILL.md). Never throws for a bad skill. */
export function lintSkill(dir: string, options: LintOptions = {}): SkillLintResult {
  const strict = options.strict === true;
  const style: LintSeverity = strict ? "error" : "warning";
  const folder = basename(dir);
  const problems: LintProblem[] = [];
  const error = (message: string): void => void problems.push({ severity: "error", message });
  const house = (message: string): void => void problems.push({ severity: style, message });
  const file = join(dir, "SKILL.md");
  if (!existsSync(file))
    return { name: folder, dir, problems: [{ severity: "error", message: "no SKILL.md" }] };
  const text = readFileSync(file, "utf8");
  if (text.length > MAX_SKILL_MD_CHARS) {
    error(`SKILL.md is ${text.length} characters; the limit is ${MAX_SKILL_MD_CHARS}`);
  }
  let parsed: ReturnType<typeof parseSkillMarkdown>;
  try {
    parsed = parseSkillMarkdown(text, file);
  } catch (cause) {
    error(cause instanceof Error ? cause.message : String(cause));
    return { name: folder, dir, problems };
  }
  const fm = parsed.frontmatter;
  const hermes = (fm.metadata?.hermes ?? {}) as Record<string, unknown>;
  const nameIssue = nameProblem(fm.name, "skill name");
  if (nameIssue) error(nameIssue);
  else if (fm.name !== folder) error(`name "${fm.name}" does not match its folder "${folder}"`);

  const description = fm.description.trim();
  if (/\n/.test(description)) house("description spans several lines; write one sentence");
  if (description.length > LINT_MAX_DESCRIPTION) {
    house(`description is ${description.length} characters; keep it to ${LINT_MAX_DESCRIPTION}`);
  }
  if (fm.version === undefined) house("no version");
  else if (!SEMVER.test(String(fm.version))) error(`version "${fm.version}" is not semver (1.0.0)`);
  if (!fm.author) house("no author");
  if (!fm.license) house("no license");
  if (!fm.tags || fm.tags.length === 0) house("no tags");
  const category = fm.category ?? (typeof hermes.category === "string" ? hermes.category : undefined);
  if (options.expectedCategory !== undefined) {
    if (!category) house(`no category (its folder says "${options.expectedCategory}")`);
    else if (category !== options.expectedCategory) {
      error(`category "${category}" does not match its folder "${options.expectedCategory}"`);
    }
  }
  for (const platform of fm.platforms ?? []) {
    if (!PLATFORMS.has(platform)) error(`unknown platform "${platform}" (linux, macos, windows)`);
  }
  for (const key of ["requires_toolsets", "fallback_for_toolsets"] as const) {
    const list = stringList(hermes[key]);
    if (hermes[key] !== undefined && list === undefined) error(`metadata.hermes.${key} must be a list`);
    for (const toolset of list ?? []) {
      if (options.knownToolsets && !options.knownToolsets.has(toolset)) {
        error(`metadata.hermes.${key} names an unknown toolset "${toolset}"`);
      }
    }
  }
  for (const related of stringList(hermes.related_skills) ?? []) {
    if (options.knownSkills && !options.knownSkills.has(related)) {
      house(`related_skills names "${related}", which is not installed`);
    }
  }

  const body = parsed.body;
  if (!body.trim()) error("no instructions after the frontmatter");
  for (const section of REQUIRED_SECTIONS) {
    if (!hasSection(body, section)) house(`no "## ${section}" section`);
  }
  for (const section of STYLE_SECTIONS) {
    if (!hasSection(body, section)) house(`no "## ${section}" section`);
  }

  const shipped = supportFiles(dir);
  const mentioned = new Set<string>();
  for (const m of body.matchAll(SUPPORT_MENTION)) {
    const path = (m[1] ?? "").replace(/[.,:;]+$/, "");
    if (path) mentioned.add(path);
  }
  for (const path of mentioned) {
    const prefixOfShipped = shipped.some((f) => f === path || f.startsWith(`${path}/`));
    if (!prefixOfShipped) error(`the body names ${path}, which does not exist`);
  }
  for (const path of shipped) {
    const named = [...mentioned].some((m) => m === path || path.startsWith(`${m}/`));
    if (!named) house(`${path} is shipped but the body never mentions it`);
  }

  const files = new Map<string, Buffer>([["SKILL.md", Buffer.from(text)]]);
  for (const path of shipped) files.set(path, readFileSync(join(dir, path)));
  const report = scanSkillBundle(files);
  if (report.verdict === "dangerous" || report.verdict === "caution") {
    const sev: LintSeverity = report.verdict === "dangerous" ? "error" : style;
    for (const f of report.findings.filter((x) => x.severity === "critical" || x.severity === "high")) {
      problems.push({
        severity: sev,
        message: `scanner (${report.verdict}): ${f.file}:${f.line} ${f.description}`,
      });
    }
  }
  if (options.checkScripts !== false) {
    for (const path of shipped) {
      const issue = scriptProblem(join(dir, path));
      if (issue) error(`${path} does not parse: ${issue}`);
    }
  }
  return { name: fm.name || folder, dir, problems };
}

/** Every skill folder below a skills root (`<root>/<category>/<name>` or `<root>/<name>`). */
export function skillDirsUnder(root: string): { dir: string; category: string | undefined }[] {
  const out: { dir: string; category: string | undefined }[] = [];
  if (!existsSync(root)) return out;
  const walk = (dir: string, depth: number): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name.startsWith(".")) continue;
      const child = join(dir, entry.name);
      if (existsSync(join(child, "SKILL.md"))) {
        out.push({ dir: child, category: depth === 0 ? undefined : basename(dirname(child)) });
      } else if (depth === 0) {
        walk(child, 1);
      }
    }
  };
  walk(root, 0);
  return out.sort((a, b) => (a.dir < b.dir ? -1 : 1));
}
