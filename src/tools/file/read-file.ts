/** read_file: numbered, paged, bounded reads of text files. */

import { Type } from "@sinclair/typebox";
import { resolvePath } from "../../util/abs-path.js";
import { readLineBatches } from "../../util/line-reader.js";
import { defineTool, type ToolContext } from "../types.js";
import { textForRead } from "./encoded-text.js";
import { bufferLineBatches, type FileAccess, type FileInfo, fileAccess } from "./file-access.js";
import { recordSeen } from "./file-state.js";
import description from "./read-file.md";
import { configNumber, errorCode, outputBudget } from "./shared.js";
import { fileNotFoundError } from "./similar-names.js";

const DEFAULT_LIMIT = 500;
/** Room left on a numbered line for the `NNNNNN|` prefix and the cut marker. */
const LINE_OVERHEAD = 60;
/** Below this size the whole file is scanned to report its line count; above it reading stops early. */
const COUNT_LINES_BELOW_BYTES = 8 * 1024 * 1024;

const parameters = Type.Object({
  path: Type.String({ description: "File path: absolute, relative to the working directory, or ~/..." }),
  offset: Type.Optional(Type.Integer({ minimum: 1, description: "First line to read, 1-based." })),
  limit: Type.Optional(
    Type.Integer({ minimum: 1, description: `Lines to read (default ${DEFAULT_LIMIT}).` }),
  ),
});

export const readFileTool = defineTool({
  name: "read_file",
  toolset: "file",
  description,
  parameters,
  parallelSafe: true,
  sideEffectFree: true,
  emoji: "📖",
  pathScoped: (args, cwd) => [resolvePath(args.path, cwd)],
  async handler(args, ctx) {
    const files = await fileAccess(ctx);
    const abs = files.resolve(args.path);
    const stats = await statForRead(files, args.path, abs);
    const { decoded, note } = await textForRead(files, abs, args.path, stats.size);
    recordSeen(ctx, abs, stats);
    const text = await readNumbered(
      files,
      abs,
      args.path,
      stats,
      args.offset ?? 1,
      args.limit ?? DEFAULT_LIMIT,
      ctx,
      decoded?.text,
    );
    return note ? `${note}\n${text}` : text;
  },
});

async function statForRead(files: FileAccess, argPath: string, abs: string): Promise<FileInfo> {
  let stats: FileInfo | undefined;
  try {
    stats = await files.stat(abs);
  } catch (error) {
    const code = errorCode(error);
    if (code === "EACCES" || code === "EPERM") throw new Error(`Permission denied reading ${argPath}.`);
    throw error;
  }
  if (!stats) throw await fileNotFoundError(argPath, abs, files.names);
  if (stats.isDirectory()) {
    throw new Error(
      `${argPath} is a directory, not a file. Use search_files with target "files" (e.g. pattern "*") to list it.`,
    );
  }
  if (!stats.isFile())
    throw new Error(`${argPath} is not a regular file (device, socket or pipe); read_file reads files only.`);
  return stats;
}

async function readNumbered(
  files: FileAccess,
  abs: string,
  argPath: string,
  stats: FileInfo,
  offset: number,
  requestedLimit: number,
  ctx: ToolContext,
  decodedText?: string,
): Promise<string> {
  const budget = outputBudget(ctx.config);
  const maxChars = Math.min(
    configNumber(ctx.config, ["limits", "file_read_max_chars"], 100_000),
    budget.maxBytes,
  );
  const limit = Math.min(requestedLimit, budget.maxLines);
  // Cut long lines here, below the registry's per-line cap, so its own cut never hits a numbered line.
  const lineCap = Math.max(
    100,
    configNumber(ctx.config, ["limits", "tool_output", "max_line_length"], 2000) - LINE_OVERHEAD,
  );
  const countAll = stats.size <= COUNT_LINES_BELOW_BYTES;

  const out: string[] = [];
  let chars = 0;
  let bytes = 0;
  let lineNo = 0;
  let more = false;
  let cappedBySize = false;
  const batches =
    decodedText !== undefined
      ? bufferLineBatches(decodedText, lineCap * 4)
      : files.local
        ? readLineBatches(abs, { maxLineBytes: lineCap * 4, signal: ctx.signal })
        : bufferLineBatches(await files.readText(abs), lineCap * 4);
  scan: for await (const batch of batches) {
    for (const raw of batch) {
      lineNo++;
      if (lineNo < offset) continue;
      if (more) {
        if (countAll) continue;
        break scan;
      }
      if (out.length >= limit) {
        more = true;
        if (!countAll) break scan;
        continue;
      }
      const line = `${String(lineNo).padStart(6)}|${clipLine(raw.text, raw.cut, raw.bytes, lineCap)}`;
      const lineBytes = Buffer.byteLength(line, "utf8") + 1;
      if (out.length > 0 && (chars + line.length + 1 > maxChars || bytes + lineBytes > budget.maxBytes)) {
        more = true;
        cappedBySize = true;
        if (!countAll) break scan;
        continue;
      }
      out.push(line);
      chars += line.length + 1;
      bytes += lineBytes;
    }
  }

  if (out.length === 0) {
    if (lineNo === 0) return `(${argPath} is empty)`;
    throw new Error(`offset ${offset} is past the end of ${argPath}, which has ${lineNo} lines.`);
  }
  if (!more) return out.join("\n");
  const last = offset + out.length - 1;
  const shown = countAll
    ? `Lines ${offset}-${last} of ${lineNo}`
    : `Lines ${offset}-${last} (file is ${formatBytes(stats.size)})`;
  const why = cappedBySize ? ` (output capped at ${maxChars} characters)` : "";
  return `${out.join("\n")}\n\n[${shown}${why}. To read more, call read_file with offset=${last + 1}.]`;
}

function clipLine(text: string, cut: boolean, fullBytes: number, lineCap: number): string {
  if (!cut && text.length <= lineCap) return text;
  let end = lineCap;
  // Do not leave half of a surrogate pair at the cut.
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return `${text.slice(0, end)}… [line cut: ${formatBytes(fullBytes)} in full]`;
}

function formatBytes(n: number): string {
  if (n < 1024) return `${n} bytes`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 * 1024 * 1024) return `${(n / (1024 * 1024)).toFixed(1)} MB`;
  return `${(n / (1024 * 1024 * 1024)).toFixed(1)} GB`;
}
