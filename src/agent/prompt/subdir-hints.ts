/**
 * Subdirectory context hints. The system prompt carries the context file of the directory the
 * session started in (context-files.ts) and never changes afterwards (prompt caching). When the
 * agent later works in a subdirectory with its own AGENTS.md (or .hermes.md, CLAUDE.md,
 * .cursorrules), the tool result that took it there says so once per session: where the file is,
 * how big, and what it covers (its heading and first lines, capped and scanned for injection), so
 * the model can read_file it. The whole file is never pasted.
 */
import { realpathSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { parseScript } from "../../util/shell-parse.js";
import { blockedNotice, readPromptFile, scanContext, stripFrontmatter } from "./context-text.js";

/** Context files by priority, as the prompt builder looks for them; the first readable one per directory wins. */
export const HINT_FILE_NAMES = [
  ".hermes.md",
  "HERMES.md",
  "AGENTS.md",
  "agents.md",
  "CLAUDE.md",
  "claude.md",
  ".cursorrules",
] as const;
/** Characters of a file's opening shown in the hint. */
export const HINT_SUMMARY_CHARS = 400;
const HINT_SUMMARY_LINES = 6;
/** Ancestors walked up from a touched path: `a/b/c/d.ts` still finds `a/AGENTS.md`. */
const MAX_WALK = 6;
/** Directories that hold copies of other projects, whose context files are not this project's. */
const SKIPPED_DIRS = new Set([
  "node_modules",
  ".git",
  "vendor",
  "dist",
  "build",
  ".venv",
  "venv",
  "__pycache__",
  "target",
  ".next",
]);
const PATH_TOOLS = new Set(["read_file", "write_file", "patch", "search_files"]);

/**
 * The paths a tool call works on, as written: `path` of the file tools, the files a V4A patch
 * names, and the operands of `cd`/`pushd` that start a command in a terminal call. Pure.
 */
export function touchedPaths(toolName: string, args: Readonly<Record<string, unknown>>): string[] {
  const out: string[] = [];
  if (PATH_TOOLS.has(toolName) && typeof args.path === "string" && args.path.trim()) out.push(args.path);
  if (toolName === "patch" && typeof args.patch === "string") {
    for (const m of args.patch.matchAll(/^\*\*\* (?:Add File|Update File|Move to): *(.+?) *\r?$/gm)) {
      if (m[1]) out.push(m[1]);
    }
  }
  if (toolName === "terminal" && typeof args.command === "string") {
    if (typeof args.workdir === "string" && args.workdir.trim()) out.push(args.workdir);
    out.push(...cdTargets(args.command));
  }
  return out;
}

/** Literal operands of `cd`/`pushd` commands in `command` (`cd -`, bare `cd` and `cd $X` give nothing). */
export function cdTargets(command: string): string[] {
  const targets: string[] = [];
  for (const pipeline of parseScript(command).pipelines) {
    for (const cmd of pipeline.commands) {
      const [name, ...rest] = cmd.words;
      if (!name || (name.text !== "cd" && name.text !== "pushd")) continue;
      const operand = rest.find((w) => !w.text.startsWith("-") || w.text === "-");
      if (!operand || operand.text === "-" || operand.parts.some((p) => p.kind !== "lit")) continue;
      targets.push(operand.text);
    }
  }
  return targets;
}

/**
 * What the hint says about one context file: its opening (frontmatter dropped, up to
 * {@link HINT_SUMMARY_LINES} non-blank lines and {@link HINT_SUMMARY_CHARS} characters). Pure.
 */
export function summarizeContextFile(text: string): string {
  const lines = stripFrontmatter(text.replace(/\r\n?/g, "\n").trim())
    .split("\n")
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() !== "")
    .slice(0, HINT_SUMMARY_LINES);
  let summary = lines.join("\n");
  if (summary.length > HINT_SUMMARY_CHARS) {
    let end = HINT_SUMMARY_CHARS;
    const code = summary.charCodeAt(end - 1);
    if (code >= 0xd800 && code <= 0xdbff) end--;
    summary = `${summary.slice(0, end).trimEnd()} …`;
  }
  return summary;
}

