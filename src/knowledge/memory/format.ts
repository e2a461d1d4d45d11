/**
 * Pure rules of the memory file format, shared by the store and its tests: decoding, parsing and
 * serialising entries exactly as Python Hermes does, counting characters as Python's `len` does,
 * and rendering the system-prompt block.
 */
import { scanThreats, tooLargeToScan } from "../threats.js";
import { ENTRY_DELIMITER, type MemoryTarget } from "./types.js";

export const FILE_NAMES: Readonly<Record<MemoryTarget, string>> = { memory: "MEMORY.md", user: "USER.md" };

const SEPARATOR = "═".repeat(46);

/**
 * Python's `str.strip()` whitespace (`str.isspace`). It differs from JS `trim()`: it includes the
 * information separators U+001C–U+001F and U+0085 and excludes U+FEFF, and entries must be cut
 * at the same places in both implementations.
 */
const PY_WHITESPACE = new Set<number>([
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002,
  0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
]);

/** `s.strip()` as Python computes it. */
export function pyStrip(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && PY_WHITESPACE.has(s.charCodeAt(start))) start++;
  while (end > start && PY_WHITESPACE.has(s.charCodeAt(end - 1))) end--;
  return s.slice(start, end);
}

/** `s.rstrip()` as Python computes it. */
export function pyRstrip(s: string): string {
  let end = s.length;
  while (end > 0 && PY_WHITESPACE.has(s.charCodeAt(end - 1))) end--;
  return s.slice(0, end);
}

