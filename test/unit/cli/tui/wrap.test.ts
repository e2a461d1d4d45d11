import { describe, expect, it } from "vitest";
import { createStyle } from "../../../../src/cli/tui/style.js";
import { displayWidth, stripAnsi } from "../../../../src/cli/tui/text-width.js";
import { hangingIndent, wrapLines } from "../../../../src/cli/tui/wrap.js";

describe("wrapLines", () => {
  it("wraps a /help row at word boundaries, continuation under the description column", () => {
    const row =
      "  /compress [focus TOPIC]  compress the conversation now, keeping what matters for the topic";
    const rows = wrapLines([row], 60);
    expect(rows.length).toBeGreaterThan(1);
    for (const r of rows) expect(displayWidth(r)).toBeLessThanOrEqual(60);
    const column = row.indexOf("compress the");
    for (const r of rows.slice(1)) expect(r.search(/\S/)).toBe(column);
    expect(rows.map((r) => r.trim()).join(" ")).toBe(row.trim());
  });

  it("hangs a warning's text right of its symbol, and never cuts a word in two", () => {
    const warning =
      "⚠ The provider's context window for gpt-5 is smaller than assumed: planning with 8192 tokens";
    const rows = wrapLines([warning], 40);
    expect(rows[0]?.startsWith("⚠ The")).toBe(true);
    // Continuation rows start where the text after `⚠ ` starts (as wide as the terminal draws it).
    const hang = displayWidth("⚠ ");
    for (const r of rows.slice(1)) expect(r.search(/\S/)).toBe(hang);
    const words = warning.split(" ");
    expect(rows.flatMap((r) => r.trim().split(" "))).toEqual(words);
  });

  it("keeps colours per row: every wrapped row closes what it opened", () => {
    const s = createStyle(true);
    const rows = wrapLines([s.yellow(`⚠ ${"word ".repeat(30).trim()}`)], 30);
    expect(rows.length).toBeGreaterThan(3);
    for (const r of rows) {
      expect(displayWidth(r)).toBeLessThanOrEqual(30);
      expect(r.endsWith("\x1b[0m") || r.endsWith("\x1b[39m")).toBe(true);
    }
    expect(stripAnsi(rows.join(" ")).replace(/\s+/g, " ")).toBe(`⚠ ${"word ".repeat(30).trim()}`);
  });

  it("breaks a word longer than a row (a URL) instead of overflowing", () => {
    const url = `https://example.com/${"a".repeat(100)}`;
    const rows = wrapLines([`see ${url}`], 40);
    for (const r of rows) expect(displayWidth(r)).toBeLessThanOrEqual(40);
    expect(rows.join("").replace(/\s/g, "")).toBe(`see${url}`);
  });

  it("leaves lines alone without a width, with a tiny one, or when they fit; splits embedded newlines", () => {
    const long = "x ".repeat(100);
    expect(wrapLines([long], undefined)).toEqual([long]);
    expect(wrapLines([long], 10)).toEqual([long]);
    expect(wrapLines(["short", "a\nb"], 80)).toEqual(["short", "a", "b"]);
  });

  it("a hanging indent never takes more than half the width", () => {
    expect(hangingIndent(`${" ".repeat(50)}x  y`, 40)).toBeLessThanOrEqual(20);
    expect(hangingIndent("  /title [text]  show or set", 80)).toBe("  /title [text]  ".length);
    expect(hangingIndent("plain words here", 80)).toBe(0);
  });
});