export interface SubdirHintOptions {
  /** The session's working directory: its own context file is in the system prompt already. */
  root: string;
  /** False under `skip_context_files` / `--ignore-rules`: no hints either. */
  enabled?: boolean;
}

/**
 * Remembers, for one session, which directories have been looked at and which context files were
 * announced. `hintFor` never throws (an unreadable directory or file is skipped).
 */
export class SubdirHintTracker {
  private readonly givenRoot: string;
  private realRoot: string | undefined;
  private readonly enabled: boolean;
  private readonly seenDirs = new Set<string>();
  private readonly announced = new Set<string>();

  constructor(options: SubdirHintOptions) {
    this.givenRoot = options.root;
    this.enabled = options.enabled ?? true;
  }

  /**
   * The root with its links resolved, found at the first tool call that names a path: an agent
   * is built per API request, most of which never touch a file, and a realpath each is not free.
   */
  private get root(): string {
    if (this.realRoot === undefined) {
      this.realRoot = realOrResolved(this.givenRoot);
      this.seenDirs.add(this.realRoot);
    }
    return this.realRoot;
  }

  /** The hint to append to this tool call's result, or undefined when there is nothing new. */
  hintFor(toolName: string, args: Readonly<Record<string, unknown>>, cwd: string): string | undefined {
    if (!this.enabled) return undefined;
    const hints: string[] = [];
    try {
      for (const raw of touchedPaths(toolName, args)) {
        for (const dir of this.newDirs(raw, cwd)) {
          const hint = this.hintForDir(dir);
          if (hint) hints.push(hint);
        }
      }
    } catch {
      // A hint is a courtesy: whatever goes wrong finding one must not touch the tool's result.
    }
    return hints.length > 0 ? hints.join("\n\n") : undefined;
  }

  /** Directories from the one `raw` names up to the root, inside the root, not seen before. */
  private newDirs(raw: string, cwd: string): string[] {
    const home = process.env.HOME;
    const expanded = raw === "~" || raw.startsWith("~/") ? (home ? join(home, raw.slice(1)) : raw) : raw;
    let dir = realOrResolved(isAbsolute(expanded) ? expanded : resolve(cwd, expanded));
    if (!isDirectory(dir)) dir = dirname(dir);
    const dirs: string[] = [];
    for (let i = 0; i < MAX_WALK && this.inside(dir) && !this.seenDirs.has(dir); i++) {
      this.seenDirs.add(dir);
      if (!this.skipped(dir)) dirs.push(dir);
      dir = dirname(dir);
    }
    return dirs.reverse();
  }

  private inside(dir: string): boolean {
    const rel = relative(this.root, dir);
    return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
  }

  private skipped(dir: string): boolean {
    return relative(this.root, dir)
      .split(sep)
      .some((part) => SKIPPED_DIRS.has(part));
  }

  private hintForDir(dir: string): string | undefined {
    for (const name of HINT_FILE_NAMES) {
      const path = join(dir, name);
      // A link pointing out of the project (e.g. to ~/.ssh/config) is not this project's context.
      const target = realOrResolved(path);
      if (target !== path && !this.inside(dirname(target)) && dirname(target) !== this.root) continue;
      const read = readPromptFile(path);
      if (!read.ok) continue;
      if (this.announced.has(target)) return undefined;
      this.announced.add(target);
      const shown = relative(this.root, path).split(sep).join("/");
      const size = statSync(path).size;
      const covers = relative(this.root, dir).split(sep).join("/");
      const head = `[Context file for ${covers}/: ${shown} (${size} bytes). Follow it for work in that directory; read it in full with read_file.`;
      const findings = scanContext(read.text);
      if (findings.length > 0) return `${head}\n${blockedNotice(shown, findings)}]`;
      return `${head} It begins:\n${summarizeContextFile(read.text)}\n]`;
    }
    return undefined;
  }
}

function realOrResolved(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
