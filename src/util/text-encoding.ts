/**
 * Text files that are not plain UTF-8: detection, decoding and byte-exact re-encoding of UTF-8 with a
 * BOM, UTF-16 LE/BE with a BOM, Windows-1252 and ISO-8859-1 (Latin-1). The file tools show the model
 * decoded text and write edits back in the file's own encoding, so an old Windows or legacy file is
 * neither refused as binary nor silently converted. Pure: bytes in, bytes out.
 */

export type TextEncodingName = "utf-8" | "utf-8-bom" | "utf-16le" | "utf-16be" | "windows-1252" | "latin1";

export type DecodeResult =
  | { ok: true; text: string; encoding: TextEncodingName }
  | { ok: false; reason: "binary" | "mixed"; detail: string };

/** People-facing names, for tool results and errors. */
export const ENCODING_LABELS: Record<TextEncodingName, string> = {
  "utf-8": "UTF-8",
  "utf-8-bom": "UTF-8 with BOM",
  "utf-16le": "UTF-16 LE with BOM",
  "utf-16be": "UTF-16 BE with BOM",
  "windows-1252": "Windows-1252",
  latin1: "ISO-8859-1 (Latin-1)",
};

/** Share of control characters above which decoded text is taken for binary data. */
const MAX_CONTROL_SHARE = 0.1;

// Windows-1252's 0x80–0x9F; every other byte is the Latin-1 code point. The five bytes it leaves
// undefined decode to their C1 control (as WHATWG does), so the table is a bijection and its inverse
// re-encodes byte-exact. Written out because some Node builds decode "windows-1252" as Latin-1.
const CP1252_HIGH =
  "\u20AC\u0081\u201A\u0192\u201E\u2026\u2020\u2021\u02C6\u2030\u0160\u2039\u0152\u008D\u017D\u008F" +
  "\u0090\u2018\u2019\u201C\u201D\u2022\u2013\u2014\u02DC\u2122\u0161\u203A\u0153\u009D\u017E\u0178";
const CP1252_DECODE: string[] = Array.from({ length: 256 }, (_, byte) =>
  byte >= 0x80 && byte <= 0x9f ? (CP1252_HIGH[byte - 0x80] as string) : String.fromCharCode(byte),
);
const CP1252_ENCODE = new Map<number, number>(
  CP1252_DECODE.map((ch, byte) => [ch.codePointAt(0) as number, byte] as const),
);
/** Bytes Windows-1252 leaves undefined: a file holding one of them is Latin-1 (C1 control). */
const CP1252_UNDEFINED = new Set([0x81, 0x8d, 0x8f, 0x90, 0x9d]);

/**
 * Decodes a whole file. A BOM decides UTF-8/UTF-16; otherwise valid UTF-8 is UTF-8; otherwise, when
 * the bytes hold no well-formed UTF-8 multi-byte sequence, a single-byte encoding (Windows-1252 when
 * 0x80–0x9F bytes it defines occur, else Latin-1). Refused: NUL bytes without a UTF-16 BOM (binary, or
 * UTF-16 that cannot be told apart from it), mostly control characters (binary), and UTF-8 mixed with
 * stray non-UTF-8 bytes (`mixed`: no single encoding reads it, so an edit would corrupt part of it).
 */
export function decodeText(bytes: Uint8Array): DecodeResult {
  if (startsWith(bytes, [0xef, 0xbb, 0xbf])) return strictUtf8(bytes.subarray(3), "utf-8-bom");
  if (startsWith(bytes, [0xff, 0xfe])) return utf16(bytes.subarray(2), "utf-16le");
  if (startsWith(bytes, [0xfe, 0xff])) return utf16(bytes.subarray(2), "utf-16be");
  if (bytes.includes(0)) {
    return { ok: false, reason: "binary", detail: "it contains NUL bytes and no UTF-16 byte-order mark" };
  }
  const utf8 = strictUtf8(bytes, "utf-8");
  if (utf8.ok) return utf8;
  if (hasUtf8Sequence(bytes)) {
    // Mostly bad bytes with a few accidental UTF-8 sequences is binary data, not damaged text.
    const lossy = new TextDecoder("utf-8").decode(bytes);
    let bad = 0;
    for (const ch of lossy) if (ch === "\uFFFD" || isControl(ch.charCodeAt(0))) bad++;
    if (bad / lossy.length > MAX_CONTROL_SHARE) {
      return { ok: false, reason: "binary", detail: "most of it is neither UTF-8 nor text" };
    }
    return {
      ok: false,
      reason: "mixed",
      detail:
        "it mixes UTF-8 characters with bytes that are not UTF-8, so no single encoding reads all of it",
    };
  }
  let cp1252 = false;
  for (const b of bytes) {
    if (CP1252_UNDEFINED.has(b)) {
      cp1252 = false;
      break;
    }
    if (b >= 0x80 && b <= 0x9f) cp1252 = true;
  }
  const encoding: TextEncodingName = cp1252 ? "windows-1252" : "latin1";
  const text = cp1252 ? decodeCp1252(bytes) : Buffer.from(bytes).toString("latin1");
  return checkControls(text, encoding);
}

