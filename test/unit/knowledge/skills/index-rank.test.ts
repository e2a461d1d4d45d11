import { mkdtempSync, renameSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { countTokens } from "gpt-tokenizer";
import { describe, expect, it } from "vitest";
import { projectSignals, projectWords, rankSkills } from "../../../../src/knowledge/skills/index-rank.js";
import {
  DEFAULT_INDEX_BUDGET_CHARS,
  renderSkillsIndex,
} from "../../../../src/knowledge/skills/prompt-index.js";
import type { SkillMeta } from "../../../../src/knowledge/skills/types.js";
import { HUNDRED_SKILLS, meta } from "./fixtures.js";

const NOW = new Date("2026-11-01T12:00:00Z");

/** `n` realistic skills: the hundred fixtures, then numbered variants of them. */
function generated(n: number): SkillMeta[] {
  return Array.from({ length: n }, (_, i) => {
    const [category, name, description] = HUNDRED_SKILLS[i % HUNDRED_SKILLS.length] as readonly [
      string,
      string,
      string,
    ];
    return meta(
      i < HUNDRED_SKILLS.length ? name : `${name}-${Math.floor(i / HUNDRED_SKILLS.length)}`,
      description,
      category,
    );
  }).sort((a, b) =>
    a.category !== b.category ? (a.category < b.category ? -1 : 1) : a.name < b.name ? -1 : 1,
  );
}

function budgeted(skills: SkillMeta[], scores?: Map<string, number>): string {
  return renderSkillsIndex(skills, {
    instructions: false,
    budgetChars: DEFAULT_INDEX_BUDGET_CHARS,
    ...(scores ? { scores } : {}),
  });
}

describe("the budgeted skills index", () => {
  it("costs no more with 200 skills than with 50 (characters and tokens)", () => {
    const fifty = budgeted(generated(50));
    const twoHundred = budgeted(generated(200));
    expect(fifty.length).toBeLessThanOrEqual(DEFAULT_INDEX_BUDGET_CHARS);
    expect(twoHundred.length).toBeLessThanOrEqual(DEFAULT_INDEX_BUDGET_CHARS);
    expect(twoHundred.length).toBeLessThanOrEqual(fifty.length);
    expect(countTokens(twoHundred)).toBeLessThanOrEqual(countTokens(fifty));
    // The unbudgeted form grows with the library; that is what the budget prevents.
    expect(renderSkillsIndex(generated(200), { instructions: false }).length).toBeGreaterThan(
      3 * twoHundred.length,
    );
    expect(twoHundred).toMatch(/\d+ more skills are not listed here: call skills_list\(query=\.\.\.\)/);
    expect(twoHundred).toContain("\nAlso: ");
  });

  it("leaves a small library exactly as before", () => {
    const few = [meta("translate", "Translate text."), meta("review", "Review a diff.", "dev")];
    expect(budgeted(few)).toBe(renderSkillsIndex(few, { instructions: false }));
  });

  it("describes the skills used most and those of the current project first", () => {
    const skills = generated(200);
    const usage = { "docker-debugging": { use_count: 40, last_used_at: "2026-10-30T00:00:00+00:00" } };
    const project = projectWords("my-service", ["Cargo.toml", "src", ".git"]);
    const scores = rankSkills(skills, usage, project, NOW);
    const text = budgeted(skills, scores);
    const described = text
      .split("\n")
      .filter((l) => /^[a-z0-9.-]+: /.test(l))
      .map((l) => l.split(":")[0]);
    expect(described).toContain("docker-debugging");
    // The fixture's git/github skills match the project's .git folder.
    expect(described.some((n) => n?.startsWith("github"))).toBe(true);
    const plain = budgeted(skills);
    expect(plain).not.toBe(text);
  });

  it("never ranks by the user's message: the same inputs give the same bytes", () => {
    const skills = generated(200);
    const scores = rankSkills(skills, {}, projectWords("x", []), NOW);
    expect(budgeted(skills, scores)).toBe(budgeted([...skills], new Map(scores)));
  });
});

describe("projectWords and rankSkills", () => {
  it("reads the ecosystem from marker files and the folder name", () => {
    const words = projectWords("hermes-ts", ["package.json", "tsconfig.json", "Dockerfile", "notes.txt"]);
    for (const w of ["hermes", "node", "npm", "typescript", "docker"]) expect(words.has(w)).toBe(true);
    expect(words.has("rust")).toBe(false);
  });

  it("scores use and recency, and ignores garbage counters", () => {
    const skills = [meta("a", "A."), meta("b", "B."), meta("c", "C.")];
    const scores = rankSkills(
      skills,
      {
        a: { use_count: 7, last_used_at: "2026-10-31T00:00:00+00:00" },
        b: { use_count: 7, last_used_at: "2025-01-01T00:00:00+00:00" },
        c: { use_count: "lots" as unknown as number, view_count: -5 },
      },
      new Set(),
      NOW,
    );
    expect(scores.get("a")).toBeGreaterThan(scores.get("b") ?? 0);
    expect(scores.get("c")).toBe(0);
  });
});

describe("projectSignals", () => {
  it("sees entries added, removed and renamed since the last time it listed the folder", () => {
    const dir = mkdtempSync(join(tmpdir(), "signals-"));
    try {
      const quiet = () => {
        const t = Date.now() / 1000 - 60;
        utimesSync(dir, t, t);
      };
      writeFileSync(join(dir, "package.json"), "{}");
      quiet();
      expect(projectSignals(dir).files).toEqual(["package.json"]);
      expect(projectSignals(dir).files).toEqual(["package.json"]);
      writeFileSync(join(dir, "Cargo.toml"), "");
      expect(projectSignals(dir).files.sort()).toEqual(["Cargo.toml", "package.json"]);
      quiet();
      renameSync(join(dir, "Cargo.toml"), join(dir, "go.mod"));
      expect(projectSignals(dir).files.sort()).toEqual(["go.mod", "package.json"]);
      quiet();
      rmSync(join(dir, "go.mod"));
      expect(projectSignals(dir).files).toEqual(["package.json"]);
      // Callers get their own list.
      projectSignals(dir).files.push("injected");
      expect(projectSignals(dir).files).toEqual(["package.json"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
