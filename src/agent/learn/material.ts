/**
 * What `/learn` and `hermes learn` learn from, gathered safely before the turn: a folder (a
 * bounded listing and the key files, each capped), a single file, a URL (fetched by the agent's own
 * `web_extract`, with its URL guard), this conversation, or pasted notes. Every text that reaches
 * the model is scanned for prompt injection and withheld when it reads like instructions to an
 * AI; credential files (`.env`, keys, anything the protected-path list calls secret) and symbolic
 * links are never read; binary files are skipped.
 */
import { type Dirent, lstatSync, readdirSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, extname, isAbsolute, join, relative, resolve } from "node:path";
import { describeFindings, scanThreats } from "../../knowledge/threats.js";
import { type GuardRoots, guardPath } from "../../tools/approval/protected-paths.js";

export type LearnSource =
  | { kind: "folder"; path: string }
  | { kind: "file"; path: string }
  | { kind: "url"; url: string }
  | { kind: "chat" }
  | { kind: "notes"; text: string };

/** One file's text as the model will see it. */
export interface MaterialFile {
  path: string;
  text: string;
  /** The file was longer than its cap and was cut. */
  truncated: boolean;
}

export interface Material {
  source: LearnSource;
  /** The folder's entries (relative, `/` after folders), capped; empty for other sources. */
  listing: string[];
  listingTruncated: boolean;
  files: MaterialFile[];
  /** What was not read and why, for the user: `".env: credentials"`. */
  skipped: string[];
}

export interface MaterialLimits {
  /** Entries listed (default 200) and depth below the folder (default 3). */
  maxEntries: number;
  maxDepth: number;
  /** Files read (default 12), characters per file (default 12,000) and in all (default 60,000). */
  maxFiles: number;
  maxFileChars: number;
  maxTotalChars: number;
}

export const DEFAULT_LIMITS: Readonly<MaterialLimits> = {
  maxEntries: 200,
  maxDepth: 3,
  maxFiles: 12,
  maxFileChars: 12_000,
  maxTotalChars: 60_000,
};

const CHAT_WORDS = /^(this|the|our|current)\s+(chat|conversation|session)$|^(chat|conversation)$/i;

/**
 * What `what` names: "this chat", an http(s) URL, an existing folder or file (relative to `cwd`,
 * `~` expanded), or else pasted notes.
 */
export function classifyLearnInput(what: string, cwd: string): LearnSource {
  const text = what.trim();
  if (CHAT_WORDS.test(text)) return { kind: "chat" };
  if (/^https?:\/\/\S+$/i.test(text)) return { kind: "url", url: text };
  if (!/\n/.test(text) && text.length < 4096) {
    const expanded = text === "~" ? homedir() : text.startsWith("~/") ? join(homedir(), text.slice(2)) : text;
    const path = isAbsolute(expanded) ? resolve(expanded) : resolve(cwd, expanded);
    try {
      const stats = statSync(path);
      if (stats.isDirectory()) return { kind: "folder", path };
      if (stats.isFile()) return { kind: "file", path };
    } catch {
      // Not a path: notes.
    }
  }
  return { kind: "notes", text };
}

/** Folders that hold dependencies, builds or history rather than what the project is. */
const SKIP_DIRS = new Set([
  ".git",
  "node_modules",
  "dist",
  "build",
  "out",
  "target",
  "vendor",
  "coverage",
  "__pycache__",
  ".venv",
  "venv",
  ".tox",
  ".next",
  ".cache",
  ".idea",
  ".vscode",
]);

/** Names that hold credentials, whatever the protected-path list says. */
const SECRET_NAME =
  /^\.env(\..*)?$|^\.npmrc$|^\.netrc$|^\.pgpass$|\.(pem|key|p12|pfx|keystore|jks)$|^id_(rsa|dsa|ecdsa|ed25519)|(^|[._-])(credentials?|secrets?|tokens?)([._-]|$)/i;

const TEXT_EXTENSIONS = new Set(
  ".md .markdown .txt .rst .adoc .org .json .yaml .yml .toml .ini .cfg .conf .sh .bash .zsh .fish .py .js .mjs .cjs .ts .tsx .jsx .go .rs .rb .java .kt .c .h .cpp .hpp .cs .swift .php .lua .sql .html .css .xml .gradle .tf .nix .dockerfile .mk".split(
    " ",
  ),
);
const TEXT_NAMES =
  /^(readme|license|makefile|justfile|dockerfile|procfile|gemfile|rakefile|changelog|contributing)(\..*)?$/i;

