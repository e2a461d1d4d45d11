import { describe, expect, it } from "vitest";
import { sliceToBytes, truncateMiddle, truncateOutput } from "../../../src/util/truncate.js";

describe("truncateOutput", () => {
  const limits = { maxBytes: 100, maxLines: 5, maxLineLength: 20 };

  it("leaves small output alone", () => {
    expect(truncateOutput("a\nb", limits)).toEqual({
      text: "a\nb",
      truncated: false,
      droppedLines: 0,
      shortenedLines: 0,
    });
  });

  it("drops whole lines past the line cap and says so", () => {
    const text = Array.from({ length: 10 }, (_, i) => `line ${i}`).join("\n");
    const out = truncateOutput(text, limits);
    expect(out.truncated).toBe(true);
    expect(out.droppedLines).toBe(5);
    expect(out.text.split("\n").slice(0, 5)).toEqual(["line 0", "line 1", "line 2", "line 3", "line 4"]);
    expect(out.text).toContain("5 of 10 lines omitted");
  });

  it("shortens a long line and never exceeds the byte cap with whole lines", () => {
    const out = truncateOutput(`${"x".repeat(50)}\nshort`, limits);
    expect(out.shortenedLines).toBe(1);
    expect(out.text).toContain("[line cut: 30 more chars]");
    const big = truncateOutput(Array.from({ length: 5 }, () => "y".repeat(19)).join("\n"), {
      ...limits,
      maxBytes: 50,
    });
    expect(big.text.split("\n")[0]).toBe("y".repeat(19));
    expect(big.droppedLines).toBe(3);
  });

  it("cuts multi-byte text on a character boundary", () => {
    expect(sliceToBytes("héllo", 2)).toBe("h");
    expect(sliceToBytes("日本語", 7)).toBe("日本");
  });

  it("keeps head and tail when cutting the middle", () => {
    const out = truncateMiddle("a".repeat(70) + "b".repeat(60), 100);
    expect(out.startsWith("a".repeat(70))).toBe(true);
    expect(out.endsWith("b".repeat(30))).toBe(true);
    expect(out).toContain("30 characters omitted");
  });
});
