/**
 * `hermes profile install` and `hermes profile update` through the built CLI, in a fake user home:
 * a distribution from a directory and from a local git repository, what is copied and what is
 * kept, and the sources that must be refused before anything is written.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { runHermes } from "../support/cli.js";

function userHome(): { home: string; cwd: string; root: string; env: Record<string, string> } {
  const dir = mkdtempSync(join(tmpdir(), "hermes-dist-e2e-"));
  const cwd = join(dir, "work");
  mkdirSync(cwd);
  mkdirSync(join(dir, ".hermes"));
  return { home: dir, cwd, root: join(dir, ".hermes"), env: { HERMES_HOME: "" } };
}
const hermes = (args: string[], at: ReturnType<typeof userHome>) =>
  runHermes(args, { home: at.home, cwd: at.cwd, env: at.env });

/** A distribution source tree with user-owned files that must never be copied. */
function distribution(dir: string, version: string, soul: string): void {
  mkdirSync(join(dir, "skills/research/cite"), { recursive: true });
  mkdirSync(join(dir, "memories"), { recursive: true });
  writeFileSync(
    join(dir, "distribution.yaml"),
    `name: research\nversion: ${version}\ndescription: Cites its sources\nenv_requires:\n  - name: EXA_API_KEY\n    description: Exa search key\n  - name: SEARX_URL\n    required: false\n    default: http://127.0.0.1:8888\n`,
  );
  writeFileSync(join(dir, "SOUL.md"), soul);
  writeFileSync(join(dir, "config.yaml"), `model:\n  default: dist-model-${version}\n`);
  writeFileSync(
    join(dir, "skills/research/cite/SKILL.md"),
    "---\nname: cite\ndescription: cite\n---\nCite.\n",
  );
  writeFileSync(join(dir, ".env"), "EXA_API_KEY=author-secret\n");
  writeFileSync(join(dir, "auth.json"), "{}");
  writeFileSync(join(dir, "memories/MEMORY.md"), "author's memory");
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", ...args], {
    cwd,
    stdio: "ignore",
  });

