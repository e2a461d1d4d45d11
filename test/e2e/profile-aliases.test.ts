/**
 * Profile aliases, descriptions and distribution info through the built CLI, in a fake HOME: the
 * wrapper `profile create` makes runs the profile for real, foreign files and symlinks in
 * ~/.local/bin survive every attempt, and rename and delete keep the wrappers in step.
 */
import { execFile } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes } from "../support/cli.js";
import { httpError, reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";
import { hasTmux, Terminal } from "../support/terminal.js";

const llm = useFakeLlm();

function userHome() {
  const dir = mkdtempSync(join(tmpdir(), "hermes-aliases-"));
  const cwd = join(dir, "work");
  mkdirSync(cwd);
  mkdirSync(join(dir, ".hermes"));
  const bin = join(dir, ".local", "bin");
  // HERMES_HOME unset, as for a real user; ~/.local/bin first on PATH, as it usually is.
  const env = { HERMES_HOME: "", PATH: `${bin}:${process.env.PATH ?? "/usr/bin:/bin"}` };
  return { dir, cwd, bin, root: join(dir, ".hermes"), env };
}

describe("hermes profile alias / describe / info", { timeout: 120_000 }, () => {
  it("makes working aliases only in the fake HOME and never touches a file that is not one", async () => {
    const at = userHome();
    const hermes = (...args: string[]) => runHermes(args, { home: at.dir, cwd: at.cwd, env: at.env });
    const realAlias = join(homedir(), ".local", "bin", "work");
    const realBefore = existsSync(realAlias);

    const created = await hermes(
      "profile",
      "create",
      "work",
      "--description",
      "Reads code\nand writes notes.",
    );
    expect(created.code).toBe(0);
    expect(created.stdout).toContain(`Alias: ${join(at.bin, "work")}`);
    expect(created.stdout).toContain("Description: Reads code and writes notes.");

    // The alias runs the built CLI under its profile, passing the arguments through.
    const shown = await new Promise<string>((resolve, reject) =>
      execFile(
        join(at.bin, "work"),
        ["profile", "show"],
        { cwd: at.cwd, env: { ...at.env, HOME: at.dir, NO_COLOR: "1" } },
        (error, stdout, stderr) =>
          error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
      ),
    );
    expect(shown).toMatch(/Profile:\s+work/);
    expect(shown).toContain(join(at.root, "profiles", "work"));
    expect(shown).toMatch(/About:\s+Reads code and writes notes\./);
    expect(shown).toContain(`Alias:    ${join(at.bin, "work")}`);

    expect((await hermes("profile", "create", "scratch", "--no-alias")).code).toBe(0);
    expect(existsSync(join(at.bin, "scratch"))).toBe(false);

    // What the writer must leave alone: the user's own script and a symlink to a file outside.
    const mine = "#!/bin/sh\necho my tool\n";
    writeFileSync(join(at.bin, "mine"), mine, { mode: 0o755 });
    const outside = join(at.dir, "outside.txt");
    writeFileSync(outside, "precious\n");
    symlinkSync(outside, join(at.bin, "linked"));

    const foreign = await hermes("profile", "alias", "scratch", "--name", "mine");
    expect(foreign.code).toBe(2);
    expect(foreign.stderr).toContain("is not a Hermes alias; it was left alone");
    const linked = await hermes("profile", "alias", "scratch", "--name", "linked");
    expect(linked.code).toBe(2);
    expect(linked.stderr).toContain("is a symlink");
    const traversal = await hermes("profile", "alias", "scratch", "--name", "../../evil");
    expect(traversal.code).toBe(2);
    expect(traversal.stderr).toContain("invalid alias name");
    const removeForeign = await hermes("profile", "alias", "scratch", "--remove", "--name", "mine");
    expect(removeForeign.code).toBe(2);

    const made = await hermes("profile", "alias", "scratch", "--name", "s");
    expect(made.code).toBe(0);
    expect(made.stdout).toContain(`Alias ${join(at.bin, "s")} runs: hermes -p scratch`);

    // describe and info.
    expect((await hermes("profile", "describe", "work")).stdout.trim()).toBe("Reads code and writes notes.");
    expect((await hermes("profile", "describe", "scratch", "--text", "Throwaway.")).code).toBe(0);
    const all = await hermes("profile", "describe", "--all");
    expect(all.stdout).toContain("default: (no description)");
    expect(all.stdout).toContain("scratch: Throwaway.");
    // --auto: the profile's own model writes it from SOUL.md and skills, never from its keys.
    const work = join(at.root, "profiles", "work");
    writeFileSync(join(work, "config.yaml"), fakeProviderConfig(llm.url));
    writeFileSync(join(work, "SOUL.md"), "You are a meticulous code reviewer.\n");
    writeFileSync(join(work, ".env"), "TEAM_WIKI_TOKEN=wiki-never-sent-1234\n");
    llm.enqueue(reply().text('Description: "Reviews code\nmeticulously and keeps notes."'));
    const auto = await hermes("profile", "describe", "work", "--auto");
    expect(auto.code, auto.stderr).toBe(0);
    expect(auto.stdout).toContain("Reviews code meticulously and keeps notes.");
    const asked = JSON.stringify(llm.chatRequests.at(-1)?.body ?? {});
    expect(asked).toContain("meticulous code reviewer");
    expect(asked).not.toContain("wiki-never-sent");
    expect(readFileSync(join(work, "profile.yaml"), "utf8")).toContain("description_auto: true");
    expect((await hermes("profile", "describe", "--all")).stdout).toContain(
      "work: Reviews code meticulously and keeps notes. [auto]",
    );
    const both = await hermes("profile", "describe", "work", "--auto", "--text", "x");
    expect(both.code).toBe(2);
    // A model that cannot be reached: exit 1, the old description kept, the way out named.
    llm.enqueue(httpError(500), httpError(500));
    const failed = await hermes("profile", "describe", "work", "--auto");
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain("--text");
    expect((await hermes("profile", "describe", "work")).stdout).toContain("Reviews code meticulously");
    writeFileSync(
      join(at.root, "profiles", "scratch", "distribution.yaml"),
      "name: scratchpad\nversion: 1.2.0\nsource: /srv/dists/scratchpad\ninstalled_at: 2026-11-01T10:00:00Z\n",
    );
    const info = await hermes("profile", "info", "scratch");
    expect(info.stdout).toContain("Distribution: scratchpad@1.2.0");
    expect(info.stdout).toContain("Source:       /srv/dists/scratchpad");
    expect((await hermes("profile", "info", "work")).stdout).toContain(
      "was not installed from a distribution",
    );

    // Rename carries the alias along; delete removes only its own wrappers.
    const renamed = await hermes("profile", "rename", "work", "coder");
    expect(renamed.code).toBe(0);
    expect(existsSync(join(at.bin, "work"))).toBe(false);
    expect(readFileSync(join(at.bin, "coder"), "utf8")).toContain('-p coder "$@"');
    expect((await hermes("profile", "delete", "scratch", "-y")).code).toBe(0);
    expect(existsSync(join(at.bin, "s"))).toBe(false);

    expect(readFileSync(join(at.bin, "mine"), "utf8")).toBe(mine);
    expect(lstatSync(join(at.bin, "linked")).isSymbolicLink()).toBe(true);
    expect(readFileSync(outside, "utf8")).toBe("precious\n");
    expect(readdirSync(at.bin).sort()).toEqual(["coder", "linked", "mine"]);
    // Nothing landed in the real home.
    expect(existsSync(realAlias)).toBe(realBefore);
    expect(existsSync(join(homedir(), ".local", "bin", "coder"))).toBe(false);
  });

  it("skips the alias (and says why) when the name is a command on PATH, still making the profile", async () => {
    const at = userHome();
    const usr = join(at.dir, "usr-bin");
    mkdirSync(usr);
    writeFileSync(join(usr, "tool"), "#!/bin/sh\n", { mode: 0o755 });
    const result = await runHermes(["profile", "create", "tool"], {
      home: at.dir,
      cwd: at.cwd,
      env: { ...at.env, PATH: `${usr}:${at.env.PATH}` },
    });
    expect(result.code).toBe(0);
    expect(existsSync(join(at.root, "profiles", "tool"))).toBe(true);
    expect(result.stderr).toContain(
      `No alias made: "tool" would clash with the command ${join(usr, "tool")}`,
    );
    expect(existsSync(join(at.bin, "tool"))).toBe(false);
  });
});

describe.skipIf(!hasTmux)("/profile in the REPL", { timeout: 120_000 }, () => {
  it("shows the profile the REPL runs in and its home, and does not switch", async () => {
    const at = userHome();
    const work = join(at.root, "profiles", "work");
    mkdirSync(work, { recursive: true });
    writeFileSync(join(work, "config.yaml"), fakeProviderConfig(llm.url));
    writeFileSync(join(work, "profile.yaml"), "description: The work agent.\n");
    const term = Terminal.start({
      home: at.dir,
      cwd: at.cwd,
      args: ["-p", "work"],
      env: { HERMES_HOME: "" },
    });
    try {
      await term.waitFor("/help for commands");
      term.type("/profile");
      term.keys("Enter");
      const screen = await term.waitFor(/About:?\s+The work agent\./);
      expect(screen).toMatch(/Profile:?\s+work/);
      expect(screen).toContain(work);
      term.type("/profile other");
      term.keys("Enter");
      const refused = await term.waitFor(/does not switch profiles[\s\S]*hermes -p\s+other/);
      // Still in the same profile.
      expect(refused).not.toMatch(/Profile:?\s+other/);
    } finally {
      term.kill();
    }
  });
});
