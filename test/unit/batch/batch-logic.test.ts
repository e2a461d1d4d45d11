import { describe, expect, it } from "vitest";
import { pythonJson, toShareGpt } from "../../../src/agent/trajectory.js";
import type { Message } from "../../../src/ai/types.js";
import { compressEntry } from "../../../src/batch/compress/compressor.js";
import { planCompression, SUMMARY_FALLBACK } from "../../../src/batch/compress/plan.js";
import { parseDataset } from "../../../src/batch/dataset.js";
import { DISTRIBUTIONS, distributionNamed, sampleToolsets } from "../../../src/batch/distributions.js";
import { checkRunName, keepDoneLines } from "../../../src/batch/run-store.js";
import {
  extractReasoningStats,
  extractToolStats,
  normalizeToolStats,
} from "../../../src/batch/tool-stats.js";

const call = (id: string, name: string, args: string) => ({
  id,
  type: "function" as const,
  function: { name, arguments: args },
});

describe("toolset distributions", () => {
  it("includes each toolset with its own chance and skips unknown ones", () => {
    const rolls = [0.5, 0.95, 0.1];
    let i = 0;
    const { toolsets, skipped } = sampleToolsets(
      { description: "", toolsets: { web: 60, terminal: 90, nope: 100, file: 20 } },
      () => rolls[i++] ?? 0,
      (name) => name !== "nope",
    );
    expect(toolsets).toEqual(["web", "file"]);
    expect(skipped).toEqual(["nope"]);
  });

  it("falls back to the likeliest known toolset when the roll picks nothing", () => {
    const { toolsets } = sampleToolsets(
      DISTRIBUTIONS["research"]!,
      () => 0.999,
      () => true,
    );
    expect(toolsets).toEqual(["web"]);
  });

  it("names the distributions that exist when asked for an unknown one", () => {
    expect(() => distributionNamed("constructor")).toThrow(
      /unknown toolset distribution "constructor".*default/,
    );
  });
});

describe("datasets", () => {
  it("numbers valid rows in order and reports the rest", () => {
    const { rows, warnings } = parseDataset(
      [
        '{"prompt":"a"}',
        "",
        "{bad",
        '{"prompt":""}',
        "[1]",
        '{"prompt":"b","docker_image":"img:1","cwd":"/w"}',
      ].join("\n"),
    );
    expect(rows.map((r) => [r.index, r.prompt, r.image, r.cwd])).toEqual([
      [0, "a", undefined, undefined],
      [1, "b", "img:1", "/w"],
    ]);
    expect(warnings).toEqual([
      expect.stringMatching(/^line 3: not JSON/),
      'line 4: missing "prompt" (a non-empty string); skipped',
      'line 5: expected a JSON object with a "prompt"; skipped',
    ]);
  });

  it("refuses run names that would leave the runs folder", () => {
    for (const bad of ["../x", "a/b", ".hidden", "", "a b", "x".repeat(200)])
      expect(() => checkRunName(bad)).toThrow();
    expect(checkRunName("run-1.v2_final")).toBe("run-1.v2_final");
  });
});

describe("resume trimming", () => {
  it("keeps the first line of each done prompt and drops torn, undone and duplicate lines", () => {
    const text = [
      '{"prompt_index":0,"x":1}',
      '{"prompt_index":1}',
      '{"prompt_index":0,"x":2}',
      '{"prompt_index":2}',
      '{"prompt_index":"2"}',
      '{"prompt_ind',
    ].join("\n");
    const { kept, dropped } = keepDoneLines(text, new Set([0, 2]));
    expect(kept).toEqual(['{"prompt_index":0,"x":1}', '{"prompt_index":2}']);
    expect(dropped).toBe(4);
  });
});

describe("tool statistics", () => {
  it("counts failures as upstream does: error fields, success false, Error: text, empty results", () => {
    const results: [string, boolean][] = [
      ['{"output":"ok","exit_code":1}', true],
      ['{"error":null,"output":"x"}', true],
      ['{"error":"boom"}', false],
      ['{"content":{"error":"inner"}}', false],
      ['{"success":false}', false],
      ["Error: no such file", false],
      ["", false],
      ["plain output mentioning error: later", true],
    ];
    const messages: Message[] = [
      {
        role: "assistant",
        content: null,
        tool_calls: results.map((_, i) => call(`c${i}`, "terminal", "{}")),
      },
      ...results.map(([content], i) => ({ role: "tool" as const, content, tool_call_id: `c${i}` })),
    ];
    expect(extractToolStats(messages)).toEqual({ terminal: { count: 8, success: 3, failure: 5 } });
    const normalized = normalizeToolStats({ mystery: { count: 1, success: 1, failure: 0 } }, ["terminal"]);
    expect(normalized).toEqual({
      terminal: { count: 0, success: 0, failure: 0 },
      mystery: { count: 1, success: 1, failure: 0 },
    });
  });

  it("counts reasoning from the reasoning field or a scratchpad", () => {
    const stats = extractReasoningStats([
      { role: "assistant", content: "hi", reasoning: " " },
      { role: "assistant", content: "<REASONING_SCRATCHPAD>x</REASONING_SCRATCHPAD>ok" },
      { role: "assistant", content: "ok", reasoning: "why" },
    ]);
    expect(stats).toEqual({
      total_assistant_turns: 3,
      turns_with_reasoning: 2,
      turns_without_reasoning: 1,
      has_any_reasoning: true,
    });
  });
});

