import { mkdirSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { searchFilesTool } from "../../../../src/tools/file/search-files.js";
import { findRipgrep } from "../../../../src/tools/file/search-rg.js";
import { call, fileToolContext, writeTree } from "./helpers.js";

const rgPath = findRipgrep(process.env.PATH);
const hasRg = rgPath !== undefined;

// The same behaviour is expected from both back ends; ripgrep's run is skipped where it is absent.
describe.each([
  { backend: "walker", path: "", skip: false },
  { backend: "ripgrep", path: process.env.PATH ?? "", skip: !hasRg },
])("search_files ($backend)", ({ path, skip }) => {
  const context = () => fileToolContext({ env: { PATH: path, HOME: process.env.HOME } });
  const search = (ctx: ReturnType<typeof context>, args: Parameters<typeof searchFilesTool.handler>[0]) =>
    call(searchFilesTool, args, ctx);

  it.skipIf(skip)("finds lines as path:line:text, in path order, with unicode", async () => {
    const ctx = context();
    writeTree(ctx.cwd, {
      "src/b.ts": "const x = 1;\n// TODO: café ☕\n",
      "src/a.ts": "// TODO first\nplain\n",
      "README.md": "nothing here\n",
    });
    const out = await search(ctx, { pattern: "TODO" });
    expect(out).toBe("src/a.ts:1:// TODO first\nsrc/b.ts:2:// TODO: café ☕");
  });

  it.skipIf(skip)(
    "honours .gitignore (nested too) and skips .git, node_modules and binary files",
    async () => {
      const ctx = context();
      writeTree(ctx.cwd, {
        ".gitignore": "dist/\n*.log\n",
        "dist/out.js": "needle\n",
        "app.log": "needle\n",
        "lib/.gitignore": "secret.txt\n",
        "lib/secret.txt": "needle\n",
        "lib/open.txt": "needle\n",
        "node_modules/pkg/index.js": "needle\n",
        ".git/config": "needle\n",
        "img.bin": Buffer.concat([Buffer.from("needle"), Buffer.from([0, 1, 2])]),
        ".hidden/visible.txt": "needle\n",
        "keep.txt": "needle\n",
      });
      const out = await search(ctx, { pattern: "needle", output_mode: "files_only" });
      expect(out.split("\n").sort()).toEqual([".hidden/visible.txt", "keep.txt", "lib/open.txt"]);
    },
  );

  it.skipIf(skip)("shows context lines, marked with '-' and grouped with '--'", async () => {
    const ctx = context();
    writeTree(ctx.cwd, { "f.txt": ["a", "b", "HIT", "c", "d", "e", "f", "g", "HIT", "h"].join("\n") });
    const out = await search(ctx, { pattern: "HIT", context: 1 });
    expect(out).toBe(
      ["f.txt-2-b", "f.txt:3:HIT", "f.txt-4-c", "--", "f.txt-8-g", "f.txt:9:HIT", "f.txt-10-h"].join("\n"),
    );
  });

  it.skipIf(skip)("pages by offset and says how to get the next page", async () => {
    const ctx = context();
    writeTree(ctx.cwd, { "many.txt": Array.from({ length: 120 }, (_, i) => `match ${i + 1}`).join("\n") });
    const first = await search(ctx, { pattern: "match" });
    expect(first.split("\n").filter((l) => l.startsWith("many.txt:"))).toHaveLength(50);
    expect(first).toContain("Next page: offset=50");
    const second = await search(ctx, { pattern: "match", offset: 50, limit: 10 });
    expect(second.split("\n")[0]).toBe("many.txt:51:match 51");
    expect(second).toContain("matches 51-60");
    const last = await search(ctx, { pattern: "match", offset: 115 });
    expect(last).toContain("many.txt:120:match 120");
    expect(last).toContain("no more");
  });

  it.skipIf(skip)("counts matches per file and filters by file_glob", async () => {
    const ctx = context();
    writeTree(ctx.cwd, { "a.py": "x\nx\n", "b.py": "x\n", "c.ts": "x\n" });
    expect(await search(ctx, { pattern: "x", output_mode: "count", file_glob: "*.py" })).toBe(
      "a.py:2\nb.py:1",
    );
  });

  it.skipIf(skip)("supports case-insensitive search with (?i)", async () => {
    const ctx = context();
    writeTree(ctx.cwd, { "a.txt": "Hello\nhello\nHELLO\n" });
    expect(await search(ctx, { pattern: "(?i)hello", output_mode: "count" })).toBe("a.txt:3");
  });

  it.skipIf(skip)("searches a single file or a folder outside the working directory", async () => {
    const ctx = context();
    const other = fileToolContext().cwd;
    writeTree(other, { "x.txt": "far away\n" });
    expect(await search(ctx, { pattern: "far", path: join(other, "x.txt") })).toBe(
      `${join(other, "x.txt")}:1:far away`,
    );
    expect(await search(ctx, { pattern: "far", path: other })).toBe(`${join(other, "x.txt")}:1:far away`);
  });

  it.skipIf(skip)("says so when nothing matches, and rejects an invalid regex", async () => {
    const ctx = context();
    writeTree(ctx.cwd, { "a.txt": "abc\n" });
    expect(await search(ctx, { pattern: "zzz" })).toMatch(/^No matches for "zzz"/);
    await expect(search(ctx, { pattern: "foo(" })).rejects.toThrow(/[Ii]nvalid regex/);
  });

  it.skipIf(skip)("finds files by name glob, newest first, and pages them", async () => {
    const ctx = context();
    writeTree(ctx.cwd, {
      "old.ts": "",
      "src/mid.ts": "",
      "src/new.ts": "",
      "note.md": "",
      "ignored/x.ts": "",
      ".gitignore": "ignored/\n",
    });
    const stamp = (rel: string, t: number) => utimesSync(join(ctx.cwd, rel), t, t);
    stamp("old.ts", 1_000_000);
    stamp("src/mid.ts", 2_000_000);
    stamp("src/new.ts", 3_000_000);
    expect(await search(ctx, { pattern: "*.ts", target: "files" })).toBe("src/new.ts\nsrc/mid.ts\nold.ts");
    const page = await search(ctx, { pattern: "*.ts", target: "files", limit: 2 });
    expect(page).toBe("src/new.ts\nsrc/mid.ts\n[1-2 of 3 files, newest first. Next page: offset=2.]");
    expect(await search(ctx, { pattern: "src/*.ts", target: "files", offset: 1 })).toMatch(/^src\/mid\.ts\n/);
    expect(await search(ctx, { pattern: "NOTE", target: "files" })).toBe("note.md");
  });
});

describe("search_files (common)", () => {
  it("reports a missing search path with suggestions", async () => {
    const ctx = fileToolContext();
    mkdirSync(join(ctx.cwd, "source"));
    await expect(call(searchFilesTool, { pattern: "x", path: "sourc" }, ctx)).rejects.toThrow(
      /Path not found: sourc\. Did you mean: source/,
    );
  });

  it("stops when the turn is interrupted", async () => {
    const controller = new AbortController();
    controller.abort();
    const ctx = fileToolContext({ signal: controller.signal });
    writeTree(ctx.cwd, { "a/b.txt": "x\n" });
    await expect(call(searchFilesTool, { pattern: "x" }, ctx)).rejects.toThrow(/cancelled/);
  });

  it("is parallel-safe", () => {
    expect(searchFilesTool.parallelSafe).toBe(true);
  });
});
