import { describe, expect, it } from "vitest";
import {
  describeRepair,
  INTERRUPTED_MARKER,
  INTERRUPTED_TOOL_RESULT,
  repairChanged,
  repairHistory,
  withInterruptedMarker,
} from "../../../src/ai/history-repair.js";
import type { Message } from "../../../src/ai/types.js";

const user = (content: string): Message => ({ role: "user", content });
const say = (content: string, extra: Partial<Message> = {}): Message => ({
  role: "assistant",
  content,
  ...extra,
});
const calls = (...ids: string[]): Message => ({
  role: "assistant",
  content: null,
  tool_calls: ids.map((id) => ({ id, type: "function", function: { name: `tool_${id}`, arguments: "{}" } })),
});
const result = (id: string, content = `out ${id}`): Message => ({
  role: "tool",
  tool_call_id: id,
  name: `tool_${id}`,
  content,
});
const stub = (id: string): Message => ({
  role: "tool",
  tool_call_id: id,
  name: `tool_${id}`,
  content: INTERRUPTED_TOOL_RESULT,
});

/**
 * What the strictest providers require of a history (Anthropic Messages and Bedrock Converse: every
 * tool_use answered in the very next turn; OpenAI: tool messages right after their call, none
 * elsewhere; no empty assistant turn). Returns the problems found.
 */
function strictProblems(messages: readonly Message[]): string[] {
  const problems: string[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role === "assistant") {
      const ids = (m.tool_calls ?? []).map((c) => c.id);
      if (ids.length === 0 && !String(m.content ?? "").trim()) problems.push(`${i}: empty assistant`);
      if (new Set(ids).size !== ids.length) problems.push(`${i}: duplicate call ids`);
      const answered: string[] = [];
      let j = i + 1;
      for (; messages[j]?.role === "tool"; j++) answered.push(String(messages[j]!.tool_call_id));
      if ([...answered].sort().join() !== [...ids].sort().join())
        problems.push(`${i}: calls ${ids.join()} answered by ${answered.join()}`);
      i = ids.length > 0 ? j - 1 : i;
    } else if (m.role === "tool") {
      problems.push(`${i}: tool result without its call right before it`);
    }
  }
  return problems;
}

interface Case {
  name: string;
  input: Message[];
  output: Message[];
  /** What a store appends (undefined: earlier messages changed, nothing is written). */
  appended: Message[] | undefined;
}

const partial = say("The plan is: first", { finish_reason: "aborted" });
const partialMarked = say(`The plan is: first\n\n${INTERRUPTED_MARKER}`, { finish_reason: "aborted" });

const CASES: Case[] = [
  {
    name: "a complete history is left alone",
    input: [user("hi"), calls("a"), result("a"), say("done")],
    output: [user("hi"), calls("a"), result("a"), say("done")],
    appended: [],
  },
  {
    name: "killed during a tool call: the call gets a stand-in at the end",
    input: [user("run it"), calls("a")],
    output: [user("run it"), calls("a"), stub("a")],
    appended: [stub("a")],
  },
  {
    name: "parallel calls, one finished: only the other one gets a stand-in",
    input: [user("both"), calls("a", "b", "c"), result("b")],
    output: [user("both"), calls("a", "b", "c"), result("b"), stub("a"), stub("c")],
    appended: [stub("a"), stub("c")],
  },
  {
    name: "several orphans in the middle are answered in place (repaired on each load)",
    input: [user("1"), calls("a"), user("2"), calls("b", "c"), result("c"), user("3"), say("ok")],
    output: [
      user("1"),
      calls("a"),
      stub("a"),
      user("2"),
      calls("b", "c"),
      result("c"),
      stub("b"),
      user("3"),
      say("ok"),
    ],
    appended: undefined,
  },
  {
    name: "a result without a call becomes a user message quoting it",
    input: [user("q"), result("gone", "42 files"), say("ok")],
    output: [
      user("q"),
      {
        role: "user",
        content:
          "[Result of an earlier tool_gone tool call gone whose call is no longer in the conversation]\n42 files",
      },
      say("ok"),
    ],
    appended: undefined,
  },
  {
    name: "a trailing user message (killed before the model answered) is left alone",
    input: [user("q"), say("a"), user("killed before any answer")],
    output: [user("q"), say("a"), user("killed before any answer")],
    appended: [],
  },
  {
    name: "an empty assistant message is dropped",
    input: [user("q"), say(""), user("again"), say("  ", { finish_reason: "stop" }), say("fine")],
    output: [user("q"), user("again"), say("fine")],
    appended: undefined,
  },
  {
    name: "an answer stopped mid-stream is kept and marked",
    input: [user("plan?"), partial],
    output: [user("plan?"), partialMarked],
    appended: undefined,
  },
  {
    name: "an answer already marked is not marked twice",
    input: [user("plan?"), partialMarked, user("go on")],
    output: [user("plan?"), partialMarked, user("go on")],
    appended: [],
  },
  {
    name: "a result stored after a later user message moves up next to its call",
    input: [user("q"), calls("a"), user("meanwhile"), result("a"), say("ok")],
    output: [user("q"), calls("a"), result("a"), user("meanwhile"), say("ok")],
    appended: undefined,
  },
  {
    name: "a second result for the same call is dropped",
    input: [user("q"), calls("a"), result("a"), result("a", "again"), say("ok")],
    output: [user("q"), calls("a"), result("a"), say("ok")],
    appended: undefined,
  },
  {
    name: "ids reused turn after turn (local models' call_0) are matched by position",
    input: [user("1"), calls("call_0"), user("2"), calls("call_0"), result("call_0"), say("ok")],
    output: [
      user("1"),
      calls("call_0"),
      stub("call_0"),
      user("2"),
      calls("call_0"),
      result("call_0"),
      say("ok"),
    ],
    appended: undefined,
  },
  {
    name: "a call id repeated within one message is kept once",
    input: [user("q"), calls("a", "a"), result("a")],
    output: [user("q"), calls("a"), result("a")],
    appended: undefined,
  },
  {
    name: "results stored out of call order stay as stored",
    input: [user("q"), calls("a", "b"), result("b"), result("a"), say("ok")],
    output: [user("q"), calls("a", "b"), result("b"), result("a"), say("ok")],
    appended: [],
  },
];

