import { describe, expect, it } from "vitest";
import {
  displayWidth,
  padToWidth,
  stripAnsi,
  truncateToWidth,
  wrapAnsi,
} from "../../../../src/cli/tui/text-width.js";

describe("displayWidth", () => {
  it.each<[string, number]>([
    ["", 0],
    ["abc", 3],
    ["\x1b[1mbold\x1b[22m", 4],
    ["\x1b]8;;http://x\x07link\x1b]8;;\x07", 4],
    ["中文", 4],
    ["ｶﾀｶﾅ", 4],
    ["한국어", 6],
    ["😀", 2],
    ["👨‍👩‍👧", 2],
    ["🇫🇷", 2],
    ["❤️", 2],
    ["e\u0301", 1],
    ["a\u200bb", 2],
    ["│─┌", 3],
    ["✓ ✗", 3],
  ])("%j is %i cells", (text, width) => {
    expect(displayWidth(text)).toBe(width);
  });
});

describe("wrapAnsi", () => {
  it.each<[string, number, string[]]>([
    ["short", 10, ["short"]],
    ["aaa bbb ccc", 7, ["aaa bbb", "ccc"]],
    ["aaa  bbb", 4, ["aaa", "bbb"]],
    ["abcdefghij", 4, ["abcd", "efgh", "ij"]],
    ["中文中文中文", 5, ["中文", "中文", "中文"]],
  ])("%j at %i", (text, width, rows) => {
    expect(wrapAnsi(text, width)).toEqual(rows);
  });

  it("uses the first and the hanging prefix", () => {
    expect(wrapAnsi("one two three", 9, "- ", "  ")).toEqual(["- one two", "  three"]);
  });

  it("reopens styles on the next row and closes them at the break", () => {
    const rows = wrapAnsi("\x1b[1mone two\x1b[22m three", 5);
    expect(rows).toEqual(["\x1b[1mone\x1b[0m", "\x1b[1mtwo\x1b[22m", "three"]);
  });

  it("leaves text alone when the width cannot hold it meaningfully", () => {
    expect(wrapAnsi("abc def", 1)).toEqual(["abc def"]);
    expect(wrapAnsi("abc def", Number.POSITIVE_INFINITY)).toEqual(["abc def"]);
  });
});

describe("truncateToWidth and padToWidth", () => {
  it("cuts with an ellipsis by cells", () => {
    expect(truncateToWidth("hello world", 8)).toBe("hello w…");
    expect(truncateToWidth("中文中文", 5)).toBe("中文…");
    expect(truncateToWidth("short", 8)).toBe("short");
    expect(stripAnsi(truncateToWidth("\x1b[2mdimmed text\x1b[22m", 5))).toBe("dimm…");
  });

  it("pads by cells in each alignment", () => {
    expect(padToWidth("中", 4)).toBe("中  ");
    expect(padToWidth("ab", 4, "right")).toBe("  ab");
    expect(padToWidth("ab", 5, "center")).toBe(" ab  ");
  });
});
