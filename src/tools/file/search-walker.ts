/**
 * The built-in search back end, used when ripgrep is not installed: a sorted depth-first walk
 * that honours .gitignore and .ignore files (nested ones too, and those of parent folders up to
 * the git root), skips .git, node_modules, symlinks and binary files, and searches line by line.
 */
import type { Dirent } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import { basename, dirname, join, relative, sep } from "node:path";
import ignore, { type Ignore } from "ignore";
import { hasBinaryExtension, looksBinary, SNIFF_BYTES, sniffBinaryFile } from "../../util/binary-file.js";
import { globMatcher } from "../../util/glob.js";
import { readLineBatches } from "../../util/line-reader.js";
import { ALWAYS_SKIPPED_DIRS, type ContentQuery, type FileHits, type HitLine } from "./search-types.js";

const IGNORE_FILES = [".gitignore", ".ignore"];
/** Files up to this size are read in one go; larger ones are streamed. */
const WHOLE_READ_BYTES = 1024 * 1024;
/** Bytes of a line that are searched; the rest of a longer line (minified code) is skipped. */
const MAX_LINE_BYTES = 256 * 1024;

interface IgnoreLayer {
  base: string;
  rules: Ignore;
}

function toPosix(rel: string): string {
  return sep === "/" ? rel : rel.split(sep).join("/");
}

/** Later (deeper) layers override earlier ones, as a nested .gitignore overrides its parent's. */
function isIgnored(abs: string, isDir: boolean, layers: readonly IgnoreLayer[]): boolean {
  let ignored = false;
  for (const layer of layers) {
    const rel = toPosix(relative(layer.base, abs));
    if (rel === "" || rel.startsWith("..")) continue;
    const result = layer.rules.test(isDir ? `${rel}/` : rel);
    if (result.ignored) ignored = true;
    else if (result.unignored) ignored = false;
  }
  return ignored;
}

async function readIgnoreLayer(dir: string, names: readonly string[]): Promise<IgnoreLayer | undefined> {
  const texts: string[] = [];
  for (const name of names) {
    try {
      texts.push(await readFile(join(dir, name), "utf8"));
    } catch {
      // No such ignore file here.
    }
  }
  return texts.length > 0 ? { base: dir, rules: ignore().add(texts.join("\n")) } : undefined;
}

/** Ignore rules that apply to `root` from the folders above it, up to the enclosing git root. */
async function ancestorLayers(root: string): Promise<IgnoreLayer[]> {
  const chain: string[] = [];
  let gitRoot: string | undefined;
  for (let dir = dirname(root), prev = root; dir !== prev; prev = dir, dir = dirname(dir)) {
    chain.unshift(dir);
    if (await exists(join(dir, ".git"))) {
      gitRoot = dir;
      break;
    }
  }
  if (await exists(join(root, ".git"))) gitRoot = root;
  const layers: IgnoreLayer[] = [];
  if (gitRoot) {
    const exclude = await readIgnoreLayer(join(gitRoot, ".git", "info"), ["exclude"]);
    if (exclude) layers.push({ base: gitRoot, rules: exclude.rules });
    if (gitRoot !== root) {
      for (const dir of chain) {
        const layer = await readIgnoreLayer(dir, IGNORE_FILES);
        if (layer) layers.push(layer);
      }
    }
  }
  return layers;
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Yields the files under `root` (absolute paths) in sorted depth-first order, honouring ignore
 * files. A `root` that is a file yields just itself.
 */
export async function* walkFiles(root: string, signal: AbortSignal): AsyncGenerator<string> {
  if (!(await stat(root)).isDirectory()) {
    yield root;
    return;
  }
  const start = await ancestorLayers(root);
  async function* walk(dir: string, inherited: IgnoreLayer[]): AsyncGenerator<string> {
    if (signal.aborted) throw new Error("Search was cancelled.");
    const own = await readIgnoreLayer(dir, IGNORE_FILES);
    const layers = own ? [...inherited, own] : inherited;
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return; // Unreadable folder: skip it, as ripgrep does.
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const abs = join(dir, entry.name);
      if (entry.isDirectory()) {
        if ((ALWAYS_SKIPPED_DIRS as readonly string[]).includes(entry.name)) continue;
        if (isIgnored(abs, true, layers)) continue;
        yield* walk(abs, layers);
      } else if (entry.isFile()) {
        if (!isIgnored(abs, false, layers)) yield abs;
      }
    }
  }
  yield* walk(root, start);
}

