import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { patchTool } from "../../../../src/tools/file/patch.js";
import { readFileTool } from "../../../../src/tools/file/read-file.js";
import { writeFileTool } from "../../../../src/tools/file/write-file.js";
import { call, fileToolContext, writeTree } from "./helpers.js";

const latin1 = (s: string) => Buffer.from(s, "latin1");
const utf16le = (s: string) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(s, "utf16le")]);
const utf16be = (s: string) => Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(s, "utf16le").swap16()]);
// "Smart quotes” and the euro sign in Windows-1252.
const cp1252 = Buffer.from([0x93, 0x51, 0x94, 0x20, 0x80, 0x35, 0x0d, 0x0a, 0x6f, 0x6b, 0x0d, 0x0a]);

describe("file tools on non-UTF-8 text", () => {
  it("read_file shows Latin-1, Windows-1252, UTF-16 LE/BE and UTF-8-BOM files decoded, naming the encoding", async () => {
    const ctx = fileToolContext();
    writeTree(ctx.cwd, {
      "l.txt": latin1("café crème\nnaïve\n"),
      "w.txt": cp1252,
      "le.txt": utf16le("hé 🎉\r\nzwei\r\n"),
      "be.txt": utf16be("grüß\n"),
      "bom.txt": Buffer.from("\uFEFFfirst\nsecond\n", "utf8"),
    });
    expect(await call(readFileTool, { path: "l.txt" }, ctx)).toBe(
      "[ISO-8859-1 (Latin-1) file, shown decoded; patch and write_file keep this encoding.]\n     1|café crème\n     2|naïve",
    );
    expect(await call(readFileTool, { path: "w.txt" }, ctx)).toContain("     1|“Q” €5\n     2|ok");
    expect(await call(readFileTool, { path: "le.txt" }, ctx)).toMatch(
      /UTF-16 LE with BOM.*\n {5}1\|hé 🎉\n {5}2\|zwei$/,
    );
    expect(await call(readFileTool, { path: "be.txt" }, ctx)).toMatch(/UTF-16 BE with BOM.*\n {5}1\|grüß$/);
    expect(await call(readFileTool, { path: "bom.txt" }, ctx)).toMatch(/UTF-8 with BOM.*\n {5}1\|first\n/);
  });

  it("patch edits a Latin-1 CRLF file in place: same encoding, untouched bytes identical", async () => {
    const ctx = fileToolContext();
    const original = latin1("# Größe\r\nprix = 5\r\nfin: déjà\r\n");
    writeTree(ctx.cwd, { "p.cfg": original });
    const out = await call(
      patchTool,
      { path: "p.cfg", old_string: "prix = 5", new_string: "prix = 7 ½" },
      ctx,
    );
    expect(out).toContain("Patched p.cfg");
    expect(readFileSync(join(ctx.cwd, "p.cfg"))).toEqual(latin1("# Größe\r\nprix = 7 ½\r\nfin: déjà\r\n"));
  });

  it("patch (V4A) keeps UTF-16 LE with its BOM, also across a move", async () => {
    const ctx = fileToolContext();
    writeTree(ctx.cwd, { "a.txt": utf16le("eins\r\nzwei\r\ndrei\r\n") });
    const patch =
      "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n eins\r\n-zwei\r\n+ZWEI ü\r\n drei\r\n*** End Patch";
    const out = await call(patchTool, { mode: "patch", patch }, ctx);
    expect(out).toContain("Patch applied");
    expect(readFileSync(join(ctx.cwd, "b.txt"))).toEqual(utf16le("eins\r\nZWEI ü\r\ndrei\r\n"));
  });

  it("write_file overwrites in the file's own encoding and BOM", async () => {
    const ctx = fileToolContext();
    writeTree(ctx.cwd, { "w.txt": cp1252, "be.txt": utf16be("old\n") });
    expect(await call(writeFileTool, { path: "w.txt", content: "“new” — €9\n" }, ctx)).toContain(
      "kept Windows-1252",
    );
    expect(readFileSync(join(ctx.cwd, "w.txt"))).toEqual(
      Buffer.from([0x93, 0x6e, 0x65, 0x77, 0x94, 0x20, 0x97, 0x20, 0x80, 0x39, 0x0a]),
    );
    await call(writeFileTool, { path: "be.txt", content: "neu ✓\n" }, ctx);
    expect(readFileSync(join(ctx.cwd, "be.txt"))).toEqual(utf16be("neu ✓\n"));
  });

  it("refuses a character Latin-1 cannot hold with a clear error and leaves the file as it was", async () => {
    const ctx = fileToolContext();
    const original = latin1("price: 5 EUR à\n");
    writeTree(ctx.cwd, { "l.txt": original });
    await expect(
      call(patchTool, { path: "l.txt", old_string: "5 EUR", new_string: "5 €" }, ctx),
    ).rejects.toThrow(/Cannot write l.txt: .*ISO-8859-1.*"€" \(U\+20AC\) on line 1/);
    await expect(call(writeFileTool, { path: "l.txt", content: "日本\n" }, ctx)).rejects.toThrow(/U\+65E5/);
    const v4a = "*** Begin Patch\n*** Update File: l.txt\n@@\n-price: 5 EUR à\n+price: 5 ₹\n*** End Patch";
    await expect(call(patchTool, { mode: "patch", patch: v4a }, ctx)).rejects.toThrow(
      /no files were changed.*U\+20B9/,
    );
    expect(readFileSync(join(ctx.cwd, "l.txt"))).toEqual(original);
  });

  it("still refuses a real PNG, UTF-16 without a BOM, and UTF-8 mixed with stray bytes", async () => {
    const ctx = fileToolContext();
    const png = Buffer.from(
      "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082",
      "hex",
    );
    writeTree(ctx.cwd, {
      "img.png": png,
      "img.dat": png,
      "nobom.txt": Buffer.from("hello\n", "utf16le"),
      "mixed.txt": Buffer.concat([
        Buffer.from("naïve text, mostly UTF-8 ", "utf8"),
        Buffer.from([0xe9, 0x0a]),
      ]),
    });
    await expect(call(readFileTool, { path: "img.png" }, ctx)).rejects.toThrow(/binary file \(\.png\)/);
    await expect(call(readFileTool, { path: "img.dat" }, ctx)).rejects.toThrow(/binary file/);
    await expect(
      call(patchTool, { path: "img.dat", old_string: "PNG", new_string: "JPG" }, ctx),
    ).rejects.toThrow(/binary file/);
    await expect(call(readFileTool, { path: "nobom.txt" }, ctx)).rejects.toThrow(
      /binary file.*no UTF-16 byte-order mark/,
    );
    expect(await call(readFileTool, { path: "mixed.txt" }, ctx)).toMatch(
      /^\[Not one encoding: it mixes UTF-8.*refuse to edit.*\]\n {5}1\|naïve text, mostly UTF-8 \uFFFD$/,
    );
    await expect(
      call(patchTool, { path: "mixed.txt", old_string: "naïve", new_string: "naive" }, ctx),
    ).rejects.toThrow(/cannot be edited safely/);
    expect(readFileSync(join(ctx.cwd, "img.dat"))).toEqual(png);
  });
});
