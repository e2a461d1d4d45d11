/**
 * The alias writer: `~/.local/bin/ALIAS` wrappers that run `hermes -p PROFILE`. Each guard is
 * attacked: path-shaped and odd names, a foreign file, a symlink (to a wrapper and to a file
 * outside), a directory, a command of that name on PATH, and a wrapper of another profile.
 */
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import {
  aliasCollision,
  aliasDir,
  aliasDirOnPath,
  aliasesOf,
  removeAlias,
  validateAliasName,
  wrapperScript,
  wrapperTarget,
  writeAlias,
} from "../../../src/config/profile-alias.js";

let root: string;
let userHome: string;
let bin: string;
const launcher = "/opt/hermes/bin/hermes";

function write(alias: string, profile = "work", pathEnv = "") {
  return writeAlias({ alias, profile, userHome, launcher, pathEnv, commandNames: ["chat", "profile"] });
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "hermes-alias-"));
  userHome = join(root, "home");
  mkdirSync(userHome);
  bin = aliasDir(userHome);
});

describe("writeAlias", () => {
  it("writes an executable sh wrapper that passes every argument through to hermes -p PROFILE", () => {
    const path = write("work");
    expect(path).toBe(join(userHome, ".local/bin/work"));
    expect(lstatSync(path).mode & 0o111).not.toBe(0);
    expect(wrapperTarget(path)).toBe("work");
    // Run it for real against a stand-in hermes that prints its argv.
    const fake = join(root, "hermes");
    writeFileSync(fake, '#!/bin/sh\nfor a in "$@"; do printf "[%s]" "$a"; done\n');
    chmodSync(fake, 0o755);
    writeAlias({ alias: "w2", profile: "work", userHome, launcher: fake, pathEnv: "" });
    const out = execFileSync(join(bin, "w2"), ["chat", "-q", "two words", "$HOME"], { encoding: "utf8" });
    expect(out).toBe("[-p][work][chat][-q][two words][$HOME]");
  });

  it("quotes a launcher path with spaces or quotes, and the wrapper still runs it", () => {
    const dir = join(root, "it's here");
    mkdirSync(dir);
    const fake = join(dir, "hermes");
    writeFileSync(fake, '#!/bin/sh\necho "$@"\n');
    chmodSync(fake, 0o755);
    writeAlias({ alias: "q", profile: "work", userHome, launcher: fake, pathEnv: "" });
    expect(wrapperTarget(join(bin, "q"))).toBe("work");
    expect(execFileSync(join(bin, "q"), ["x"], { encoding: "utf8" })).toBe("-p work x\n");
  });

  it("rewrites its own wrapper (another profile, another launcher) in place", () => {
    write("work", "work");
    write("work", "other");
    expect(wrapperTarget(join(bin, "work"))).toBe("other");
    expect(readdirSync(bin)).toEqual(["work"]);
  });

  it.each([
    ["../evil"],
    ["../../.bashrc"],
    ["a/b"],
    ["/etc/passwd"],
    [".."],
    ["."],
    ["my alias"],
    ["Work"],
    ["-rf"],
    [""],
    ["x".repeat(65)],
    ["tab\tname"],
    ["new\nline"],
  ])("refuses the alias name %j before touching the disk", (name) => {
    expect(() => validateAliasName(name)).toThrow(/invalid alias name/);
    expect(() => write(name)).toThrow(/invalid alias name/);
    expect(existsSync(bin)).toBe(false);
    expect(readdirSync(userHome)).toEqual([]);
  });

  it("refuses reserved names and hermes subcommands", () => {
    expect(() => write("hermes")).toThrow(/reserved/);
    expect(() => write("sudo")).toThrow(/reserved/);
    expect(() => write("chat")).toThrow(/hermes subcommand/);
  });

  it("never overwrites a file that is not its own wrapper", () => {
    mkdirSync(bin, { recursive: true });
    const mine = "#!/bin/sh\necho my own tool\n";
    writeFileSync(join(bin, "work"), mine, { mode: 0o755 });
    expect(() => write("work")).toThrow(/not a Hermes alias; it was left alone/);
    expect(readFileSync(join(bin, "work"), "utf8")).toBe(mine);
  });

  it("does not take a look-alike for its wrapper: extra commands, hermes -p in a comment, or text after it", () => {
    mkdirSync(bin, { recursive: true });
    const lookalikes = [
      '#!/bin/sh\nrm -rf ~/important\nexec hermes -p work "$@"\n',
      '#!/bin/sh\n# exec hermes -p work "$@"\necho mine\n',
      '#!/bin/bash\nexec hermes -p work "$@"\n',
      '#!/bin/sh\nexec hermes -p work "$@"; curl evil\n',
      '#!/bin/sh\nexec notthehermes-tool -p work "$@" && x\n',
    ];
    for (const text of lookalikes) {
      writeFileSync(join(bin, "work"), text);
      expect(wrapperTarget(join(bin, "work"))).toBeUndefined();
      expect(() => write("work")).toThrow(/left alone/);
      expect(readFileSync(join(bin, "work"), "utf8")).toBe(text);
    }
  });

  it("accepts upstream's own wrapper as one of its own (one ~/.local/bin serves both)", () => {
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, "work"), '#!/bin/sh\nexec /usr/local/bin/hermes -p work "$@"\n', { mode: 0o755 });
    expect(wrapperTarget(join(bin, "work"))).toBe("work");
    write("work", "work");
    expect(readFileSync(join(bin, "work"), "utf8")).toContain(`exec ${launcher} -p work "$@"`);
  });

  it("refuses a symlink at the target, even one pointing at a wrapper, and writes nothing through it", () => {
    mkdirSync(bin, { recursive: true });
    const outside = join(root, "outside.sh");
    writeFileSync(outside, "precious\n");
    symlinkSync(outside, join(bin, "work"));
    expect(() => write("work")).toThrow(/is a symlink/);
    expect(readFileSync(outside, "utf8")).toBe("precious\n");
    expect(lstatSync(join(bin, "work")).isSymbolicLink()).toBe(true);

    // A link to one of our wrappers is still a link: replacing "it" would write elsewhere.
    write("real");
    symlinkSync(join(bin, "real"), join(bin, "linked"));
    expect(wrapperTarget(join(bin, "linked"))).toBeUndefined();
    expect(() => write("linked")).toThrow(/is a symlink/);
    expect(() => removeAlias("linked", userHome)).toThrow(/is a symlink/);
    expect(existsSync(join(bin, "real"))).toBe(true);

    // A dangling link is refused too.
    symlinkSync(join(root, "nowhere"), join(bin, "dangling"));
    expect(() => write("dangling")).toThrow(/is a symlink/);
    expect(existsSync(join(root, "nowhere"))).toBe(false);
  });

  it("refuses a directory at the target", () => {
    mkdirSync(join(bin, "work"), { recursive: true });
    expect(() => write("work")).toThrow(/not a file/);
  });

  it("refuses a name that is a command elsewhere on PATH, but not its own wrapper on PATH", () => {
    const usr = join(root, "usr-bin");
    mkdirSync(usr);
    writeFileSync(join(usr, "ls"), "#!/bin/sh\n", { mode: 0o755 });
    writeFileSync(join(usr, "notes.txt"), "not executable\n", { mode: 0o644 });
    const pathEnv = `${bin}:${usr}`;
    expect(() => write("ls", "work", pathEnv)).toThrow(/clash with the command .*usr-bin\/ls/);
    expect(existsSync(join(bin, "ls"))).toBe(false);
    // A non-executable file of that name is no command.
    expect(aliasCollision({ alias: "notes.txt", userHome, pathEnv })).toMatch(/invalid alias name/);
    write("work", "work", pathEnv);
    expect(aliasCollision({ alias: "work", userHome, pathEnv })).toBeNull();
  });

  it("tells whether ~/.local/bin is on PATH", () => {
    expect(aliasDirOnPath(userHome, `/usr/bin:${bin}/`)).toBe(true);
    expect(aliasDirOnPath(userHome, "/usr/bin")).toBe(false);
    expect(aliasDirOnPath(userHome, undefined)).toBe(false);
  });
});

