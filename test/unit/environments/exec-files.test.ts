import { randomBytes } from "node:crypto";
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createExecFiles,
  downloadOver,
  EnvFsError,
  parseStat,
  shq,
  uploadOver,
} from "../../../src/environments/exec-files.js";
import { busyboxPath, localChannel } from "../../support/local-channel.js";

/** Names a careless quoting would break: spaces, quotes, a newline, a leading dash, `$`, glob and unicode. */
const AWKWARD = [
  "with space.txt",
  'it\'s "quoted".txt',
  "new\nline.txt",
  "-leading-dash",
  "$HOME `x` *?.txt",
  "ünï çødé ✓",
];

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "hermes-exec-files-"));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("shq", () => {
  it.each(["plain", "", "a'b", "'", "''", "$(rm -rf /)", "a\nb", "-n", "\\'"])(
    "round-trips %j through bash",
    async (word) => {
      const result = await localChannel().exec(`printf %s ${shq(word)}`);
      expect(result.stdout.toString()).toBe(word);
    },
  );
});

describe("parseStat", () => {
  it("reads type, size, mtime and mode from stat -c '%f %s %Y'", () => {
    expect(parseStat("81a4 12 1700000000\n")).toEqual({
      type: "file",
      size: 12,
      mtimeMs: 1_700_000_000_000,
      mode: 0o644,
    });
    expect(parseStat("41ed 4096 5")).toMatchObject({ type: "dir", mode: 0o755 });
    expect(parseStat("21b6 0 5")).toMatchObject({ type: "other" });
    expect(parseStat("stat: cannot stat")).toBeUndefined();
  });
});

const flavours = [
  { name: "GNU coreutils", busybox: false },
  ...(busyboxPath() ? [{ name: "busybox", busybox: true }] : []),
];

