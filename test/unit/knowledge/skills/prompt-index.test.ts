import { countTokens } from "gpt-tokenizer";
import { describe, expect, it } from "vitest";
import { oneLine, renderSkillsIndex } from "../../../../src/knowledge/skills/prompt-index.js";
import { hundredSkillMetas, meta } from "./fixtures.js";

describe("renderSkillsIndex", () => {
  it("is empty when there are no skills", () => {
    expect(renderSkillsIndex([])).toBe("");
  });

  it("lists a small collection by category with one-line descriptions and the instructions", () => {
    const text = renderSkillsIndex([
      meta("translate", "Translate text\n  keeping   formatting."),
      meta("code-review", "Review a diff for bugs.", "software-development"),
      meta("systematic-debugging", "Find root causes.", "software-development"),
    ]);
    expect(text).toContain("skill_view(name)");
    expect(text).toContain("skill_manage");
    expect(text).toMatch(/Before replying, check whether a skill/);
    const list = text.slice(text.indexOf("<skills>"));
    expect(list).toBe(
      [
        "<skills>",
        "[uncategorised]",
        "translate: Translate text keeping formatting.",
        "[software-development]",
        "code-review: Review a diff for bugs.",
        "systematic-debugging: Find root causes.",
        "</skills>",
      ].join("\n"),
    );
  });

  it("caps full descriptions at about 120 characters on one line", () => {
    const long = `Deploy ${"the service carefully ".repeat(20)}`;
    const text = renderSkillsIndex([meta("deploy", long)]);
    const line = text.split("\n").find((l) => l.startsWith("deploy:")) ?? "";
    expect(line.length).toBeLessThanOrEqual("deploy: ".length + 120);
    expect(line.endsWith("…")).toBe(true);
  });

  it("leaves out the sentence about skill_manage when it is not offered, or all instructions on request", () => {
    const skills = [meta("a", "A skill.")];
    expect(renderSkillsIndex(skills, { canManage: false })).not.toContain("skill_manage");
    const bare = renderSkillsIndex(skills, { instructions: false });
    expect(bare).toBe("## Skills\n<skills>\n[uncategorised]\na: A skill.\n</skills>");
  });

  it("keeps a hundred realistic skills within about 1,500 tokens with short descriptions", () => {
    const skills = hundredSkillMetas();
    const text = renderSkillsIndex(skills);
    const tokens = countTokens(text);
    expect(tokens).toBeLessThanOrEqual(1500);
    for (const skill of skills) expect(text).toContain(`\n${skill.name}:`);
    const line = text.split("\n").find((l) => l.startsWith("systematic-debugging:")) ?? "";
    expect(line.length).toBeLessThanOrEqual("systematic-debugging: ".length + 45);
    expect(text).not.toContain("skills_list(page=");
  });

  it("costs far less than the full form would", () => {
    const skills = hundredSkillMetas();
    const compact = countTokens(renderSkillsIndex(skills));
    const full = countTokens(renderSkillsIndex(skills, { fullThreshold: 1000 }));
    expect(compact).toBeLessThan(full * 0.8);
  });

  it("lists only the first skills past the hard cap and points to the skills_list page with the rest", () => {
    const many = Array.from({ length: 230 }, (_, i) =>
      meta(`skill-${String(i).padStart(3, "0")}`, `Skill number ${i} does a thing.`, "bulk"),
    );
    const text = renderSkillsIndex(many);
    expect(text).toContain("skill-149:");
    expect(text).not.toContain("skill-150:");
    expect(text).toMatch(/80 more skills are not listed here: call skills_list\(page=4\)/);
    const custom = renderSkillsIndex(many, { maxListed: 120, listPageSize: 50 });
    expect(custom).toMatch(/110 more skills .*skills_list\(page=3\)/);
  });

  it("is deterministic for the same skills", () => {
    const skills = hundredSkillMetas();
    expect(renderSkillsIndex(skills)).toBe(renderSkillsIndex([...skills]));
  });
});

describe("oneLine", () => {
  it("collapses whitespace and cuts at a word boundary", () => {
    expect(oneLine("  a\n b\t c  ", 10)).toBe("a b c");
    expect(oneLine("alpha beta gamma delta", 14)).toBe("alpha beta…");
    expect(oneLine("averyveryverylongword", 8)).toBe("averyve…");
  });
});
