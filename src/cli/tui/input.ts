/**
 * The REPL's input line, on `node:readline` in terminal mode, shared by everything that reads from
 * or writes to the terminal while the REPL is open.
 *
 * - Output goes *above* the prompt: `print` erases the prompt block, writes whole lines, and draws
 *   the prompt and the typed text again. That is why the markdown renderer emits complete lines.
 * - While a turn runs the prompt has a status row above it (`⠋ thinking… 3s`), redrawn on every
 *   spinner frame; the input stays usable for `/stop`, `/steer`, `/queue`, etc.
 * - A submitted line is echoed back as `❯ text` (without the status row), so the scrollback reads
 *   as a conversation.
 * - Multi-line input: a line ending in `\` continues on the next line (prompt `… `). Node's
 *   readline has no bracketed paste, so a paste is recognised by timing: lines that arrive within
 *   `pasteWindowMs` of each other (one terminal write, or several close together) are a paste. A
 *   pasted block is never sent by itself: it is held with a `… ` prompt and Enter sends it, with
 *   whatever was typed after it, as one message (as prompt_toolkit's bracketed paste does).
 * - Questions (approval, clarify, pickers) are asked on the same line with `ask`, one at a time;
 *   what was being typed is put back afterwards.
 * - Ctrl+C and Ctrl+D are reported to the handlers; the REPL decides what they mean.
 */
import { createInterface, type Interface } from "node:readline";
import type { HistoryStore } from "./history.js";
import type { Style } from "./style.js";
import { displayWidth, stripAnsi, truncateToWidth } from "./text-width.js";

export interface InputHandlers {
  /** A complete message or command; continuation and pasted lines are joined with `\n`. */
  submit(text: string): void;
  /** Ctrl+C. `hadText`: something was typed (not yet cleared); `question`: it cancelled a question. */
  interrupt(info: { hadText: boolean; question: boolean }): void;
  /** Ctrl+D on an empty line, or the input stream ended. */
  eof(): void;
}

export interface StatusText {
  frame: string;
  label: string;
  elapsed: string;
  /** Rows shown under the spinner row: the latest output of a running command (plain text). */
  detail?: readonly string[];
}

export interface TerminalInputOptions {
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  /** Where the prompt is drawn (stderr in the CLI). */
  output: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  style: Style;
  history?: HistoryStore;
  /** Tab completion: `[candidates, the text they complete]`. */
  complete?: (line: string) => Promise<[string[], string]> | [string[], string];
  /** The busy status shown above the prompt, or null when idle. */
  status?: () => StatusText | null;
  /**
   * The status line drawn above the prompt (and above the busy status) for `columns` cells, or
   * null for none. Only on a terminal; never part of the echoed scrollback.
   */
  footer?: (columns: number) => string | null;
  /** Lines arriving closer together than this are a paste (default 25 ms). */
  pasteWindowMs?: number;
}

interface Question {
  lines: string[];
  prompt: string;
  resolve: (answer: string | null) => void;
}

/** Readline state that Node keeps as plain properties but does not type. */
interface ReadlineInternals {
  line: string;
  cursor: number;
  prevRows: number;
}

type Writable = NodeJS.WritableStream & { isTTY?: boolean };

/** A question's way out: `signal` withdraws it unanswered, showing `withdrawn()` after the prompt. */
export interface AskOptions {
  signal?: AbortSignal;
  withdrawn?: () => string;
}

export class TerminalInput {
  private readonly rl: Interface;
  private readonly options: TerminalInputOptions;
  private readonly live: boolean;
  private handlers: InputHandlers | null = null;
  private pending: string[] = [];
  private burst: string[] = [];
  private burstTimer: NodeJS.Timeout | null = null;
  private questions: Question[] = [];
  private question: Question | null = null;
  private savedLine: string | null = null;
  private displayedPrompt = "";
  private promptVisible = false;
  private closing = false;
  private readonly onData = () => {
    // Any input during the paste window (the rest of a large paste) keeps the burst open.
    if (this.burstTimer) this.armBurstTimer();
  };

