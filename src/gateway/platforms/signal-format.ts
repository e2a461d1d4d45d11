/**
 * Markdown to Signal's native formatting. Signal shows no markdown; it styles ranges of plain text
 * (`bodyRanges`), which signal-cli takes as `textStyle` strings `start:length:STYLE` with positions
 * in UTF-16 code units (JavaScript string indices, so no conversion is needed). The styles Signal
 * renders are BOLD, ITALIC, STRIKETHROUGH, MONOSPACE and SPOILER.
 *
 * Pure: no I/O. Headings become bold lines, list markers become bullets, links become
 * `label (url)`, fenced code becomes a monospace block; anything else stays as written.
 */

export type SignalStyle = "BOLD" | "ITALIC" | "STRIKETHROUGH" | "MONOSPACE" | "SPOILER";

export interface StyleRange {
  start: number;
  length: number;
  style: SignalStyle;
}

export interface SignalText {
  text: string;
  styles: StyleRange[];
}

/** `start:length:STYLE`, as signal-cli's `textStyle` parameter takes it. */
export const styleString = (r: StyleRange): string => `${r.start}:${r.length}:${r.style}`;

// One alternative per inline construct; the earliest match wins, then the longest marker.
const INLINE =
  /`([^`\n]+)`|\*\*(?=\S)([\s\S]+?)\*\*|__(?=\S)([\s\S]+?)__|~~(?=\S)([\s\S]+?)~~|\|\|(?=\S)([\s\S]+?)\|\||(?<![\w*])\*(?=[^\s*])([^*\n]+?)\*(?![\w*])|(?<![\w_])_(?=[^\s_])([^_\n]+?)_(?![\w_])|\[([^\]\n]+)\]\(([^)\s]+)\)/;

const GROUP_STYLE: ReadonlyArray<[number, SignalStyle]> = [
  [2, "BOLD"],
  [3, "BOLD"],
  [4, "STRIKETHROUGH"],
  [5, "SPOILER"],
  [6, "ITALIC"],
  [7, "ITALIC"],
];

/** Renders inline markdown of one piece of text (no newlines inside code spans). */
function renderInline(src: string): SignalText {
  let text = "";
  const styles: StyleRange[] = [];
  let last = 0;
  // A regex of its own per call: the recursion below would otherwise move a shared lastIndex.
  const inline = new RegExp(INLINE.source, "g");
  for (let m = inline.exec(src); m; m = inline.exec(src)) {
    text += src.slice(last, m.index);
    last = m.index + m[0].length;
    const at = text.length;
    if (m[1] !== undefined) {
      // Code spans are literal: nothing inside is parsed.
      text += m[1];
      styles.push({ start: at, length: m[1].length, style: "MONOSPACE" });
      continue;
    }
    if (m[8] !== undefined && m[9] !== undefined) {
      const label = renderInline(m[8]);
      text += label.text;
      for (const s of label.styles) styles.push({ ...s, start: s.start + at });
      if (label.text !== m[9]) text += ` (${m[9]})`;
      continue;
    }
    for (const [group, style] of GROUP_STYLE) {
      const inner = m[group];
      if (inner === undefined) continue;
      // Nested styles (bold italic, a link inside bold) are rendered inside out.
      const rendered = renderInline(inner);
      text += rendered.text;
      styles.push({ start: at, length: rendered.text.length, style });
      for (const s of rendered.styles) styles.push({ ...s, start: s.start + at });
      break;
    }
  }
  text += src.slice(last);
  return { text, styles };
}

const FENCE = /^\s{0,3}(```|~~~)/;

/** Converts the agent's markdown into Signal text with style ranges. */
export function markdownToSignal(markdown: string): SignalText {
  const lines = markdown
    .replace(/\r\n?/g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim()
    .split("\n");
  let text = "";
  const styles: StyleRange[] = [];
  const newline = () => {
    if (text.length > 0) text += "\n";
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    const fence = FENCE.exec(line);
    if (fence) {
      const marker = fence[1] ?? "```";
      const body: string[] = [];
      let j = i + 1;
      while (j < lines.length && !(lines[j] ?? "").trim().startsWith(marker)) body.push(lines[j++] ?? "");
      i = j; // past the closing fence (or the end, for an unclosed block)
      const block = body.join("\n");
      newline();
      if (block.length > 0) {
        styles.push({ start: text.length, length: block.length, style: "MONOSPACE" });
        text += block;
      }
      continue;
    }
    newline();
    const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const rendered = renderInline(heading[1] ?? "");
      const at = text.length;
      text += rendered.text;
      if (rendered.text.length > 0) styles.push({ start: at, length: rendered.text.length, style: "BOLD" });
      for (const s of rendered.styles) styles.push({ ...s, start: s.start + at });
      continue;
    }
    // Signal shows "- item" literally; a bullet reads as a list. Rules (---) become a line.
    if (/^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) {
      text += "──────────";
      continue;
    }
    const bullet = /^(\s*)[-*+]\s+(.*)$/.exec(line);
    const quote = /^\s{0,3}>\s?(.*)$/.exec(line);
    const prefix = bullet ? `${bullet[1] ?? ""}• ` : quote ? "▎" : "";
    const rendered = renderInline(bullet ? (bullet[2] ?? "") : quote ? (quote[1] ?? "") : line);
    const at = text.length + prefix.length;
    text += prefix + rendered.text;
    for (const s of rendered.styles) styles.push({ ...s, start: s.start + at });
  }
  return { text, styles: styles.filter((s) => s.length > 0).sort((a, b) => a.start - b.start) };
}

/** Whether the code unit at `i` is the second half of a surrogate pair (never cut there). */
const isLowSurrogate = (text: string, i: number): boolean => {
  const c = text.charCodeAt(i);
  return c >= 0xdc00 && c <= 0xdfff;
};

/**
 * Cuts converted text into pieces of at most `max` UTF-16 units, at a line break or a space when
 * one is in the second half of the window, never inside a surrogate pair, with each piece's style
 * ranges moved to its own offsets (a range crossing a cut is split between the two pieces).
 */
export function splitSignalText(input: SignalText, max: number): SignalText[] {
  const limit = Math.max(16, Math.floor(max));
  if (input.text.length <= limit) return [input];
  const pieces: SignalText[] = [];
  let start = 0;
  while (start < input.text.length) {
    let end = Math.min(input.text.length, start + limit);
    if (end < input.text.length) {
      const window = input.text.slice(start, end);
      const cut = Math.max(window.lastIndexOf("\n"), window.lastIndexOf(" "));
      if (cut >= limit / 2) end = start + cut + 1;
      while (end > start + 1 && isLowSurrogate(input.text, end)) end--;
    }
    const styles: StyleRange[] = [];
    for (const s of input.styles) {
      const from = Math.max(s.start, start);
      const to = Math.min(s.start + s.length, end);
      if (from < to) styles.push({ start: from - start, length: to - from, style: s.style });
    }
    const raw = input.text.slice(start, end);
    const trimmed = raw.replace(/\s+$/, "");
    pieces.push({
      text: trimmed,
      styles: styles
        .map((s) => ({ ...s, length: Math.min(s.length, trimmed.length - s.start) }))
        .filter((s) => s.length > 0),
    });
    start = end;
  }
  return pieces.filter((p) => p.text.trim().length > 0);
}