describe("repairHistory", () => {
  it.each(CASES)("$name", ({ input, output, appended }) => {
    const before = structuredClone(input);
    const report = repairHistory(input);
    expect(report.messages).toEqual(output);
    expect(report.appended).toEqual(appended);
    expect(strictProblems(report.messages)).toEqual([]);
    // Pure: the input is untouched.
    expect(input).toEqual(before);
    // Idempotent: a repaired history needs nothing more.
    expect(repairChanged(repairHistory(report.messages))).toBe(false);
  });

  it("the strict checker rejects every broken input (so the table's check can fail)", () => {
    const validBefore = CASES.filter((c) => strictProblems(c.input).length === 0).map((c) => c.name);
    expect(validBefore).toEqual([
      "a complete history is left alone",
      "a trailing user message (killed before the model answered) is left alone",
      "an answer stopped mid-stream is kept and marked",
      "an answer already marked is not marked twice",
      "results stored out of call order stay as stored",
    ]);
  });

  it("counts what it did and says so in one sentence", () => {
    const report = repairHistory([user("q"), calls("a", "b"), user("next"), partial]);
    expect(report).toMatchObject({ missingResults: 2, markedInterrupted: 1, appended: undefined });
    expect(describeRepair(report)).toBe(
      "This session was interrupted before: 2 tool calls never returned (the model is told they were interrupted); 1 answer was cut off mid-stream.",
    );
    expect(describeRepair(repairHistory([user("q")]))).toBe("");
  });

  it("compression's options: its own stand-in text, orphan results dropped", () => {
    const { messages } = repairHistory([result("gone"), user("q"), calls("k")], {
      missingResult: () => "[removed]",
      orphanResults: "drop",
    });
    expect(messages).toEqual([user("q"), calls("k"), { ...stub("k"), content: "[removed]" }]);
  });

  it("marks multimodal and cut-stream answers too, and the marker is added once", () => {
    const cut = say("Half of it", { finish_reason: "error" });
    expect(repairHistory([user("q"), cut]).messages[1]?.content).toBe(`Half of it\n\n${INTERRUPTED_MARKER}`);
    expect(withInterruptedMarker(withInterruptedMarker("x"))).toBe(`x\n\n${INTERRUPTED_MARKER}`);
    const parts: Message = {
      role: "assistant",
      content: [{ type: "text", text: "part" }],
      finish_reason: "aborted",
    };
    expect(repairHistory([user("q"), parts]).messages[1]?.content).toEqual([
      { type: "text", text: "part" },
      { type: "text", text: `\n\n${INTERRUPTED_MARKER}` },
    ]);
  });

  it("an answer cut off by the output limit is a complete reply and is not marked", () => {
    const long = say("A long answer that hit max_tokens", { finish_reason: "length" });
    expect(repairHistory([user("q"), long]).messages[1]).toBe(long);
  });
});