describe("removeAlias and aliasesOf", () => {
  it("removes its own wrapper and nothing else", () => {
    write("work");
    write("w", "work");
    write("other", "other");
    expect(aliasesOf("work", userHome)).toEqual(["w", "work"]);
    expect(removeAlias("work", userHome, "work")).toBe(join(bin, "work"));
    expect(existsSync(join(bin, "work"))).toBe(false);
    expect(aliasesOf("work", userHome)).toEqual(["w"]);
  });

  it("refuses to remove a foreign file, a wrapper of another profile, a missing alias, or a path", () => {
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, "tool"), "#!/bin/sh\necho hi\n", { mode: 0o755 });
    expect(() => removeAlias("tool", userHome)).toThrow(/not a Hermes alias/);
    expect(existsSync(join(bin, "tool"))).toBe(true);
    write("other", "other");
    expect(() => removeAlias("other", userHome, "work")).toThrow(/runs profile "other", not "work"/);
    expect(existsSync(join(bin, "other"))).toBe(true);
    expect(() => removeAlias("gone", userHome)).toThrow(/there is no alias/);
    writeFileSync(join(root, "victim"), "x");
    expect(() => removeAlias("../../victim", userHome)).toThrow(/invalid alias name/);
    expect(existsSync(join(root, "victim"))).toBe(true);
  });

  it("wrapperScript names the profile and the launcher on the exec line", () => {
    expect(wrapperScript("work", "hermes")).toMatch(/^#!\/bin\/sh\n#.*\nexec hermes -p work "\$@"\n$/);
  });
});
