import { existsSync, readFileSync, statSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { patchTool } from "../../../../src/tools/file/patch.js";
import { readFileTool } from "../../../../src/tools/file/read-file.js";
import { call, fileToolContext, writeTree } from "./helpers.js";

const read = (root: string, rel: string) => readFileSync(join(root, rel), "utf8");

describe("patch, replace mode", () => {
  it("replaces a unique match and returns a unified diff", async () => {
    const ctx = fileToolContext();
    writeTree(ctx.cwd, { "src/app.ts": "const a = 1;\nconst b = 2;\n" });
    const out = await call(
      patchTool,
      { path: "src/app.ts", old_string: "const b = 2;", new_string: "const b = 3;" },
      ctx,
    );
    expect(read(ctx.cwd, "src/app.ts")).toBe("const a = 1;\nconst b = 3;\n");
    expect(out).toContain("Patched src/app.ts (1 replacement)");
    expect(out).toContain("--- a/src/app.ts\n+++ b/src/app.ts");
    expect(out).toContain("-const b = 2;\n+const b = 3;");
  });

  it("refuses an ambiguous match, saying how many, and changes nothing", async () => {
    const ctx = fileToolContext();
    writeTree(ctx.cwd, { "x.py": "x = 1\nx = 1\n" });
    await expect(
      call(patchTool, { path: "x.py", old_string: "x = 1", new_string: "x = 2" }, ctx),
    ).rejects.toThrow(/matches 2 places.*replace_all/);
    expect(read(ctx.cwd, "x.py")).toBe("x = 1\nx = 1\n");
    const out = await call(
      patchTool,
      { path: "x.py", old_string: "x = 1", new_string: "x = 2", replace_all: true },
      ctx,
    );
    expect(out).toContain("2 replacements");
    expect(read(ctx.cwd, "x.py")).toBe("x = 2\nx = 2\n");
  });

  it("tolerates whitespace drift and reports the strategy used", async () => {
    const ctx = fileToolContext();
    writeTree(ctx.cwd, { "m.py": "class M:\n    def go(self):  \n        return 1\n" });
    const out = await call(
      patchTool,
      { path: "m.py", old_string: "def go(self):\n    return 1", new_string: "def go(self):\n    return 2" },
      ctx,
    );
    expect(out).toContain("matched indentation-insensitive");
    expect(read(ctx.cwd, "m.py")).toBe("class M:\n    def go(self):\n        return 2\n");
  });

  it("keeps unicode and CRLF line endings", async () => {
    const ctx = fileToolContext();
    writeTree(ctx.cwd, { "w.txt": "naïve café\r\n日本\r\n" });
    await call(
      patchTool,
      { path: "w.txt", old_string: "naïve café\n日本", new_string: "naïve café\n中文 🎉" },
      ctx,
    );
    expect(read(ctx.cwd, "w.txt")).toBe("naïve café\r\n中文 🎉\r\n");
  });

  it("explains a miss so the model can recover", async () => {
    const ctx = fileToolContext();
    writeTree(ctx.cwd, { "a.txt": "one\ntwo\n" });
    await expect(
      call(patchTool, { path: "a.txt", old_string: "three", new_string: "3" }, ctx),
    ).rejects.toThrow(/not found in a\.txt.*Re-read the file/);
    await expect(call(patchTool, { path: "b.txt", old_string: "x", new_string: "y" }, ctx)).rejects.toThrow(
      /File not found: b\.txt\. Did you mean: a\.txt/,
    );
    await expect(
      call(patchTool, { path: "a.txt", old_string: "one", new_string: "one" }, ctx),
    ).rejects.toThrow(/identical/);
    await expect(call(patchTool, { path: "a.txt", old_string: "one" }, ctx)).rejects.toThrow(
      /needs `path`, `old_string` and `new_string`/,
    );
  });

  it("refuses a file changed since it was read", async () => {
    const ctx = fileToolContext();
    writeTree(ctx.cwd, { "s.txt": "alpha\n" });
    await call(readFileTool, { path: "s.txt" }, ctx);
    const t = statSync(join(ctx.cwd, "s.txt")).mtime.getTime() / 1000 + 60;
    utimesSync(join(ctx.cwd, "s.txt"), t, t);
    await expect(
      call(patchTool, { path: "s.txt", old_string: "alpha", new_string: "beta" }, ctx),
    ).rejects.toThrow(/modified on disk/);
    expect(read(ctx.cwd, "s.txt")).toBe("alpha\n");
  });

  it("allows consecutive patches to the same file", async () => {
    const ctx = fileToolContext();
    writeTree(ctx.cwd, { "c.txt": "1\n2\n" });
    await call(readFileTool, { path: "c.txt" }, ctx);
    await call(patchTool, { path: "c.txt", old_string: "1", new_string: "one" }, ctx);
    await call(patchTool, { path: "c.txt", old_string: "2", new_string: "two" }, ctx);
    expect(read(ctx.cwd, "c.txt")).toBe("one\ntwo\n");
  });

  it("refuses protected files", async () => {
    const ctx = fileToolContext();
    writeTree(ctx.home, { ".env": "KEY=1\n" });
    await expect(
      call(patchTool, { path: join(ctx.home, ".env"), old_string: "KEY=1", new_string: "KEY=2" }, ctx),
    ).rejects.toThrow(/Refusing/);
    expect(read(ctx.home, ".env")).toBe("KEY=1\n");
  });
});

describe("patch, V4A patch mode", () => {
  const tree = { "a.txt": "alpha\nbeta\ngamma\n", "b.txt": "one\ntwo\n", "old.txt": "bye\n" };

  it("applies a multi-file patch and returns a combined diff", async () => {
    const ctx = fileToolContext();
    writeTree(ctx.cwd, tree);
    const patch = [
      "*** Begin Patch",
      "*** Update File: a.txt",
      " alpha",
      "-beta",
      "+BETA",
      "*** Update File: b.txt",
      "*** Move to: sub/b2.txt",
      "-two",
      "+deux",
      "*** Add File: new/c.txt",
      "+fresh ✨",
      "*** Delete File: old.txt",
      "*** End Patch",
    ].join("\n");
    const out = await call(patchTool, { mode: "patch", patch }, ctx);
    expect(read(ctx.cwd, "a.txt")).toBe("alpha\nBETA\ngamma\n");
    expect(existsSync(join(ctx.cwd, "b.txt"))).toBe(false);
    expect(read(ctx.cwd, "sub/b2.txt")).toBe("one\ndeux\n");
    expect(read(ctx.cwd, "new/c.txt")).toBe("fresh ✨\n");
    expect(existsSync(join(ctx.cwd, "old.txt"))).toBe(false);
    expect(out).toMatch(
      /^Patch applied: updated a\.txt, deleted b\.txt, added sub\/b2\.txt, added new\/c\.txt, deleted old\.txt\./,
    );
    expect(out).toContain("+++ b/new/c.txt");
    expect(out).toContain("--- a/old.txt\n+++ /dev/null");
  });

  it("changes nothing when any hunk fails", async () => {
    const ctx = fileToolContext();
    writeTree(ctx.cwd, tree);
    const patch = [
      "*** Begin Patch",
      "*** Update File: a.txt",
      "-beta",
      "+BETA",
      "*** Add File: added.txt",
      "+x",
      "*** Delete File: old.txt",
      "*** Update File: b.txt",
      "-three",
      "+drei",
      "*** End Patch",
    ].join("\n");
    await expect(call(patchTool, { mode: "patch", patch }, ctx)).rejects.toThrow(
      /Patch not applied, no files were changed: in b\.txt, hunk 1 .*cannot find these lines/s,
    );
    expect(read(ctx.cwd, "a.txt")).toBe(tree["a.txt"]);
    expect(read(ctx.cwd, "old.txt")).toBe(tree["old.txt"]);
    expect(existsSync(join(ctx.cwd, "added.txt"))).toBe(false);
  });

  it("changes nothing when one file is protected, stale or missing", async () => {
    const ctx = fileToolContext();
    writeTree(ctx.cwd, tree);
    const withSecond = (second: string) =>
      `*** Begin Patch\n*** Update File: a.txt\n-beta\n+BETA\n${second}\n*** End Patch`;
    await expect(
      call(
        patchTool,
        { mode: "patch", patch: withSecond(`*** Add File: ${join(ctx.home, "auth.json")}\n+{}`) },
        ctx,
      ),
    ).rejects.toThrow(/no files were changed: Refusing/);
    await expect(
      call(patchTool, { mode: "patch", patch: withSecond("*** Delete File: nope.txt") }, ctx),
    ).rejects.toThrow(/File not found: nope\.txt/);
    await expect(
      call(patchTool, { mode: "patch", patch: withSecond("*** Add File: b.txt\n+x") }, ctx),
    ).rejects.toThrow(/already exists/);
    await call(readFileTool, { path: "b.txt" }, ctx);
    const t = statSync(join(ctx.cwd, "b.txt")).mtime.getTime() / 1000 + 60;
    utimesSync(join(ctx.cwd, "b.txt"), t, t);
    await expect(
      call(patchTool, { mode: "patch", patch: withSecond("*** Update File: b.txt\n-one\n+1") }, ctx),
    ).rejects.toThrow(/modified on disk/);
    expect(read(ctx.cwd, "a.txt")).toBe(tree["a.txt"]);
  });

  it("applies two sections for the same file in sequence", async () => {
    const ctx = fileToolContext();
    writeTree(ctx.cwd, tree);
    const patch =
      "*** Begin Patch\n*** Update File: a.txt\n-alpha\n+ALPHA\n*** Update File: a.txt\n-gamma\n+GAMMA\n*** End Patch";
    await call(patchTool, { mode: "patch", patch }, ctx);
    expect(read(ctx.cwd, "a.txt")).toBe("ALPHA\nbeta\nGAMMA\n");
  });

  it("rejects a malformed patch and a missing patch argument", async () => {
    const ctx = fileToolContext();
    await expect(
      call(patchTool, { mode: "patch", patch: "*** Begin Patch\nhello\n*** End Patch" }, ctx),
    ).rejects.toThrow(/Malformed patch at line 2.*No files were changed/);
    await expect(call(patchTool, { mode: "patch" }, ctx)).rejects.toThrow(/needs the `patch` argument/);
  });

  it("scopes itself to every path the patch names", () => {
    const patch =
      "*** Begin Patch\n*** Update File: a.ts\n*** Move to: b.ts\n-x\n+y\n*** Add File: /tmp/c.ts\n+z\n*** End Patch";
    expect(patchTool.pathScoped?.({ mode: "patch", patch }, "/w")).toEqual([
      "/w/a.ts",
      "/w/b.ts",
      "/tmp/c.ts",
    ]);
    expect(patchTool.pathScoped?.({ path: "d.ts", old_string: "a", new_string: "b" }, "/w")).toEqual([
      "/w/d.ts",
    ]);
  });
});