/** Files whose path relative to `root` passes `fileGlob` (all files when none). */
export async function* walkMatchingFiles(
  root: string,
  fileGlob: string | undefined,
  signal: AbortSignal,
): AsyncGenerator<string> {
  const accept = fileGlob ? globMatcher(fileGlob) : () => true;
  for await (const abs of walkFiles(root, signal)) {
    if (accept(toPosix(relative(root, abs)) || basename(abs))) yield abs;
  }
}

/**
 * Compiles a search pattern as a JavaScript RegExp. A leading `(?i)` (ripgrep's inline flag) turns
 * on case-insensitive matching. Throws a readable error for an invalid pattern.
 */
export function compilePattern(pattern: string): RegExp {
  let source = pattern;
  let flags = "";
  if (source.startsWith("(?i)")) {
    source = source.slice(4);
    flags = "i";
  }
  try {
    return new RegExp(source, flags);
  } catch (error) {
    throw new Error(
      `Invalid regex ${JSON.stringify(pattern)}: ${(error as Error).message.replace(/^Invalid regular expression: /, "")}. ` +
        "Escape special characters (\\. \\( \\[ \\*) to match them literally.",
    );
  }
}

/** Collects matches with context lines for one file, fed line by line. */
class FileScan {
  readonly hits: FileHits;
  private readonly before: HitLine[] = [];
  private afterLeft = 0;

  constructor(
    path: string,
    private readonly regex: RegExp,
    private readonly context: number,
    private readonly keepLines: boolean,
  ) {
    this.hits = { path, lines: [], matches: 0 };
  }

  /** Returns false when the caller may stop feeding lines (after-context is complete). */
  push(line: number, text: string, stopAfterMatches: number): boolean {
    const match = this.regex.test(text);
    if (match) {
      this.hits.matches++;
      if (this.keepLines) {
        this.hits.lines.push(...this.before.splice(0), { line, text, match: true });
        this.afterLeft = this.context;
      }
    } else if (this.keepLines) {
      if (this.afterLeft > 0) {
        this.hits.lines.push({ line, text, match: false });
        this.afterLeft--;
      } else if (this.context > 0) {
        this.before.push({ line, text, match: false });
        if (this.before.length > this.context) this.before.shift();
      }
    }
    return !(this.hits.matches >= stopAfterMatches && this.afterLeft === 0);
  }
}

/** Searches files under the query root with the built-in walker. */
export async function walkContentSearch(query: ContentQuery): Promise<FileHits[]> {
  const regex = compilePattern(query.pattern);
  const results: FileHits[] = [];
  let total = 0; // matches (content mode) or files (other modes) found so far
  for await (const abs of walkMatchingFiles(query.root, query.fileGlob, query.signal)) {
    if (hasBinaryExtension(abs)) continue;
    const keepLines = query.mode === "content";
    const scan = new FileScan(abs, regex, keepLines ? query.context : 0, keepLines);
    // files_only needs one match per file; content needs only the matches still wanted.
    const stopAt =
      query.mode === "files_only"
        ? 1
        : query.mode === "content"
          ? query.want - total
          : Number.POSITIVE_INFINITY;
    const searched = await scanFile(abs, scan, stopAt, query.signal);
    if (!searched || scan.hits.matches === 0) continue;
    results.push(scan.hits);
    total += query.mode === "content" ? scan.hits.matches : 1;
    if (total >= query.want) break;
  }
  return results;
}

/** Feeds the file's lines to `scan`; false when the file is binary or unreadable. */
async function scanFile(abs: string, scan: FileScan, stopAt: number, signal: AbortSignal): Promise<boolean> {
  try {
    const size = (await stat(abs)).size;
    if (size <= WHOLE_READ_BYTES) {
      const buf = await readFile(abs);
      if (looksBinary(buf.subarray(0, SNIFF_BYTES))) return false;
      const lines = buf.toString("utf8").split("\n");
      if (lines.at(-1) === "") lines.pop();
      for (let i = 0; i < lines.length; i++) {
        const raw = lines[i] as string;
        const text = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
        if (!scan.push(i + 1, text, stopAt)) break;
      }
      return true;
    }
    if (await sniffBinaryFile(abs)) return false;
    let n = 0;
    outer: for await (const batch of readLineBatches(abs, { maxLineBytes: MAX_LINE_BYTES, signal })) {
      for (const raw of batch) {
        if (!scan.push(++n, raw.text, stopAt)) break outer;
      }
    }
    return true;
  } catch (error) {
    if (signal.aborted) throw error;
    return false; // Vanished or unreadable mid-walk: skip, as ripgrep does.
  }
}
