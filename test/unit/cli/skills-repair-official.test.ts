// `hermes skills repair-official`: official optional skills recorded in the hub lock when the home
// holds exactly the shipped copy; --restore puts the shipped copy back, moving edits aside.
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { tempDir, writeTree } from "../knowledge/skills/hub/helpers.js";
import { bundledTree, goodSkill, skills } from "./skills-mgmt/run.js";

let root: string;
let home: string;
let optional: string;
const run = (args: string[]) => skills(home, args, { env: { HERMES_OPTIONAL_SKILLS: optional } });
const lock = () => JSON.parse(readFileSync(join(home, "skills", ".hub", "lock.json"), "utf8"));

beforeEach(() => {
  root = tempDir("hermes-official-");
  home = join(root, "home");
  mkdirSync(home);
  optional = bundledTree(join(root, "pkg", "optional-skills"), {
    "mlops/train-run": { "SKILL.md": goodSkill("train-run", "mlops") },
    "media/podcast-cut": { "SKILL.md": goodSkill("podcast-cut", "media") },
  });
});

describe("hermes skills repair-official", () => {
  it("records an exact copy as official and leaves an edited one unrecorded", async () => {
    writeTree(join(home, "skills", "mlops", "train-run"), { "SKILL.md": goodSkill("train-run", "mlops") });
    writeTree(join(home, "skills", "media", "podcast-cut"), { "SKILL.md": "edited\n" });
    const out = await run(["repair-official"]);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("Recorded as official: train-run");
    expect(lock().installed["train-run"]).toMatchObject({
      source: "official",
      identifier: "official/mlops/train-run",
      trust_level: "builtin",
      scan_verdict: "backfilled",
      install_path: "mlops/train-run",
    });
    expect(lock().installed["podcast-cut"]).toBeUndefined();
    expect((await run(["repair-official"])).stdout).toContain("Nothing to repair");
  });

  it("--restore moves an edited copy aside and puts the shipped one back", async () => {
    writeTree(join(home, "skills", "media", "podcast-cut"), { "SKILL.md": "edited\n" });
    const out = await run(["repair-official", "podcast-cut", "--restore", "-y"]);
    expect(out.code).toBe(0);
    expect(readFileSync(join(home, "skills", "media", "podcast-cut", "SKILL.md"), "utf8")).toBe(
      goodSkill("podcast-cut", "media"),
    );
    const backups = readdirSync(join(home, "skills", ".restore-backups"));
    expect(backups).toHaveLength(1);
    expect(
      readFileSync(
        join(home, "skills", ".restore-backups", backups[0] as string, "media", "podcast-cut", "SKILL.md"),
        "utf8",
      ),
    ).toBe("edited\n");
    expect(lock().installed["podcast-cut"].source).toBe("official");
  });

  it("--restore without -y and no terminal changes nothing", async () => {
    writeTree(join(home, "skills", "media", "podcast-cut"), { "SKILL.md": "edited\n" });
    expect((await run(["repair-official", "--restore"])).code).toBe(2);
    expect(readFileSync(join(home, "skills", "media", "podcast-cut", "SKILL.md"), "utf8")).toBe("edited\n");
  });

  it("leaves a symbolic link alone", async () => {
    const elsewhere = join(root, "mine");
    mkdirSync(elsewhere);
    writeFileSync(join(elsewhere, "SKILL.md"), "mine\n");
    mkdirSync(join(home, "skills", "media"), { recursive: true });
    symlinkSync(elsewhere, join(home, "skills", "media", "podcast-cut"));
    const out = await run(["repair-official", "podcast-cut", "--restore", "-y"]);
    expect(out.code).toBe(0);
    expect(out.stderr).toContain("symbolic link");
    expect(readFileSync(join(elsewhere, "SKILL.md"), "utf8")).toBe("mine\n");
  });

  it("refuses path names and unknown skills", async () => {
    expect((await run(["repair-official", "../x", "--restore", "-y"])).code).toBe(2);
    const unknown = await run(["repair-official", "nope"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("not an official optional skill");
    expect(existsSync(join(home, "skills", ".restore-backups"))).toBe(false);
  });
});