/**
 * `text` in `encoding` (with its BOM). Throws, naming the first offending character and its line,
 * when a single-byte encoding cannot hold a character: never a silent `?`.
 */
export function encodeText(text: string, encoding: TextEncodingName): Buffer {
  switch (encoding) {
    case "utf-8":
      return Buffer.from(text, "utf8");
    case "utf-8-bom":
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text, "utf8")]);
    case "utf-16le":
      return Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, "utf16le")]);
    case "utf-16be": {
      const le = Buffer.from(text, "utf16le");
      return Buffer.concat([Buffer.from([0xfe, 0xff]), le.swap16()]);
    }
    case "latin1":
    case "windows-1252": {
      const out = Buffer.allocUnsafe(text.length);
      let n = 0;
      for (const ch of text) {
        const code = ch.codePointAt(0) as number;
        const byte = encoding === "latin1" ? (code <= 0xff ? code : undefined) : CP1252_ENCODE.get(code);
        if (byte === undefined) throw unencodable(text, ch, encoding);
        out[n++] = byte;
      }
      return out.subarray(0, n);
    }
  }
}

/** The error for a character the file's encoding has no byte for. */
export class UnencodableCharacterError extends Error {}

function unencodable(text: string, ch: string, encoding: TextEncodingName): Error {
  const index = text.indexOf(ch);
  const line = text.slice(0, index).split("\n").length;
  const code = `U+${(ch.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, "0")}`;
  return new UnencodableCharacterError(
    `the file is ${ENCODING_LABELS[encoding]} and the new text has a character that encoding cannot hold: ` +
      `"${ch}" (${code}) on line ${line}. Nothing was written. Use only characters the encoding has ` +
      "(e.g. an ASCII spelling), or convert the file to UTF-8 first (e.g. with iconv in the terminal).",
  );
}

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  return prefix.every((b, i) => bytes[i] === b);
}

function strictUtf8(bytes: Uint8Array, encoding: "utf-8" | "utf-8-bom"): DecodeResult {
  try {
    const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
    return checkControls(text, encoding);
  } catch {
    return encoding === "utf-8"
      ? { ok: false, reason: "binary", detail: "it is not valid UTF-8" }
      : {
          ok: false,
          reason: "mixed",
          detail: "it starts with a UTF-8 byte-order mark but is not valid UTF-8",
        };
  }
}

function utf16(bytes: Uint8Array, encoding: "utf-16le" | "utf-16be"): DecodeResult {
  if (bytes.length % 2 !== 0) {
    return {
      ok: false,
      reason: "binary",
      detail: `it has a UTF-16 byte-order mark but an odd number of bytes`,
    };
  }
  try {
    const text = new TextDecoder(encoding, { fatal: true, ignoreBOM: true }).decode(bytes);
    return checkControls(text, encoding);
  } catch {
    return { ok: false, reason: "binary", detail: "it has a UTF-16 byte-order mark but is not valid UTF-16" };
  }
}

function decodeCp1252(bytes: Uint8Array): string {
  let text = "";
  for (const b of bytes) text += CP1252_DECODE[b];
  return text;
}

/** True when `bytes` holds at least one well-formed UTF-8 multi-byte sequence. */
function hasUtf8Sequence(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i] as number;
    const len = b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    if (len === 0 || i + len > bytes.length) continue;
    let ok = true;
    for (let k = 1; k < len; k++) if (((bytes[i + k] as number) & 0xc0) !== 0x80) ok = false;
    if (ok) return true;
  }
  return false;
}

function checkControls(text: string, encoding: TextEncodingName): DecodeResult {
  if (text.length === 0) return { ok: true, text, encoding };
  let controls = 0;
  for (let i = 0; i < text.length; i++) if (isControl(text.charCodeAt(i))) controls++;
  if (controls / text.length > MAX_CONTROL_SHARE) {
    return { ok: false, reason: "binary", detail: "most of it is control characters, not text" };
  }
  return { ok: true, text, encoding };
}

/** C0 controls other than tab, line breaks, form feed and ESC (ANSI colour in logs), DEL and C1. */
function isControl(c: number): boolean {
  return (
    (c < 0x20 && c !== 9 && c !== 10 && c !== 11 && c !== 12 && c !== 13 && c !== 27) ||
    (c >= 0x7f && c <= 0x9f)
  );
}
