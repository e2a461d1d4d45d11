// `hermes skills reset | list-modified | diff | opt-out | opt-in` against a real home and a
// package-like bundled folder, including the ways a confused or injected caller would get around
// them: path names, symbolic links, edited copies during re-seeding, ambiguous diff targets.
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { seedBundledSkills } from "../../../src/knowledge/skills/bundled.js";
import { tempDir } from "../knowledge/skills/hub/helpers.js";
import { bundledTree, goodSkill, skills } from "./skills-mgmt/run.js";

let root: string;
let home: string;
let bundled: string;
const run = (args: string[], opts: { answer?: string } = {}) => skills(home, args, { bundled, ...opts });
const copy = (name: string, category = "devops") => join(home, "skills", category, name);

beforeEach(() => {
  root = tempDir("hermes-mgmt-");
  home = join(root, "home");
  mkdirSync(home);
  bundled = bundledTree(join(root, "pkg", "skills"), {
    "devops/docker-ops": {
      "SKILL.md": goodSkill("docker-ops", "devops"),
      "references/cheats.md": "# cheats\n",
    },
    "devops/systemd-ops": { "SKILL.md": goodSkill("systemd-ops", "devops") },
    "research/web-notes": { "SKILL.md": goodSkill("web-notes", "research") },
  });
});

describe("seeding respects edits and opt-outs", () => {
  it("a user-modified skill survives a re-seed with a newer bundled version", async () => {
    expect((await run(["list"])).code).toBe(0); // seeds
    writeFileSync(
      join(copy("docker-ops"), "SKILL.md"),
      `${goodSkill("docker-ops", "devops")}\nMy own note.\n`,
    );
    writeFileSync(
      join(bundled, "devops/docker-ops/SKILL.md"),
      `${goodSkill("docker-ops", "devops")}\nShipped v2.\n`,
    );
    const result = seedBundledSkills(home, bundled);
    expect(result.userModified).toEqual(["docker-ops"]);
    const text = readFileSync(join(copy("docker-ops"), "SKILL.md"), "utf8");
    expect(text).toContain("My own note.");
    expect(text).not.toContain("Shipped v2.");
    const listed = await run(["list-modified", "--json"]);
    expect(JSON.parse(listed.stdout).map((m: { name: string }) => m.name)).toEqual(["docker-ops"]);
  });

  it("opt-out of everything stops seeding; opt-in --sync brings the skills", async () => {
    await run(["list"]); // seeds the three shipped skills
    const out = await run(["opt-out"]);
    expect(out.code).toBe(0);
    expect(existsSync(join(home, ".no-bundled-skills"))).toBe(true);
    expect(out.stderr).toContain("left in place");
    // A skill shipped later is not copied in, nor is a deleted one brought back.
    bundledTree(bundled, { "media/ffmpeg-recipes": { "SKILL.md": goodSkill("ffmpeg-recipes", "media") } });
    rmSync(copy("docker-ops"), { recursive: true });
    expect((await run(["list"])).code).toBe(0);
    expect(existsSync(copy("ffmpeg-recipes", "media"))).toBe(false);
    expect(seedBundledSkills(home, bundled).optedOut).toBe(true);
    const back = await run(["opt-in", "--sync"]);
    expect(back.code).toBe(0);
    expect(back.stdout).toContain("Copied in 1 bundled skill: ffmpeg-recipes");
    expect(existsSync(copy("ffmpeg-recipes", "media"))).toBe(true);
    expect(existsSync(copy("docker-ops"))).toBe(false);
  });

  it("opt-out NAME keeps that one skill out through re-seeds, even after its copy is removed", async () => {
    await run(["list"]);
    const out = await run(["opt-out", "systemd-ops", "--remove", "-y"]);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("Removed 1 bundled skill: systemd-ops");
    expect(existsSync(copy("systemd-ops"))).toBe(false);
    // A newer shipped version would otherwise count as new (its manifest entry is gone).
    writeFileSync(
      join(bundled, "devops/systemd-ops/SKILL.md"),
      `${goodSkill("systemd-ops", "devops")}\nv2\n`,
    );
    const seeded = seedBundledSkills(home, bundled);
    expect(seeded.suppressed).toEqual(["systemd-ops"]);
    expect(existsSync(copy("systemd-ops"))).toBe(false);
    expect(readFileSync(join(home, "skills", ".curator_suppressed"), "utf8")).toBe("systemd-ops\n");
    await run(["opt-in", "systemd-ops", "--sync"]);
    expect(readFileSync(join(copy("systemd-ops"), "SKILL.md"), "utf8")).toContain("v2");
  });

  it("opt-out --remove deletes only unedited copies, never an edited one or a link", async () => {
    await run(["list"]);
    writeFileSync(join(copy("docker-ops"), "SKILL.md"), "edited by me\n");
    const elsewhere = join(root, "shared-notes");
    mkdirSync(elsewhere);
    writeFileSync(join(elsewhere, "SKILL.md"), goodSkill("web-notes", "research"));
    rmSync(join(home, "skills", "research", "web-notes"), { recursive: true });
    symlinkSync(elsewhere, join(home, "skills", "research", "web-notes"));
    const out = await run(["opt-out", "--remove", "-y"]);
    expect(out.code).toBe(0);
    expect(out.stderr).toContain("Keeping docker-ops (you edited it)");
    expect(out.stderr).toContain("Keeping web-notes (a symbolic link)");
    expect(existsSync(copy("systemd-ops"))).toBe(false);
    expect(readFileSync(join(copy("docker-ops"), "SKILL.md"), "utf8")).toBe("edited by me\n");
    expect(existsSync(join(elsewhere, "SKILL.md"))).toBe(true);
  });

  it("opting out on a fresh home copies nothing in first", async () => {
    const out = await run(["opt-out"]);
    expect(out.code).toBe(0);
    expect(existsSync(copy("docker-ops"))).toBe(false);
    expect((await run(["list"])).code).toBe(0);
    expect(existsSync(copy("docker-ops"))).toBe(false);
  });

  it("opt-out --remove without -y and without a terminal removes nothing (exit 2)", async () => {
    await run(["list"]);
    const out = await run(["opt-out", "--remove"]);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("pass -y");
    expect(existsSync(copy("docker-ops"))).toBe(true);
  });
});

