/**
 * `hermes trajectories compress` through the built CLI against the scripted model: a long
 * trajectory is fitted under --target-tokens with its middle summarised by the (auxiliary) model,
 * the first turns and the last ones kept, no tool call separated from its result; a short one and a
 * line that is not a trajectory are copied unchanged; per-file savings are reported.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";

const llm = useFakeLlm();

const filler = (n: number) => Array.from({ length: 60 }, (_, k) => `word${n}_${k}`).join(" ");

function longTrajectory(pairs: number) {
  const turns = [
    { from: "system", value: "You are a function calling AI model. <tools>\n[]\n</tools>" },
    { from: "human", value: "fix the build" },
  ];
  for (let i = 0; i < pairs; i++) {
    turns.push({
      from: "gpt",
      value: `<think>\nstep ${i}\n</think>\n<tool_call>\n{"name": "terminal", "arguments": {"command": "make ${i}"}}\n</tool_call>`,
    });
    turns.push({
      from: "tool",
      value: `<tool_response>\n{"tool_call_id": "c${i}", "name": "terminal", "content": "${filler(i)}"}\n</tool_response>`,
    });
  }
  turns.push({ from: "gpt", value: "<think>\n</think>\nThe build passes." });
  return { conversations: turns, completed: true, prompt_index: 0 };
}

describe("hermes trajectories compress", () => {
  it("summarises the middle of long trajectories and reports the savings per file", {
    timeout: 60_000,
  }, async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    const input = join(cwd, "in");
    mkdirSync(input);
    const long = longTrajectory(20);
    const short = { conversations: long.conversations.slice(0, 3), completed: true, prompt_index: 1 };
    writeFileSync(join(input, "a.jsonl"), `${JSON.stringify(long)}\nnot json\n${JSON.stringify(short)}\n`);
    llm.enqueue(reply().text("[CONTEXT SUMMARY]: ran make 0 to make 14; all output was word lists."));
    const out = join(cwd, "out");
    const result = await runHermes(["trajectories", "compress", input, out, "--target-tokens", "1200"], {
      home,
      cwd,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(
      /a\.jsonl -> .*a\.jsonl: 3 entries, 1 compressed, 1 already under target; tokens \d+ -> \d+ \(saved \d+, \d+\.\d%\)/,
    );
    expect(result.stderr).toContain("1 line(s) were not trajectories and were copied unchanged");
    // One summary request, holding the turns it replaces.
    expect(llm.chatRequests).toHaveLength(1);
    const prompt = JSON.stringify(llm.chatRequests[0]!.body);
    expect(prompt).toContain("TURNS TO SUMMARIZE");
    const lines = readFileSync(join(out, "a.jsonl"), "utf8").split("\n").filter(Boolean);
    expect(lines).toHaveLength(3);
    expect(lines[1]).toBe("not json");
    expect(JSON.parse(lines[2]!)).toEqual(short);
    const compressed = JSON.parse(lines[0]!);
    const turns = compressed.conversations as { from: string; value: string }[];
    // Head kept (system with the notice, prompt, first call and its result), then the summary.
    expect(turns[0]!.value).toContain("Some of your previous tool responses may be summarized");
    expect(turns.slice(1, 4)).toEqual(long.conversations.slice(1, 4));
    const summaryAt = turns.findIndex((t) => t.value.startsWith("[CONTEXT SUMMARY]:"));
    expect(summaryAt).toBe(4);
    expect(turns[summaryAt]!.from).toBe("human");
    // No tool result separated from its call: the turn after the summary is a call, never a result.
    expect(turns[summaryAt + 1]!.from).toBe("gpt");
    for (let i = 1; i < turns.length; i++)
      if (turns[i]!.from === "tool") expect(turns[i - 1]!.from).toBe("gpt");
    // The end is kept verbatim.
    expect(turns.slice(-4)).toEqual(long.conversations.slice(-4));
    expect(compressed.compression_metrics).toMatchObject({ was_compressed: true, still_over_limit: false });
    expect(compressed.compression_metrics.compressed_tokens).toBeLessThanOrEqual(1200);
    expect(compressed.prompt_index).toBe(0);
  });

  it("refuses a missing input with exit 2", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    const result = await runHermes(
      ["trajectories", "compress", "nope.jsonl", "out.jsonl", "--target-tokens", "10"],
      {
        home,
        cwd,
      },
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("nope.jsonl does not exist");
  });
});
