import { describe, expect, it } from "vitest";
import { cleanTerminalText } from "../../../src/util/terminal-text.js";

describe("cleanTerminalText", () => {
  it.each([
    ["plain text is returned as it is", "hello\n\tworld", "hello\n\tworld"],
    ["colours", "\x1b[1;31mERROR\x1b[0m: failed", "ERROR: failed"],
    ["pty line ends", "one\r\ntwo\r\n", "one\ntwo\n"],
    ["a progress bar keeps its last redraw", "10%\r50%\r100%\ndone", "100%\ndone"],
    ["a trailing carriage return clears nothing", "ready\r\n", "ready\n"],
    ["window titles (OSC with BEL and with ST)", "\x1b]0;title\x07a\x1b]2;t\x1b\\b", "ab"],
    ["cursor moves and erase", "\x1b[2J\x1b[H\x1b[?25lscreen\x1b[K", "screen"],
    ["charset and keypad escapes", "\x1b(B\x1b=x\x1b>", "x"],
    ["8-bit CSI", "\x9b31mred\x9b0m", "red"],
    ["backspace erases", "abc\b\bd", "ad"],
    ["other controls are dropped", "a\x00b\x07c\x7fd", "abcd"],
  ])("%s", (_name, input, expected) => {
    expect(cleanTerminalText(input)).toBe(expected);
  });

  it("an unterminated OSC in a huge buffer stays linear", () => {
    const input = `\x1b]0;${"x".repeat(2_000_000)}`;
    const started = Date.now();
    const out = cleanTerminalText(input);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(out.length).toBeLessThan(input.length);
  });
});
