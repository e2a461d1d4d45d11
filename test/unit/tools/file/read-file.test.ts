import {
  closeSync,
  ftruncateSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { defaultConfig } from "../../../../src/config/defaults.js";
import { readFileTool } from "../../../../src/tools/file/read-file.js";
import { DEFAULT_TRUNCATE_LIMITS, truncateOutput } from "../../../../src/util/truncate.js";
import { call, fileToolContext, writeTree } from "./helpers.js";

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n");

describe("read_file", () => {
  it("numbers lines as `     N|content` and keeps unicode intact", async () => {
    const ctx = fileToolContext();
    writeTree(ctx.cwd, { "u.txt": "héllo\n日本語 🎉\n\tindented\n" });
    const out = await call(readFileTool, { path: "u.txt" }, ctx);
    expect(out).toBe("     1|héllo\n     2|日本語 🎉\n     3|\tindented");
  });

  it("strips CR from CRLF lines", async () => {
    const ctx = fileToolContext();
    writeTree(ctx.cwd, { "w.txt": "a\r\nb\r\n" });
    expect(await call(readFileTool, { path: "w.txt" }, ctx)).toBe("     1|a\n     2|b");
  });

  it("pages: 500 lines by default, then tells the next offset", async () => {
    const ctx = fileToolContext();
    writeTree(ctx.cwd, { "big.txt": numbered(1200) });
    const first = await call(readFileTool, { path: "big.txt" }, ctx);
    expect(first.split("\n").filter((l) => /^\s+\d+\|/.test(l))).toHaveLength(500);
    expect(first).toContain("   500|line 500");
    expect(first).toContain("Lines 1-500 of 1200");
    expect(first).toContain("offset=501");

    const page = await call(readFileTool, { path: "big.txt", offset: 501, limit: 3 }, ctx);
    expect(page).toMatch(/^ {3}501\|line 501\n {3}502\|line 502\n {3}503\|line 503\n/);
    expect(page).toContain("offset=504");

    const tail = await call(readFileTool, { path: "big.txt", offset: 1199 }, ctx);
    expect(tail).toBe("  1199|line 1199\n  1200|line 1200");
  });

  it("refuses an offset past the end, saying how long the file is", async () => {
    const ctx = fileToolContext();
    writeTree(ctx.cwd, { "s.txt": numbered(3) });
    await expect(call(readFileTool, { path: "s.txt", offset: 10 }, ctx)).rejects.toThrow(
      /past the end.*3 lines/,
    );
  });

  it("reports an empty file", async () => {
    const ctx = fileToolContext();
    writeTree(ctx.cwd, { "e.txt": "" });
    expect(await call(readFileTool, { path: "e.txt" }, ctx)).toMatch(/empty/);
  });

  it("caps output at limits.file_read_max_chars and says where to continue", async () => {
    const config = defaultConfig() as unknown as { limits: { file_read_max_chars: number } };
    config.limits.file_read_max_chars = 1000;
    const ctx = fileToolContext({ config: config as unknown as Record<string, unknown> });
    writeTree(ctx.cwd, { "big.txt": numbered(400) });
    const out = await call(readFileTool, { path: "big.txt" }, ctx);
    const shown = out.split("\n").filter((l) => /^\s+\d+\|/.test(l));
    expect(shown.length).toBeGreaterThan(10);
    expect(shown.join("\n").length).toBeLessThanOrEqual(1000);
    expect(out).toContain(`offset=${shown.length + 1}`);
    expect(out).toContain("capped at 1000");
  });

  it("stays within the registry's output limits, so its paging note is never cut off", async () => {
    const ctx = fileToolContext();
    const wide = Array.from({ length: 1200 }, (_, i) => `${i + 1} ${"é".repeat(150)}`).join("\n");
    writeTree(ctx.cwd, { "wide.txt": wide, "one.txt": `${"x".repeat(5000)}\n` });
    for (const path of ["wide.txt", "one.txt"]) {
      const out = await call(readFileTool, { path }, ctx);
      expect(truncateOutput(out, DEFAULT_TRUNCATE_LIMITS).truncated).toBe(false);
    }
    expect(await call(readFileTool, { path: "wide.txt" }, ctx)).toMatch(
      /To read more, call read_file with offset=\d+\.\]$/,
    );
  });

  it("tolerates a config without limits", async () => {
    const ctx = fileToolContext({ config: {} });
    writeTree(ctx.cwd, { "a.txt": "x\n" });
    expect(await call(readFileTool, { path: "a.txt" }, ctx)).toBe("     1|x");
  });

  it("cuts a very long line with a marker", async () => {
    const ctx = fileToolContext();
    writeTree(ctx.cwd, { "min.js": `${"a".repeat(1_000_000)}\nnext\n` });
    const out = await call(readFileTool, { path: "min.js" }, ctx);
    const [first, second] = out.split("\n");
    expect(first?.length).toBeLessThan(2100);
    expect(first).toMatch(/line cut: .*in full\]$/);
    expect(second).toBe("     2|next");
  });

  it("reads the start of a 200 MB file without scanning all of it", async () => {
    const ctx = fileToolContext();
    const path = join(ctx.cwd, "huge.log");
    const fd = openSync(path, "w");
    writeSync(fd, `${numbered(2000)}\n`);
    ftruncateSync(fd, 200 * 1024 * 1024); // sparse: no 200 MB of real I/O
    closeSync(fd);
    const out = await call(readFileTool, { path: "huge.log", limit: 5 }, ctx);
    expect(out).toContain("     5|line 5");
    expect(out).toContain("200.0 MB");
    expect(out).toContain("offset=6");
  });

  it("refuses binary files by extension and by content", async () => {
    const ctx = fileToolContext();
    writeTree(ctx.cwd, {
      "logo.png": "not really a png",
      blob: Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x00, 0x01, 0x02]),
      latin: Buffer.from(Array.from({ length: 500 }, (_, i) => 0x80 + (i % 100))),
    });
    await expect(call(readFileTool, { path: "logo.png" }, ctx)).rejects.toThrow(/binary file \(\.png\)/);
    await expect(call(readFileTool, { path: "blob" }, ctx)).rejects.toThrow(
      /binary file; read_file only reads text/,
    );
    await expect(call(readFileTool, { path: "latin" }, ctx)).rejects.toThrow(/binary/);
  });

  it("suggests similar names for a missing file", async () => {
    const ctx = fileToolContext();
    writeTree(ctx.cwd, { "conf/config.yaml": "", "conf/Config.yml": "", "conf/unrelated.txt": "" });
    const err = await call(readFileTool, { path: "conf/config.yml" }, ctx).catch((e: Error) => e.message);
    expect(err).toMatch(/^File not found: conf\/config\.yml\. Did you mean: /);
    expect(err).toContain("conf/Config.yml");
    expect(err).toContain("conf/config.yaml");
    expect(err).not.toContain("unrelated");
  });

  it("says plainly when nothing similar exists", async () => {
    const ctx = fileToolContext();
    await expect(call(readFileTool, { path: "nowhere/x.ts" }, ctx)).rejects.toThrow(
      /^File not found: nowhere\/x\.ts$/,
    );
  });

  it("points directories at search_files", async () => {
    const ctx = fileToolContext();
    mkdirSync(join(ctx.cwd, "src"));
    await expect(call(readFileTool, { path: "src" }, ctx)).rejects.toThrow(/is a directory.*search_files/);
  });

  it("reads paths outside the working directory, absolute or relative", async () => {
    const ctx = fileToolContext();
    const other = mkdtempSync(join(tmpdir(), "hermes-outside-"));
    writeFileSync(join(other, "x.txt"), "outside\n");
    expect(await call(readFileTool, { path: join(other, "x.txt") }, ctx)).toBe("     1|outside");
    const rel = relative(ctx.cwd, join(other, "x.txt"));
    expect(rel.startsWith("..")).toBe(true);
    expect(await call(readFileTool, { path: rel }, ctx)).toBe("     1|outside");
  });

  it("records what it read for later staleness checks, and is scoped to its path", async () => {
    const ctx = fileToolContext();
    writeTree(ctx.cwd, { "a.txt": "x" });
    await call(readFileTool, { path: "a.txt" }, ctx);
    const reads = ctx.session.get("file.reads") as Map<string, unknown>;
    expect(reads.has(join(ctx.cwd, "a.txt"))).toBe(true);
    expect(readFileTool.pathScoped?.({ path: "a.txt" }, ctx.cwd)).toEqual([join(ctx.cwd, "a.txt")]);
    expect(readFileTool.parallelSafe).toBe(true);
  });
});
