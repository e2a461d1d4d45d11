import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { extractZipEntry, readZipEntries, ZipError, ZipWriter } from "../../../src/util/zip.js";

const dir = () => mkdtempSync(join(tmpdir(), "hermes-zip-"));

describe("zip", () => {
  it("round-trips files that unzip accepts, with modes and UTF-8 names", async () => {
    const d = dir();
    const big = Buffer.alloc(3_000_000, "abc");
    writeFileSync(join(d, "big"), big);
    const zip = new ZipWriter(join(d, "a.zip"));
    await zip.addFile("data/big.bin", join(d, "big"), { mtime: new Date(), mode: 0o600 });
    await zip.addBuffer("notes/ünïcode.md", "hello", { mtime: new Date() });
    await zip.addBuffer("empty", "", { mtime: new Date() });
    zip.close();
    execFileSync("unzip", ["-tq", join(d, "a.zip")]);
    const entries = readZipEntries(join(d, "a.zip"));
    expect(entries.map((e) => [e.name, e.size, e.mode])).toEqual([
      ["data/big.bin", big.length, 0o600],
      ["notes/ünïcode.md", 5, 0o644],
      ["empty", 0, 0o644],
    ]);
    for (const entry of entries) await extractZipEntry(join(d, "a.zip"), entry, join(d, "out"));
    await extractZipEntry(join(d, "a.zip"), entries[0] as never, join(d, "out"));
    expect(readFileSync(join(d, "out")).equals(big)).toBe(true);
  });

  it("reads archives made by zip(1)", async () => {
    const d = dir();
    writeFileSync(join(d, "config.yaml"), "model: x\n");
    execFileSync("zip", ["-q", "-r", "b.zip", "config.yaml"], { cwd: d });
    const [entry] = readZipEntries(join(d, "b.zip"));
    await extractZipEntry(join(d, "b.zip"), entry as never, join(d, "got"));
    expect(readFileSync(join(d, "got"), "utf8")).toBe("model: x\n");
  });

  it("refuses damaged data and a member that inflates past its declared size", async () => {
    const d = dir();
    const zip = new ZipWriter(join(d, "c.zip"));
    await zip.addBuffer("a.txt", "x".repeat(10_000), { mtime: new Date() });
    zip.close();
    const bytes = readFileSync(join(d, "c.zip"));
    const [entry] = readZipEntries(join(d, "c.zip"));
    if (!entry) throw new Error("no entry");
    // Declared smaller than it is: a zip bomb's shape.
    await expect(extractZipEntry(join(d, "c.zip"), { ...entry, size: 100 }, join(d, "o1"))).rejects.toThrow(
      ZipError,
    );
    // A wrong checksum.
    await expect(
      extractZipEntry(join(d, "c.zip"), { ...entry, crc: entry.crc ^ 1 }, join(d, "o2")),
    ).rejects.toThrow(/damaged/);
    writeFileSync(join(d, "trunc.zip"), bytes.subarray(0, bytes.length - 30));
    expect(() => readZipEntries(join(d, "trunc.zip"))).toThrow(ZipError);
    writeFileSync(join(d, "text.zip"), "just text");
    expect(() => readZipEntries(join(d, "text.zip"))).toThrow(/not a zip archive/);
  });
});
