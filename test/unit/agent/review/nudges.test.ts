import { describe, expect, it } from "vitest";
import { NudgeCounters } from "../../../../src/agent/review/nudges.js";
import { reviewSettings } from "../../../../src/agent/review/settings.js";
import { defaultConfig } from "../../../../src/config/defaults.js";

type Step = "turn" | "iter" | `use:${string}` | "due";

/** Runs steps and returns what each "due" step reported. */
function play(
  intervals: { memory: number; skills: number },
  steps: Step[],
  tools = { memory: true, skills: true },
): Array<string | undefined> {
  const c = new NudgeCounters(intervals);
  c.setTools(tools);
  const out: Array<string | undefined> = [];
  for (const step of steps) {
    if (step === "turn") c.userTurn();
    else if (step === "iter") c.toolIteration();
    else if (step === "due") out.push(c.takeDue());
    else c.toolUsed(step.slice(4));
  }
  return out;
}

describe("nudge counters", () => {
  it.each([
    {
      name: "memory comes due every N user turns",
      intervals: { memory: 2, skills: 0 },
      steps: ["turn", "due", "turn", "due", "turn", "due", "turn", "due"] as Step[],
      expected: [undefined, "memory", undefined, "memory"],
    },
    {
      name: "interval 1: every turn",
      intervals: { memory: 1, skills: 0 },
      steps: ["turn", "due", "turn", "due"] as Step[],
      expected: ["memory", "memory"],
    },
    {
      name: "the agent saving memory itself resets the memory count",
      intervals: { memory: 2, skills: 0 },
      steps: ["turn", "due", "turn", "use:memory", "due", "turn", "due", "turn", "due"] as Step[],
      expected: [undefined, undefined, undefined, "memory"],
    },
    {
      name: "skills come due after N tool iterations, across turns",
      intervals: { memory: 0, skills: 3 },
      steps: ["turn", "iter", "iter", "due", "turn", "iter", "due", "turn", "due"] as Step[],
      expected: [undefined, "skills", undefined],
    },
    {
      name: "skill_manage used by the agent resets the skill count",
      intervals: { memory: 0, skills: 2 },
      steps: ["iter", "use:skill_manage", "iter", "due", "iter", "due"] as Step[],
      expected: [undefined, "skills"],
    },
    {
      name: "both due in the same turn: one combined review",
      intervals: { memory: 1, skills: 1 },
      steps: ["turn", "iter", "due", "turn", "due"] as Step[],
      expected: ["both", "memory"],
    },
    {
      name: "other tools do not reset anything",
      intervals: { memory: 1, skills: 0 },
      steps: ["turn", "use:terminal", "use:skill_view", "due"] as Step[],
      expected: ["memory"],
    },
    {
      name: "interval 0 switches a nudge off",
      intervals: { memory: 0, skills: 0 },
      steps: ["turn", "iter", "due", "turn", "iter", "due"] as Step[],
      expected: [undefined, undefined],
    },
  ])("$name", ({ intervals, steps, expected }) => {
    expect(play(intervals, steps)).toEqual(expected);
  });

  it("a nudge for a tool the agent does not have never comes due", () => {
    expect(play({ memory: 1, skills: 1 }, ["turn", "iter", "due"], { memory: false, skills: true })).toEqual([
      "skills",
    ]);
    expect(play({ memory: 1, skills: 1 }, ["turn", "iter", "due"], { memory: true, skills: false })).toEqual([
      "memory",
    ]);
    expect(play({ memory: 1, skills: 1 }, ["turn", "iter", "due"], { memory: false, skills: false })).toEqual(
      [undefined],
    );
  });

  it("the flush needs flush_min_turns unreviewed user turns, and a review resets them", () => {
    const c = new NudgeCounters({ memory: 0, skills: 0 });
    c.setTools({ memory: true, skills: false });
    c.userTurn();
    c.userTurn();
    expect(c.flushFocus(3)).toBeUndefined();
    c.userTurn();
    expect(c.flushFocus(3)).toBe("memory");
    c.markReviewed();
    expect(c.unreviewedTurns).toBe(0);
    expect(c.flushFocus(3)).toBeUndefined();
    // 0 switches the flush off however many turns went by.
    for (let i = 0; i < 10; i++) c.userTurn();
    expect(c.flushFocus(0)).toBeUndefined();
  });

  it("no flush without a store to write", () => {
    const c = new NudgeCounters({ memory: 1, skills: 1 });
    for (let i = 0; i < 10; i++) c.userTurn();
    expect(c.flushFocus(1)).toBeUndefined();
  });
});

describe("review settings", () => {
  it("defaults are Python Hermes's", () => {
    expect(reviewSettings(defaultConfig())).toEqual({
      memoryNudgeInterval: 10,
      skillNudgeInterval: 15,
      flushMinTurns: 6,
      budgetMs: 60_000,
      notify: true,
    });
  });

  it.each([
    [{ memory: { nudge_interval: "3" } }, { memoryNudgeInterval: 3 }],
    [{ memory: { nudge_interval: "ten" } }, { memoryNudgeInterval: 10 }],
    [{ memory: { nudge_interval: -4 } }, { memoryNudgeInterval: 0 }],
    [{ memory: { nudge_interval: 2.7 } }, { memoryNudgeInterval: 2 }],
    [{ skills: { creation_nudge_interval: 0 } }, { skillNudgeInterval: 0 }],
    [{ memory: { flush_min_turns: null } }, { flushMinTurns: 6 }],
    [{ memory: { review_budget_seconds: 5 } }, { budgetMs: 5000 }],
    [{ memory: { review_budget_seconds: 0 } }, { budgetMs: 60_000 }],
    [{ display: { memory_notifications: "off" } }, { notify: false }],
    [{ display: { memory_notifications: false } }, { notify: false }],
    [{ display: { memory_notifications: "on" } }, { notify: true }],
    [{ display: { memory_notifications: 7 } }, { notify: true }],
  ])("%j reads as %j", (patch, expected) => {
    const config = { ...defaultConfig(), ...patch } as unknown as ReturnType<typeof defaultConfig>;
    expect(reviewSettings(config)).toMatchObject(expected);
  });
});
