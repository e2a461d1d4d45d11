import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cachedSkillsIndex, treeStamp } from "../../../../src/agent/prompt/skills-index-cache.js";

/** Every file and folder under `dir` (and `dir`) backdated `seconds`, past the racy window. */
function backdate(dir: string, seconds = 30): void {
  const t = Date.now() / 1000 - seconds;
  const walk = (path: string) => {
    if (statSync(path).isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
    utimesSync(path, t, t);
  };
  walk(dir);
}

function tree(): { root: string; skills: string } {
  const root = mkdtempSync(join(tmpdir(), "hermes-skills-stamp-"));
  const skills = join(root, "skills");
  for (const name of ["alpha", "beta"]) {
    mkdirSync(join(skills, "cat", name, "references"), { recursive: true });
    writeFileSync(join(skills, "cat", name, "SKILL.md"), `---\nname: ${name}\ndescription: ${name}.\n---\n`);
  }
  backdate(root);
  return { root, skills };
}

function counter(key = "k") {
  let builds = 0;
  return {
    get builds() {
      return builds;
    },
    run: (roots: string[], files: string[] = []) =>
      cachedSkillsIndex(`${key}-${roots.join()}`, roots, files, () => {
        builds++;
        return { index: `index ${builds}`, warnings: [`warning ${builds}`] };
      }),
  };
}

describe("the skills index, reused across sessions while its inputs stay the same", () => {
  it("builds once for a quiet tree and hands out copies", () => {
    const { skills } = tree();
    const c = counter();
    const first = c.run([skills]);
    first.warnings.push("changed by a caller");
    const second = c.run([skills]);
    expect(c.builds).toBe(1);
    expect(second).toEqual({ index: "index 1", warnings: ["warning 1"] });
  });

  it("builds again after a skill is added, edited in place, removed or renamed", () => {
    const { root, skills } = tree();
    const c = counter("changes");
    c.run([skills]);
    // Added.
    mkdirSync(join(skills, "cat", "gamma"));
    writeFileSync(join(skills, "cat", "gamma", "SKILL.md"), "---\nname: gamma\ndescription: g.\n---\n");
    backdate(root, 20);
    c.run([skills]);
    expect(c.builds).toBe(2);
    c.run([skills]);
    expect(c.builds).toBe(2);
    // Edited in place: same inode, same folder times, only the file's own stamp moves.
    writeFileSync(join(skills, "cat", "alpha", "SKILL.md"), "---\nname: alpha\ndescription: A.\n---\n");
    backdate(root, 10);
    c.run([skills]);
    expect(c.builds).toBe(3);
    // Removed.
    rmSync(join(skills, "cat", "beta"), { recursive: true });
    backdate(root, 8);
    c.run([skills]);
    expect(c.builds).toBe(4);
    // Renamed.
    renameSync(join(skills, "cat", "gamma"), join(skills, "cat", "delta"));
    backdate(root, 6);
    c.run([skills]);
    expect(c.builds).toBe(5);
  });

  it("builds every time while something changed in the last 2 seconds", () => {
    const { skills } = tree();
    const c = counter("racy");
    writeFileSync(join(skills, "cat", "alpha", "SKILL.md"), "---\nname: alpha\ndescription: fresh.\n---\n");
    c.run([skills]);
    c.run([skills]);
    expect(c.builds).toBe(2);
    expect(treeStamp([skills], [], Date.now())).toBeUndefined();
  });

  it("watches the listed files (usage, a missing external folder appearing) and linked folders", () => {
    const { root, skills } = tree();
    const usage = join(skills, ".usage.json");
    const later = join(root, "external");
    const c = counter("files");
    c.run([skills], [usage, later]);
    writeFileSync(usage, '{"alpha":{"use_count":3}}');
    backdate(root, 20);
    c.run([skills], [usage, later]);
    expect(c.builds).toBe(2);
    mkdirSync(later);
    backdate(root, 15);
    c.run([skills], [usage, later]);
    expect(c.builds).toBe(3);
    // A skill reached through a symlinked folder: editing it is seen.
    mkdirSync(join(root, "elsewhere", "linked"), { recursive: true });
    writeFileSync(join(root, "elsewhere", "linked", "SKILL.md"), "---\nname: linked\ndescription: l.\n---\n");
    symlinkSync(join(root, "elsewhere"), join(skills, "via-link"));
    backdate(root, 12);
    c.run([skills], [usage, later]);
    expect(c.builds).toBe(4);
    writeFileSync(
      join(root, "elsewhere", "linked", "SKILL.md"),
      "---\nname: linked\ndescription: L2.\n---\n",
    );
    backdate(root, 9);
    c.run([skills], [usage, later]);
    expect(c.builds).toBe(5);
  });

  it("keeps a missing skills folder cacheable and sees it appear", () => {
    const root = mkdtempSync(join(tmpdir(), "hermes-skills-stamp-"));
    backdate(root);
    const skills = join(root, "skills");
    const c = counter("missing");
    c.run([skills]);
    c.run([skills]);
    expect(c.builds).toBe(1);
    mkdirSync(join(skills, "x", "one"), { recursive: true });
    writeFileSync(join(skills, "x", "one", "SKILL.md"), "---\nname: one\ndescription: o.\n---\n");
    backdate(root, 10);
    c.run([skills]);
    expect(c.builds).toBe(2);
  });
});

describe("buildSessionPrompt with the cached skills index", () => {
  it("lists a skill added between two sessions and drops one removed", async () => {
    const { buildSessionPrompt } = await import("../../../../src/agent/prompt/session-prompt.js");
    const { defaultConfig } = await import("../../../../src/config/defaults.js");
    const root = mkdtempSync(join(tmpdir(), "hermes-skills-prompt-"));
    const home = join(root, "home");
    const cwd = join(root, "work");
    mkdirSync(cwd, { recursive: true });
    const add = (name: string) => {
      mkdirSync(join(home, "skills", "tools", name), { recursive: true });
      writeFileSync(
        join(home, "skills", "tools", name, "SKILL.md"),
        `---\nname: ${name}\ndescription: Handles ${name} work.\n---\n# ${name}\n`,
      );
    };
    add("first-skill");
    backdate(root);
    const options = { home, cwd, config: defaultConfig(), env: { PATH: "/usr/bin" }, toolsets: ["skills"] };
    const one = await buildSessionPrompt(options);
    expect(one.text).toContain("first-skill");
    expect((await buildSessionPrompt(options)).text).toBe(one.text);
    add("second-skill");
    backdate(root, 20);
    const two = await buildSessionPrompt(options);
    expect(two.text).toContain("second-skill");
    rmSync(join(home, "skills", "tools", "first-skill"), { recursive: true });
    backdate(root, 10);
    const three = await buildSessionPrompt(options);
    expect(three.text).not.toContain("first-skill");
    expect(three.text).toContain("second-skill");
  });
});