describe("ShareGPT conversion", () => {
  it("writes JSON as Python's json.dumps does", () => {
    expect(pythonJson({ a: [1, "é", null], b: { c: true }, d: undefined })).toBe(
      '{"a": [1, "é", null], "b": {"c": true}}',
    );
  });

  it("names results by position, writes unreadable arguments as {}, and drops orphan results", () => {
    const turns = toShareGpt(
      [
        { role: "user", content: "go" },
        { role: "tool", content: "orphan", tool_call_id: "z" },
        {
          role: "assistant",
          content: "<REASONING_SCRATCHPAD>plan</REASONING_SCRATCHPAD>",
          tool_calls: [call("a", "read_file", '{"path": "x"}'), call("b", "terminal", "{broken")],
        },
        { role: "tool", content: '{"content": "text"}', tool_call_id: "a" },
        { role: "tool", content: "[not json", tool_call_id: "b" },
        { role: "assistant", content: "done" },
      ],
      [],
    );
    expect(turns.map((t) => t.from)).toEqual(["system", "human", "gpt", "tool", "gpt"]);
    expect(turns[2]!.value).toBe(
      '<think>plan</think>\n<tool_call>\n{"name": "read_file", "arguments": {"path": "x"}}\n</tool_call>\n<tool_call>\n{"name": "terminal", "arguments": {}}\n</tool_call>',
    );
    expect(turns[3]!.value).toBe(
      '<tool_response>\n{"tool_call_id": "a", "name": "read_file", "content": {"content": "text"}}\n</tool_response>\n<tool_response>\n{"tool_call_id": "b", "name": "terminal", "content": "[not json"}\n</tool_response>',
    );
    expect(turns[4]!.value).toBe("<think>\n</think>\ndone");
  });
});

describe("trajectory compression", () => {
  const settings = { targetTokens: 100, summaryTokens: 10, keepLast: 2 };
  const turns = (froms: string[]) => froms.map((from, i) => ({ from, value: `t${i}` }));

  it("leaves a trajectory under the target alone", () => {
    expect(planCompression(turns(["system", "human", "gpt"]), [10, 10, 10], settings)).toBeUndefined();
  });

  it("never starts or ends the summarised region on a tool turn", () => {
    // A long run of gpt/tool pairs: every candidate cut lands next to a tool turn.
    const froms = ["system", "human", "gpt", "tool"];
    for (let i = 0; i < 10; i++) froms.push("gpt", "tool", "tool");
    froms.push("gpt", "gpt");
    const t = turns(froms);
    for (let perTurn = 5; perTurn < 40; perTurn += 3) {
      const region = planCompression(
        t,
        t.map(() => perTurn),
        settings,
      );
      if (!region) continue;
      expect(t[region.start]!.from).not.toBe("tool");
      if (region.until < t.length) expect(t[region.until]!.from).not.toBe("tool");
      expect(region.start).toBeGreaterThanOrEqual(4);
      expect(region.until).toBeLessThanOrEqual(t.length - 2);
    }
  });

  it("keeps the entry whole with upstream's placeholder when the summary fails", async () => {
    const froms = ["system", "human", "gpt", "tool", ...Array(10).fill("gpt"), "gpt"];
    const entry = { conversations: froms.map((from, i) => ({ from, value: `word${i} `.repeat(40) })), id: 7 };
    const { entry: out, metrics } = await compressEntry(
      entry,
      { targetTokens: 200, summaryTokens: 20, keepLast: 2 },
      () => Promise.reject(new Error("down")),
    );
    expect(metrics.summarization_errors).toBe(1);
    expect((out["conversations"] as { value: string }[]).some((t) => t.value === SUMMARY_FALLBACK)).toBe(
      true,
    );
    expect(out["id"]).toBe(7);
  });
});
