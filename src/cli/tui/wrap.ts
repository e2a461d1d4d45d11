/**
 * Word wrapping for the REPL's notices (help, warnings, command replies): a line wider than the
 * terminal breaks at spaces, and its continuation rows hang under where the text starts, so a
 * wrapped `/help` description stays in its column and a warning's text stays right of its `⚠`.
 * Pure; ANSI colours survive the wrap (see `wrapAnsi`).
 */
import { displayWidth, stripAnsi, wrapAnsi } from "./text-width.js";

/**
 * Where continuation rows of `plain` start: after a two-column gap (`  /name   description`),
 * else after a leading symbol and its space (`⚠ `, `⏳ `, `  ↳ [1] `), else under the leading
 * indent. Never more than half the width, so a narrow terminal still has room for the text.
 */
export function hangingIndent(plain: string, width: number): number {
  const lead = /^\s*/.exec(plain)?.[0].length ?? 0;
  const column = /^(\s*\S.*?\s{2,})\S/.exec(plain);
  const symbol = /^(\s*(?:[^\p{L}\p{N}\s]{1,3}\s)+)/u.exec(plain);
  const half = Math.floor(width / 2);
  const at = column?.[1] ?? symbol?.[1];
  const hang = at !== undefined ? displayWidth(at) : lead;
  if (hang <= half) return hang;
  // A column too far right for this terminal: the rest goes on rows indented past the first word.
  return Math.min(column ? lead + 4 : lead, half);
}

/**
 * `lines` word-wrapped to `width` cells (each may hold ANSI colours and `\n`). Undefined or
 * too small a width leaves them as they are. A word longer than a row is broken.
 */
export function wrapLines(lines: readonly string[], width: number | undefined): string[] {
  if (width === undefined || !Number.isFinite(width) || width < 20) return [...lines];
  const out: string[] = [];
  for (const line of lines) {
    for (const row of line.split("\n")) {
      if (displayWidth(row) <= width) {
        out.push(row);
        continue;
      }
      const hang = hangingIndent(stripAnsi(row), width);
      out.push(...wrapAnsi(row, width, "", " ".repeat(hang)).map((r) => r.replace(/\s+$/, "")));
    }
  }
  return out;
}