  constructor(options: TerminalInputOptions) {
    this.options = options;
    this.live = options.input.isTTY === true && options.output.isTTY === true;
    const complete = options.complete;
    this.rl = createInterface({
      input: options.input,
      output: options.output,
      terminal: this.live,
      // History is managed here (multi-line entries, the history file), not by readline.
      history: options.history?.entries ?? [],
      historySize: 0,
      tabSize: 4,
      ...(complete
        ? {
            completer: (line: string, callback: (err: Error | null, result: [string[], string]) => void) => {
              Promise.resolve()
                .then(() => complete(line))
                .then(
                  (result) => callback(null, result),
                  () => callback(null, [[], line]),
                );
            },
          }
        : {}),
    });
    this.rl.on("line", (line) => this.onLine(line));
    this.rl.on("SIGINT", () => this.onInterrupt());
    this.rl.on("close", () => {
      this.cancelQuestions();
      if (!this.closing) this.handlers?.eof();
    });
    options.input.on("data", this.onData);
  }

  /** Starts reading: draws the first prompt. */
  start(handlers: InputHandlers): void {
    this.handlers = handlers;
    this.refresh();
  }

  /** What is typed on the current line. */
  get line(): string {
    return this.rl.line;
  }

  /** True while something typed would be lost by clearing (current line or held lines). */
  get hasText(): boolean {
    return this.rl.line !== "" || this.pending.length > 0;
  }

  private get internals(): ReadlineInternals {
    return this.rl as unknown as ReadlineInternals;
  }

  private get columns(): number {
    const columns = this.options.output.columns;
    return columns && columns > 0 ? columns : 80;
  }

  /** Writes whole lines above the prompt (to `stream`, default the prompt's stream). */
  print(lines: string[], stream: Writable = this.options.output): void {
    if (lines.length === 0) return;
    const text = lines.map((l) => `${l}\n`).join("");
    if (!this.live || this.closing || (stream !== this.options.output && stream.isTTY !== true)) {
      stream.write(text);
      return;
    }
    const redraw = this.erase();
    stream.write(text);
    if (redraw) this.draw();
  }

  /** Redraws the prompt for a spinner frame, unless it would look the same (a question is shown). */
  refreshStatus(): void {
    if (this.live && this.promptVisible && this.promptString() === this.displayedPrompt) return;
    this.refresh();
  }

  /** Redraws the prompt and the typed text (after a status or state change). */
  refresh(): void {
    if (this.closing || this.burstTimer) return;
    if (!this.live) {
      // Without a terminal nothing can be redrawn: write a prompt once, again only when it changes.
      const prompt = stripAnsi(this.promptString());
      if (!this.promptVisible || prompt !== this.displayedPrompt) {
        this.rl.setPrompt(prompt);
        this.rl.prompt(true);
        this.displayedPrompt = prompt;
        this.promptVisible = true;
      }
      return;
    }
    this.draw();
  }

