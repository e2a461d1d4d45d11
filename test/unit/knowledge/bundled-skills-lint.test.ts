// Every skill this package ships (bundled under skills/, optional under optional-skills/) passes
// the strict lint: frontmatter, sections, support files, scripts that parse, a clean scan.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { lintSkill, skillDirsUnder } from "../../../src/knowledge/skills/lint.js";
import { toolsetNames } from "../../../src/tools/toolsets.js";

const root = join(import.meta.dirname, "../../..");
const shipped = [...skillDirsUnder(join(root, "skills")), ...skillDirsUnder(join(root, "optional-skills"))];
const knownSkills = new Set(shipped.map((s) => s.dir.split("/").pop() ?? ""));
const knownToolsets = new Set(toolsetNames());

describe("shipped skills pass the strict lint", () => {
  it("there are bundled skills to check", () => {
    expect(skillDirsUnder(join(root, "skills")).length).toBeGreaterThanOrEqual(5);
  });
  for (const skill of shipped) {
    it(skill.dir.slice(root.length + 1), () => {
      const result = lintSkill(skill.dir, {
        strict: true,
        expectedCategory: skill.category,
        knownSkills,
        knownToolsets,
      });
      expect(result.problems.map((p) => `${p.severity}: ${p.message}`)).toEqual([]);
    });
  }
});
