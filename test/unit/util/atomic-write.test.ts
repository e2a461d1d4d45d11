import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { atomicWriteFile, atomicWriteFileSync } from "../../../src/util/atomic-write.js";

const fresh = () => mkdtempSync(join(tmpdir(), "hermes-atomic-"));

describe.each([
  ["async", atomicWriteFile],
  ["sync", async (p: string, d: string | Uint8Array, o?: { mode?: number }) => atomicWriteFileSync(p, d, o)],
])("atomicWriteFile (%s)", (_name, write) => {
  it("creates and replaces a file, leaving no temp files", async () => {
    const dir = fresh();
    const path = join(dir, "a.txt");
    await write(path, "one ✓");
    await write(path, "two ✓");
    expect(readFileSync(path, "utf8")).toBe("two ✓");
    expect(readdirSync(dir)).toEqual(["a.txt"]);
  });

  it("keeps the mode of the file it replaces", async () => {
    const path = join(fresh(), "run.sh");
    writeFileSync(path, "#!/bin/sh\n");
    chmodSync(path, 0o750);
    await write(path, "#!/bin/sh\necho hi\n");
    expect(statSync(path).mode & 0o777).toBe(0o750);
  });

  it("applies an explicit mode exactly, whatever the umask", async () => {
    const path = join(fresh(), ".env");
    await write(path, "KEY=1\n", { mode: 0o600 });
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it("writes through a symlink and keeps the link", async () => {
    const dir = fresh();
    writeFileSync(join(dir, "real.txt"), "old");
    symlinkSync(join(dir, "real.txt"), join(dir, "link.txt"));
    await write(join(dir, "link.txt"), "new");
    expect(readFileSync(join(dir, "real.txt"), "utf8")).toBe("new");
    expect(readdirSync(dir).sort()).toEqual(["link.txt", "real.txt"]);
  });

  it("writes through a dangling symlink (relative, via a second link) to the file it names, keeping the links", async () => {
    const dir = fresh();
    mkdirSync(join(dir, "sub"));
    symlinkSync("sub/missing.txt", join(dir, "hop.txt"));
    symlinkSync("hop.txt", join(dir, "link.txt"));
    await write(join(dir, "link.txt"), "created");
    expect(readFileSync(join(dir, "sub", "missing.txt"), "utf8")).toBe("created");
    expect(lstatSync(join(dir, "link.txt")).isSymbolicLink()).toBe(true);
    expect(lstatSync(join(dir, "hop.txt")).isSymbolicLink()).toBe(true);
    expect(readdirSync(dir).sort()).toEqual(["hop.txt", "link.txt", "sub"]);
  });

  it("refuses a symlink loop instead of replacing the link", async () => {
    const dir = fresh();
    symlinkSync("b", join(dir, "a"));
    symlinkSync("a", join(dir, "b"));
    await expect(write(join(dir, "a"), "x")).rejects.toThrow(/symbolic links/);
    expect(lstatSync(join(dir, "a")).isSymbolicLink()).toBe(true);
  });

  it("fails without leaving anything behind when the folder is missing", async () => {
    const dir = fresh();
    await expect(write(join(dir, "nope", "a.txt"), "x")).rejects.toThrow(/ENOENT/);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("writes bytes as given", async () => {
    const path = join(fresh(), "b.bin");
    await write(path, new Uint8Array([0, 255, 10]));
    expect([...readFileSync(path)]).toEqual([0, 255, 10]);
  });
});
