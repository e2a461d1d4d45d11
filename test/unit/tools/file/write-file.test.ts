import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  utimesSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readFileTool } from "../../../../src/tools/file/read-file.js";
import { writeFileTool } from "../../../../src/tools/file/write-file.js";
import { call, fileToolContext, writeTree } from "./helpers.js";

/** Moves a file's mtime, as an outside edit would, without waiting for the clock. */
function touchLater(path: string): void {
  const t = statSync(path).mtime.getTime() / 1000 + 60;
  utimesSync(path, t, t);
}

describe("write_file", () => {
  it("creates a file and its folders, and says so", async () => {
    const ctx = fileToolContext();
    const out = await call(writeFileTool, { path: "a/b/c.txt", content: "héllo\nwörld\n" }, ctx);
    expect(readFileSync(join(ctx.cwd, "a/b/c.txt"), "utf8")).toBe("héllo\nwörld\n");
    expect(out).toBe("Created a/b/c.txt (14 bytes, 2 lines).");
  });

  it("overwrites atomically, keeping the file's mode and leaving no temp files", async () => {
    const ctx = fileToolContext();
    writeTree(ctx.cwd, { "run.sh": "old" });
    chmodSync(join(ctx.cwd, "run.sh"), 0o755);
    const out = await call(writeFileTool, { path: "run.sh", content: "#!/bin/sh\n" }, ctx);
    expect(out).toMatch(/^Overwrote run\.sh/);
    expect(statSync(join(ctx.cwd, "run.sh")).mode & 0o777).toBe(0o755);
    expect(readdirSync(ctx.cwd)).toEqual(["run.sh"]);
  });

  it("writes outside the working directory when given such a path", async () => {
    const ctx = fileToolContext();
    const other = mkdtempSync(join(tmpdir(), "hermes-out-"));
    const out = await call(writeFileTool, { path: join(other, "x.txt"), content: "x" }, ctx);
    expect(readFileSync(join(other, "x.txt"), "utf8")).toBe("x");
    expect(out).toContain(join(other, "x.txt"));
  });

  it("refuses to overwrite a file changed on disk since it was read, until it is read again", async () => {
    const ctx = fileToolContext();
    writeTree(ctx.cwd, { "notes.md": "v1" });
    await call(readFileTool, { path: "notes.md" }, ctx);
    writeTree(ctx.cwd, { "notes.md": "v2 by the user" });
    touchLater(join(ctx.cwd, "notes.md"));
    await expect(call(writeFileTool, { path: "notes.md", content: "v3" }, ctx)).rejects.toThrow(
      /modified on disk after you last read it.*read_file/,
    );
    expect(readFileSync(join(ctx.cwd, "notes.md"), "utf8")).toBe("v2 by the user");
    await call(readFileTool, { path: "notes.md" }, ctx);
    await call(writeFileTool, { path: "notes.md", content: "v3" }, ctx);
    expect(readFileSync(join(ctx.cwd, "notes.md"), "utf8")).toBe("v3");
  });

  it("does not require a read before writing, and its own writes never count as stale", async () => {
    const ctx = fileToolContext();
    writeTree(ctx.cwd, { "x.txt": "never read" });
    await call(writeFileTool, { path: "x.txt", content: "one" }, ctx);
    await call(writeFileTool, { path: "x.txt", content: "two, longer" }, ctx);
    expect(readFileSync(join(ctx.cwd, "x.txt"), "utf8")).toBe("two, longer");
  });

  it("refuses Hermes secrets in HERMES_HOME, including profiles", async () => {
    const ctx = fileToolContext();
    for (const rel of [".env", "auth.json", "profiles/work/.env", "profiles/work/auth.json"]) {
      await expect(call(writeFileTool, { path: join(ctx.home, rel), content: "x" }, ctx)).rejects.toThrow(
        /Refusing to write .*(secrets file|credential store)/,
      );
    }
    expect(() => statSync(join(ctx.home, ".env"))).toThrow();
    // A .env in a project is ordinary.
    await call(writeFileTool, { path: ".env", content: "A=1\n" }, ctx);
  });

  it("refuses SSH and credential files in the user's home", async () => {
    const fakeHome = mkdtempSync(join(tmpdir(), "hermes-home-"));
    const ctx = fileToolContext({ env: { PATH: "", HOME: fakeHome } });
    for (const rel of [
      ".ssh/authorized_keys",
      ".ssh/id_ed25519",
      ".ssh/config",
      ".netrc",
      ".git-credentials",
      ".npmrc",
    ]) {
      await expect(call(writeFileTool, { path: join(fakeHome, rel), content: "x" }, ctx)).rejects.toThrow(
        /Refusing/,
      );
    }
    expect(readdirSync(fakeHome)).toEqual([]);
    // The whole of ~/.ssh is credentials now, known_hosts included; a look-alike folder is not.
    await expect(
      call(writeFileTool, { path: join(fakeHome, ".ssh/known_hosts"), content: "x" }, ctx),
    ).rejects.toThrow(/Refusing/);
    await call(writeFileTool, { path: join(fakeHome, ".ssh-notes/known_hosts"), content: "ok" }, ctx);
  });

  it("sees through symlinks to protected files", async () => {
    const fakeHome = mkdtempSync(join(tmpdir(), "hermes-home-"));
    const ctx = fileToolContext({ env: { PATH: "", HOME: fakeHome } });
    mkdirSync(join(fakeHome, ".ssh"));
    symlinkSync(join(fakeHome, ".ssh"), join(ctx.cwd, "keys"));
    await expect(call(writeFileTool, { path: "keys/authorized_keys", content: "x" }, ctx)).rejects.toThrow(
      /Refusing/,
    );
  });

  it("refuses a directory path", async () => {
    const ctx = fileToolContext();
    mkdirSync(join(ctx.cwd, "d"));
    await expect(call(writeFileTool, { path: "d", content: "x" }, ctx)).rejects.toThrow(/is a directory/);
  });
});
