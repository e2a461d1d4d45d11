/**
 * Plain-text tables for terminal output: columns padded by display width (wide CJK and emoji
 * count two cells), cells cut with "…" to a column's maximum, one flexible column shrunk to fit a
 * terminal width. Colour is applied after padding, so escape codes never skew the layout.
 */
import { displayWidth, truncateToWidth } from "../tui/text-width.js";

export interface Column {
  header: string;
  align?: "left" | "right";
  /** Cells longer than this are cut with "…". */
  max?: number;
  /** This column gives up width first when the table is wider than `width`. */
  flex?: boolean;
  /** Styles a cell's padded text (colour); never changes its width. */
  paint?: (text: string) => string;
}

export interface TableOptions {
  /** Total width to fit (a terminal's columns); no limit when absent. */
  width?: number;
  /** Styles the header row's padded text. */
  paintHeader?: (text: string) => string;
  /** Characters between columns (default 2). */
  gap?: number;
}

/** The table as lines (header first), without trailing spaces; empty rows still print the header. */
export function renderTable(
  columns: readonly Column[],
  rows: readonly string[][],
  options: TableOptions = {},
): string[] {
  const gap = options.gap ?? 2;
  const cells = rows.map((row) => columns.map((_col, i) => oneLine(row[i] ?? "")));
  const widths = columns.map((col, i) => {
    const natural = Math.max(displayWidth(col.header), ...cells.map((row) => displayWidth(row[i] ?? "")));
    return col.max !== undefined ? Math.min(natural, Math.max(col.max, displayWidth(col.header))) : natural;
  });
  if (options.width !== undefined) {
    const total = widths.reduce((a, b) => a + b, 0) + gap * (columns.length - 1);
    const flex = columns.findIndex((c) => c.flex);
    if (flex >= 0 && total > options.width) {
      const floor = Math.min(widths[flex] ?? 0, Math.max(displayWidth(columns[flex]?.header ?? ""), 10));
      widths[flex] = Math.max(floor, (widths[flex] ?? 0) - (total - options.width));
    }
  }
  const line = (values: readonly string[], paints: ReadonlyArray<((s: string) => string) | undefined>) =>
    values
      .map((value, i) => {
        const width = widths[i] ?? 0;
        const text = padCell(value, width, columns[i]?.align ?? "left", i === values.length - 1);
        const paint = paints[i];
        return paint ? paint(text) : text;
      })
      .join(" ".repeat(gap))
      .replace(/\s+$/, "");
  const header = line(
    columns.map((c) => c.header),
    columns.map(() => options.paintHeader),
  );
  return [
    header,
    ...cells.map((row) =>
      line(
        row,
        columns.map((c) => c.paint),
      ),
    ),
  ];
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

function padCell(text: string, width: number, align: "left" | "right", last: boolean): string {
  const cut = truncateToWidth(text, width);
  const room = width - displayWidth(cut);
  if (room <= 0) return cut;
  if (align === "right") return " ".repeat(room) + cut;
  return last ? cut : cut + " ".repeat(room);
}