describe("reset", () => {
  it("--restore replaces an edited copy with the shipped one and tracks it again", async () => {
    await run(["list"]);
    writeFileSync(join(copy("docker-ops"), "SKILL.md"), "mine\n");
    writeFileSync(join(copy("docker-ops"), "extra.md"), "extra\n");
    const out = await run(["reset", "docker-ops", "--restore", "-y"]);
    expect(out.code).toBe(0);
    expect(readFileSync(join(copy("docker-ops"), "SKILL.md"), "utf8")).toBe(
      goodSkill("docker-ops", "devops"),
    );
    expect(existsSync(join(copy("docker-ops"), "extra.md"))).toBe(false);
    expect(JSON.parse((await run(["list-modified", "--json"])).stdout)).toEqual([]);
  });

  it("without --restore refuses a copy that still differs (updates could not reach it)", async () => {
    await run(["list"]);
    writeFileSync(join(copy("docker-ops"), "SKILL.md"), "mine\n");
    const out = await run(["reset", "docker-ops"]);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain("still differs");
    expect(readFileSync(join(copy("docker-ops"), "SKILL.md"), "utf8")).toBe("mine\n");
  });

  it("re-baselines a copy the user put back to the shipped text, so updates flow again", async () => {
    await run(["list"]);
    const original = goodSkill("docker-ops", "devops");
    writeFileSync(join(copy("docker-ops"), "SKILL.md"), "mine\n");
    writeFileSync(join(bundled, "devops/docker-ops/SKILL.md"), `${original}\nv2\n`);
    seedBundledSkills(home, bundled); // kept: user-modified
    writeFileSync(join(copy("docker-ops"), "SKILL.md"), `${original}\nv2\n`);
    expect(JSON.parse((await run(["list-modified", "--json"])).stdout)).toHaveLength(1);
    expect((await run(["reset", "docker-ops"])).code).toBe(0);
    writeFileSync(join(bundled, "devops/docker-ops/SKILL.md"), `${original}\nv3\n`);
    expect(seedBundledSkills(home, bundled).updated).toEqual(["docker-ops"]);
    expect(readFileSync(join(copy("docker-ops"), "SKILL.md"), "utf8")).toContain("v3");
  });

  it("copies a deleted bundled skill back", async () => {
    await run(["list"]);
    rmSync(copy("web-notes", "research"), { recursive: true });
    expect(seedBundledSkills(home, bundled).copied).toEqual([]); // deleted stays deleted
    const out = await run(["reset", "web-notes"]);
    expect(out.code).toBe(0);
    expect(existsSync(join(copy("web-notes", "research"), "SKILL.md"))).toBe(true);
  });

  it.each(["../x", "../../etc", "devops/docker-ops", "/tmp/x", ".hidden", "Docker-Ops"])(
    "refuses the name %j before touching anything (exit 2)",
    async (name) => {
      await run(["list"]);
      const out = await run(["reset", name, "--restore", "-y"]);
      expect(out.code).toBe(2);
      expect(existsSync(copy("docker-ops"))).toBe(true);
    },
  );

  it("never deletes through a symbolic link in place of the skill folder", async () => {
    await run(["list"]);
    const target = join(root, "precious");
    mkdirSync(target);
    writeFileSync(join(target, "SKILL.md"), "precious\n");
    rmSync(copy("docker-ops"), { recursive: true });
    symlinkSync(target, copy("docker-ops"));
    const out = await run(["reset", "docker-ops", "--restore", "-y"]);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain("symbolic link");
    expect(readFileSync(join(target, "SKILL.md"), "utf8")).toBe("precious\n");
  });

  it("never deletes through a linked category folder outside the skills tree", async () => {
    await run(["list"]);
    const outside = join(root, "outside-devops");
    mkdirSync(join(outside, "docker-ops"), { recursive: true });
    writeFileSync(join(outside, "docker-ops", "SKILL.md"), "outside\n");
    rmSync(join(home, "skills", "devops"), { recursive: true });
    symlinkSync(outside, join(home, "skills", "devops"));
    const out = await run(["reset", "docker-ops", "--restore", "-y"]);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain("outside");
    expect(readFileSync(join(outside, "docker-ops", "SKILL.md"), "utf8")).toBe("outside\n");
  });

  it("an unknown skill is a clear failure", async () => {
    const out = await run(["reset", "no-such-skill"]);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain("not a bundled skill");
  });
});

