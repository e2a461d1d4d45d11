/**
 * Shared handling of text files that go into the system prompt verbatim (project context files,
 * SOUL.md): reading them safely, capping them with a head/tail cut, and blocking them when they
 * look like prompt injection. Pure apart from `readPromptFile`.
 */

import { MAX_SCAN_CHARS, scanThreats, type ThreatFinding } from "../../knowledge/threats.js";
import { StampedFileCache } from "../../util/stamped-cache.js";

/** Default cap for one context file, in characters (`limits.context_file_max_chars` overrides it). */
export const DEFAULT_CONTEXT_MAX_CHARS = 20_000;
/** Share of the cap kept from the start and from the end of a file that is too long. */
export const HEAD_RATIO = 0.7;
export const TAIL_RATIO = 0.2;
/** Files larger than this are not read at all: nobody writes 16 MiB of instructions. */
const MAX_FILE_BYTES = 16 * 1024 * 1024;
/** How far into a file to look for NUL bytes when deciding it is binary. */
const BINARY_SNIFF_BYTES = 8192;

export type ReadOutcome =
  | { ok: true; text: string }
  | { ok: false; reason: "missing" | "empty" | "binary" | "too_large" | "unreadable"; detail?: string };

/**
 * A prompt file's text without a UTF-8 BOM and surrounding blank space. Refuses what is not a
 * readable UTF-8 text file (missing, a directory, binary, invalid UTF-8, over 16 MiB, no permission):
 * the caller skips those and moves on to its next candidate.
 */
export function readPromptFile(path: string): ReadOutcome {
  try {
    // Every session start asks for the same files: each is decoded again only when it changed
    // (a missing candidate, the usual case, costs one stat that does not throw).
    return promptFiles.read(path) ?? { ok: false, reason: "missing" };
  } catch (error) {
    return {
      ok: false,
      reason: "unreadable",
      detail: (error as NodeJS.ErrnoException).code ?? String(error),
    };
  }
}

const promptFiles = new StampedFileCache<ReadOutcome>(decodePromptFile, {
  max: 64,
  precheck: (stat) => {
    if (!stat.isFile()) return { ok: false, reason: "missing" };
    if (stat.size > MAX_FILE_BYTES) return { ok: false, reason: "too_large", detail: `${stat.size} bytes` };
    return undefined;
  },
});

function decodePromptFile(buffer: Buffer): ReadOutcome {
  if (buffer.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return { ok: false, reason: "binary" };
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(buffer);
  } catch {
    return { ok: false, reason: "binary", detail: "not valid UTF-8" };
  }
  text = text.replace(/\r\n?/g, "\n").trim();
  return text ? { ok: true, text } : { ok: false, reason: "empty" };
}

/** The effective cap: a positive configured value, else the default. */
export function contextMaxChars(configured: number | null | undefined): number {
  return typeof configured === "number" && Number.isFinite(configured) && configured > 0
    ? Math.floor(configured)
    : DEFAULT_CONTEXT_MAX_CHARS;
}

export interface CapResult {
  text: string;
  truncated: boolean;
  /** Characters removed from the middle (0 when not truncated). */
  cut: number;
}

/**
 * Keeps text of at most `maxChars` characters as it is. Longer text keeps about 70% of the cap from
 * the start and 20% from the end, each snapped to whole lines when a line break is near, with one
 * marker line between them that says how much was cut and where the full text is (`where`, a path), so
 * the model can read the rest with `read_file`.
 */
export function capText(text: string, maxChars: number, label: string, where: string): CapResult {
  if (text.length <= maxChars) return { text, truncated: false, cut: 0 };
  const headLimit = Math.floor(maxChars * HEAD_RATIO);
  const tailLimit = Math.floor(maxChars * TAIL_RATIO);
  let headEnd = headLimit;
  const lastBreak = text.lastIndexOf("\n", headLimit);
  if (lastBreak > headLimit / 2) headEnd = lastBreak;
  headEnd = safeBoundary(text, headEnd);
  let tailStart = text.length - tailLimit;
  const nextBreak = text.indexOf("\n", tailStart);
  if (nextBreak !== -1 && nextBreak + 1 < text.length && nextBreak - tailStart < tailLimit / 2) {
    tailStart = nextBreak + 1;
  }
  tailStart = safeBoundary(text, tailStart);
  const head = text.slice(0, headEnd).trimEnd();
  const tail = text.slice(tailStart).trimStart();
  const cut = text.length - head.length - tail.length;
  const marker =
    `[... ${cut} of ${text.length} characters cut from the middle of ${label}. ` +
    `The full text is in ${where}: read it with read_file when you need the rest ...]`;
  return { text: `${head}\n\n${marker}\n\n${tail}`, truncated: true, cut };
}

/** Moves an index off the second half of a surrogate pair so a cut never splits a character. */
function safeBoundary(text: string, index: number): number {
  const code = text.charCodeAt(index);
  return code >= 0xdc00 && code <= 0xdfff && index > 0 ? index - 1 : index;
}

/**
 * Every injection finding in `text` (context scope), scanning all of it: the scanner reads 64 KiB at
 * a time, so longer text is scanned in overlapping windows. Findings are unique by id.
 */
export function scanContext(text: string): ThreatFinding[] {
  // Pure, and every session of a server scans the same context files again (~2.5 ms per 20 KB).
  const known = scanned.get(text);
  if (known) return [...known];
  const findings = scanAll(text);
  scanned.set(text, findings);
  if (scanned.size > 32) {
    const oldest = scanned.keys().next().value;
    if (oldest !== undefined) scanned.delete(oldest);
  }
  return [...findings];
}

const scanned = new Map<string, ThreatFinding[]>();

function scanAll(text: string): ThreatFinding[] {
  const step = MAX_SCAN_CHARS - 4096;
  const found = new Map<string, ThreatFinding>();
  for (let start = 0; start < text.length; start += step) {
    for (const finding of scanThreats(text.slice(start, start + MAX_SCAN_CHARS), "context")) {
      if (!found.has(finding.id)) found.set(finding.id, finding);
    }
    if (start + MAX_SCAN_CHARS >= text.length) break;
  }
  return [...found.values()];
}

/** The line that stands in for a blocked file. */
export function blockedNotice(label: string, findings: readonly ThreatFinding[]): string {
  const what = findings.map((f) => f.description).join("; ");
  return (
    `[BLOCKED: ${label} was not loaded: it looks like prompt injection (${what}). ` +
    "Read it with read_file if you need it.]"
  );
}

/** Drops a leading YAML frontmatter block (`---` … `---`); text without one comes back unchanged. */
export function stripFrontmatter(text: string): string {
  const match = /^---\n(?:[\s\S]*?\n)?---[ \t]*(?:\n|$)/.exec(text);
  return match ? text.slice(match[0].length).trim() : text;
}
