/**
 * The tail of a running command's output, as the REPL shows it under the spinner row: the last
 * few lines, plain text. A carriage return starts the line over (progress bars redraw in place),
 * colours and other escape sequences are dropped, tabs become spaces and other control characters
 * vanish, so nothing the command prints can move the cursor or repaint the prompt. Pure.
 */

// CSI, OSC and the two-character escapes (charset selection, keypad modes…).
const ESCAPES = /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_]|[ -/][0-~])/g;
// C0 controls except \n, \r and \t, plus DEL and the C1 range.
const CONTROLS = /[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f]/g;

export class LiveOutput {
  private lines: string[] = [];
  private current = "";
  /** An escape sequence split across two chunks waits here for its end. */
  private carry = "";

  /** `keep`: complete lines remembered (the view shows at most this many). */
  constructor(private readonly keep = 4) {}

  /** Adds a chunk of output exactly as the command printed it. */
  push(chunk: string): void {
    let text = this.carry + chunk;
    this.carry = "";
    // An escape cut short at the end of the chunk: hold it until the rest arrives.
    const cut = /\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*)?$/.exec(text);
    if (cut && cut[0].length < 64) {
      this.carry = cut[0];
      text = text.slice(0, cut.index);
    }
    const clean = text
      .replace(ESCAPES, "")
      .replace(/\r\n/g, "\n")
      .replace(/\t/g, "    ")
      .replace(CONTROLS, "");
    for (const ch of clean.split(/(\n|\r)/)) {
      if (ch === "\n") {
        this.lines.push(this.current);
        this.current = "";
        if (this.lines.length > this.keep) this.lines.splice(0, this.lines.length - this.keep);
      } else if (ch === "\r") {
        this.current = "";
      } else {
        // A line with no end (a minified file, a progress dump) is kept to its last part.
        this.current = (this.current + ch).slice(-2000);
      }
    }
  }

  /**
   * The last `max` non-blank lines, oldest first, the unfinished line included when it has text.
   * Empty before any output.
   */
  tail(max = this.keep): string[] {
    const all = this.current.trim() !== "" ? [...this.lines, this.current] : this.lines;
    const shown = all.filter((l) => l.trim() !== "").map((l) => l.replace(/\s+$/, ""));
    return shown.slice(-max);
  }

  clear(): void {
    this.lines = [];
    this.current = "";
    this.carry = "";
  }
}