describe("diff serves bundled skills and staged writes", () => {
  it("shows the user's edits against the shipped copy", async () => {
    await run(["list"]);
    writeFileSync(
      join(copy("docker-ops"), "SKILL.md"),
      goodSkill("docker-ops", "devops").replace("Run `ls`", "Run `ls -la`"),
    );
    writeFileSync(join(copy("docker-ops"), "notes.md"), "mine\n");
    rmSync(join(copy("docker-ops"), "references", "cheats.md"));
    const out = await run(["diff", "docker-ops"]);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("--- shipped/SKILL.md");
    expect(out.stdout).toContain("+1. Run `ls -la` with terminal.");
    expect(out.stdout).toContain("-1. Run `ls` with terminal.");
    expect(out.stdout).toContain("+ only in your copy: notes.md");
    expect(out.stdout).toContain("- only in the shipped copy: references/cheats.md");
  });

  it("says so when the copy matches", async () => {
    await run(["list"]);
    const out = await run(["diff", "web-notes", "--bundled"]);
    expect(out).toMatchObject({ code: 0, stdout: "web-notes matches the shipped copy.\n" });
  });

  function stagePending(id: string): void {
    const dir = join(home, "pending", "skills");
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, `${id}.json`),
      JSON.stringify({
        id,
        subsystem: "skills",
        created_at: "2026-11-26T20:00:00+00:00",
        summary: "create skill note-taker",
        payload: { action: "create", name: "note-taker", content: goodSkill("note-taker", "productivity") },
      }),
    );
  }

  it("a pending id shows the staged write", async () => {
    await run(["list"]);
    stagePending("a1b2c3d4");
    const out = await run(["diff", "a1b2c3d4"]);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("name: note-taker");
  });

  it("a target that is both a pending id and a bundled skill needs --pending or --bundled", async () => {
    await run(["list"]);
    stagePending("web-notes");
    const both = await run(["diff", "web-notes"]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("--pending or --bundled");
    expect((await run(["diff", "web-notes", "--bundled"])).stdout).toContain("matches the shipped copy");
    expect((await run(["diff", "web-notes", "--pending"])).stdout).toContain("name: note-taker");
  });

  it("neither a pending id nor a bundled skill is a clear failure; a path is never read", async () => {
    const out = await run(["diff", "../../etc/passwd"]);
    expect(out.code).toBe(1);
    expect(out.stdout).toBe("");
    expect(out.stderr).toContain("neither a pending skill write");
  });
});
