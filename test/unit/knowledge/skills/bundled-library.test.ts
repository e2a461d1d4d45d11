// The "Done when" checks of the bundled library: every shipped skill loads through the real
// skill_view tool (and each of its linked files), and the skills index of a real session prompt
// stays within the learning-loop budget with the whole library installed, and with 45 skills.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildSessionPrompt } from "../../../../src/agent/prompt/session-prompt.js";
import { defaultConfig } from "../../../../src/config/defaults.js";
import { seedBundledSkills } from "../../../../src/knowledge/skills/bundled.js";
import { skillDirsUnder } from "../../../../src/knowledge/skills/lint.js";
import { DEFAULT_INDEX_BUDGET_CHARS } from "../../../../src/knowledge/skills/prompt-index.js";
import { ToolRegistry } from "../../../../src/tools/registry.js";
import { skillTools } from "../../../../src/tools/skills/index.js";
import { makeToolContext } from "../../../support/tool-context.js";
import { tempHome } from "./fixtures.js";

const pkg = join(import.meta.dirname, "../../../..");
const bundledDir = join(pkg, "skills");
const optionalDir = join(pkg, "optional-skills");

/** The skills index layer of a real session prompt for `home` (skills toolset only). */
async function skillsIndexOf(home: string): Promise<string> {
  const cwd = join(home, "work");
  mkdirSync(cwd, { recursive: true });
  const session = await buildSessionPrompt({
    home,
    cwd,
    config: defaultConfig(),
    env: {},
    toolsets: ["skills"],
    date: "2026-11-26",
    os: "Linux",
  });
  return session.layers.find((l) => l.id === "skills")?.text ?? "";
}

const CATEGORIES = [
  "software-development",
  "github",
  "research",
  "data-science",
  "productivity",
  "devops",
  "media",
];
const TOPICS = [
  "Review a pull request for risky changes",
  "Bisect a regression to its first bad commit",
  "Summarise a long document with citations",
  "Clean a CSV and chart the main columns",
  "Draft a reply to a long email thread",
  "Turn meeting notes into a task list",
  "Cut and convert video clips with ffmpeg",
  "Restart and inspect a systemd service",
  "Upgrade dependencies and keep tests green",
];

/** 45 skills shaped like the bundled ones: slug names, one-sentence descriptions under 60 chars. */
function writeFixtureLibrary(home: string, count = 45): string[] {
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    const category = CATEGORIES[i % CATEGORIES.length] as string;
    const topic = TOPICS[i % TOPICS.length] as string;
    const name = `${topic.split(" ").slice(0, 2).join("-").toLowerCase()}-${i}`;
    const dir = join(home, "skills", category, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, "SKILL.md"),
      `---\nname: ${name}\ndescription: ${topic}.\nversion: 1.0.0\ntags: [${category}]\ncategory: ${category}\n---\n# ${name}\n\n## Procedure\n\n1. Do it.\n`,
    );
    names.push(name);
  }
  return names;
}

describe("the skills index stays within the learning-loop budget", () => {
  it("with a library of 45 skills", async () => {
    const home = tempHome();
    const names = writeFixtureLibrary(home, 45);
    const index = await skillsIndexOf(home);
    expect(index.length).toBeGreaterThan(0);
    expect(index.length).toBeLessThanOrEqual(DEFAULT_INDEX_BUDGET_CHARS);
    // Every skill stays reachable: named in the index, or counted with the pointer to skills_list.
    const named = names.filter((n) => index.includes(n)).length;
    if (named < names.length) expect(index).toContain("skills_list");
  });

  it("with every bundled skill installed (and 45 more of the user's)", async () => {
    const home = tempHome();
    const seeded = seedBundledSkills(home, bundledDir);
    expect(seeded.errors).toEqual([]);
    expect(seeded.copied.length).toBe(skillDirsUnder(bundledDir).length);
    const bundledOnly = await skillsIndexOf(home);
    expect(bundledOnly.length).toBeLessThanOrEqual(DEFAULT_INDEX_BUDGET_CHARS);
    writeFixtureLibrary(home, 45);
    const both = await skillsIndexOf(home);
    expect(both.length).toBeLessThanOrEqual(DEFAULT_INDEX_BUDGET_CHARS);
  });
});

describe("every shipped skill loads through skill_view", () => {
  const home = tempHome();
  seedBundledSkills(home, bundledDir);
  const registry = new ToolRegistry();
  registry.registerAll(skillTools);
  const base = makeToolContext({ home, env: { PATH: process.env.PATH } });
  // Optional skills are not seeded; they are reached as an external folder, as an install would.
  const ctx = {
    ...base,
    config: { ...base.config, skills: { external_dirs: [optionalDir], disabled: [] } },
  };
  const shipped = [...skillDirsUnder(bundledDir), ...skillDirsUnder(optionalDir)];

  it("there is a library to load", () => {
    expect(skillDirsUnder(bundledDir).length).toBeGreaterThanOrEqual(5);
  });

  for (const skill of shipped) {
    const name = skill.dir.split("/").pop() ?? "";
    it(`${skill.dir.slice(pkg.length + 1)}`, async () => {
      const outcome = await registry.execute("skill_view", { name }, ctx);
      expect(outcome.ok, outcome.content.slice(0, 300)).toBe(true);
      expect(outcome.content).toContain(`name: ${name}`);
      expect(outcome.content).toContain("## Procedure");
      const listed = await registry.execute("skills_list", { query: name }, ctx);
      expect(listed.content).toContain(name);
      for (const file of outcome.content.match(/(?:references|templates|scripts)\/[\w./-]+\w/g) ?? []) {
        const linked = await registry.execute("skill_view", { name, file_path: file }, ctx);
        expect(linked.ok, `${name}: ${file}: ${linked.content.slice(0, 200)}`).toBe(true);
      }
    });
  }
});
