import { describe, expect, it } from "vitest";
import type { Usage } from "../../../src/ai/types.js";
import { addUsage, emptyUsage } from "../../../src/ai/usage.js";

describe("addUsage", () => {
  const cases: Array<{ name: string; total: Usage; add: Usage; sum: Usage }> = [
    {
      name: "adds every counter",
      total: {
        inputTokens: 10,
        outputTokens: 5,
        cacheReadTokens: 2,
        cacheWriteTokens: 1,
        reasoningTokens: 3,
      },
      add: { inputTokens: 7, outputTokens: 4, cacheReadTokens: 6, cacheWriteTokens: 2, reasoningTokens: 1 },
      sum: { inputTokens: 17, outputTokens: 9, cacheReadTokens: 8, cacheWriteTokens: 3, reasoningTokens: 4 },
    },
    {
      name: "counts a counter the provider did not report as 0, on either side",
      total: { inputTokens: 10, outputTokens: 5 },
      add: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 4 },
      sum: { inputTokens: 11, outputTokens: 6, cacheReadTokens: 4, cacheWriteTokens: 0, reasoningTokens: 0 },
    },
    {
      name: "keeps cache and reasoning totals when a later call reports none",
      total: { inputTokens: 3, outputTokens: 2, cacheReadTokens: 9, cacheWriteTokens: 8, reasoningTokens: 7 },
      add: { inputTokens: 1, outputTokens: 1 },
      sum: { inputTokens: 4, outputTokens: 3, cacheReadTokens: 9, cacheWriteTokens: 8, reasoningTokens: 7 },
    },
    {
      name: "adding zero changes nothing but fills in the missing counters",
      total: { inputTokens: 3, outputTokens: 2 },
      add: emptyUsage(),
      sum: { inputTokens: 3, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(addUsage(c.total, c.add)).toEqual(c.sum);
    });
  }

  it("never changes its inputs", () => {
    const total: Usage = { inputTokens: 1, outputTokens: 1 };
    const add: Usage = { inputTokens: 2, outputTokens: 2, reasoningTokens: 5 };
    const sum = addUsage(total, add);
    expect(total).toEqual({ inputTokens: 1, outputTokens: 1 });
    expect(add).toEqual({ inputTokens: 2, outputTokens: 2, reasoningTokens: 5 });
    expect(sum).not.toBe(total);
  });

  it("sums a run of calls the same in any order", () => {
    const calls: Usage[] = [
      { inputTokens: 100, outputTokens: 10, cacheReadTokens: 80 },
      { inputTokens: 120, outputTokens: 12, reasoningTokens: 30 },
      { inputTokens: 140, outputTokens: 14, cacheWriteTokens: 20 },
    ];
    const forward = calls.reduce(addUsage, emptyUsage());
    const backward = [...calls].reverse().reduce(addUsage, emptyUsage());
    expect(forward).toEqual(backward);
    expect(forward).toEqual({
      inputTokens: 360,
      outputTokens: 36,
      cacheReadTokens: 80,
      cacheWriteTokens: 20,
      reasoningTokens: 30,
    });
  });
});

describe("emptyUsage", () => {
  it("is all zero and a fresh object each time", () => {
    const a = emptyUsage();
    expect(a).toEqual({
      inputTokens: 0,
      outputTokens: 0,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
    });
    expect(emptyUsage()).not.toBe(a);
  });
});
