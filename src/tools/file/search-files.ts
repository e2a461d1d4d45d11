/** search_files: regex content search and file-name search, via ripgrep or the built-in walker. */
import { stat } from "node:fs/promises";
import { basename, dirname, relative, sep } from "node:path";
import { type Static, Type } from "@sinclair/typebox";
import { resolvePath } from "../../util/abs-path.js";
import { globMatcher } from "../../util/glob.js";
import { defineTool, type ToolContext } from "../types.js";
import { type FileAccess, fileAccess } from "./file-access.js";
import { envContentSearch, envListFiles } from "./search-env.js";
import description from "./search-files.md";
import { findRipgrep, rgContentSearch, rgListFiles } from "./search-rg.js";
import type { ContentQuery, FileHits, HitLine, SearchMode } from "./search-types.js";
import { compilePattern, walkContentSearch, walkMatchingFiles } from "./search-walker.js";
import { displayPath, errorCode, outputBudget, stringEnum } from "./shared.js";
import { similarNames } from "./similar-names.js";

const DEFAULT_LIMIT = 50;
/** Matched lines are shown up to this many characters; search output is for locating, not reading. */
const MAX_SHOWN_LINE = 300;

const parameters = Type.Object({
  pattern: Type.String({
    description:
      "content: regex ((?i) for case-insensitive). files: file-name glob like *.ts or src/**/test_*.py; plain text matches names containing it.",
  }),
  target: Type.Optional(
    stringEnum(["content", "files"], {
      description: "files finds files by name, newest first. Default content.",
    }),
  ),
  path: Type.Optional(Type.String({ description: "Folder or file to search (default working directory)." })),
  file_glob: Type.Optional(Type.String({ description: "Only files matching this glob, e.g. *.py" })),
  limit: Type.Optional(
    Type.Integer({ minimum: 1, description: `Results per page (default ${DEFAULT_LIMIT}).` }),
  ),
  offset: Type.Optional(Type.Integer({ minimum: 0, description: "Results to skip." })),
  output_mode: Type.Optional(
    stringEnum(["content", "files_only", "count"], {
      description: "files_only: just file names; count: matches per file. Default content.",
    }),
  ),
  context: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 20, description: "Context lines around each match." }),
  ),
});

export const searchFilesTool = defineTool({
  name: "search_files",
  toolset: "file",
  description,
  parameters,
  parallelSafe: true,
  sideEffectFree: true,
  emoji: "🔎",
  async handler(args, ctx) {
    const files = await fileAccess(ctx);
    if (!files.local) return searchInEnvironment(args, ctx, files);
    const root = resolvePath(args.path ?? ".", ctx.cwd);
    await assertSearchRoot(args.path ?? ".", root);
    const limit = args.limit ?? DEFAULT_LIMIT;
    const offset = args.offset ?? 0;
    const rg = findRipgrep(ctx.env.PATH);
    if (args.target === "files") return findFiles(args.pattern, root, args.file_glob, limit, offset, rg, ctx);
    const mode: SearchMode = args.output_mode ?? "content";
    if (!rg) compilePattern(args.pattern); // Fail fast on a bad regex, before walking anything.
    const query: ContentQuery = {
      root,
      pattern: args.pattern,
      context: args.context ?? 0,
      mode,
      want: offset + limit + 1,
      signal: ctx.signal,
      ...(args.file_glob ? { fileGlob: args.file_glob } : {}),
    };
    const hits = rg ? await rgContentSearch(rg, query, ctx.env) : await walkContentSearch(query);
    return formatContent(hits, query, limit, offset, ctx);
  },
});

type SearchArgs = Static<typeof parameters>;

/** The same search in an environment other than the local machine (see search-env.ts). */
async function searchInEnvironment(args: SearchArgs, ctx: ToolContext, files: FileAccess): Promise<string> {
  const argPath = args.path ?? ".";
  const root = files.resolve(argPath);
  if (!(await files.stat(root))) {
    const similar = await similarNames(dirname(root), basename(root), 3, files.names);
    const hint = similar.length > 0 ? ` Did you mean: ${similar.join(", ")}?` : "";
    throw new Error(`Path not found: ${argPath}.${hint}`);
  }
  const limit = args.limit ?? DEFAULT_LIMIT;
  const offset = args.offset ?? 0;
  const shownCtx = { ...ctx, cwd: files.cwd };
  if (args.target === "files") {
    const listed = await envListFiles(files.env, root, args.file_glob, ctx.signal);
    return pageFiles(args.pattern, root, listed, limit, offset, shownCtx);
  }
  const query: ContentQuery = {
    root,
    pattern: args.pattern,
    context: args.context ?? 0,
    mode: args.output_mode ?? "content",
    want: offset + limit + 1,
    signal: ctx.signal,
    ...(args.file_glob ? { fileGlob: args.file_glob } : {}),
  };
  return formatContent(await envContentSearch(files.env, query), query, limit, offset, shownCtx);
}

async function assertSearchRoot(argPath: string, root: string): Promise<void> {
  try {
    await stat(root);
  } catch (error) {
    if (errorCode(error) !== "ENOENT" && errorCode(error) !== "ENOTDIR") throw error;
    const similar = await similarNames(dirname(root), basename(root));
    const hint = similar.length > 0 ? ` Did you mean: ${similar.join(", ")}?` : "";
    throw new Error(`Path not found: ${argPath}.${hint}`);
  }
}

