import { describe, expect, it } from "vitest";
import { OutputCapture } from "../../../../src/tools/sandbox/output-capture.js";

function capture(limit: number, ...chunks: string[]): OutputCapture {
  const c = new OutputCapture(limit, "stdout");
  for (const chunk of chunks) c.push(Buffer.from(chunk, "utf8"));
  return c;
}

describe("OutputCapture", () => {
  it("keeps everything within the limit", () => {
    expect(capture(100, "hello ", "world").result()).toEqual({
      text: "hello world",
      totalBytes: 11,
      omittedBytes: 0,
    });
  });

  it("keeps 40% head and 60% tail and says how much was cut", () => {
    const r = capture(10, "0123456789", "abcdefghij").result();
    expect(r.omittedBytes).toBe(10);
    expect(r.text.startsWith("0123\n…[stdout truncated: 10 of 20 bytes omitted")).toBe(true);
    expect(r.text.endsWith("]…\nefghij")).toBe(true);
  });

  it("renders a shorter cut on request, counting every omitted byte", () => {
    const c = capture(1000, "x".repeat(50), "y".repeat(50));
    const r = c.result(10);
    expect(r.omittedBytes).toBe(90);
    expect(r.text).toMatch(/^xxxx\n…\[stdout truncated: 90 of 100 bytes omitted.*\]…\nyyyyyy$/s);
    expect(capture(10, "a".repeat(30)).result(5).omittedBytes).toBe(25);
  });

  it("never splits a UTF-8 character at the cut", () => {
    const r = capture(10, "é".repeat(20)).result();
    expect(r.text).not.toContain("\uFFFD");
    expect(r.text).toMatch(/^é+\n…\[.*\]…\né+$/s);
  });
});
