import { existsSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bundledSkillsDir, seedBundledSkills } from "../../../../src/knowledge/skills/bundled.js";
import { skillDirHash } from "../../../../src/knowledge/skills/dir-hash.js";
import { discoverSkills } from "../../../../src/knowledge/skills/discovery.js";
import { readBundledManifest } from "../../../../src/knowledge/skills/provenance.js";
import { validateSkillMarkdown } from "../../../../src/knowledge/skills/validate.js";
import { tempHome, writeFile, writeSkill } from "./fixtures.js";

function bundle() {
  const dir = tempHome("hermes-bundled-");
  const alpha = writeSkill(dir, "dev", "alpha", "Alpha v1.");
  writeFile(join(alpha, "references", "notes.md"), "notes v1\n");
  writeSkill(dir, "dev", "beta", "Beta v1.");
  writeSkill(dir, "", "gamma", "Gamma v1.");
  writeFile(join(dir, "dev", "DESCRIPTION.md"), "Development skills.\n");
  return dir;
}

describe("seedBundledSkills", () => {
  it("copies every bundled skill on the first run and records name:hash lines", () => {
    const home = tempHome();
    const bundled = bundle();
    const result = seedBundledSkills(home, bundled);
    expect(result.copied.sort()).toEqual(["alpha", "beta", "gamma"]);
    expect(result.totalBundled).toBe(3);
    const root = join(home, "skills");
    expect(readFileSync(join(root, "dev", "alpha", "references", "notes.md"), "utf8")).toBe("notes v1\n");
    expect(existsSync(join(root, "gamma", "SKILL.md"))).toBe(true);
    expect(existsSync(join(root, "dev", "DESCRIPTION.md"))).toBe(true);
    const manifest = readFileSync(join(root, ".bundled_manifest"), "utf8");
    expect(manifest).toBe(
      `alpha:${skillDirHash(join(bundled, "dev", "alpha"))}\n` +
        `beta:${skillDirHash(join(bundled, "dev", "beta"))}\n` +
        `gamma:${skillDirHash(join(bundled, "gamma"))}\n`,
    );
    expect(manifest).toMatch(/^alpha:[0-9a-f]{32}\n/);
    const origins = discoverSkills({ home }).skills.map((s) => s.origin);
    expect(origins).toEqual(["bundled", "bundled", "bundled"]);
  });

  it("does nothing on an unchanged re-run and leaves the manifest untouched", () => {
    const home = tempHome();
    const bundled = bundle();
    seedBundledSkills(home, bundled);
    const manifestPath = join(home, "skills", ".bundled_manifest");
    const before = statSync(manifestPath);
    const result = seedBundledSkills(home, bundled);
    expect(result).toMatchObject({ copied: [], updated: [], userModified: [], errors: [], upToDate: true });
    const after = statSync(manifestPath);
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
    // Without the start-up stamp, the full check finds every skill current as well.
    rmSync(join(home, "cache", "bundled-skills.stamp"));
    const full = seedBundledSkills(home, bundled);
    expect(full).toMatchObject({
      copied: [],
      updated: [],
      userModified: [],
      skipped: 3,
      errors: [],
      upToDate: false,
    });
  });

  it("runs the full check again when the manifest is changed by another program", () => {
    const home = tempHome();
    const bundled = bundle();
    seedBundledSkills(home, bundled);
    const manifestPath = join(home, "skills", ".bundled_manifest");
    // Python Hermes (or a person) drops an entry: the skill is seen as new and, since a copy with
    // identical content exists, adopted again rather than overwritten.
    const lines = readFileSync(manifestPath, "utf8")
      .split("\n")
      .filter((l) => !l.startsWith("alpha:"));
    writeFileSync(manifestPath, lines.join("\n"));
    const result = seedBundledSkills(home, bundled);
    expect(result.upToDate).toBe(false);
    expect(readFileSync(manifestPath, "utf8")).toMatch(/^alpha:/m);
  });

  it("updates an unmodified copy when the bundled skill changes", () => {
    const home = tempHome();
    const bundled = bundle();
    seedBundledSkills(home, bundled);
    writeSkill(bundled, "dev", "alpha", "Alpha v2.");
    writeFile(join(bundled, "dev", "alpha", "references", "notes.md"), "notes v2\n");
    const result = seedBundledSkills(home, bundled);
    expect(result.updated).toEqual(["alpha"]);
    const dest = join(home, "skills", "dev", "alpha");
    expect(readFileSync(join(dest, "SKILL.md"), "utf8")).toContain("Alpha v2.");
    expect(readFileSync(join(dest, "references", "notes.md"), "utf8")).toBe("notes v2\n");
    expect(existsSync(`${dest}.bak`)).toBe(false);
    expect(readBundledManifest(home).get("alpha")).toBe(skillDirHash(join(bundled, "dev", "alpha")));
  });

  it("keeps a copy the user edited, even when the bundled skill changes", () => {
    const home = tempHome();
    const bundled = bundle();
    seedBundledSkills(home, bundled);
    const dest = join(home, "skills", "dev", "beta", "SKILL.md");
    writeFileSync(dest, readFileSync(dest, "utf8").replace("Beta v1.", "Beta, my way."));
    writeSkill(bundled, "dev", "beta", "Beta v2.");
    const result = seedBundledSkills(home, bundled);
    expect(result.userModified).toEqual(["beta"]);
    expect(readFileSync(dest, "utf8")).toContain("Beta, my way.");
    expect(discoverSkills({ home }).skills.find((s) => s.name === "beta")?.origin).toBe("user");
  });

  it("does not re-create a skill the user deleted", () => {
    const home = tempHome();
    const bundled = bundle();
    seedBundledSkills(home, bundled);
    rmSync(join(home, "skills", "gamma"), { recursive: true });
    writeSkill(bundled, "", "gamma", "Gamma v2.");
    const result = seedBundledSkills(home, bundled);
    expect(result.copied).toEqual([]);
    expect(existsSync(join(home, "skills", "gamma"))).toBe(false);
    expect(readBundledManifest(home).has("gamma")).toBe(true);
  });

  it("never overwrites a same-named skill the user already had", () => {
    const home = tempHome();
    const bundled = bundle();
    writeSkill(join(home, "skills"), "dev", "alpha", "My own alpha.");
    const result = seedBundledSkills(home, bundled);
    expect(result.copied.sort()).toEqual(["beta", "gamma"]);
    expect(readFileSync(join(home, "skills", "dev", "alpha", "SKILL.md"), "utf8")).toContain("My own alpha.");
    expect(readBundledManifest(home).has("alpha")).toBe(false);
  });

  it("adds newly bundled skills on a later version and drops entries for removed ones without copies", () => {
    const home = tempHome();
    const bundled = bundle();
    seedBundledSkills(home, bundled);
    writeSkill(bundled, "research", "delta", "New in v2.");
    rmSync(join(bundled, "dev", "beta"), { recursive: true });
    rmSync(join(bundled, "gamma"), { recursive: true });
    rmSync(join(home, "skills", "gamma"), { recursive: true });
    const result = seedBundledSkills(home, bundled);
    expect(result.copied).toEqual(["delta"]);
    // beta still has a copy at home, so its entry (its only provenance) stays; gamma has none.
    expect(result.cleaned).toEqual(["gamma"]);
    expect([...readBundledManifest(home).keys()].sort()).toEqual(["alpha", "beta", "delta"]);
  });

  it("baselines a v1 manifest line (plain name) from the home copy", () => {
    const home = tempHome();
    const bundled = bundle();
    seedBundledSkills(home, bundled);
    writeFileSync(join(home, "skills", ".bundled_manifest"), "alpha\nbeta\ngamma\n");
    writeSkill(bundled, "dev", "alpha", "Alpha v2.");
    const result = seedBundledSkills(home, bundled);
    expect(result.updated).toEqual([]);
    expect(readBundledManifest(home).get("alpha")).toBe(skillDirHash(join(home, "skills", "dev", "alpha")));
  });

  it("leaves a symlinked skill alone", () => {
    const home = tempHome();
    const bundled = bundle();
    const mine = tempHome("hermes-mine-");
    writeSkill(mine, "", "alpha", "Linked alpha.");
    writeFile(join(home, "skills", "dev", ".keep"), "");
    symlinkSync(join(mine, "alpha"), join(home, "skills", "dev", "alpha"));
    const result = seedBundledSkills(home, bundled);
    expect(result.copied.sort()).toEqual(["beta", "gamma"]);
    expect(readFileSync(join(mine, "alpha", "SKILL.md"), "utf8")).toContain("Linked alpha.");
  });

  it("is a no-op without a bundled folder", () => {
    const home = tempHome();
    expect(seedBundledSkills(home, join(home, "missing"))).toMatchObject({ copied: [], totalBundled: 0 });
  });
});

