import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { skillDirHash } from "../../../../src/knowledge/skills/dir-hash.js";
import { discoverSkills, findSkill, matchesPlatform } from "../../../../src/knowledge/skills/discovery.js";
import { clearHeaderMemory, headerCachePath } from "../../../../src/knowledge/skills/header-cache.js";
import { HUNDRED_SKILLS, tempHome, writeFile, writeSkill } from "./fixtures.js";

function setup() {
  const home = tempHome();
  const root = join(home, "skills");
  return { home, root };
}

describe("discoverSkills", () => {
  it("finds categorised and uncategorised skills, sorted by category then name", () => {
    const { home, root } = setup();
    writeSkill(root, "devops", "zeta-deploy");
    writeSkill(root, "devops", "alpha-logs");
    writeSkill(root, "", "translate", "Translate text.");
    writeSkill(root, "apple", "notes");
    writeSkill(join(root, "official"), "research", "arxiv");
    const { skills, warnings } = discoverSkills({ home });
    expect(warnings).toEqual([]);
    expect(skills.map((s) => `${s.category}/${s.name}`)).toEqual([
      "/translate",
      "apple/notes",
      "devops/alpha-logs",
      "devops/zeta-deploy",
      "official/arxiv",
    ]);
    const translate = skills[0];
    expect(translate).toMatchObject({
      name: "translate",
      description: "Translate text.",
      category: "",
      source: "home",
      origin: "user",
      dir: join(root, "translate"),
      file: join(root, "translate", "SKILL.md"),
    });
  });

  it("takes the category from the frontmatter when the skill is not in a category folder", () => {
    const { home, root } = setup();
    writeSkill(
      root,
      "",
      "lone",
      "Lone skill.",
      "metadata:\n  hermes:\n    category: research\n    tags: [a, b]\n",
    );
    const [skill] = discoverSkills({ home }).skills;
    expect(skill?.category).toBe("research");
    expect(skill?.tags).toEqual(["a", "b"]);
  });

  it("skips dot-folders, support folders and dependency folders", () => {
    const { home, root } = setup();
    writeSkill(root, "", "real");
    writeSkill(join(root, ".hub"), "quarantine", "held");
    writeSkill(join(root, ".archive"), "", "old");
    writeSkill(join(root, "node_modules"), "", "dep");
    // An archived package kept as reference material inside a skill is data, not a skill.
    writeSkill(join(root, "real", "references"), "", "kept-copy");
    const { skills } = discoverSkills({ home });
    expect(skills.map((s) => s.name)).toEqual(["real"]);
  });

  it("lists linked files under the supporting folders only", () => {
    const { home, root } = setup();
    const dir = writeSkill(root, "dev", "with-files");
    writeFile(join(dir, "references", "api.md"), "api");
    writeFile(join(dir, "references", "deep", "more.md"), "more");
    writeFile(join(dir, "scripts", "run.sh"), "echo");
    writeFile(join(dir, "notes.txt"), "not linked");
    writeFile(join(dir, "references", ".DS_Store"), "junk");
    const [skill] = discoverSkills({ home }).skills;
    expect(skill?.linkedFiles).toEqual(["references/api.md", "references/deep/more.md", "scripts/run.sh"]);
  });

  it("turns broken SKILL.md files into warnings and keeps the rest", () => {
    const { home, root } = setup();
    writeSkill(root, "", "good");
    writeFile(join(root, "no-front", "SKILL.md"), "# no frontmatter\n");
    writeFile(join(root, "bad-yaml", "SKILL.md"), "---\nname: x\ndescription: [oops\n---\nbody\n");
    writeFile(join(root, "unclosed", "SKILL.md"), "---\nname: x\n");
    const { skills, warnings } = discoverSkills({ home });
    expect(skills.map((s) => s.name)).toEqual(["good"]);
    expect(warnings).toHaveLength(3);
    expect(warnings.join("\n")).toMatch(/no-front.*no YAML frontmatter/);
    expect(warnings.join("\n")).toMatch(/bad-yaml.*line \d+: invalid YAML/);
    expect(warnings.join("\n")).toMatch(/unclosed.*not closed/);
  });

  it("reads a skill without a name or description as Python does (folder name, first body line)", () => {
    const { home, root } = setup();
    writeFile(join(root, "legacy", "SKILL.md"), "---\nversion: 1\n---\n# Legacy\n\nDoes legacy things.\n");
    const [skill] = discoverSkills({ home }).skills;
    expect(skill).toMatchObject({ name: "legacy", description: "Does legacy things.", version: "1" });
  });

  it("scans external dirs after the home; a home copy wins over an external one of the same name", () => {
    const { home, root } = setup();
    const shared = tempHome("hermes-external-");
    writeSkill(root, "dev", "shared-skill", "Home copy.");
    writeSkill(shared, "dev", "shared-skill", "External copy.");
    writeSkill(shared, "team", "team-only", "From the team folder.");
    const env = { TEAM_SKILLS: shared, HOME: "/nonexistent" };
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the config value itself is "${TEAM_SKILLS}"
    for (const entry of [shared, "$TEAM_SKILLS", "${TEAM_SKILLS}"]) {
      const { skills, warnings } = discoverSkills({ home, env, config: { external_dirs: [entry] } });
      expect(warnings).toEqual([]);
      expect(skills.find((s) => s.name === "shared-skill")).toMatchObject({
        description: "Home copy.",
        source: "home",
      });
      expect(skills.find((s) => s.name === "team-only")).toMatchObject({
        source: "external",
        category: "team",
      });
    }
  });

  it("expands ~ in external dirs and resolves relative ones against the home", () => {
    const { home } = setup();
    const fakeUserHome = tempHome("hermes-userhome-");
    writeSkill(join(fakeUserHome, "my-skills"), "", "tilde-skill");
    writeSkill(join(home, "extra"), "", "relative-skill");
    const { skills } = discoverSkills({
      home,
      env: { HOME: fakeUserHome },
      config: { external_dirs: ["~/my-skills", "extra"] },
    });
    expect(skills.map((s) => s.name).sort()).toEqual(["relative-skill", "tilde-skill"]);
  });

  it("warns about external dirs that do not exist", () => {
    const { home } = setup();
    const { skills, warnings } = discoverSkills({
      home,
      config: { external_dirs: ["/definitely/not/here"] },
    });
    expect(skills).toEqual([]);
    expect(warnings).toEqual([expect.stringMatching(/\/definitely\/not\/here does not exist/)]);
  });

  it("gates skills by platforms against the given OS", () => {
    const { home, root } = setup();
    writeSkill(root, "", "mac-only", "Mac.", "platforms: [macos]\n");
    writeSkill(root, "", "linux-mac", "Both.", "platforms: [linux, macos]\n");
    writeSkill(root, "", "win-only", "Win.", "platforms: windows\n");
    writeSkill(root, "", "anywhere");
    const names = (platform: string) =>
      discoverSkills({ home, platform })
        .skills.map((s) => s.name)
        .sort();
    expect(names("linux")).toEqual(["anywhere", "linux-mac"]);
    expect(names("darwin")).toEqual(["anywhere", "linux-mac", "mac-only"]);
    expect(names("win32")).toEqual(["anywhere", "win-only"]);
    expect(discoverSkills({ home, platform: "linux", includeOtherPlatforms: true }).skills).toHaveLength(4);
    expect(matchesPlatform([], "aix")).toBe(true);
  });

  it("leaves out disabled skills unless asked", () => {
    const { home, root } = setup();
    writeSkill(root, "", "keep");
    writeSkill(root, "", "off");
    const config = { disabled: ["off"] };
    expect(discoverSkills({ home, config }).skills.map((s) => s.name)).toEqual(["keep"]);
    expect(discoverSkills({ home, config, includeDisabled: true }).skills.map((s) => s.name)).toEqual([
      "keep",
      "off",
    ]);
    expect(findSkill("off", { home, config })).toBeUndefined();
  });

  it("reports required environment variables that are missing", () => {
    const { home, root } = setup();
    writeSkill(
      root,
      "",
      "needs-env",
      "Env.",
      "required_environment_variables:\n  - name: SET_ONE\n  - name: MISSING_ONE\n",
    );
    const [skill] = discoverSkills({ home, env: { SET_ONE: "x", MISSING_ONE: "" } }).skills;
    expect(skill?.requiredEnv.map((v) => v.name)).toEqual(["SET_ONE", "MISSING_ONE"]);
    expect(skill?.missingEnv).toEqual(["MISSING_ONE"]);
  });

  it("marks origin from the manifest, the hub lock and the usage sidecar", () => {
    const { home, root } = setup();
    const seeded = writeSkill(root, "dev", "seeded");
    const edited = writeSkill(root, "dev", "edited-seed");
    const editedHash = skillDirHash(edited);
    writeFileSync(join(edited, "SKILL.md"), "---\nname: edited-seed\ndescription: changed\n---\nbody\n");
    writeSkill(root, "dev", "from-hub");
    writeSkill(root, "dev", "made-by-agent");
    writeSkill(root, "dev", "made-by-user");
    writeFile(join(root, ".bundled_manifest"), `seeded:${skillDirHash(seeded)}\nedited-seed:${editedHash}\n`);
    writeFile(
      join(root, ".hub", "lock.json"),
      JSON.stringify({
        version: 1,
        installed: { "from-hub": { install_path: "dev/from-hub", source: "github" } },
      }),
    );
    writeFile(
      join(root, ".usage.json"),
      JSON.stringify({
        "made-by-agent": { created_by: "agent", use_count: 2 },
        "made-by-user": { use_count: 1 },
      }),
    );
    const origins = Object.fromEntries(discoverSkills({ home }).skills.map((s) => [s.name, s.origin]));
    expect(origins).toEqual({
      seeded: "bundled",
      "edited-seed": "user",
      "from-hub": "hub",
      "made-by-agent": "agent",
      "made-by-user": "user",
    });
    // Without verification every manifest name counts as bundled (no hashing).
    const quick = discoverSkills({ home, verifyBundled: false }).skills;
    expect(quick.find((s) => s.name === "edited-seed")?.origin).toBe("bundled");
  });

  it("tolerates a broken hub lock and usage file", () => {
    const { home, root } = setup();
    writeSkill(root, "", "fine");
    writeFile(join(root, ".hub", "lock.json"), "{not json");
    writeFile(join(root, ".usage.json"), "[1,2]");
    writeFile(join(root, ".bundled_manifest"), "\n\n");
    expect(discoverSkills({ home }).skills.map((s) => [s.name, s.origin])).toEqual([["fine", "user"]]);
  });

  it("follows a symlinked skill folder but not a loop", () => {
    const { home, root } = setup();
    const elsewhere = tempHome("hermes-linked-");
    writeSkill(elsewhere, "", "linked");
    mkdirSync(root, { recursive: true });
    symlinkSync(join(elsewhere, "linked"), join(root, "linked"));
    symlinkSync(root, join(root, "loop"));
    const { skills } = discoverSkills({ home });
    expect(skills.map((s) => s.name)).toEqual(["linked"]);
  });

  it("discovers a hundred skills, re-reading only SKILL.md files that changed", () => {
    const { home, root } = setup();
    for (const [category, name, description] of HUNDRED_SKILLS) {
      const dir = writeSkill(root, category, name, description, "version: 1.0.0\ntags: [a, b]\n");
      writeFile(join(dir, "references", "notes.md"), "notes");
    }
    const first = discoverSkills({ home }).skills;
    expect(first).toHaveLength(100);
    expect(first.every((s) => s.linkedFiles.join() === "references/notes.md")).toBe(true);
    // Timing lives in bench/; here: an edited file is picked up on the next discovery.
    writeSkill(root, "research", "arxiv", "Edited description that is longer than before.");
    const second = discoverSkills({ home }).skills;
    expect(second.find((s) => s.name === "arxiv")?.description).toBe(
      "Edited description that is longer than before.",
    );
    expect(JSON.parse(JSON.stringify(second[0])).linkedFiles).toEqual(["references/notes.md"]);
  });
});