  /**
   * Asks a question on the input line and resolves with the answer, or null when Ctrl+C or Ctrl+D
   * cancelled it. `lines` are printed above first. Questions queue; typed text is kept aside.
   */
  ask(lines: string[], prompt: string, options: AskOptions = {}): Promise<string | null> {
    if (this.closing || options.signal?.aborted) return Promise.resolve(null);
    return new Promise((resolve) => {
      const signal = options.signal;
      const onAbort = () => this.withdraw(question, options.withdrawn?.() ?? "");
      const question: Question = {
        lines,
        prompt,
        resolve: (answer) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(answer);
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.questions.push(question);
      if (!this.question) this.nextQuestion();
    });
  }

  /** Takes back a question nobody answered (a timeout): shown with `note`, resolved with null. */
  private withdraw(question: Question, note: string): void {
    if (this.question === question) {
      this.question = null;
      this.replaceLine("", `${question.prompt}${this.options.style.dim(note)}`);
      question.resolve(null);
      this.nextQuestion();
      return;
    }
    const index = this.questions.indexOf(question);
    if (index >= 0) {
      this.questions.splice(index, 1);
      question.resolve(null);
    }
  }

  /** Drops what is typed (and held lines); `echo` shows it above with a `^C` mark first. */
  clearInput(options: { echo?: boolean } = {}): void {
    const typed = [...this.pending, this.rl.line].filter((l, i, all) => l !== "" || i < all.length - 1);
    this.pending = [];
    this.replaceLine(
      "",
      options.echo && typed.length > 0
        ? `${this.echoPrompt(false)}${typed.join(" ⏎ ")}${this.options.style.dim("^C")}`
        : null,
    );
  }

  /** Replaces the typed text, first printing `note` above (erasing with the old layout). */
  private replaceLine(text: string, note: string | null): void {
    if (this.live && !this.closing) {
      const redraw = this.erase();
      this.setLine(text);
      if (note !== null) this.options.output.write(`${note}\n`);
      if (redraw || note !== null) this.draw();
      return;
    }
    this.setLine(text);
  }

  /**
   * Clears the terminal (screen and scrollback) and draws the prompt at the top. Returns false,
   * doing nothing, when there is no terminal to clear.
   */
  clearScreen(): boolean {
    if (!this.live || this.closing) return false;
    this.options.output.write("\x1b[H\x1b[2J\x1b[3J");
    this.promptVisible = false;
    this.draw();
    return true;
  }

  /** Stops reading and restores the terminal. Pending questions resolve with null. */
  close(): void {
    if (this.closing) return;
    if (this.live && this.promptVisible) this.erase();
    this.closing = true;
    if (this.burstTimer) clearTimeout(this.burstTimer);
    this.burstTimer = null;
    this.options.input.off("data", this.onData);
    this.cancelQuestions();
    this.rl.close();
  }

  private promptString(): string {
    const s = this.options.style;
    if (this.question) return this.question.prompt;
    if (this.pending.length > 0) return s.dim("… ");
    const glyph = `${s.bold(s.magenta("❯"))} `;
    // The status line and the animated status need a terminal to redraw on.
    if (!this.live) return glyph;
    // One cell spare: a row filling the whole width would wrap in some terminals.
    const room = Math.max(10, this.columns - 1);
    const rows: string[] = [];
    const footer = this.options.footer?.(room) ?? null;
    if (footer) rows.push(truncateToWidth(footer, room));
    const status = this.options.status?.() ?? null;
    if (status) {
      const label = truncateToWidth(status.label, Math.max(10, this.columns - 12));
      rows.push(`${s.cyan(status.frame)} ${s.dim(`${label} ${status.elapsed}`)}`);
      for (const line of status.detail ?? []) rows.push(s.dim(truncateToWidth(`  │ ${line}`, room)));
    }
    return rows.length > 0 ? `${rows.join("\n")}\n${glyph}` : glyph;
  }

  /** The clean prompt a submitted line is echoed with. */
  private echoPrompt(continuation: boolean): string {
    const s = this.options.style;
    return continuation ? s.dim("… ") : `${s.bold(s.magenta("❯"))} `;
  }

  /** Erases the prompt block; returns whether something must be drawn again afterwards. */
  private erase(): boolean {
    const out = this.options.output;
    if (this.promptVisible) {
      const rows = this.rl.getCursorPos().rows;
      out.write(`${rows > 0 ? `\x1b[${rows}A` : ""}\r\x1b[J`);
      this.promptVisible = false;
      return true;
    }
    if (this.rl.line !== "") {
      // Typed (or pasted) text echoed without a prompt, between a line and the next prompt.
      const rows = Math.floor(displayWidth(this.rl.line) / this.columns);
      out.write(`${rows > 0 ? `\x1b[${rows}A` : ""}\r\x1b[J`);
      return true;
    }
    return false;
  }

  private draw(): void {
    const prompt = this.promptString();
    // Readline moves up `prevRows` before redrawing; after an erase the cursor is already there.
    if (!this.promptVisible) this.internals.prevRows = 0;
    this.rl.setPrompt(prompt);
    this.rl.prompt(true);
    this.displayedPrompt = prompt;
    this.promptVisible = true;
  }

  private setLine(text: string): void {
    this.internals.line = text;
    this.internals.cursor = text.length;
  }

  private onLine(text: string): void {
    const continuation = this.pending.length > 0 || this.burst.length > 0;
    this.echo(text, continuation);
    if (this.question) {
      const question = this.question;
      this.question = null;
      question.resolve(text);
      this.nextQuestion();
      return;
    }
    this.burst.push(text);
    this.armBurstTimer();
  }

  /** Rewrites the line readline just echoed so it reads `❯ text` (no status row, no spinner). */
  private echo(text: string, continuation: boolean): void {
    const shown = this.promptVisible ? this.displayedPrompt : "";
    this.promptVisible = false;
    if (!this.live || this.question) return;
    const clean = this.echoPrompt(continuation);
    if (shown === clean) return;
    const rows = blockRows(stripAnsi(shown) + text, this.columns);
    this.options.output.write(`\x1b[${rows}A\r\x1b[J${clean}${text}\n`);
  }

  private armBurstTimer(): void {
    if (this.burstTimer) clearTimeout(this.burstTimer);
    this.burstTimer = setTimeout(() => this.endBurst(), this.options.pasteWindowMs ?? 25);
  }

  private endBurst(): void {
    this.burstTimer = null;
    const lines = this.burst;
    this.burst = [];
    if (lines.length === 0) return;
    // More than one line at once, or text right behind the line: a paste. Hold it for Enter.
    if (lines.length > 1 || this.rl.line !== "") {
      this.pending.push(...lines);
      this.refresh();
      return;
    }
    const line = lines[0] as string;
    if (/(^|[^\\])\\$/.test(line)) {
      this.pending.push(line.slice(0, -1));
      this.refresh();
      return;
    }
    const text = this.pending.length > 0 ? [...this.pending, line].join("\n").replace(/\n+$/, "") : line;
    this.pending = [];
    if (text.trim() !== "") this.options.history?.add(text);
    this.refresh();
    if (text.trim() !== "") this.handlers?.submit(text);
  }

  private onInterrupt(): void {
    if (this.question) {
      const question = this.question;
      this.question = null;
      this.replaceLine("", `${question.prompt}${this.options.style.dim("^C")}`);
      question.resolve(null);
      this.nextQuestion();
      this.handlers?.interrupt({ hadText: false, question: true });
      return;
    }
    this.handlers?.interrupt({ hadText: this.hasText, question: false });
  }

  private nextQuestion(): void {
    const next = this.questions.shift();
    if (!next) {
      if (this.savedLine !== null) {
        const saved = this.savedLine;
        this.savedLine = null;
        this.setLine(saved);
      }
      this.refresh();
      return;
    }
    if (this.savedLine === null) {
      this.savedLine = this.rl.line;
      this.setLine("");
    }
    this.question = next;
    if (next.lines.length > 0) this.print(next.lines);
    this.refresh();
  }

  private cancelQuestions(): void {
    const all = [...(this.question ? [this.question] : []), ...this.questions];
    this.question = null;
    this.questions = [];
    for (const q of all) q.resolve(null);
  }
}

/**
 * Terminal rows between the start of a prompt block holding `text` and the row the cursor lands on
 * after readline moved to its end and wrote a newline (mirrors readline's own layout arithmetic).
 */
export function blockRows(text: string, columns: number): number {
  const segments = text.split("\n");
  let rows = 0;
  segments.forEach((segment, i) => {
    const width = displayWidth(segment);
    rows += i < segments.length - 1 ? Math.ceil(width / columns) || 1 : Math.floor(width / columns) + 1;
  });
  return rows;
}
