/**
 * Terminal output as text a model can read: what a program printed for a screen (colours, cursor
 * moves, window titles, progress bars redrawn with carriage returns) reduced to the lines a person
 * would see at the end.
 */

// CSI (`ESC [ ... final`), OSC (`ESC ] ... BEL` or `ESC \`), DCS/SOS/PM/APC strings, two-byte
// escapes (`ESC 7`, `ESC (B`, `ESC =`), and 8-bit CSI. OSC and string bodies are bounded, so an
// unterminated one cannot make the match scan the rest of a huge buffer more than once.
const ESCAPES =
  /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]{0,4096}(?:\x07|\x1b\\)?|\x1b[PX^_][^\x1b]{0,4096}(?:\x1b\\)?|\x1b[ -/]*[0-~]|\x9b[0-?]*[ -/]*[@-~]/g;
// Other C0 controls except tab, newline and carriage return (handled below), and DEL.
const CONTROLS = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g;

/**
 * Strips escape sequences and control characters; `\r\n` becomes `\n`, and a line redrawn with
 * `\r` (a progress bar) keeps only what was drawn last. Backspace erases the character before it.
 */
export function cleanTerminalText(text: string): string {
  if (!/[\x00-\x08\x0b-\x1f\x7f\x9b]/.test(text)) return text;
  const stripped = text.replace(ESCAPES, "").replace(/\r+\n/g, "\n");
  const lines = stripped.split("\n").map((line) => {
    let shown = line;
    if (shown.includes("\r")) {
      // The last non-empty redraw is what stayed on screen (`\r` at the very end clears nothing).
      const parts = shown.split("\r").filter((p) => p !== "");
      shown = parts[parts.length - 1] ?? "";
    }
    if (shown.includes("\b")) {
      let out = "";
      for (const ch of shown) out = ch === "\b" ? out.slice(0, -1) : out + ch;
      shown = out;
    }
    return shown.replace(CONTROLS, "");
  });
  return lines.join("\n");
}