describe("the frontmatter cache", () => {
  it("is saved under <home>/cache, reused by a new process, and invalidated when a file changes", () => {
    const { home, root } = setup();
    const dir = writeSkill(root, "dev", "cached", "Original.");
    expect(discoverSkills({ home }).skills[0]?.description).toBe("Original.");
    const cachePath = headerCachePath(home);
    const saved = JSON.parse(readFileSync(cachePath, "utf8"));
    const file = join(dir, "SKILL.md");
    expect(saved.entries[file].result.header).toMatchObject({ name: "cached", description: "Original." });
    // A new process reads the file instead of parsing again: prove it by editing the cached value.
    saved.entries[file].result.header.description = "From the cache file.";
    writeFileSync(cachePath, JSON.stringify(saved));
    clearHeaderMemory();
    expect(discoverSkills({ home }).skills[0]?.description).toBe("From the cache file.");
    writeSkill(root, "dev", "cached", "Edited on disk.");
    expect(discoverSkills({ home }).skills[0]?.description).toBe("Edited on disk.");
  });

  it("tolerates a broken cache file", () => {
    const { home, root } = setup();
    writeSkill(root, "", "fine", "Fine.");
    writeFile(headerCachePath(home), "{broken");
    clearHeaderMemory();
    expect(discoverSkills({ home }).skills.map((s) => s.description)).toEqual(["Fine."]);
    expect(JSON.parse(readFileSync(headerCachePath(home), "utf8")).version).toBe(1);
  });
});

describe("findSkill", () => {
  it("finds by name or category/name", () => {
    const { home, root } = setup();
    writeSkill(root, "devops", "deploy");
    expect(findSkill("deploy", { home })?.category).toBe("devops");
    expect(findSkill("devops/deploy", { home })?.name).toBe("deploy");
    expect(findSkill("other/deploy", { home })).toBeUndefined();
    expect(findSkill("nope", { home })).toBeUndefined();
  });
});
