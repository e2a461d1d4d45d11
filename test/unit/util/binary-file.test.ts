import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hasBinaryExtension, looksBinary, sniffBinaryFile } from "../../../src/util/binary-file.js";

describe("binary detection", () => {
  it("knows binary extensions, case-insensitively", () => {
    expect(hasBinaryExtension("/x/photo.PNG")).toBe(true);
    expect(hasBinaryExtension("lib.so")).toBe(true);
    expect(hasBinaryExtension("icon.svg")).toBe(false);
    expect(hasBinaryExtension("Makefile")).toBe(false);
  });

  it("treats text in any script as text", () => {
    expect(looksBinary(Buffer.from("héllo wörld — 日本語 🎉\r\n\tindent\n\x1b[31mred\x1b[0m"))).toBe(false);
    expect(looksBinary(Buffer.alloc(0))).toBe(false);
  });

  it("flags NUL bytes and invalid UTF-8", () => {
    expect(looksBinary(Buffer.from([0x68, 0x69, 0x00, 0x68]))).toBe(true);
    const noise = Buffer.from(Array.from({ length: 256 }, (_, i) => 0x80 + (i % 64)));
    expect(looksBinary(noise)).toBe(true);
  });

  it("does not count a character cut by the end of the sample", () => {
    const text = Buffer.from("abc日");
    expect(looksBinary(text.subarray(0, text.length - 1))).toBe(false);
  });

  it("sniffs the start of a file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hermes-bin-"));
    writeFileSync(join(dir, "a"), Buffer.from([1, 2, 0, 3]));
    writeFileSync(join(dir, "b"), "plain text\n");
    expect(await sniffBinaryFile(join(dir, "a"))).toBe(true);
    expect(await sniffBinaryFile(join(dir, "b"))).toBe(false);
  });
});