/** Characters as Python's `len` counts them: code points, so an emoji is 1, not 2. */
export function codePoints(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    // A high surrogate followed by a low one is a single code point.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** Newlines as Python's text mode reads them (universal newlines: `\r\n` and `\r` become `\n`). */
export function normalizeNewlines(s: string): string {
  return s.includes("\r") ? s.replace(/\r\n?/g, "\n") : s;
}

export interface DecodedFile {
  /** The text with newlines normalised and a leading BOM dropped. */
  text: string;
  /** False when the bytes are not valid UTF-8 (the text then holds replacement characters). */
  validUtf8: boolean;
}

const strictDecoder = new TextDecoder("utf-8", { fatal: true });
const lenientDecoder = new TextDecoder("utf-8");

/** Decodes a memory file the way Python's `read_text(encoding="utf-8")` sees it. */
export function decodeMemoryFile(bytes: Uint8Array): DecodedFile {
  // TextDecoder drops a leading BOM; a BOM is an editor artefact, not part of the first entry.
  try {
    return { text: normalizeNewlines(strictDecoder.decode(bytes)), validUtf8: true };
  } catch {
    return { text: normalizeNewlines(lenientDecoder.decode(bytes)), validUtf8: false };
  }
}

/**
 * Every entry of a file's text: split on the delimiter, strip, drop empties. Duplicates are kept
 * (see {@link dedupe}); this is what the round-trip check compares against.
 */
export function splitEntries(text: string): string[] {
  if (pyStrip(text) === "") return [];
  return text
    .split(ENTRY_DELIMITER)
    .map(pyStrip)
    .filter((e) => e !== "");
}

/** Keeps the first of identical entries, in order. */
export function dedupe(entries: readonly string[]): string[] {
  return [...new Set(entries)];
}

/** The entries of a file as the tool sees them (Python's `_read_file` plus `dict.fromkeys`). */
export function parseEntries(text: string): string[] {
  return dedupe(splitEntries(text));
}

/** The file text for `entries`: joined by the delimiter, no trailing newline, "" when empty. */
export function serializeEntries(entries: readonly string[]): string {
  return entries.join(ENTRY_DELIMITER);
}

/** Characters the entries take in the file (the number the limit applies to). */
export function usedChars(entries: readonly string[]): number {
  return entries.length === 0 ? 0 : codePoints(serializeEntries(entries));
}

/** Whether writing `entries` and reading the file back gives the same list. */
export function roundTrips(text: string): boolean {
  return pyStrip(text) === serializeEntries(splitEntries(text));
}

/** Whether `content` has a line holding only `§`, which would split it into several entries. */
export function hasDelimiterLine(content: string): boolean {
  return `\n${content}\n`.includes(ENTRY_DELIMITER);
}

/** `1474` → `"1,474"`, independent of the locale. */
export function thousands(n: number): string {
  return String(Math.trunc(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** Percentage used, floored and capped at 100 (0 when the limit is not positive). */
export function percentUsed(current: number, limit: number): number {
  return limit > 0 ? Math.min(100, Math.floor((current / limit) * 100)) : 0;
}

/** `"67% — 1,474/2,200 chars"`: the usage line of a success result and of the prompt header. */
export function usageLine(current: number, limit: number): string {
  return `${percentUsed(current, limit)}% — ${thousands(current)}/${thousands(limit)} chars`;
}

/** `"1,474/2,200"`: the usage of an error result. */
export function usageShort(current: number, limit: number): string {
  return `${thousands(current)}/${thousands(limit)}`;
}

/**
 * Why an entry is kept out of the prompt (injection findings by family, or too large to scan), or
 * undefined when it may be shown. The same check the memory tool makes before writing (strict
 * scope), so a line added to MEMORY.md by hand is held to what a tool write is.
 */
export function entryBlockReason(entry: string): string | undefined {
  if (tooLargeToScan(entry)) return `too large to scan (${thousands(codePoints(entry))} chars)`;
  const findings = scanThreats(entry, "strict");
  return findings.length > 0 ? findings.map((f) => f.description).join("; ") : undefined;
}

/**
 * How an entry may be shown to the model (system prompt, tool results): the entry itself, or a
 * placeholder when it carries an injection pattern or is too large to scan. The file keeps the
 * original so the user can see it and remove it.
 */
export function displayEntry(entry: string, target: MemoryTarget): string {
  const found = entryBlockReason(entry);
  if (found === undefined) return entry;
  return `[BLOCKED: ${FILE_NAMES[target]} entry removed from the prompt: ${found}. Use memory remove to delete it.]`;
}

/** `s` cut to `max` code points, with "..." when something was cut. */
export function preview(s: string, max = 80): string {
  const chars = Array.from(s);
  return chars.length > max ? `${chars.slice(0, max).join("")}...` : s;
}

/**
 * The system-prompt block for `entries` (undefined when there are none). The header counts the
 * real entries against the limit; the body shows them through {@link displayEntry}. A file grown
 * far past its limit by hand is cut to about twice the limit, keeping its head and tail.
 */
export function renderMemoryBlock(
  target: MemoryTarget,
  entries: readonly string[],
  limit: number,
): string | undefined {
  if (entries.length === 0) return undefined;
  const current = usedChars(entries);
  let body = serializeEntries(entries.map((e) => displayEntry(e, target)));
  const cap = Math.max(2 * limit, 200);
  const bodyChars = Array.from(body);
  if (bodyChars.length > cap) {
    const head = Math.floor(cap * 0.7);
    const tail = Math.floor(cap * 0.2);
    const omitted = bodyChars.length - head - tail;
    body =
      `${bodyChars.slice(0, head).join("")}\n\n` +
      `[... ${thousands(omitted)} chars cut: ${FILE_NAMES[target]} is over its budget ` +
      `(${usageShort(current, limit)}); consolidate it with memory replace/remove ...]\n\n` +
      bodyChars.slice(bodyChars.length - tail).join("");
  }
  const over = current > limit ? " ⚠ OVER BUDGET" : "";
  const title = target === "user" ? "USER PROFILE (who the user is)" : "MEMORY (your personal notes)";
  return `${SEPARATOR}\n${title} [${usageLine(current, limit)}${over}]\n${SEPARATOR}\n${body}`;
}
