/**
 * The ripgrep back end: spawns `rg` with an argument list (no shell) and reads its JSON output,
 * so paths and lines need no guessing at separators. Stops ripgrep as soon as enough results are
 * in, and when the turn is interrupted.
 */
import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { createRequire } from "node:module";
import { delimiter, join } from "node:path";
import type * as Readline from "node:readline";
import { ALWAYS_SKIPPED_DIRS, type ContentQuery, type FileHits } from "./search-types.js";

/** Absolute path of `rg` on `PATH` (from the tool's environment), or undefined when absent. */
export function findRipgrep(pathVar: string | undefined): string | undefined {
  const names = process.platform === "win32" ? ["rg.exe"] : ["rg"];
  for (const dir of (pathVar ?? "").split(delimiter)) {
    if (!dir) continue;
    for (const name of names) {
      const candidate = join(dir, name);
      try {
        accessSync(candidate, constants.X_OK);
        return candidate;
      } catch {
        // Not here.
      }
    }
  }
  return undefined;
}

/** Flags that make ripgrep walk like the built-in walker: hidden files in, .git and node_modules out. */
function commonArgs(fileGlob: string | undefined): string[] {
  const args = ["--no-config", "--hidden", "--no-require-git", "--sort", "path"];
  for (const dir of ALWAYS_SKIPPED_DIRS) args.push("--glob", `!${dir}`);
  if (fileGlob) args.push("--glob", fileGlob);
  return args;
}

interface RgText {
  text?: string;
  bytes?: string;
}

interface RgMessage {
  type: string;
  data?: { path?: RgText; lines?: RgText; line_number?: number };
}

function rgText(value: RgText | undefined): string {
  if (!value) return "";
  if (value.text !== undefined) return value.text;
  return value.bytes ? Buffer.from(value.bytes, "base64").toString("utf8") : "";
}

/** Runs ripgrep, handing each stdout line to `onLine`, which returns false to stop ripgrep early. */
async function runRg(
  rg: string,
  args: string[],
  env: Readonly<Record<string, string | undefined>>,
  signal: AbortSignal,
  onLine: (line: string) => boolean,
): Promise<void> {
  const child = spawn(rg, args, { env: { ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  let stopped = false;
  const stop = () => {
    stopped = true;
    child.kill();
  };
  signal.addEventListener("abort", stop, { once: true });
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => {
    if (stderr.length < 4000) stderr += chunk;
  });
  const exit = new Promise<number | null>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve(code));
  });
  // Observed below; this only keeps a spawn failure from counting as unhandled in the meantime.
  exit.catch(() => {});
  try {
    // node:readline loads with the first search, not with the tool list.
    const { createInterface } = createRequire(import.meta.url)("node:readline") as typeof Readline;
    const lines = createInterface({ input: child.stdout, crlfDelay: Number.POSITIVE_INFINITY });
    for await (const line of lines) {
      if (stopped) break;
      if (!onLine(line)) {
        stop();
        break;
      }
    }
    const code = await exit;
    if (signal.aborted) throw new Error("Search was cancelled.");
    if (stopped || code === 0 || code === 1) return;
    throw rgFailure(code, stderr);
  } finally {
    signal.removeEventListener("abort", stop);
    if (child.exitCode === null) child.kill();
  }
}

/** ripgrep's arguments for a content search (JSON output). */
export function rgContentArgs(query: ContentQuery): string[] {
  const args = ["--json", ...commonArgs(query.fileGlob)];
  if (query.mode === "files_only") args.push("--max-count", "1");
  if (query.mode === "content" && query.context > 0) args.push("--context", String(query.context));
  args.push("--regexp", query.pattern, "--", query.root);
  return args;
}

/** ripgrep's arguments for listing the files under `root`. */
export function rgListArgs(root: string, fileGlob: string | undefined): string[] {
  return ["--files", ...commonArgs(fileGlob), "--", root];
}

/** The error for ripgrep's exit status 2 (a bad regex reads as one). */
export function rgFailure(code: number | null, stderr: string): Error {
  const message = stderr.trim();
  if (/regex parse error|error parsing regex/i.test(message)) {
    return new Error(`Invalid regex: ${message.replace(/^rg: /, "")}`);
  }
  return new Error(`ripgrep failed (exit ${code}): ${message || "no message"}`);
}

/** Content search with ripgrep; same contract as the walker's `walkContentSearch`. */
export async function rgContentSearch(
  rg: string,
  query: ContentQuery,
  env: Readonly<Record<string, string | undefined>>,
): Promise<FileHits[]> {
  const reader = rgHitReader(query);
  await runRg(rg, rgContentArgs(query), env, query.signal, reader.onLine);
  return reader.results();
}

/**
 * Folds ripgrep's JSON lines into hits: `onLine` returns false once enough results are in (stop
 * ripgrep there); `results` gives what was collected.
 */
export function rgHitReader(query: ContentQuery): {
  onLine: (raw: string) => boolean;
  results: () => FileHits[];
} {
  const results: FileHits[] = [];
  let current: FileHits | undefined;
  let total = 0;
  const onLine = (raw: string): boolean => {
    let msg: RgMessage;
    try {
      msg = JSON.parse(raw) as RgMessage;
    } catch {
      return true;
    }
    if (msg.type === "begin") {
      current = { path: rgText(msg.data?.path), lines: [], matches: 0 };
      return true;
    }
    if (!current) return true;
    if (msg.type === "match" || msg.type === "context") {
      const isMatch = msg.type === "match";
      if (isMatch && query.mode === "content" && total >= query.want) return false;
      const text = rgText(msg.data?.lines).replace(/\r?\n$/, "");
      const line = msg.data?.line_number ?? 0;
      if (isMatch) {
        current.matches++;
        if (query.mode === "content") total++;
      }
      if (query.mode === "content") current.lines.push({ line, text, match: isMatch });
      return true;
    }
    if (msg.type === "end") {
      if (current.matches > 0) {
        results.push(current);
        if (query.mode !== "content") total++;
      }
      current = undefined;
      return query.mode === "content" || total < query.want;
    }
    return true;
  };
  return {
    onLine,
    results() {
      // Stopped mid-file: keep what was collected for it.
      if (current && current.matches > 0) results.push(current);
      current = undefined;
      return results;
    },
  };
}

/** Lists files under `root` with ripgrep (ignore files honoured), filtered by `fileGlob`. */
export async function rgListFiles(
  rg: string,
  root: string,
  fileGlob: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
  signal: AbortSignal,
): Promise<string[]> {
  const files: string[] = [];
  await runRg(rg, rgListArgs(root, fileGlob), env, signal, (line) => {
    if (line) files.push(line);
    return true;
  });
  return files;
}
