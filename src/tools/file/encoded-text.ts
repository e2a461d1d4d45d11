/**
 * The file tools' view of a text file's encoding: read a file whole as decoded text together with the
 * encoding it was in, and encode edited text back into that encoding (BOM included), so a Latin-1,
 * Windows-1252 or UTF-16 file is edited in place instead of being refused or converted to UTF-8.
 */
import { open } from "node:fs/promises";
import { extname } from "node:path";
import { hasBinaryExtension } from "../../util/binary-file.js";
import { decodeText, ENCODING_LABELS, encodeText, type TextEncodingName } from "../../util/text-encoding.js";
import type { FileAccess } from "./file-access.js";

/** Non-UTF-8 files larger than this are not decoded whole (UTF-8 ones are streamed by read_file). */
export const MAX_DECODE_BYTES = 32 * 1024 * 1024;

export interface EncodedText {
  text: string;
  encoding: TextEncodingName;
}

/** Why `argPath` cannot be read as text, as an error the model can act on. */
export function binaryFileError(argPath: string, abs: string, tool: string, detail?: string): Error {
  const ext = extname(abs).toLowerCase();
  const kind = ext ? `a binary file (${ext})` : "a binary file";
  const why = detail ? `: ${detail}` : "";
  const verb = tool === "read_file" ? "reads" : "edits";
  return new Error(
    `${argPath} is ${kind}; ${tool} only ${verb} text (UTF-8, UTF-16 with a byte-order mark, Latin-1, ` +
      `Windows-1252)${why}. Inspect it with a terminal command (e.g. \`file\`, \`xxd | head\`), or use an ` +
      "image or document tool if one is available.",
  );
}

/**
 * The whole of `abs` decoded. Throws the binary-file error for a known binary extension, NUL bytes
 * without a UTF-16 BOM, control-character soup, or UTF-8 mixed with stray other bytes.
 */
export async function readEncoded(
  files: FileAccess,
  abs: string,
  argPath: string,
  tool: string,
): Promise<EncodedText> {
  if (hasBinaryExtension(abs)) throw binaryFileError(argPath, abs, tool);
  const decoded = decodeText(await files.readBytes(abs));
  if (!decoded.ok) {
    if (decoded.reason === "mixed") {
      throw new Error(
        `${argPath} cannot be edited safely: ${decoded.detail}. Fix its encoding first (e.g. with iconv ` +
          "in the terminal), or edit it with a terminal command.",
      );
    }
    throw binaryFileError(argPath, abs, tool, decoded.detail);
  }
  return { text: decoded.text, encoding: decoded.encoding };
}

/**
 * `text` ready to write in `encoding`: the string itself for UTF-8, bytes otherwise. Throws
 * "Cannot write PATH: ..." when the encoding cannot hold a character of it.
 */
export function encodeFor(text: string, encoding: TextEncodingName, argPath: string): string | Buffer {
  if (encoding === "utf-8") return text;
  try {
    return encodeText(text, encoding);
  } catch (error) {
    throw new Error(`Cannot write ${argPath}: ${(error as Error).message}`);
  }
}

/** A note for the model when a file is not plain UTF-8; empty for UTF-8. */
export function encodingNote(encoding: TextEncodingName): string {
  if (encoding === "utf-8") return "";
  return `[${ENCODING_LABELS[encoding]} file, shown decoded; patch and write_file keep this encoding.]`;
}

/**
 * The encoding an overwrite of `abs` should keep: the existing file's when it is a text file in one
 * the tools know, else UTF-8 (a new file, a binary one being replaced, or one too large to decode).
 */
export async function existingEncoding(
  files: FileAccess,
  abs: string,
  size: number | undefined,
): Promise<TextEncodingName> {
  if (size === undefined || size === 0 || size > MAX_DECODE_BYTES || hasBinaryExtension(abs)) return "utf-8";
  const decoded = decodeText(await files.readBytes(abs));
  return decoded.ok ? decoded.encoding : "utf-8";
}

/** Below this size read_file decodes the whole file to check its encoding; above it, it sniffs. */
const CHECK_WHOLE_BELOW_BYTES = 8 * 1024 * 1024;

/**
 * How read_file should show `abs`: `decoded` holds the text when it is not plain UTF-8 (undefined:
 * stream it as UTF-8 lines), `note` what to tell the model first. Throws the binary-file error for
 * what is not text. A file that mixes UTF-8 with stray bytes is still shown (as before, with U+FFFD
 * for the bad bytes) with a note that edits to it are refused.
 */
export async function textForRead(
  files: FileAccess,
  abs: string,
  argPath: string,
  size: number,
): Promise<{ decoded?: EncodedText; note: string }> {
  if (hasBinaryExtension(abs)) throw binaryFileError(argPath, abs, "read_file");
  // Small files are checked whole, so one Latin-1 byte deep in a mostly-ASCII file is not shown as
  // U+FFFD; large UTF-8 files keep the streamed path unless their start already says otherwise.
  if (size > CHECK_WHOLE_BELOW_BYTES && !(await files.isBinary(abs)) && !(await startsWithBom(files, abs))) {
    return { note: "" };
  }
  if (size > MAX_DECODE_BYTES) {
    throw binaryFileError(argPath, abs, "read_file", "too large to check for another text encoding");
  }
  const decoded = decodeText(await files.readBytes(abs));
  if (decoded.ok) {
    return decoded.encoding === "utf-8"
      ? { note: "" }
      : { decoded: { text: decoded.text, encoding: decoded.encoding }, note: encodingNote(decoded.encoding) };
  }
  if (decoded.reason === "binary") throw binaryFileError(argPath, abs, "read_file", decoded.detail);
  return {
    note: `[Not one encoding: ${decoded.detail}; those bytes show as \uFFFD. patch and write_file refuse to edit it until its encoding is fixed.]`,
  };
}

async function startsWithBom(files: FileAccess, abs: string): Promise<boolean> {
  const head = files.local
    ? await readHead(abs, 3)
    : (await files.env.files.read(abs, { maxBytes: 3 })).subarray(0, 3);
  return (
    (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) ||
    (head[0] === 0xff && head[1] === 0xfe) ||
    (head[0] === 0xfe && head[1] === 0xff)
  );
}

async function readHead(abs: string, n: number): Promise<Buffer> {
  const handle = await open(abs, "r");
  try {
    const buf = Buffer.alloc(n);
    const { bytesRead } = await handle.read(buf, 0, n, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}
