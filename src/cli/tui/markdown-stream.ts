/**
 * Streaming terminal markdown. Fed the model's text deltas, it returns rendered lines as soon as each
 * source line is complete, so the REPL can print whole lines above a live prompt; `flush()` renders
 * the rest when the answer ends. Output is the same however the text was split into deltas.
 *
 * Block syntax is recognised line by line: headings, rules, block quotes, bullet/numbered/task
 * lists (nesting by indentation), fenced code (verbatim, with a gutter and language label) and GFM
 * tables (rows are held until the table ends, then drawn with aligned columns). A line that could
 * be a table header is held back one line until the next line shows whether it is. Inline markup is
 * rendered per line, so emphasis spanning two lines stays literal; a `---` or `===` under a
 * paragraph is drawn as a rule (it already printed, so it cannot become a heading after the fact).
 *
 * Modes: `ansi` colours; `plain` drops the markup without colour (code fences kept verbatim, so code
 * stays copyable); `raw` passes lines through untouched (stdout is not a terminal).
 */
import { renderInline } from "./markdown-inline.js";
import { looksLikeRow, parseDelimiterRow, renderTable, splitRow, type TableData } from "./markdown-table.js";
import { createStyle, type Style } from "./style.js";
import { wrapAnsi } from "./text-width.js";

export type MarkdownMode = "ansi" | "plain" | "raw";

export interface MarkdownStreamOptions {
  mode: MarkdownMode;
  /** Terminal columns to word-wrap to; undefined leaves wrapping to the terminal. */
  width?: number;
}

interface Fence {
  marker: string;
  length: number;
  indent: number;
}

