import { describe, expect, it } from "vitest";
import { HeadTailBuffer, TailBuffer } from "../../../src/util/output-buffer.js";

describe("HeadTailBuffer", () => {
  it("keeps everything under the limits", () => {
    const b = new HeadTailBuffer(5, 5);
    b.write("abc");
    b.write("def");
    expect(b.toString()).toBe("abcdef");
    expect(b.droppedChars).toBe(0);
  });

  it("keeps the head and the tail and counts the middle", () => {
    const b = new HeadTailBuffer(3, 4);
    for (const chunk of ["012", "345", "678", "9ab", "cde"]) b.write(chunk);
    expect(b.totalChars).toBe(15);
    expect(b.droppedChars).toBe(8);
    expect(b.toString((n) => `[${n}]`)).toBe("012[8]bcde");
  });

  it("stays bounded for large streams", () => {
    const b = new HeadTailBuffer(1000, 1000);
    const chunk = "x".repeat(65_536);
    for (let i = 0; i < 100; i++) b.write(chunk);
    expect(b.toString(() => "|").length).toBe(2001);
  });
});

describe("TailBuffer", () => {
  it("reads from an absolute offset and reports what was lost", () => {
    const b = new TailBuffer(4);
    b.write("abc");
    expect(b.readFrom(1)).toEqual({ text: "bc", from: 1, lost: 0 });
    b.write("defghij");
    expect(b.end).toBe(10);
    expect(b.start).toBe(6);
    expect(b.readFrom(3)).toEqual({ text: "ghij", from: 6, lost: 3 });
    expect(b.readFrom(10).text).toBe("");
    expect(b.toString()).toBe("ghij");
  });
});
