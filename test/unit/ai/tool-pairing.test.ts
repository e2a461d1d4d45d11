/**
 * Tool-call pairing for the two wires that validate it strictly (Anthropic Messages, Bedrock
 * Converse): one table of conversations, one expected outcome per case, run against both
 * converters. Each outcome is read back in a wire-neutral notation: `call ID`, `result ID: text`,
 * and `text: …` (newlines shown as " | ").
 */
import { describe, expect, it } from "vitest";
import { INTERRUPTED_TOOL_RESULT } from "../../../src/ai/history-repair.js";
import { convertMessages as anthropicMessages } from "../../../src/ai/transports/anthropic-convert.js";
import { convertMessages as bedrockMessages } from "../../../src/ai/transports/bedrock-convert.js";
import type { Message, ToolCall } from "../../../src/ai/types.js";

type Block = Record<string, unknown>;
interface Turn {
  role: "user" | "assistant";
  content: Block[];
}

const call = (id: string, name = "read_file"): ToolCall => ({
  id,
  type: "function",
  function: { name, arguments: '{"path":"a.txt"}' },
});
const user = (content: string): Message => ({ role: "user", content });
const calls = (...ids: string[]): Message => ({
  role: "assistant",
  content: null,
  tool_calls: ids.map((id) => call(id)),
});
const said = (content: string): Message => ({ role: "assistant", content });
const result = (id: string, content: string): Message => ({ role: "tool", tool_call_id: id, content });

const flat = (text: string) => text.replace(/\n/g, " | ");
const STAND_IN = flat(INTERRUPTED_TOOL_RESULT);

/** A Messages API block in the table's notation. */
function anthropicBlock(b: Block): string {
  if (b["type"] === "tool_use") return `call ${String(b["id"])}`;
  if (b["type"] === "tool_result") return `result ${String(b["tool_use_id"])}: ${flat(String(b["content"]))}`;
  if (b["type"] === "text") return `text: ${flat(String(b["text"]))}`;
  return `other ${String(b["type"])}`;
}

/** A Converse block in the table's notation. */
function bedrockBlock(b: Block): string {
  const use = b["toolUse"] as Block | undefined;
  if (use) return `call ${String(use["toolUseId"])}`;
  const res = b["toolResult"] as { toolUseId: string; content: Array<{ text?: string }> } | undefined;
  if (res) return `result ${res.toolUseId}: ${flat(res.content.map((p) => p.text ?? "[image]").join("\n"))}`;
  if (typeof b["text"] === "string") return `text: ${flat(b["text"])}`;
  return `other ${Object.keys(b).join(",")}`;
}

const wires: Array<[string, (input: Message[]) => string[][]]> = [
  [
    "anthropic",
    (input) =>
      (anthropicMessages(input).messages as Turn[]).map((m) => [m.role, ...m.content.map(anthropicBlock)]),
  ],
  [
    "bedrock",
    (input) =>
      (bedrockMessages(input, { claude: true }).messages as Turn[]).map((m) => [
        m.role,
        ...m.content.map(bedrockBlock),
      ]),
  ],
];

interface Case {
  name: string;
  input: Message[];
  expected: string[][];
}

const cases: Case[] = [
  {
    name: "one call, one result: sent as they are",
    input: [user("go"), calls("c1"), result("c1", "hello"), said("done")],
    expected: [
      ["user", "text: go"],
      ["assistant", "call c1"],
      ["user", "result c1: hello"],
      ["assistant", "text: done"],
    ],
  },
  {
    name: "parallel calls answered out of order: both results, in the order given",
    input: [user("go"), calls("c1", "c2"), result("c2", "two"), result("c1", "one")],
    expected: [
      ["user", "text: go"],
      ["assistant", "call c1", "call c2"],
      ["user", "result c2: two", "result c1: one"],
    ],
  },
  {
    name: "two results for one call: the first answers it, the second becomes text after the results",
    input: [user("go"), calls("c1"), result("c1", "first"), result("c1", "second")],
    expected: [
      ["user", "text: go"],
      ["assistant", "call c1"],
      ["user", "result c1: first", "text: [result of tool call c1] | second"],
    ],
  },
  {
    name: "a call never answered, the user speaking next: a stand-in result comes first",
    input: [user("go"), calls("c1"), user("never mind")],
    expected: [
      ["user", "text: go"],
      ["assistant", "call c1"],
      ["user", `result c1: ${STAND_IN}`, "text: never mind"],
    ],
  },
  {
    name: "a call at the very end of history: a user turn with its stand-in is added",
    input: [user("go"), calls("c1")],
    expected: [
      ["user", "text: go"],
      ["assistant", "call c1"],
      ["user", `result c1: ${STAND_IN}`],
    ],
  },
  {
    name: "parallel calls with one answered: a stand-in for the other, ahead of the real result",
    input: [user("go"), calls("c1", "c2"), result("c1", "one")],
    expected: [
      ["user", "text: go"],
      ["assistant", "call c1", "call c2"],
      ["user", `result c2: ${STAND_IN}`, "result c1: one"],
    ],
  },
  {
    name: "a result with no call anywhere becomes text",
    input: [user("go"), said("ok"), result("ghost", "late output")],
    expected: [
      ["user", "text: go"],
      ["assistant", "text: ok"],
      ["user", "text: [result of tool call ghost] | late output"],
    ],
  },
  {
    name: "a result for a call two turns back becomes text, and that call gets its stand-in",
    input: [user("go"), calls("c1"), user("wait"), said("waiting"), result("c1", "late")],
    expected: [
      ["user", "text: go"],
      ["assistant", "call c1"],
      ["user", `result c1: ${STAND_IN}`, "text: wait"],
      ["assistant", "text: waiting"],
      ["user", "text: [result of tool call c1] | late"],
    ],
  },
  {
    name: "user text between a call and its result: the result still leads the turn",
    input: [user("go"), calls("c1"), user("also this"), result("c1", "out")],
    expected: [
      ["user", "text: go"],
      ["assistant", "call c1"],
      ["user", "result c1: out", "text: also this"],
    ],
  },
  {
    name: "a repeated result across two turns: only the turn right after the call may answer it",
    input: [user("go"), calls("c1"), result("c1", "one"), said("ok"), result("c1", "again")],
    expected: [
      ["user", "text: go"],
      ["assistant", "call c1"],
      ["user", "result c1: one"],
      ["assistant", "text: ok"],
      ["user", "text: [result of tool call c1] | again"],
    ],
  },
];

describe.each(wires)("tool-call pairing on the %s wire", (_wire, convert) => {
  it.each(cases)("$name", ({ input, expected }) => {
    expect(convert(input)).toEqual(expected);
  });

  it("answers every call exactly once, in the user turn right after it, whatever the history", () => {
    // The rule itself, checked over every case: no call unanswered, none answered twice.
    for (const { input } of cases) {
      const turns = convert(input);
      turns.forEach((turn, i) => {
        if (turn[0] !== "assistant") return;
        const ids = turn.filter((b) => b.startsWith("call ")).map((b) => b.slice(5));
        const answers = (turns[i + 1] ?? [])
          .filter((b) => b.startsWith("result "))
          .map((b) => b.slice(7, b.indexOf(":")));
        expect(answers.sort()).toEqual(ids.sort());
      });
    }
  });
});