describe("hermes profile install/update", { timeout: 120_000 }, () => {
  it("installs from a directory: the payload copied, the author's secrets and memories left behind", async () => {
    const at = userHome();
    const src = join(at.home, "src");
    distribution(src, "1.0.0", "You cite sources.\n");
    const result = await hermes(["profile", "install", src, "-y"], at);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('Installed distribution "research" 1.0.0');
    expect(result.stdout).toContain("It needs: EXA_API_KEY");
    const profile = join(at.root, "profiles/research");
    expect(readFileSync(join(profile, "SOUL.md"), "utf8")).toBe("You cite sources.\n");
    expect(existsSync(join(profile, "skills/research/cite/SKILL.md"))).toBe(true);
    expect(existsSync(join(profile, ".env"))).toBe(false);
    expect(existsSync(join(profile, "auth.json"))).toBe(false);
    expect(existsSync(join(profile, "memories/MEMORY.md"))).toBe(false);
    const example = readFileSync(join(profile, ".env.EXAMPLE"), "utf8");
    expect(example).toMatch(/^EXA_API_KEY=$/m);
    expect(example).toMatch(/^# SEARX_URL=http:\/\/127\.0\.0\.1:8888$/m);
    const manifest = parseYaml(readFileSync(join(profile, "distribution.yaml"), "utf8")) as Record<
      string,
      unknown
    >;
    expect(manifest["source"]).toBe(src);
    expect(String(manifest["installed_at"])).toMatch(/^\d{4}-\d\d-\d\dT/);

    const info = await hermes(["profile", "info", "research"], at);
    expect(info.stdout).toContain("1.0.0");
    const again = await hermes(["profile", "install", src, "-y"], at);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("hermes profile update research");
  });

  it("updates from a local git repository: new payload, the user's config, memories and keys kept", async () => {
    const at = userHome();
    const repo = join(at.home, "repo");
    mkdirSync(repo);
    distribution(repo, "1.0.0", "v1 soul\n");
    git(repo, "init", "-q");
    git(repo, "add", "-A");
    git(repo, "commit", "-qm", "v1");
    const url = `file://${repo}`;
    const installed = await hermes(["profile", "install", url, "--name", "lab", "-y"], at);
    expect(installed.code, installed.stderr).toBe(0);
    const profile = join(at.root, "profiles/lab");
    expect(readFileSync(join(profile, "SOUL.md"), "utf8")).toBe("v1 soul\n");
    expect(existsSync(join(profile, ".git"))).toBe(false);

    // The user's own changes in the profile.
    writeFileSync(join(profile, "config.yaml"), "model:\n  default: my-model\n");
    writeFileSync(join(profile, "memories/MEMORY.md"), "mine");
    writeFileSync(join(profile, ".env"), "EXA_API_KEY=user-key\n");
    // The author publishes 1.1.0.
    distribution(repo, "1.1.0", "v2 soul\n");
    git(repo, "commit", "-qam", "v2");

    const updated = await hermes(["profile", "update", "lab", "-y"], at);
    expect(updated.code, updated.stderr).toBe(0);
    expect(updated.stdout).toContain('Updated profile "lab" to 1.1.0');
    expect(readFileSync(join(profile, "SOUL.md"), "utf8")).toBe("v2 soul\n");
    expect(readFileSync(join(profile, "config.yaml"), "utf8")).toContain("my-model");
    expect(readFileSync(join(profile, "memories/MEMORY.md"), "utf8")).toBe("mine");
    expect(readFileSync(join(profile, ".env"), "utf8")).toBe("EXA_API_KEY=user-key\n");
    const manifest = parseYaml(readFileSync(join(profile, "distribution.yaml"), "utf8")) as Record<
      string,
      unknown
    >;
    expect(manifest).toMatchObject({ name: "lab", version: "1.1.0", source: url });

    const forced = await hermes(["profile", "update", "lab", "--force-config", "-y"], at);
    expect(forced.code, forced.stderr).toBe(0);
    expect(readFileSync(join(profile, "config.yaml"), "utf8")).toContain("dist-model-1.1.0");
    expect(readFileSync(join(profile, ".env"), "utf8")).toBe("EXA_API_KEY=user-key\n");
  });

  it("pins a git source to a tag or a commit with #ref, and update keeps the pin", async () => {
    const at = userHome();
    const repo = join(at.home, "repo");
    mkdirSync(repo);
    distribution(repo, "1.0.0", "v1 soul\n");
    git(repo, "init", "-q");
    git(repo, "add", "-A");
    git(repo, "commit", "-qm", "v1");
    git(repo, "tag", "v1.0.0");
    distribution(repo, "2.0.0", "v2 soul\n");
    git(repo, "commit", "-qam", "v2");
    const v2 = execFileSync("git", ["rev-parse", "HEAD"], { cwd: repo, encoding: "utf8" }).trim();
    distribution(repo, "3.0.0", "v3 soul\n");
    git(repo, "commit", "-qam", "v3");

    const url = `file://${repo}#v1.0.0`;
    const tagged = await hermes(["profile", "install", url, "--name", "pinned", "-y"], at);
    expect(tagged.code, tagged.stderr).toBe(0);
    const pinned = join(at.root, "profiles/pinned");
    expect(readFileSync(join(pinned, "SOUL.md"), "utf8")).toBe("v1 soul\n");
    const manifest = () =>
      parseYaml(readFileSync(join(pinned, "distribution.yaml"), "utf8")) as Record<string, unknown>;
    expect(manifest()).toMatchObject({ version: "1.0.0", source: url });
    // The author moves on; the pinned profile stays on its tag.
    distribution(repo, "4.0.0", "v4 soul\n");
    git(repo, "commit", "-qam", "v4");
    const updated = await hermes(["profile", "update", "pinned", "-y"], at);
    expect(updated.code, updated.stderr).toBe(0);
    expect(readFileSync(join(pinned, "SOUL.md"), "utf8")).toBe("v1 soul\n");
    expect(manifest()).toMatchObject({ version: "1.0.0", source: url });

    // A commit (short hash) from a local repository path.
    const byCommit = await hermes(
      ["profile", "install", `${repo}#${v2.slice(0, 10)}`, "--name", "c2", "-y"],
      at,
    );
    expect(byCommit.code, byCommit.stderr).toBe(0);
    expect(readFileSync(join(at.root, "profiles/c2/SOUL.md"), "utf8")).toBe("v2 soul\n");

    // Refs that could read as options or ranges, a ref that does not exist, and a plain directory.
    const marker = join(at.home, "pwned");
    const plain = join(at.home, "plain");
    distribution(plain, "1.0.0", "x\n");
    const cases: Array<[string, RegExp]> = [
      [`file://${repo}#--upload-pack=touch ${marker}`, /after "#" give a branch, tag or commit/],
      [`file://${repo}#v1..v2`, /after "#" give a branch, tag or commit/],
      [`file://${repo}#`, /after "#" give a branch, tag or commit/],
      [`file://${repo}#no-such-tag`, /git clone of .* failed[\s\S]*no branch or tag "no-such-tag"/],
      [`${plain}#v1`, /not a git repository, so it has no ref "v1"/],
    ];
    for (const [source, message] of cases) {
      const result = await hermes(["profile", "install", source, "--name", "bad", "-y"], at);
      expect(result.code, source).toBe(2);
      expect(result.stderr, source).toMatch(message);
    }
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(join(at.root, "profiles/bad"))).toBe(false);
  });

  it("refuses dangerous or wrong sources before writing anything", async () => {
    const at = userHome();
    const profiles = join(at.root, "profiles");
    const linked = join(at.home, "linked");
    distribution(linked, "1.0.0", "x\n");
    symlinkSync(join(at.home, ".ssh"), join(linked, "skills/escape"));
    const marker = join(at.home, "pwned");
    const cases: Array<[string[], RegExp]> = [
      [["profile", "install", linked, "-y"], /symlinks: skills\/escape/],
      [["profile", "install", `ext::sh -c touch% ${marker}`, "-y"], /remote helpers/],
      [["profile", "install", "--upload-pack=touch", "-y"], /unknown option|not a distribution source/],
      [["profile", "install", join(at.home, "missing"), "-y"], /cannot find the distribution/],
    ];
    for (const [args, message] of cases) {
      const result = await hermes(args, at);
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.stderr).toMatch(message);
    }
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(join(profiles, "research"))).toBe(false);

    const src = join(at.home, "src");
    distribution(src, "1.0.0", "x\n");
    const asDefault = await hermes(["profile", "install", src, "--name", "default", "-y"], at);
    expect(asDefault.code).toBe(2);
    expect(asDefault.stderr).toContain("root home");
    writeFileSync(join(src, "distribution.yaml"), "name: research\nhermes_requires: '>=99.0.0'\n");
    const tooNew = await hermes(["profile", "install", src, "-y"], at);
    expect(tooNew.code).toBe(2);
    expect(tooNew.stderr).toContain("requires Hermes >=99.0.0");
    writeFileSync(join(src, "distribution.yaml"), "name: research\n");
    const unconfirmed = await hermes(["profile", "install", src], at);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toContain("pass -y");
    expect(existsSync(join(profiles, "research"))).toBe(false);
  });
});
