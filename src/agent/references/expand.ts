/**
 * Expands the `@` references of a typed message (parse.ts) into an "Attached Context" section
 * after it, as upstream's CLI does: files inline in a fenced block (a line range when given),
 * folders as a listing, `@diff`/`@staged`/`@git:N` as git's output, `@url:` as the page's text.
 *
 * Guards, each failing closed: a path must resolve (symlinks followed) inside the working
 * directory, and never to a secret (Hermes's `.env`, `auth.json`, ssh keys, ... — the protected-path
 * list's `secret` level); git runs with no pager, external diff, textconv, fsmonitor or hooks from
 * the repository's config. Sizes: one file larger than half the context window is not inlined (the
 * model is told where it is instead); everything together over half the window refuses the whole
 * expansion, over a quarter adds a warning. A reference that cannot be read becomes a warning
 * line the model sees; the references themselves stay in the text where the user typed them.
 */
import { execFile } from "node:child_process";
import { open, readdir, readFile, realpath, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { extname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { guardPath, guardRoots } from "../../tools/approval/protected-paths.js";
import { estimateTextTokens } from "../compression/tokens.js";
import { type ContextReference, parseReferences } from "./parse.js";

/** Fetches a page's readable text (the web_extract tool's fetcher in the CLI). */
export type UrlFetcher = (url: string, signal?: AbortSignal) => Promise<string>;

/** Runs git with `args` in `cwd`; resolves with its exit code and output. */
export type GitRunner = (
  args: readonly string[],
  cwd: string,
) => Promise<{ code: number; stdout: string; stderr: string }>;

export interface ExpandOptions {
  /** Where relative paths start, and the folder references must stay inside. */
  cwd: string;
  /** HERMES_HOME, whose secrets are never attached. */
  home: string;
  env: Readonly<Record<string, string | undefined>>;
  /** The model's context window in tokens (limits are fractions of it). */
  contextLength: number;
  /** Absent: `@url:` references become a warning. */
  fetchUrl?: UrlFetcher;
  git?: GitRunner;
  signal?: AbortSignal;
}

export interface ExpandResult {
  /** What to send: the message as typed, then warnings and attached context (unchanged when none). */
  message: string;
  references: ContextReference[];
  /** Lines for the user (also in `message` for the model, unless `blocked`). */
  warnings: string[];
  injectedTokens: number;
  /** True when together they exceed the hard limit: `message` is the text as typed. */
  blocked: boolean;
}

/** Folder listings stop after this many entries. */
const FOLDER_LIMIT = 200;
/** The first bytes checked for a NUL when deciding a file is binary. */
const SNIFF_BYTES = 4096;
const GIT_TIMEOUT_MS = 30_000;
const GIT_MAX_BYTES = 16 * 1024 * 1024;

const FENCE: Readonly<Record<string, string>> = {
  ".py": "python",
  ".js": "javascript",
  ".mjs": "javascript",
  ".cjs": "javascript",
  ".ts": "typescript",
  ".tsx": "tsx",
  ".jsx": "jsx",
  ".json": "json",
  ".md": "markdown",
  ".sh": "bash",
  ".yml": "yaml",
  ".yaml": "yaml",
  ".toml": "toml",
  ".rs": "rust",
  ".go": "go",
};

/** Extensions that are binary whatever their first bytes hold. */
const BINARY_EXT = new Set([
  ".png",
  ".jpg",
  ".jpeg",
  ".gif",
  ".webp",
  ".bmp",
  ".ico",
  ".pdf",
  ".zip",
  ".gz",
  ".tgz",
  ".tar",
  ".xz",
  ".7z",
  ".mp3",
  ".mp4",
  ".wav",
  ".mov",
  ".so",
  ".dylib",
  ".exe",
  ".wasm",
  ".sqlite",
  ".db",
]);

type Expansion = { block: string } | { warning: string };

/** Expands every reference in `message`; a message without one comes back as it is. */
export async function expandReferences(message: string, options: ExpandOptions): Promise<ExpandResult> {
  const references = parseReferences(message);
  const result: ExpandResult = { message, references, warnings: [], injectedTokens: 0, blocked: false };
  if (references.length === 0) return result;
  const hardLimit = Math.max(1, Math.floor(options.contextLength * 0.5));
  const softLimit = Math.max(1, Math.floor(options.contextLength * 0.25));
  const expansions = await Promise.all(references.map((r) => expandOne(r, options, hardLimit)));
  const blocks: string[] = [];
  for (const e of expansions) {
    if ("block" in e) blocks.push(e.block);
    else result.warnings.push(e.warning);
  }
  result.injectedTokens = blocks.reduce((sum, b) => sum + estimateTextTokens(b), 0);
  if (result.injectedTokens > hardLimit) {
    result.warnings.push(
      `@ context refused: ${result.injectedTokens} tokens is over half the model's context (${hardLimit} tokens). Attach less (a line range: @file:PATH:10-80).`,
    );
    result.blocked = true;
    return result;
  }
  if (result.injectedTokens > softLimit) {
    result.warnings.push(
      `@ context is large: ${result.injectedTokens} tokens, over a quarter of the model's context (${softLimit} tokens).`,
    );
  }
  let text = message;
  if (result.warnings.length > 0)
    text += `\n\n--- Context Warnings ---\n${result.warnings.map((w) => `- ${w}`).join("\n")}`;
  if (blocks.length > 0) text += `\n\n--- Attached Context ---\n\n${blocks.join("\n\n")}`;
  result.message = text.trim();
  return result;
}

async function expandOne(
  ref: ContextReference,
  options: ExpandOptions,
  hardLimit: number,
): Promise<Expansion> {
  try {
    switch (ref.kind) {
      case "file":
      case "folder":
        return await expandPath(ref, options, hardLimit);
      case "diff":
        return await expandGit(ref, options, ["diff"]);
      case "staged":
        return await expandGit(ref, options, ["diff", "--staged"]);
      case "git": {
        const n = Number.parseInt(ref.target || "1", 10);
        if (!Number.isFinite(n) || n < 1)
          return { warning: `${ref.raw}: expected a number of commits (1-10)` };
        return await expandGit(ref, options, ["log", `-${Math.min(n, 10)}`, "-p"]);
      }
      case "url":
        return await expandUrl(ref, options);
    }
  } catch (error) {
    return { warning: `${ref.raw}: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/**
 * The real path of a reference's target, refused outside the working directory or onto a secret.
 * Throws with the reason.
 */
async function allowedPath(ref: ContextReference, options: ExpandOptions): Promise<string | null> {
  const expanded = ref.target.startsWith("~/")
    ? join(options.env["HOME"] ?? homedir(), ref.target.slice(2))
    : ref.target;
  const given = isAbsolute(expanded) ? resolve(expanded) : resolve(options.cwd, expanded);
  let real: string;
  try {
    real = await realpath(given);
  } catch {
    return null;
  }
  const root = await realpath(options.cwd).catch(() => resolve(options.cwd));
  if (real !== root && !real.startsWith(root.endsWith(sep) ? root : root + sep))
    throw new Error(
      `${ref.target} is outside the working directory (${root}); only paths inside it are attached`,
    );
  const protection = guardPath(real, guardRoots(options.home, options.env));
  if (protection?.level === "secret")
    throw new Error(
      `${ref.target} is a credential or secret file (${protection.reason}) and is never attached`,
    );
  return real;
}

async function expandPath(
  ref: ContextReference,
  options: ExpandOptions,
  hardLimit: number,
): Promise<Expansion> {
  const path = await allowedPath(ref, options);
  if (path === null) return { warning: `${ref.raw}: no such ${ref.kind}` };
  const info = await stat(path);
  if (ref.kind === "folder") {
    if (!info.isDirectory()) return { warning: `${ref.raw}: not a folder (use @file:)` };
    const listing = await folderListing(path, options.cwd);
    return { block: `📁 ${ref.raw} (${estimateTextTokens(listing)} tokens)\n${listing}` };
  }
  if (!info.isFile())
    return { warning: `${ref.raw}: not a file${info.isDirectory() ? " (use @folder:)" : ""}` };
  if (await isBinary(path)) {
    return {
      block: `📎 ${ref.raw} (binary file, ${formatSize(info.size)}): not inlined as text. It is on disk at \`${path}\`; use your tools to work with it.`,
    };
  }
  // A file far over the limit is not read whole just to be refused.
  if (info.size / 4 > hardLimit * 4) return { block: oversized(ref, path, Math.ceil(info.size / 4)) };
  let text = await readFile(path, "utf8");
  if (ref.lineStart !== undefined) {
    const lines = text.split(/\r?\n/);
    if (ref.lineStart > lines.length)
      return { warning: `${ref.raw}: the file has only ${lines.length} lines` };
    text = lines.slice(ref.lineStart - 1, ref.lineEnd ?? ref.lineStart).join("\n");
  }
  const tokens = estimateTextTokens(text);
  if (tokens > hardLimit) return { block: oversized(ref, path, tokens) };
  const fence = text.includes("```") ? "````" : "```";
  return {
    block: `📄 ${ref.raw} (${tokens} tokens)\n${fence}${FENCE[extname(path).toLowerCase()] ?? ""}\n${text}\n${fence}`,
  };
}

function oversized(ref: ContextReference, path: string, tokens: number): string {
  return `📎 ${ref.raw} (text file, about ${tokens} tokens): too large to inline. It is on disk at \`${path}\`; read only the parts you need (read_file with a line range, search_files).`;
}

async function isBinary(path: string): Promise<boolean> {
  if (BINARY_EXT.has(extname(path).toLowerCase())) return true;
  const handle = await open(path, "r");
  try {
    const buffer = Buffer.alloc(SNIFF_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, SNIFF_BYTES, 0);
    return buffer.subarray(0, bytesRead).includes(0);
  } finally {
    await handle.close();
  }
}

/** An indented listing of what is under `dir` (dot entries, node_modules and __pycache__ left out). */
async function folderListing(dir: string, cwd: string): Promise<string> {
  const root = await realpath(cwd).catch(() => resolve(cwd));
  const lines = [`${relative(root, dir) || "."}/`];
  let count = 0;
  const walk = async (folder: string, depth: number): Promise<void> => {
    const entries = (await readdir(folder, { withFileTypes: true }))
      .filter((e) => !e.name.startsWith(".") && e.name !== "node_modules" && e.name !== "__pycache__")
      .sort((a, b) => Number(b.isDirectory()) - Number(a.isDirectory()) || a.name.localeCompare(b.name));
    for (const entry of entries) {
      if (count >= FOLDER_LIMIT) return;
      count++;
      const indent = "  ".repeat(depth);
      const full = join(folder, entry.name);
      if (entry.isDirectory()) {
        lines.push(`${indent}- ${entry.name}/`);
        await walk(full, depth + 1);
      } else {
        lines.push(`${indent}- ${entry.name} (${await describeFile(full)})`);
      }
    }
  };
  await walk(dir, 0);
  if (count >= FOLDER_LIMIT) lines.push(`- … (only the first ${FOLDER_LIMIT} entries are listed)`);
  return lines.join("\n");
}

async function describeFile(path: string): Promise<string> {
  try {
    const info = await stat(path);
    if (info.size > 1024 * 1024 || (await isBinary(path))) return formatSize(info.size);
    const text = await readFile(path, "utf8");
    return `${text.split("\n").length} lines`;
  } catch {
    return "unreadable";
  }
}

async function expandGit(ref: ContextReference, options: ExpandOptions, args: string[]): Promise<Expansion> {
  const git = options.git ?? runGit;
  const result = await git(args, options.cwd);
  if (result.code !== 0) return { warning: `${ref.raw}: ${result.stderr.trim() || `git ${args[0]} failed`}` };
  const output = result.stdout.trim() || "(no changes)";
  return {
    block: `🧾 git ${args.join(" ")} (${estimateTextTokens(output)} tokens)\n\`\`\`diff\n${output}\n\`\`\``,
  };
}

async function expandUrl(ref: ContextReference, options: ExpandOptions): Promise<Expansion> {
  if (!/^https?:\/\//i.test(ref.target)) return { warning: `${ref.raw}: only http(s) URLs are fetched` };
  if (!options.fetchUrl) return { warning: `${ref.raw}: fetching web pages is not available here` };
  const text = (await options.fetchUrl(ref.target, options.signal)).trim();
  if (!text) return { warning: `${ref.raw}: the page had no readable text` };
  return { block: `🌐 ${ref.raw} (${estimateTextTokens(text)} tokens)\n${text}` };
}

/**
 * git with the repository's own configuration unable to run code (a hostile checkout's
 * `core.fsmonitor`, `diff.external`, textconv filters or pager), no prompts and no colour.
 */
export const runGit: GitRunner = (args, cwd) =>
  new Promise((done) => {
    const hardened = [
      "-c",
      "core.fsmonitor=false",
      "-c",
      "core.pager=cat",
      "-c",
      "diff.external=",
      "-c",
      "core.hooksPath=/dev/null",
      "--no-pager",
      args[0] ?? "",
      ...(args[0] === "diff" || args[0] === "log" ? ["--no-ext-diff", "--no-textconv", "--no-color"] : []),
      ...args.slice(1),
    ];
    execFile(
      "git",
      hardened,
      {
        cwd,
        timeout: GIT_TIMEOUT_MS,
        maxBuffer: GIT_MAX_BYTES,
        env: { ...process.env, GIT_TERMINAL_PROMPT: "0", GIT_OPTIONAL_LOCKS: "0", GIT_PAGER: "cat" },
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        const why = error && typeof error.code !== "number" ? `${error.message}\n` : "";
        done({ code, stdout: String(stdout), stderr: why + String(stderr) });
      },
    );
  });

function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