async function findFiles(
  pattern: string,
  root: string,
  fileGlob: string | undefined,
  limit: number,
  offset: number,
  rg: string | undefined,
  ctx: ToolContext,
): Promise<string> {
  const candidates: string[] = [];
  if (rg) candidates.push(...(await rgListFiles(rg, root, fileGlob, ctx.env, ctx.signal)));
  else for await (const abs of walkMatchingFiles(root, fileGlob, ctx.signal)) candidates.push(abs);
  const accept = nameMatcher(pattern);
  const listed: { abs: string; mtime: number }[] = [];
  for (const abs of candidates) {
    if (!accept(relative(root, abs).split(sep).join("/") || basename(abs))) continue;
    try {
      listed.push({ abs, mtime: (await stat(abs)).mtimeMs });
    } catch {
      // Deleted since it was listed.
    }
  }
  return pageFiles(pattern, root, listed, limit, offset, ctx);
}

/** A pattern without wildcards is a name fragment: "config" finds app.config.ts and Config.yaml. */
function nameMatcher(pattern: string): (rel: string) => boolean {
  return /[*?[{]/.test(pattern)
    ? globMatcher(pattern)
    : (rel: string) => basename(rel).toLowerCase().includes(pattern.toLowerCase());
}

/** Newest first, one page, paths shown relative to the cwd. */
function pageFiles(
  pattern: string,
  root: string,
  listed: readonly { abs: string; mtime: number }[],
  limit: number,
  offset: number,
  ctx: ToolContext,
): string {
  const accept = nameMatcher(pattern);
  const matched = listed.filter((m) => accept(relative(root, m.abs).split(sep).join("/") || basename(m.abs)));
  if (matched.length === 0)
    return `No files matching ${JSON.stringify(pattern)} under ${displayPath(root, ctx.cwd)}.`;
  matched.sort((a, b) => b.mtime - a.mtime || (a.abs < b.abs ? -1 : 1));
  const page = matched.slice(offset, offset + limit);
  if (page.length === 0) return `No more files: ${matched.length} matched, offset ${offset} is past the end.`;
  const lines = page.map((m) => displayPath(m.abs, ctx.cwd));
  const end = offset + page.length;
  const footer =
    end < matched.length
      ? `\n[${offset + 1}-${end} of ${matched.length} files, newest first. Next page: offset=${end}.]`
      : offset > 0
        ? `\n[${offset + 1}-${end} of ${matched.length} files.]`
        : "";
  return lines.join("\n") + footer;
}

function clip(text: string): string {
  return text.length > MAX_SHOWN_LINE ? `${text.slice(0, MAX_SHOWN_LINE)}… [${text.length} chars]` : text;
}

function formatContent(
  hits: FileHits[],
  query: ContentQuery,
  limit: number,
  offset: number,
  ctx: ToolContext,
): string {
  const where = displayPath(query.root, ctx.cwd);
  if (hits.length === 0) {
    const scope = query.fileGlob ? ` (files matching ${query.fileGlob})` : "";
    return `No matches for ${JSON.stringify(query.pattern)} in ${where}${scope}.`;
  }
  const budget = outputBudget(ctx.config);
  const out: string[] = [];
  let bytes = 0;
  const fits = (lines: string[]) => {
    const size = lines.reduce((n, l) => n + Buffer.byteLength(l, "utf8") + 1, 0);
    if (out.length > 0 && (bytes + size > budget.maxBytes || out.length + lines.length > budget.maxLines))
      return false;
    out.push(...lines);
    bytes += size;
    return true;
  };

  if (query.mode !== "content") {
    const page = hits.slice(offset, offset + limit);
    let shown = 0;
    for (const h of page) {
      const name = displayPath(h.path, ctx.cwd);
      if (!fits([query.mode === "count" ? `${name}:${h.matches}` : name])) break;
      shown++;
    }
    return out.join("\n") + pageNote("files", offset, shown, hits.length > offset + shown);
  }

  // Page by matches; a shown match brings its context lines along. A block is a run of adjacent
  // lines and is never split, so the budget cut falls between blocks.
  const blocks: { lines: string[]; matches: number }[] = [];
  let index = 0;
  for (const h of hits) {
    const chosen = new Set<HitLine>();
    for (const l of h.lines) {
      if (!l.match) continue;
      if (index >= offset && index < offset + limit) chosen.add(l);
      index++;
    }
    if (chosen.size === 0) continue;
    const name = displayPath(h.path, ctx.cwd);
    const chosenAt = [...chosen].map((l) => l.line);
    let block: { lines: string[]; matches: number } | undefined;
    let last = -1;
    for (const l of h.lines) {
      if (!chosen.has(l) && !chosenAt.some((n) => Math.abs(n - l.line) <= query.context)) continue;
      if (!block || l.line !== last + 1 || query.context === 0) {
        block = { lines: [], matches: 0 };
        blocks.push(block);
      }
      const mark = l.match ? ":" : "-";
      block.lines.push(`${name}${mark}${l.line}${mark}${clip(l.text)}`);
      if (chosen.has(l)) block.matches++;
      last = l.line;
    }
  }
  const total = hits.reduce((n, h) => n + h.matches, 0);
  if (blocks.length === 0) return `No more matches: offset ${offset} is past the last of ${total}.`;
  let shown = 0;
  let cut = false;
  for (const block of blocks) {
    if (!fits(query.context > 0 && out.length > 0 ? ["--", ...block.lines] : block.lines)) {
      cut = true;
      break;
    }
    shown += block.matches;
  }
  return out.join("\n") + pageNote("matches", offset, shown, cut || total > offset + shown);
}

function pageNote(unit: string, offset: number, shown: number, more: boolean): string {
  if (!more && offset === 0) return "";
  const range = shown > 0 ? `${unit} ${offset + 1}-${offset + shown}` : `no ${unit}`;
  if (!more) return `\n[Showing ${range}; no more.]`;
  return `\n[Showing ${range}; more exist. Next page: offset=${offset + shown}.]`;
}
