/**
 * search_files in an environment other than the local machine: ripgrep inside the environment when
 * it has one (the same arguments and JSON reader as locally), else grep and find through `exec`
 * (without .gitignore support). Output is capped inside the environment, so a huge tree does not
 * flood the channel.
 */
import { basename, posix } from "node:path";
import { quote } from "../../environments/local/shell-session.js";
import type { Environment } from "../../environments/types.js";
import { globMatcher } from "../../util/glob.js";
import { rgContentArgs, rgFailure, rgHitReader, rgListArgs } from "./search-rg.js";
import { ALWAYS_SKIPPED_DIRS, type ContentQuery, type FileHits } from "./search-types.js";

/** Lines of search output read back from an environment at most. */
const MAX_LINES = 200_000;
const TIMEOUT_MS = 120_000;

const rgPresence = new WeakMap<Environment, Promise<boolean>>();

/** Whether `rg` runs inside `env` (asked once per environment). */
export function envHasRipgrep(env: Environment): Promise<boolean> {
  let known = rgPresence.get(env);
  if (!known) {
    known = env
      .exec("command -v rg >/dev/null 2>&1", { timeoutMs: 10_000 })
      .then((r) => r.exitCode === 0)
      .catch(() => false);
    rgPresence.set(env, known);
  }
  return known;
}

async function run(
  env: Environment,
  command: string,
  signal: AbortSignal,
): Promise<{ lines: string[]; code: number | null; stderr: string }> {
  const r = await env.exec(`${command} | head -n ${MAX_LINES}; exit "\${PIPESTATUS[0]}"`, {
    timeoutMs: TIMEOUT_MS,
    signal,
  });
  if (signal.aborted) throw new Error("Search was cancelled.");
  const text = r.stdout.toString("utf8");
  const lines = text === "" ? [] : text.replace(/\n$/, "").split("\n");
  return { lines, code: r.exitCode, stderr: r.stderr };
}

/** Content search in `env`; same contract as the walker's `walkContentSearch`. */
export async function envContentSearch(env: Environment, query: ContentQuery): Promise<FileHits[]> {
  if (await envHasRipgrep(env)) {
    const { lines, code, stderr } = await run(
      env,
      ["rg", ...rgContentArgs(query)].map(quote).join(" "),
      query.signal,
    );
    if (code !== 0 && code !== 1) throw rgFailure(code, stderr);
    const reader = rgHitReader(query);
    for (const line of lines) if (!reader.onLine(line)) break;
    return reader.results();
  }
  return grepContentSearch(env, query);
}

async function grepContentSearch(env: Environment, query: ContentQuery): Promise<FileHits[]> {
  let pattern = query.pattern;
  const flags = ["-rnIH", "-E", "-Z"];
  // ripgrep's inline (?i) is the common case-insensitive spelling; grep takes -i.
  if (pattern.startsWith("(?i)")) {
    pattern = pattern.slice(4);
    flags.push("-i");
  }
  for (const dir of ALWAYS_SKIPPED_DIRS) flags.push(`--exclude-dir=${dir}`);
  if (query.fileGlob) flags.push(`--include=${query.fileGlob}`);
  if (query.mode === "content" && query.context > 0) flags.push("-C", String(query.context));
  const argv = ["grep", ...flags, "-e", pattern, "--", query.root];
  const { lines, code, stderr } = await run(env, argv.map(quote).join(" "), query.signal);
  if (code !== 0 && code !== 1) {
    throw new Error(`grep failed in the environment (exit ${code}): ${stderr.trim() || "no message"}`);
  }
  const byFile = new Map<string, FileHits>();
  let matches = 0;
  for (const line of lines) {
    const nul = line.indexOf("\0");
    if (nul < 0) continue; // "--" between context groups
    const path = line.slice(0, nul);
    const m = /^(\d+)([:-])(.*)$/s.exec(line.slice(nul + 1));
    if (!m) continue;
    const isMatch = m[2] === ":";
    let hits = byFile.get(path);
    if (!hits) {
      if (query.mode !== "content" && byFile.size >= query.want) break;
      hits = { path, lines: [], matches: 0 };
      byFile.set(path, hits);
    }
    if (isMatch) {
      if (query.mode === "content" && matches >= query.want) break;
      hits.matches++;
      matches++;
    }
    if (query.mode === "content") hits.lines.push({ line: Number(m[1]), text: m[3] ?? "", match: isMatch });
  }
  return [...byFile.values()]
    .filter((h) => h.matches > 0)
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Files under `root` in `env` with their mtimes (ms; 0 when the environment cannot tell). */
export async function envListFiles(
  env: Environment,
  root: string,
  fileGlob: string | undefined,
  signal: AbortSignal,
): Promise<{ abs: string; mtime: number }[]> {
  let paths: string[];
  if (await envHasRipgrep(env)) {
    const { lines, code, stderr } = await run(
      env,
      ["rg", ...rgListArgs(root, fileGlob)].map(quote).join(" "),
      signal,
    );
    if (code !== 0 && code !== 1) throw rgFailure(code, stderr);
    paths = lines.filter((l) => l !== "");
  } else {
    const prune = ALWAYS_SKIPPED_DIRS.map((d) => `-name ${quote(d)}`).join(" -o ");
    const { lines } = await run(env, `find ${quote(root)} \\( ${prune} \\) -prune -o -type f -print`, signal);
    const accept = fileGlob ? globMatcher(fileGlob) : undefined;
    paths = lines.filter(
      (l) => l !== "" && (!accept || accept(basename(l)) || accept(posix.relative(root, l))),
    );
  }
  return withMtimes(env, paths, signal);
}

/** One `stat` call for all paths (GNU or busybox `stat -c`); mtime 0 where it fails. */
async function withMtimes(
  env: Environment,
  paths: string[],
  signal: AbortSignal,
): Promise<{ abs: string; mtime: number }[]> {
  const mtimes = new Map<string, number>();
  if (paths.length > 0) {
    const r = await env.exec("xargs -0 stat -c '%Y %n' -- 2>/dev/null", {
      stdin: `${paths.join("\0")}\0`,
      timeoutMs: TIMEOUT_MS,
      signal,
    });
    for (const line of r.stdout.toString("utf8").split("\n")) {
      const m = /^(\d+) (.*)$/s.exec(line);
      if (m?.[2]) mtimes.set(m[2], Number(m[1]) * 1000);
    }
  }
  return paths.map((abs) => ({ abs, mtime: mtimes.get(abs) ?? 0 }));
}
