/**
 * Terminal column arithmetic: how many cells a string takes (`string-width`: ANSI escapes are free,
 * East Asian wide characters and emoji take two, combining marks none), plus ANSI-aware word
 * wrapping with a hanging indent, truncation and padding.
 */
import stringWidth from "string-width";

// CSI sequences (colours, cursor moves) and OSC sequences (hyperlinks, titles).
const ANSI_PATTERN = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g;
const ANSI_AT_START = /^(?:\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\))/;

/** `text` without ANSI escape sequences. */
export function stripAnsi(text: string): string {
  return text.replace(ANSI_PATTERN, "");
}

let segmenter: Intl.Segmenter | undefined;

function graphemes(text: string): Iterable<string> {
  // Pure ASCII needs no segmentation, and it is by far the common case.
  if (/^[\x20-\x7e]*$/.test(text)) return text;
  segmenter ??= new Intl.Segmenter(undefined, { granularity: "grapheme" });
  return Array.from(segmenter.segment(text), (s) => s.segment);
}

/** Cells taken by one grapheme cluster. */
export function graphemeWidth(cluster: string): number {
  return stringWidth(cluster, { countAnsiEscapeCodes: true });
}

/** Terminal cells `text` takes on one line, ignoring ANSI escapes. */
export function displayWidth(text: string): number {
  return stringWidth(text);
}

type Piece = { esc: string } | { ch: string; w: number };

function pieces(text: string): Piece[] {
  const out: Piece[] = [];
  let rest = text;
  while (rest.length > 0) {
    const esc = ANSI_AT_START.exec(rest);
    if (esc) {
      out.push({ esc: esc[0] });
      rest = rest.slice(esc[0].length);
      continue;
    }
    const next = rest.search(/\x1b/);
    const chunk = next === -1 ? rest : next === 0 ? rest.slice(0, 1) : rest.slice(0, next);
    for (const g of graphemes(chunk)) out.push({ ch: g, w: graphemeWidth(g) });
    rest = rest.slice(chunk.length);
  }
  return out;
}

const SGR = /^\x1b\[[0-9;]*m$/;
const RESET = "\x1b[0m";
// Which opening SGR codes each closing code ends (the codes picocolors emits).
const CLOSERS: Record<string, RegExp> = {
  "22": /^[12]$/,
  "23": /^3$/,
  "24": /^4$/,
  "27": /^7$/,
  "28": /^8$/,
  "29": /^9$/,
  "39": /^(3[0-8]|9[0-7])(;|$)/,
  "49": /^(4[0-8]|10[0-7])(;|$)/,
};

/**
 * Word-wraps `text` (which may hold ANSI colours) to `width` cells. The first row starts with
 * `firstPrefix`, later rows with `restPrefix` (a hanging indent); prefixes count against the width.
 * Words longer than a row are broken. Colours open at a break are closed at the row's end and
 * reopened on the next row, so every row stands alone. Returns at least one row; with a width too
 * small for the prefix plus one cell, the text is returned unwrapped.
 */
export function wrapAnsi(text: string, width: number, firstPrefix = "", restPrefix = firstPrefix): string[] {
  const firstRoom = width - displayWidth(firstPrefix);
  const restRoom = width - displayWidth(restPrefix);
  if (!Number.isFinite(width) || firstRoom < 2 || restRoom < 2 || displayWidth(text) <= firstRoom) {
    return [firstPrefix + text];
  }
  const rows: string[] = [];
  let active: string[] = [];
  let row = "";
  let rowWidth = 0;
  let room = firstRoom;
  let prefix = firstPrefix;
  const breakRow = () => {
    rows.push(prefix + row + (active.length > 0 ? RESET : ""));
    prefix = restPrefix;
    room = restRoom;
    row = active.join("");
    rowWidth = 0;
  };
  const trackEscape = (esc: string) => {
    if (!SGR.test(esc)) return;
    const code = esc.slice(2, -1);
    if (code === "" || code === "0") {
      active = [];
      return;
    }
    const closes = CLOSERS[code];
    if (closes) active = active.filter((open) => !closes.test(open.slice(2, -1)));
    else active.push(esc);
  };

  // Group pieces into words (non-space runs, escapes included) and single spaces.
  const units: Array<{ space: true } | { space: false; parts: Piece[]; w: number }> = [];
  let word: Piece[] = [];
  let wordWidth = 0;
  const endWord = () => {
    if (word.length > 0) units.push({ space: false, parts: word, w: wordWidth });
    word = [];
    wordWidth = 0;
  };
  for (const p of pieces(text)) {
    if ("ch" in p && p.ch === " ") {
      endWord();
      units.push({ space: true });
    } else {
      word.push(p);
      if ("ch" in p) wordWidth += p.w;
    }
  }
  endWord();

  let spaces = 0;
  for (const unit of units) {
    if (unit.space) {
      spaces++;
      continue;
    }
    if (rowWidth > 0 && rowWidth + spaces + unit.w > room) {
      breakRow();
      spaces = 0;
    }
    if (rowWidth > 0 || rows.length === 0) {
      row += " ".repeat(spaces);
      rowWidth += spaces;
    }
    spaces = 0;
    for (const p of unit.parts) {
      if ("esc" in p) {
        row += p.esc;
        trackEscape(p.esc);
        continue;
      }
      if (rowWidth + p.w > room && rowWidth > 0) breakRow();
      row += p.ch;
      rowWidth += p.w;
    }
  }
  if (spaces > 0) row += " ".repeat(spaces);
  rows.push(prefix + row);
  return rows;
}

/** Cuts `text` to at most `width` cells, ending with `…` when it was cut. ANSI-safe. */
export function truncateToWidth(text: string, width: number): string {
  if (displayWidth(text) <= width) return text;
  if (width <= 0) return "";
  let out = "";
  let used = 0;
  let styled = false;
  for (const p of pieces(text)) {
    if ("esc" in p) {
      out += p.esc;
      styled = true;
      continue;
    }
    if (used + p.w > width - 1) break;
    out += p.ch;
    used += p.w;
  }
  return `${out}…${styled ? RESET : ""}`;
}

/** `text` padded with spaces to `width` cells (aligned left, right or centre). */
export function padToWidth(text: string, width: number, align: "left" | "right" | "center" = "left"): string {
  const gap = Math.max(0, width - displayWidth(text));
  if (align === "right") return " ".repeat(gap) + text;
  if (align === "center") {
    const left = Math.floor(gap / 2);
    return " ".repeat(left) + text + " ".repeat(gap - left);
  }
  return text + " ".repeat(gap);
}
