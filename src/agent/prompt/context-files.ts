/**
 * Project context discovery: the one instruction file of the project the session works in, loaded
 * into the system prompt. Exactly one kind loads, first found wins:
 *
 * 1. `.hermes.md` or `HERMES.md`, in the working directory or a parent up to the git root (outside
 *    a repository only the working directory, so a file planted in `/tmp` or `$HOME` is not picked up);
 * 2. `AGENTS.md` (or `agents.md`) in the working directory;
 * 3. `CLAUDE.md` (or `claude.md`) in the working directory;
 * 4. `.cursorrules` plus `.cursor/rules/*.mdc` (sorted by name) in the working directory, together.
 *
 * Empty, binary and unreadable files are skipped as if absent. YAML frontmatter is stripped from
 * `.hermes.md`/`HERMES.md` and `.mdc` files: there it holds metadata for other tools (Cursor's
 * `globs`/`alwaysApply`), not instructions, and would only cost tokens. Each file is capped (head and
 * tail kept, see `capText`) and scanned for prompt injection; a file with any finding is replaced
 * by a one-line BLOCKED notice.
 */
import { readdirSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import type { ThreatFinding } from "../../knowledge/threats.js";
import { gitInfo } from "../../util/git-info.js";
import {
  blockedNotice,
  capText,
  contextMaxChars,
  readPromptFile,
  scanContext,
  stripFrontmatter,
} from "./context-text.js";

export type ContextFileKind = "hermes" | "agents" | "claude" | "cursor";

export interface ProjectContext {
  kind: ContextFileKind;
  /** Absolute path of the (first) file loaded. */
  file: string;
  /** Every file loaded, absolute (several only for the cursor kind). */
  files: string[];
  /** How the files are named in the prompt: relative to the working directory when inside it. */
  label: string;
  /** The project-context section exactly as it goes into the system prompt. */
  content: string;
  /** Findings of the injection scan; present only when at least one file was blocked. */
  blocked?: ThreatFinding[];
  /** Whether any part was cut to fit the cap. */
  truncated: boolean;
  /** Characters of the files' text before capping. */
  chars: number;
}

export interface LoadProjectContextOptions {
  cwd: string;
  /** Cap per file in characters; `null`/absent/non-positive means the default 20,000. */
  maxChars?: number | null;
  /** Told about files that exist but were skipped (binary, unreadable, too large). */
  warn?: (message: string) => void;
}

interface Candidate {
  path: string;
  frontmatter: boolean;
}

/** The project's context section, or undefined when the project has no (readable) context file. */
export function loadProjectContext(options: LoadProjectContextOptions): ProjectContext | undefined {
  const cwd = resolve(options.cwd);
  const maxChars = contextMaxChars(options.maxChars);
  const warn = options.warn ?? (() => undefined);

  for (const dir of hermesDirs(cwd)) {
    for (const name of [".hermes.md", "HERMES.md"]) {
      const loaded = loadFiles("hermes", [{ path: join(dir, name), frontmatter: true }], cwd, maxChars, warn);
      if (loaded) return loaded;
    }
  }
  for (const [kind, names] of [
    ["agents", ["AGENTS.md", "agents.md"]],
    ["claude", ["CLAUDE.md", "claude.md"]],
  ] as const) {
    for (const name of names) {
      const loaded = loadFiles(kind, [{ path: join(cwd, name), frontmatter: false }], cwd, maxChars, warn);
      if (loaded) return loaded;
    }
  }
  const cursor: Candidate[] = [{ path: join(cwd, ".cursorrules"), frontmatter: false }];
  for (const name of mdcFiles(join(cwd, ".cursor", "rules"))) {
    cursor.push({ path: join(cwd, ".cursor", "rules", name), frontmatter: true });
  }
  return loadFiles("cursor", cursor, cwd, maxChars, warn);
}

/** The directories searched for `.hermes.md`: cwd up to the git root, or cwd alone outside git. */
function hermesDirs(cwd: string): string[] {
  const root = gitInfo(cwd)?.root;
  if (!root) return [cwd];
  const rel = relative(root, cwd);
  if (rel.startsWith("..") || isAbsolute(rel)) return [cwd];
  const dirs = [cwd];
  let dir = cwd;
  while (dir !== root) {
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
    dirs.push(dir);
  }
  return dirs;
}

function mdcFiles(dir: string): string[] {
  try {
    // Most projects have no .cursor/rules: a stat that does not throw, not a thrown ENOENT per session.
    if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) return [];
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => (e.isFile() || e.isSymbolicLink()) && e.name.endsWith(".mdc"))
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
}

function displayName(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  return rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel.split("\\").join("/") : path;
}

/** Loads the readable ones of `candidates` as one section; undefined when none is readable. */
function loadFiles(
  kind: ContextFileKind,
  candidates: readonly Candidate[],
  cwd: string,
  maxChars: number,
  warn: (message: string) => void,
): ProjectContext | undefined {
  const parts: { path: string; name: string; body: string }[] = [];
  const findings = new Map<string, ThreatFinding>();
  let truncated = false;
  let chars = 0;
  for (const candidate of candidates) {
    const read = readPromptFile(candidate.path);
    if (!read.ok) {
      if (read.reason === "binary" || read.reason === "unreadable" || read.reason === "too_large") {
        warn(`${candidate.path} was skipped: ${read.reason}${read.detail ? ` (${read.detail})` : ""}.`);
      }
      continue;
    }
    const text = candidate.frontmatter ? stripFrontmatter(read.text) : read.text;
    if (!text) continue;
    const name = displayName(candidate.path, cwd);
    chars += text.length;
    const capped = capText(text, maxChars, name, candidate.path);
    truncated ||= capped.truncated;
    const threats = scanContext(capped.text);
    for (const t of threats) if (!findings.has(t.id)) findings.set(t.id, t);
    parts.push({
      path: candidate.path,
      name,
      body: threats.length > 0 ? blockedNotice(name, threats) : capped.text,
    });
  }
  const first = parts[0];
  if (!first) return undefined;
  const label = parts.map((p) => p.name).join(", ");
  let body: string;
  if (parts.length === 1) {
    body = first.body;
  } else {
    body = parts.map((p) => `### ${p.name}\n\n${p.body}`).join("\n\n");
    // Several cursor rules together still get one file's budget.
    const capped = capText(
      body,
      maxChars,
      "the cursor rules",
      `${join(cwd, ".cursorrules")} and ${join(cwd, ".cursor", "rules")}`,
    );
    truncated ||= capped.truncated;
    body = capped.text;
  }
  return {
    kind,
    file: first.path,
    files: parts.map((p) => p.path),
    label,
    content: `## Project context (${label})\n\n${body}`,
    ...(findings.size > 0 ? { blocked: [...findings.values()] } : {}),
    truncated,
    chars,
  };
}
