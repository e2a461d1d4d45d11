/**
 * Turns a fetched body into text in the right character set: a byte-order mark wins, then the
 * Content-Type header's charset, then a `<meta charset>` (or `http-equiv`) or XML declaration in
 * the first bytes, then UTF-8 when the bytes are valid UTF-8, else windows-1252 (what browsers
 * assume for undeclared Western pages).
 */
import { loadIconv } from "./lazy-modules.js";

const SNIFF_BYTES = 4096;

/** Labels browsers treat as windows-1252 (WHATWG Encoding): decoding them as Latin-1 loses € and quotes. */
const WINDOWS_1252_LABELS = new Set([
  "ascii",
  "us-ascii",
  "iso-8859-1",
  "iso8859-1",
  "iso_8859-1",
  "latin1",
  "l1",
  "cp1252",
  "windows-1252",
  "x-cp1252",
]);

function normalise(label: string | undefined): string | undefined {
  const clean = label
    ?.trim()
    .replace(/^["']|["']$/g, "")
    .toLowerCase();
  if (!clean) return undefined;
  if (WINDOWS_1252_LABELS.has(clean)) return "windows-1252";
  if (clean === "x-sjis" || clean === "ms_kanji" || clean === "csshiftjis") return "shift_jis";
  if (clean === "utf8" || clean === "unicode-1-1-utf-8") return "utf-8";
  return clean;
}

/** The charset parameter of a Content-Type value. */
export function charsetFromContentType(contentType: string | null | undefined): string | undefined {
  const match = /;\s*charset\s*=\s*("[^"]*"|[^;,\s]+)/i.exec(contentType ?? "");
  return normalise(match?.[1]);
}

function charsetFromBom(body: Buffer): string | undefined {
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return "utf-8";
  if (body[0] === 0xff && body[1] === 0xfe) return "utf-16le";
  if (body[0] === 0xfe && body[1] === 0xff) return "utf-16be";
  return undefined;
}

/** A charset declared inside the document's first bytes (meta tag or XML declaration). */
function charsetFromMarkup(body: Buffer): string | undefined {
  const head = body.subarray(0, SNIFF_BYTES).toString("latin1");
  const meta =
    /<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)/i.exec(head) ??
    /<\?xml[^>]+encoding\s*=\s*["']([\w.:-]+)["']/i.exec(head);
  return normalise(meta?.[1]);
}

function isValidUtf8(body: Buffer): boolean {
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(body);
    return true;
  } catch {
    return false;
  }
}

/** The character set a body is in (see the module comment for the order of evidence). */
export function detectCharset(body: Buffer, contentType?: string | null, markup = true): string {
  const declared =
    charsetFromBom(body) ??
    charsetFromContentType(contentType) ??
    (markup ? charsetFromMarkup(body) : undefined);
  if (declared && (declared === "utf-8" || loadIconv().encodingExists(declared))) return declared;
  return isValidUtf8(body) ? "utf-8" : "windows-1252";
}

/** The body decoded as text, without a byte-order mark. */
export function decodeText(body: Buffer, contentType?: string | null, markup = true): string {
  const charset = detectCharset(body, contentType, markup);
  if (charset === "utf-8") return body.toString("utf8").replace(/^\uFEFF/, "");
  return loadIconv().decode(body, charset, { stripBOM: true });
}
