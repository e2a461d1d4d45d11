import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type RawLine, readLineBatches } from "../../../src/util/line-reader.js";

const dir = mkdtempSync(join(tmpdir(), "hermes-lines-"));

async function readAll(content: string | Buffer, maxLineBytes = 1000, chunkBytes = 4): Promise<RawLine[]> {
  const path = join(dir, `f${Math.random().toString(36).slice(2)}`);
  writeFileSync(path, content);
  const out: RawLine[] = [];
  for await (const batch of readLineBatches(path, { maxLineBytes, chunkBytes })) out.push(...batch);
  return out;
}

describe("readLineBatches", () => {
  it("splits lines across tiny chunks, with CRLF and without a final newline", async () => {
    const lines = await readAll("alpha\r\nbeta\n\ngamma");
    expect(lines.map((l) => l.text)).toEqual(["alpha", "beta", "", "gamma"]);
    expect(lines.map((l) => l.cut)).toEqual([false, false, false, false]);
  });

  it("does not invent a line after a final newline, and yields nothing for an empty file", async () => {
    expect((await readAll("a\nb\n")).map((l) => l.text)).toEqual(["a", "b"]);
    expect(await readAll("")).toEqual([]);
  });

  it("keeps multi-byte characters whole across chunk boundaries", async () => {
    const text = "日本語テキスト🎉\nñandú\n";
    for (const chunk of [1, 2, 3, 5, 64]) {
      expect((await readAll(text, 1000, chunk)).map((l) => l.text)).toEqual(["日本語テキスト🎉", "ñandú"]);
    }
  });

  it("cuts a long line to maxLineBytes and reports its full size", async () => {
    const lines = await readAll(`${"x".repeat(50)}\nshort\n`, 10, 8);
    expect(lines[0]).toEqual({ text: "x".repeat(10), bytes: 50, cut: true });
    expect(lines[1]).toEqual({ text: "short", bytes: 5, cut: false });
  });

  it("never leaves half a character at a cut", async () => {
    const lines = await readAll("ééééé\n", 5, 64);
    expect(lines[0]?.text).toBe("éé");
    expect(lines[0]?.cut).toBe(true);
  });

  it("strips a CR that lands in a different chunk from its LF", async () => {
    const lines = await readAll("abc\r\ndef\r\n", 1000, 4);
    expect(lines.map((l) => l.text)).toEqual(["abc", "def"]);
    expect(lines.map((l) => l.bytes)).toEqual([3, 3]);
  });
});