describe("the package's bundled skills", () => {
  it("are found by walking up to the hermes-agent package, or through HERMES_BUNDLED_SKILLS", () => {
    const dir = bundledSkillsDir({});
    expect(dir).toBeDefined();
    expect(existsSync(join(dir as string, "hermes", "creating-skills", "SKILL.md"))).toBe(true);
    const other = tempHome();
    expect(bundledSkillsDir({ HERMES_BUNDLED_SKILLS: other })).toBe(other);
  });

  it("are valid, safe skills with full frontmatter, a references/ file and a scripts/ file", () => {
    const home = tempHome();
    const result = seedBundledSkills(home, bundledSkillsDir({}));
    expect(result.errors).toEqual([]);
    expect(result.copied.length).toBeGreaterThanOrEqual(4);
    const { skills, warnings } = discoverSkills({ home });
    expect(warnings).toEqual([]);
    for (const skill of skills) {
      const text = readFileSync(skill.file, "utf8");
      const { frontmatter } = validateSkillMarkdown(text, skill.name);
      expect(frontmatter.version).toBeDefined();
      expect(frontmatter.tags?.length).toBeGreaterThan(0);
      expect(skill.category).not.toBe("");
      expect(frontmatter.metadata?.hermes?.related_skills).toBeDefined();
      expect(skill.origin).toBe("bundled");
    }
    const linked = skills.flatMap((s) => s.linkedFiles);
    expect(linked.some((f) => f.startsWith("references/"))).toBe(true);
    expect(linked.some((f) => f.startsWith("scripts/"))).toBe(true);
  });
});
