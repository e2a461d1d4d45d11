/**
 * Cuts tool output to fit the model's budget: a byte cap, a line cap and a per-line cap. Lines are
 * never split except when a single line exceeds the per-line cap; the result ends with a note that
 * says what was cut, so the model knows the output is partial.
 */

export interface TruncateLimits {
  maxBytes: number;
  maxLines: number;
  maxLineLength: number;
}

export interface TruncateResult {
  text: string;
  truncated: boolean;
  /** Lines dropped entirely (after the line and byte caps). */
  droppedLines: number;
  /** Lines shortened by the per-line cap. */
  shortenedLines: number;
}

export const DEFAULT_TRUNCATE_LIMITS: TruncateLimits = {
  maxBytes: 50_000,
  maxLines: 2000,
  maxLineLength: 2000,
};

export function truncateOutput(
  text: string,
  limits: TruncateLimits = DEFAULT_TRUNCATE_LIMITS,
): TruncateResult {
  if (
    text.length <= limits.maxLineLength &&
    Buffer.byteLength(text, "utf8") <= limits.maxBytes &&
    !text.includes("\n")
  ) {
    return { text, truncated: false, droppedLines: 0, shortenedLines: 0 };
  }
  const lines = text.split("\n");
  const kept: string[] = [];
  let bytes = 0;
  let shortenedLines = 0;
  for (const raw of lines) {
    if (kept.length >= limits.maxLines) break;
    let line = raw;
    if (line.length > limits.maxLineLength) {
      line = `${line.slice(0, limits.maxLineLength)}… [line cut: ${raw.length - limits.maxLineLength} more chars]`;
      shortenedLines++;
    }
    const lineBytes = Buffer.byteLength(line, "utf8") + 1;
    if (bytes + lineBytes > limits.maxBytes) {
      if (kept.length === 0) {
        // A single oversized first line: keep a prefix that fits rather than nothing.
        kept.push(sliceToBytes(line, limits.maxBytes));
      }
      break;
    }
    kept.push(line);
    bytes += lineBytes;
  }
  const droppedLines = lines.length - kept.length;
  if (droppedLines === 0 && shortenedLines === 0) {
    return { text, truncated: false, droppedLines: 0, shortenedLines: 0 };
  }
  const notes: string[] = [];
  if (droppedLines > 0) notes.push(`${droppedLines} of ${lines.length} lines omitted`);
  if (shortenedLines > 0) notes.push(`${shortenedLines} long lines shortened`);
  const note = `\n[output truncated: ${notes.join("; ")}. Narrow the request (offset/limit, a filter, or head/tail) to see the rest.]`;
  return { text: kept.join("\n") + note, truncated: true, droppedLines, shortenedLines };
}

/** Longest prefix of `text` whose UTF-8 encoding fits in `maxBytes`, never splitting a character. */
export function sliceToBytes(text: string, maxBytes: number): string {
  const buf = Buffer.from(text, "utf8");
  if (buf.length <= maxBytes) return text;
  let end = maxBytes;
  // Step back over UTF-8 continuation bytes (10xxxxxx) so we cut on a character boundary.
  while (end > 0 && ((buf[end] ?? 0) & 0xc0) === 0x80) end--;
  return buf.subarray(0, end).toString("utf8");
}

/** Cuts to a character budget keeping the head and the tail, with a marker in between. */
export function truncateMiddle(
  text: string,
  maxChars: number,
  marker = "\n…[{n} characters omitted]…\n",
): string {
  if (text.length <= maxChars) return text;
  const head = Math.ceil(maxChars * 0.7);
  const tail = maxChars - head;
  const omitted = text.length - head - tail;
  return text.slice(0, head) + marker.replace("{n}", String(omitted)) + text.slice(text.length - tail);
}