/** How worth reading a file is, by name and place (higher first); 0 means not at all. */
export function fileScore(rel: string): number {
  const name = basename(rel).toLowerCase();
  const depth = rel.split("/").length - 1;
  const ext = extname(name);
  if (!TEXT_EXTENSIONS.has(ext) && !TEXT_NAMES.test(name)) return 0;
  if (/^readme/.test(name)) return 100 - depth * 10;
  if (/^(agents|claude|hermes|contributing)\.md$/.test(name)) return 90 - depth * 10;
  if (/^(package\.json|pyproject\.toml|cargo\.toml|go\.mod|makefile|justfile|dockerfile)$/.test(name)) {
    return 80 - depth * 10;
  }
  if ((ext === ".md" || ext === ".rst" || ext === ".txt") && depth === 0) return 70;
  if ((ext === ".md" || ext === ".rst") && /^docs?\//.test(rel)) return 60 - depth * 2;
  if (ext === ".md") return 40 - depth * 5;
  return Math.max(1, 20 - depth * 5);
}

/** Why `abs` must not be read, or undefined. */
function secretReason(abs: string, roots: GuardRoots): string | undefined {
  if (SECRET_NAME.test(basename(abs))) return "may hold credentials";
  const protection = guardPath(abs, roots);
  return protection?.level === "secret" ? protection.reason : undefined;
}

/** Reads one file for the model: undefined with a reason when it is skipped. */
function readForModel(abs: string, cap: number): { text: string; truncated: boolean } | { skip: string } {
  let bytes: Buffer;
  try {
    bytes = readFileSync(abs);
  } catch (error) {
    return { skip: `unreadable (${(error as NodeJS.ErrnoException).code ?? "error"})` };
  }
  if (bytes.subarray(0, 8192).includes(0)) return { skip: "binary" };
  const full = bytes.toString("utf8");
  const text = full.length > cap ? full.slice(0, cap) : full;
  // The whole file is scanned (up to the scanner's window), not only the part sent.
  const findings = scanThreats(full, "context");
  if (findings.length > 0)
    return { skip: `withheld: reads like instructions to an AI (${describeFindings(findings)})` };
  return { text, truncated: full.length > cap };
}

interface Entry {
  rel: string;
  abs: string;
  dir: boolean;
}

/** A breadth-first listing below `root`: no symbolic links, no dependency or build folders. */
function listFolder(root: string, limits: MaterialLimits): { entries: Entry[]; truncated: boolean } {
  const entries: Entry[] = [];
  let queue: Array<{ abs: string; depth: number }> = [{ abs: root, depth: 0 }];
  let truncated = false;
  while (queue.length > 0) {
    const next: Array<{ abs: string; depth: number }> = [];
    for (const { abs, depth } of queue) {
      let items: Dirent[];
      try {
        items = readdirSync(abs, { withFileTypes: true });
      } catch {
        continue;
      }
      items.sort((a, b) => a.name.localeCompare(b.name));
      for (const item of items) {
        if (item.isSymbolicLink()) continue;
        const childAbs = join(abs, item.name);
        const rel = relative(root, childAbs).split("\\").join("/");
        const dir = item.isDirectory();
        if (dir && (SKIP_DIRS.has(item.name) || item.name.startsWith("."))) continue;
        if (!dir && !item.isFile()) continue;
        if (entries.length >= limits.maxEntries) {
          truncated = true;
          break;
        }
        entries.push({ rel, abs: childAbs, dir });
        if (dir && depth + 1 < limits.maxDepth) next.push({ abs: childAbs, depth: depth + 1 });
      }
    }
    queue = next;
  }
  return { entries, truncated };
}

/** The listing and key files of a folder, within `limits`. */
export function gatherFolder(
  path: string,
  roots: GuardRoots,
  limits: MaterialLimits = DEFAULT_LIMITS,
): Material {
  const { entries, truncated } = listFolder(path, limits);
  const skipped: string[] = [];
  const candidates = entries
    .filter((e) => !e.dir)
    .map((e) => ({ ...e, score: fileScore(e.rel) }))
    .filter((e) => e.score > 0)
    .sort((a, b) => b.score - a.score || a.rel.localeCompare(b.rel));
  const files: MaterialFile[] = [];
  let total = 0;
  for (const entry of candidates) {
    if (files.length >= limits.maxFiles || total >= limits.maxTotalChars) break;
    const secret = secretReason(entry.abs, roots);
    if (secret) {
      skipped.push(`${entry.rel}: not read (${secret})`);
      continue;
    }
    const read = readForModel(entry.abs, Math.min(limits.maxFileChars, limits.maxTotalChars - total));
    if ("skip" in read) {
      skipped.push(`${entry.rel}: ${read.skip}`);
      continue;
    }
    if (!read.text.trim()) continue;
    files.push({ path: entry.rel, ...read });
    total += read.text.length;
  }
  return {
    source: { kind: "folder", path },
    listing: entries.map((e) => (e.dir ? `${e.rel}/` : e.rel)),
    listingTruncated: truncated,
    files,
    skipped,
  };
}

/** One file as material (refused when it is a credential file, binary or injected). */
export function gatherFile(
  path: string,
  roots: GuardRoots,
  limits: MaterialLimits = DEFAULT_LIMITS,
): Material {
  const material: Material = {
    source: { kind: "file", path },
    listing: [],
    listingTruncated: false,
    files: [],
    skipped: [],
  };
  const name = basename(path);
  if (lstatSync(path).isSymbolicLink()) {
    material.skipped.push(`${name}: not read (a symbolic link)`);
    return material;
  }
  const secret = secretReason(path, roots);
  if (secret) {
    material.skipped.push(`${name}: not read (${secret})`);
    return material;
  }
  const read = readForModel(path, Math.min(limits.maxFileChars * 4, limits.maxTotalChars));
  if ("skip" in read) material.skipped.push(`${name}: ${read.skip}`);
  else material.files.push({ path: name, ...read });
  return material;
}

/** Pasted notes as material (withheld when they read like instructions to an AI). */
export function gatherNotes(text: string, limits: MaterialLimits = DEFAULT_LIMITS): Material {
  const material: Material = {
    source: { kind: "notes", text },
    listing: [],
    listingTruncated: false,
    files: [],
    skipped: [],
  };
  const findings = scanThreats(text, "context");
  if (findings.length > 0) {
    material.skipped.push(
      `the notes: withheld: they read like instructions to an AI (${describeFindings(findings)})`,
    );
    return material;
  }
  const cut = text.length > limits.maxTotalChars;
  material.files.push({
    path: "notes",
    text: cut ? text.slice(0, limits.maxTotalChars) : text,
    truncated: cut,
  });
  return material;
}

/** Material for a source that the turn itself reads (a URL, this conversation). */
export function referenceMaterial(source: LearnSource): Material {
  return { source, listing: [], listingTruncated: false, files: [], skipped: [] };
}