const FENCE_OPEN = /^( *)(`{3,}|~{3,})[ \t]*([^\s`]*)[^`]*$/;
const FENCE_TILDE_OPEN = /^( *)(~{3,})[ \t]*(\S*).*$/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const RULE = /^ {0,3}(?:([-*_])[ \t]*(?:\1[ \t]*){2,}|={3,}[ \t]*)$/;
const QUOTE = /^ {0,3}>/;
const LIST_ITEM = /^( *)([-*+]|\d{1,9}[.)])(?:[ \t]+(.*))?$/;
const TASK = /^\[([ xX])\][ \t]+/;
const BULLETS = ["•", "◦", "▪"];
const RULE_WIDTH = 40;

export class MarkdownStream {
  /** Wrap width; may change between lines (terminal resize). */
  width: number | undefined;
  private readonly mode: MarkdownMode;
  private readonly style: Style;
  private partial = "";
  private fence: Fence | null = null;
  private heldRow: string | null = null;
  private table: TableData | null = null;
  private listIndents: number[] = [];
  private lastBlank = true;

  constructor(options: MarkdownStreamOptions) {
    this.mode = options.mode;
    this.width = options.width;
    this.style = createStyle(options.mode === "ansi");
  }

  /** Adds a delta; returns the rendered lines it completed (without newlines), often none. */
  push(delta: string): string[] {
    this.partial += delta;
    const out: string[] = [];
    let nl = this.partial.indexOf("\n");
    while (nl !== -1) {
      const line = this.partial.slice(0, nl).replace(/\r$/, "");
      this.partial = this.partial.slice(nl + 1);
      this.line(line, out);
      nl = this.partial.indexOf("\n");
    }
    return out;
  }

  /** Renders what is left (an unfinished line, a held table) and resets for the next answer. */
  flush(): string[] {
    const out: string[] = [];
    if (this.partial !== "") {
      const rest = this.partial.replace(/\r$/, "");
      this.partial = "";
      this.line(rest, out);
    }
    this.closeBlocks(out);
    if (this.fence && this.mode === "ansi") out.push(this.fenceEdge("╰─", this.fence.indent));
    this.fence = null;
    this.listIndents = [];
    this.lastBlank = true;
    return out;
  }

  /** True while nothing is buffered: no unfinished line, held row, table or open fence. */
  get idle(): boolean {
    return this.partial === "" && this.heldRow === null && this.table === null && this.fence === null;
  }

  private line(line: string, out: string[]): void {
    if (this.mode === "raw") {
      out.push(line);
      return;
    }
    if (this.fence) {
      this.codeLine(line, out);
      return;
    }
    if (this.heldRow !== null) {
      const header = this.heldRow;
      this.heldRow = null;
      const aligns = parseDelimiterRow(line);
      const cells = splitRow(header);
      if (aligns && aligns.length === cells.length) {
        this.table = { header: cells, aligns, rows: [] };
        return;
      }
      this.block(header, out);
    }
    if (this.table) {
      if (looksLikeRow(line)) {
        this.table.rows.push(splitRow(line));
        return;
      }
      this.closeBlocks(out);
    }
    if (looksLikeRow(line) && !this.openFence(line)) {
      this.heldRow = line;
      return;
    }
    this.block(line, out);
  }

  private closeBlocks(out: string[]): void {
    if (this.heldRow !== null) {
      const held = this.heldRow;
      this.heldRow = null;
      this.block(held, out);
    }
    if (this.table) {
      const table = this.table;
      this.table = null;
      this.emit(out, renderTable(table, this.style, this.width));
    }
  }

  private openFence(line: string): Fence | null {
    const m = FENCE_OPEN.exec(line) ?? FENCE_TILDE_OPEN.exec(line);
    if (!m) return null;
    const marker = m[2] as string;
    return { marker: marker[0] as string, length: marker.length, indent: (m[1] as string).length };
  }

  private codeLine(line: string, out: string[]): void {
    const fence = this.fence as Fence;
    const close = new RegExp(`^ *\\${fence.marker}{${fence.length},}[ \\t]*$`);
    if (close.test(line)) {
      this.fence = null;
      out.push(this.mode === "ansi" ? this.fenceEdge("╰─", fence.indent) : line);
      this.lastBlank = false;
      return;
    }
    let code = line;
    let strip = fence.indent;
    while (strip > 0 && code.startsWith(" ")) {
      code = code.slice(1);
      strip--;
    }
    if (this.mode !== "ansi") {
      out.push(line);
      return;
    }
    const pad = " ".repeat(fence.indent);
    out.push(`${pad}${this.style.dim("│")} ${this.style.cyan(code.replace(/\t/g, "    "))}`);
  }

  private fenceEdge(edge: string, indent: number, label = ""): string {
    return " ".repeat(indent) + this.style.dim(label ? `${edge} ${label}` : edge);
  }

  /** One line outside code and tables. */
  private block(line: string, out: string[]): void {
    const s = this.style;
    if (line.trim() === "") {
      if (!this.lastBlank) out.push("");
      this.lastBlank = true;
      return;
    }
    this.lastBlank = false;
    const indent = line.length - line.trimStart().length;

    const fence = this.openFence(line);
    if (fence) {
      this.fence = fence;
      if (indent === 0) this.listIndents = [];
      const lang = line.trim().slice(fence.length).trim().split(/\s+/)[0] ?? "";
      out.push(this.mode === "ansi" ? this.fenceEdge("╭─", fence.indent, lang) : line);
      return;
    }

    const heading = HEADING.exec(line);
    if (heading) {
      this.listIndents = [];
      const level = (heading[1] as string).length;
      const text = renderInline(heading[2] ?? "", s);
      if (!s.enabled) {
        this.emit(out, this.wrap(text, `${heading[1]} `, " ".repeat(level + 1)));
      } else {
        const paint =
          level === 1
            ? (t: string) => s.bold(s.underline(s.magenta(t)))
            : level === 2
              ? (t: string) => s.bold(s.magenta(t))
              : s.bold;
        this.emit(out, this.wrap(paint(text), "", ""));
      }
      return;
    }

    if (RULE.test(line)) {
      this.listIndents = [];
      const width = Math.min(this.width ?? RULE_WIDTH, RULE_WIDTH);
      out.push(s.dim("─".repeat(Math.max(3, width))));
      return;
    }

    if (QUOTE.test(line)) {
      let rest = line.trimStart();
      let depth = 0;
      while (rest.startsWith(">")) {
        depth++;
        rest = rest
          .slice(1)
          .replace(/^[ \t]?/, "")
          .trimStart();
      }
      const bar = s.dim("│ ").repeat(depth);
      this.emit(out, this.wrap(renderInline(rest, s), bar, bar));
      return;
    }

    const item = LIST_ITEM.exec(line);
    if (item) {
      const itemIndent = (item[1] as string).length;
      while (this.listIndents.length > 0 && (this.listIndents.at(-1) as number) > itemIndent)
        this.listIndents.pop();
      if (this.listIndents.length === 0 || (this.listIndents.at(-1) as number) < itemIndent) {
        this.listIndents.push(itemIndent);
      }
      const level = this.listIndents.length - 1;
      const marker = item[2] as string;
      let content = item[3] ?? "";
      let glyph = /\d/.test(marker) ? marker : (BULLETS[level % BULLETS.length] as string);
      const task = TASK.exec(content);
      if (task) {
        content = content.slice(task[0].length);
        glyph = task[1] === " " ? "☐" : "☑";
      }
      const lead = "  ".repeat(level + 1);
      const first = `${lead}${s.cyan(glyph)} `;
      const hang = " ".repeat(lead.length + glyph.length + 1);
      this.emit(out, this.wrap(renderInline(content, s), first, hang));
      return;
    }

    if (indent > 0 && this.listIndents.length > 0) {
      const pad = "  ".repeat(this.listIndents.length + 1);
      this.emit(out, this.wrap(renderInline(line.trim(), s), pad, pad));
      return;
    }

    this.listIndents = [];
    this.emit(out, this.wrap(renderInline(line.trim(), s), "", ""));
  }

  private wrap(text: string, first: string, rest: string): string[] {
    return this.width === undefined ? [first + text] : wrapAnsi(text, this.width, first, rest);
  }

  private emit(out: string[], lines: string[]): void {
    for (const l of lines) out.push(l);
    this.lastBlank = false;
  }
}
