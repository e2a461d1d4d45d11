import { describe, expect, it } from "vitest";
import { consolidationPrompt, parseProposals } from "../../../../src/knowledge/curator/consolidate.js";

const md = (name: string) =>
  `---\nname: ${name}\ndescription: Umbrella for ${name}.\n---\n\n# ${name}\n\nSteps.\n`;
const known = new Set(["pdf-a", "pdf-b", "pdf-c", "mine"]);

describe("parseProposals", () => {
  it("accepts a valid merge from a fenced JSON answer", () => {
    const answer = `Here:\n\`\`\`json\n${JSON.stringify({
      merges: [
        { into: "pdf-tools", from: ["pdf-a", "pdf-b"], reason: "same task", skill_md: md("pdf-tools") },
      ],
    })}\n\`\`\``;
    const parsed = parseProposals(answer, known, new Set());
    expect(parsed.merges).toEqual([
      { into: "pdf-tools", from: ["pdf-a", "pdf-b"], reason: "same task", skillMd: md("pdf-tools") },
    ]);
    expect(parsed.rejected).toEqual([]);
  });

  it("drops what would absorb unknown, protected or already-merged skills, or write a wrong SKILL.md", () => {
    const merges = [
      { into: "x", from: ["ghost"], skill_md: md("x") },
      { into: "y", from: ["mine"], skill_md: md("y") },
      { into: "pdf-a", from: ["pdf-a"], skill_md: md("pdf-a") },
      { into: "../evil", from: ["pdf-b"], skill_md: md("evil") },
      { into: "z", from: ["pdf-c"], skill_md: md("not-z") },
      { into: "w", from: ["pdf-c"], skill_md: "no frontmatter" },
      { into: "pdf-b", from: ["pdf-c"], skill_md: md("pdf-b") },
      { into: "v", from: ["pdf-c"], skill_md: md("v") },
      { into: "u", from: [], skill_md: md("u") },
    ];
    const parsed = parseProposals(JSON.stringify({ merges }), known, new Set(["mine"]));
    expect(parsed.merges.map((m) => m.into)).toEqual(["pdf-b"]);
    const why = parsed.rejected.map((r) => r.why).join("\n");
    expect(why).toMatch(/not a curator-managed skill: ghost/);
    expect(why).toMatch(/protected .*mine/);
    expect(why).toMatch(/cannot absorb itself/);
    expect(why).toMatch(/Invalid skill name/);
    expect(why).toMatch(/named "not-z"/);
    expect(why).toMatch(/does not parse/);
    expect(why).toMatch(/already part of another merge: pdf-c/);
    expect(why).toMatch(/names no skill/);
  });

  it("reads prose or broken JSON as no merges, with a note", () => {
    expect(parseProposals("I think they are all fine.", known, new Set())).toMatchObject({ merges: [] });
    expect(parseProposals('{"merges": [', known, new Set()).rejected).toHaveLength(1);
    expect(parseProposals('{"merges": []}', known, new Set())).toEqual({ merges: [], rejected: [] });
  });
});

describe("consolidationPrompt", () => {
  it("lists every candidate and cuts long skills", () => {
    const p = consolidationPrompt([
      { name: "a", description: "A", content: "x".repeat(5000), useCount: 2, lastActivity: null },
      { name: "b", description: "B", content: "short", useCount: 0, lastActivity: "2026-01-01T00:00:00Z" },
    ]);
    expect(p.user).toContain("### a (used 2x, last activity never)");
    expect(p.user).toContain("[…cut]");
    expect(p.user).toContain("### b");
    expect(p.system).toMatch(/JSON only/);
  });
});