describe.each(flavours)("createExecFiles with $name", ({ busybox }) => {
  const channel = localChannel({ busybox });
  const files = createExecFiles(channel);
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(root, busybox ? "bb-" : "gnu-"));
  });

  it("runs the flavour of coreutils it names", async () => {
    const result = await channel.exec('readlink -f "$(command -v stat)"');
    expect(result.stdout.toString().trim().endsWith("busybox")).toBe(busybox);
  });

  it.each(AWKWARD)("writes, stats, reads and lists %j", async (name) => {
    const path = join(dir, "awkward", name);
    await files.write(path, `content of ${name}\n`);
    expect(readFileSync(path, "utf8")).toBe(`content of ${name}\n`);
    expect((await files.read(path)).toString()).toBe(`content of ${name}\n`);
    const stat = await files.stat(path);
    expect(stat).toMatchObject({ type: "file", size: Buffer.byteLength(`content of ${name}\n`) });
    expect(Math.abs((stat?.mtimeMs ?? 0) - statSync(path).mtimeMs)).toBeLessThan(1500);
    expect((await files.list(join(dir, "awkward"))).map((e) => e.name)).toContain(name);
  });

  it("keeps binary content byte for byte, NULs and invalid UTF-8 included", async () => {
    const bytes = Buffer.concat([Buffer.from([0, 255, 254, 0, 10, 13, 0xc3]), randomBytes(70_000)]);
    const path = join(dir, "bin.dat");
    await files.write(path, bytes);
    expect(readFileSync(path).equals(bytes)).toBe(true);
    expect((await files.read(path)).equals(bytes)).toBe(true);
    expect((await files.read(path, { maxBytes: 5 })).equals(bytes.subarray(0, 5))).toBe(true);
    expect((await files.read(path, { maxBytes: 0 })).length).toBe(0);
  });

  it("moves a big file (24 MB) both ways intact", async () => {
    const bytes = randomBytes(24 * 1024 * 1024);
    const path = join(dir, "big.bin");
    await files.write(path, bytes);
    expect(statSync(path).size).toBe(bytes.length);
    expect((await files.read(path)).equals(bytes)).toBe(true);
  });

  it("keeps an existing file's mode, applies the requested mode to a new one, else the umask", async () => {
    const existing = join(dir, "script.sh");
    writeFileSync(existing, "old");
    chmodSync(existing, 0o751);
    await files.write(existing, "new", { mode: 0o600 });
    expect(statSync(existing).mode & 0o777).toBe(0o751);
    expect(readFileSync(existing, "utf8")).toBe("new");
    const fresh = join(dir, "secret.txt");
    await files.write(fresh, "x", { mode: 0o600 });
    expect(statSync(fresh).mode & 0o777).toBe(0o600);
    const plain = join(dir, "plain.txt");
    await files.write(plain, "x");
    expect(statSync(plain).mode & 0o777).toBe(0o666 & ~process.umask());
  });

  it("writes through a symlink to its target and leaves the link a link", async () => {
    const target = join(dir, "target.txt");
    const link = join(dir, "link.txt");
    writeFileSync(target, "before");
    symlinkSync(target, link);
    await files.write(link, "after");
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe(target);
    expect(readFileSync(target, "utf8")).toBe("after");
    expect(await files.stat(link)).toMatchObject({ type: "file", size: 5 });
  });

  it("leaves no temporary file behind, and none when the write fails", async () => {
    const sub = join(dir, "clean");
    await files.write(join(sub, "a.txt"), "a");
    mkdirSync(join(sub, "isdir"));
    await expect(files.write(join(sub, "isdir"), "x")).rejects.toMatchObject({ code: "EISDIR" });
    expect((await files.list(sub)).map((e) => e.name).sort()).toEqual(["a.txt", "isdir"]);
  });

  it("lists dotfiles, directories and symlinks with their types; an empty dir is empty", async () => {
    const sub = join(dir, "listing");
    mkdirSync(join(sub, "child"), { recursive: true });
    writeFileSync(join(sub, ".hidden"), "");
    writeFileSync(join(sub, "file"), "");
    symlinkSync("/nonexistent", join(sub, "dangling"));
    mkdirSync(join(sub, "empty"));
    const entries = await files.list(sub);
    expect(entries.sort((a, b) => a.name.localeCompare(b.name))).toEqual([
      { name: ".hidden", type: "file" },
      { name: "child", type: "dir" },
      { name: "dangling", type: "symlink" },
      { name: "empty", type: "dir" },
      { name: "file", type: "file" },
    ]);
    expect(await files.list(join(sub, "empty"))).toEqual([]);
  });

  it("reports missing paths and wrong types as Node-style codes", async () => {
    const missing = join(dir, "no", "such", "file");
    expect(await files.stat(missing)).toBeUndefined();
    expect(await files.stat(join(dir, "listing", "dangling"))).toBeUndefined();
    await expect(files.read(missing)).rejects.toMatchObject({ code: "ENOENT", path: missing });
    await expect(files.read(dir)).rejects.toMatchObject({ code: "EISDIR" });
    await expect(files.list(missing)).rejects.toMatchObject({ code: "ENOENT" });
    writeFileSync(join(dir, "afile"), "x");
    await expect(files.list(join(dir, "afile"))).rejects.toMatchObject({ code: "ENOTDIR" });
    await expect(files.write(join(dir, "afile", "under"), "x")).rejects.toMatchObject({ code: "ENOTDIR" });
    await expect(files.mkdir(join(dir, "afile"))).rejects.toMatchObject({ code: "EEXIST" });
    const error = await files.read(missing).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EnvFsError);
    expect(String((error as Error).message)).toContain(missing);
  });

  it("mkdir creates parents and is quiet when the directory exists; remove deletes trees and is quiet when absent", async () => {
    const deep = join(dir, "-m", "a b", "c");
    await files.mkdir(deep);
    await files.mkdir(deep);
    expect(statSync(deep).isDirectory()).toBe(true);
    writeFileSync(join(deep, "f"), "x");
    await files.remove(join(dir, "-m"));
    expect(() => statSync(join(dir, "-m"))).toThrow();
    await files.remove(join(dir, "-m"));
  });

  it("a path that tries to break out of its quotes is just a name", async () => {
    const name = `x'; touch ${join(dir, "pwned")}; echo '`;
    await files.write(join(dir, name), "safe");
    expect(readFileSync(join(dir, name), "utf8")).toBe("safe");
    expect(await files.stat(join(dir, "pwned"))).toBeUndefined();
  });

  it("uploads and downloads a directory tree with awkward names, modes and binary files", async () => {
    const src = join(dir, "host-src");
    mkdirSync(join(src, "sub dir"), { recursive: true });
    const bin = randomBytes(300_000);
    writeFileSync(join(src, "sub dir", "data.bin"), bin);
    for (const name of AWKWARD) writeFileSync(join(src, name), name);
    writeFileSync(join(src, "run.sh"), "#!/bin/sh\n");
    chmodSync(join(src, "run.sh"), 0o755);
    const envDir = join(dir, "env side", "tree");
    await uploadOver(channel, src, envDir);
    expect(readFileSync(join(envDir, "sub dir", "data.bin")).equals(bin)).toBe(true);
    for (const name of AWKWARD) expect(readFileSync(join(envDir, name), "utf8")).toBe(name);
    expect(statSync(join(envDir, "run.sh")).mode & 0o777).toBe(0o755);

    const back = join(dir, "host-back", "copy");
    await downloadOver(channel, envDir, back);
    expect(readFileSync(join(back, "sub dir", "data.bin")).equals(bin)).toBe(true);
    for (const name of AWKWARD) expect(readFileSync(join(back, name), "utf8")).toBe(name);
    expect(statSync(join(back, "run.sh")).mode & 0o777).toBe(0o755);
  });

  it("uploads a single file under another name, replacing what was there", async () => {
    const src = join(dir, "-src file.txt");
    writeFileSync(src, "uploaded");
    const dest = join(dir, "dest", "renamed 'x'.txt");
    mkdirSync(join(dir, "dest"));
    writeFileSync(dest, "old");
    await uploadOver(channel, src, dest);
    expect(readFileSync(dest, "utf8")).toBe("uploaded");
    expect((await files.list(join(dir, "dest"))).map((e) => e.name)).toEqual(["renamed 'x'.txt"]);
    const back = join(dir, "back.txt");
    await downloadOver(channel, dest, back);
    expect(readFileSync(back, "utf8")).toBe("uploaded");
  });

  it("upload and download of missing paths fail with ENOENT and leave nothing behind", async () => {
    await expect(uploadOver(channel, join(dir, "nope"), join(dir, "up"))).rejects.toMatchObject({
      code: "ENOENT",
    });
    const hostParent = join(dir, "dl");
    await expect(downloadOver(channel, join(dir, "nope"), join(hostParent, "x"))).rejects.toMatchObject({
      code: "ENOENT",
    });
    expect(await files.stat(join(dir, "up"))).toBeUndefined();
    expect(await files.list(hostParent)).toEqual([]);
  });
});
