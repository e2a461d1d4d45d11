/**
 * GFM tables: recognising rows and the delimiter row, and drawing a finished table with box
 * characters, columns sized by the visible width of their cells (CJK and emoji count double).
 */
import { renderInline } from "./markdown-inline.js";
import type { Style } from "./style.js";
import { displayWidth, padToWidth, wrapAnsi } from "./text-width.js";

export type Align = "left" | "right" | "center";

/** Splits a table row into cell texts: pipes inside code spans or escaped as `\|` do not split. */
export function splitRow(line: string): string[] {
  let text = line.trim();
  if (text.startsWith("|")) text = text.slice(1);
  if (text.endsWith("|") && !text.endsWith("\\|")) text = text.slice(0, -1);
  const cells: string[] = [];
  let cell = "";
  let ticks = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (ch === "\\" && text[i + 1] === "|") {
      cell += "|";
      i++;
      continue;
    }
    if (ch === "`") {
      let run = 1;
      while (text[i + run] === "`") run++;
      if (ticks === 0) ticks = run;
      else if (run === ticks) ticks = 0;
      cell += "`".repeat(run);
      i += run - 1;
      continue;
    }
    if (ch === "|" && ticks === 0) {
      cells.push(cell.trim());
      cell = "";
      continue;
    }
    cell += ch;
  }
  cells.push(cell.trim());
  return cells;
}

/** True when `line` could be a table's header or body row (it has a pipe outside code). */
export function looksLikeRow(line: string): boolean {
  return line.trim() !== "" && splitRow(line).length > 1;
}

const DELIMITER_CELL = /^:?-+:?$/;

/** The column alignments when `line` is a delimiter row (`| --- | :-: |`), else null. */
export function parseDelimiterRow(line: string): Align[] | null {
  if (!line.includes("-")) return null;
  const cells = splitRow(line);
  if (cells.length === 0 || !cells.every((c) => DELIMITER_CELL.test(c.replace(/\s+/g, "")))) return null;
  if (cells.length === 1 && !line.includes("|")) return null;
  return cells.map((c) => {
    const t = c.replace(/\s+/g, "");
    if (t.startsWith(":") && t.endsWith(":")) return "center";
    if (t.endsWith(":")) return "right";
    return "left";
  });
}

export interface TableData {
  header: string[];
  aligns: Align[];
  rows: string[][];
}

/**
 * Draws the table. Cells are rendered inline (emphasis, code) and padded by visible width. When
 * `width` is given and the table would be wider, the widest columns shrink and their cells wrap.
 */
export function renderTable(table: TableData, style: Style, width?: number): string[] {
  const columns = table.header.length;
  const normalise = (row: string[]) =>
    Array.from({ length: columns }, (_, i) => renderInline(row[i] ?? "", style));
  const header = normalise(table.header);
  const rows = table.rows.map(normalise);
  const widths = Array.from({ length: columns }, (_, i) =>
    Math.max(1, displayWidth(header[i] ?? ""), ...rows.map((r) => displayWidth(r[i] ?? ""))),
  );
  // Each column costs its width plus "│ " and " " around it; one more "│" closes the row.
  const frame = columns * 3 + 1;
  if (width !== undefined && Number.isFinite(width)) {
    const room = Math.max(columns * 3, width - frame);
    while (widths.reduce((a, b) => a + b, 0) > room) {
      const widest = widths.indexOf(Math.max(...widths));
      if ((widths[widest] ?? 0) <= 3) break;
      widths[widest] = (widths[widest] ?? 0) - 1;
    }
  }
  const line = (left: string, mid: string, right: string) =>
    style.dim(left + widths.map((w) => "─".repeat(w + 2)).join(mid) + right);
  const bar = style.dim("│");
  const drawRow = (cells: string[], bold: boolean): string[] => {
    const wrapped = cells.map((cell, i) => wrapAnsi(cell, widths[i] ?? 1));
    const height = Math.max(...wrapped.map((w) => w.length));
    const out: string[] = [];
    for (let r = 0; r < height; r++) {
      const parts = wrapped.map((w, i) => {
        const text = w[r] ?? "";
        const padded = padToWidth(text, widths[i] ?? 1, table.aligns[i] ?? "left");
        return ` ${bold ? style.bold(padded) : padded} `;
      });
      out.push(bar + parts.join(bar) + bar);
    }
    return out;
  };
  return [
    line("┌", "┬", "┐"),
    ...drawRow(header, true),
    line("├", "┼", "┤"),
    ...rows.flatMap((r) => drawRow(r, false)),
    line("└", "┴", "┘"),
  ];
}
