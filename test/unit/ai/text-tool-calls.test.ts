import { describe, expect, it } from "vitest";
import { extractTextToolCalls } from "../../../src/ai/text-tool-calls.js";

function ids() {
  let n = 0;
  return () => `call_${++n}`;
}

/** [name, arguments] pairs, arguments parsed when they are JSON. */
function extract(text: string, known?: string[]) {
  const result = extractTextToolCalls(text, known ? new Set(known) : undefined, ids());
  const calls = result.calls.map((c) => {
    let args: unknown = c.function.arguments;
    try {
      args = JSON.parse(c.function.arguments);
    } catch {}
    return [c.function.name, args];
  });
  return { calls, remainingText: result.remainingText };
}

const known = ["terminal", "read_file", "web_search"];

describe("extractTextToolCalls", () => {
  it.each<[string, string, string[] | undefined, unknown[][], string]>([
    [
      "one Hermes-style block",
      '<tool_call>\n{"name": "terminal", "arguments": {"command": "ls"}}\n</tool_call>',
      undefined,
      [["terminal", { command: "ls" }]],
      "",
    ],
    [
      "text around blocks is kept",
      'Let me check.\n<tool_call>{"name": "terminal", "arguments": {"command": "pwd"}}</tool_call>\nThen I will read.',
      known,
      [["terminal", { command: "pwd" }]],
      "Let me check.\n\nThen I will read.",
    ],
    [
      "several blocks",
      '<tool_call>{"name":"read_file","arguments":{"path":"a"}}</tool_call><tool_call>{"name":"read_file","arguments":{"path":"b"}}</tool_call>',
      known,
      [
        ["read_file", { path: "a" }],
        ["read_file", { path: "b" }],
      ],
      "",
    ],
    [
      "last block missing its closing tag",
      'Sure.\n<tool_call>\n{"name": "web_search", "arguments": {"query": "hermes"}}',
      known,
      [["web_search", { query: "hermes" }]],
      "Sure.",
    ],
    [
      "a block left open before the next one",
      '<tool_call>{"name":"terminal","arguments":{}}\n<tool_call>{"name":"read_file","arguments":{"path":"x"}}</tool_call>',
      known,
      [
        ["terminal", {}],
        ["read_file", { path: "x" }],
      ],
      "",
    ],
    [
      "arguments as a JSON string",
      '<tool_call>{"name": "terminal", "arguments": "{\\"command\\": \\"ls\\"}"}</tool_call>',
      known,
      [["terminal", { command: "ls" }]],
      "",
    ],
    [
      "parameters as an alias of arguments",
      '<tool_call>{"name": "terminal", "parameters": {"command": "id"}}</tool_call>',
      known,
      [["terminal", { command: "id" }]],
      "",
    ],
    [
      "no arguments in a tagged block → {}",
      '<tool_call>{"name": "terminal"}</tool_call>',
      known,
      [["terminal", {}]],
      "",
    ],
    [
      "malformed JSON inside a block is skipped and kept as text",
      'A <tool_call>{"name": "terminal", "arguments": {"command": </tool_call> B <tool_call>{"name":"read_file","arguments":{"path":"p"}}</tool_call>',
      known,
      [["read_file", { path: "p" }]],
      'A <tool_call>{"name": "terminal", "arguments": {"command": </tool_call> B',
    ],
    [
      "a block that is not a call is kept",
      "<tool_call>just words</tool_call>",
      known,
      [],
      "<tool_call>just words</tool_call>",
    ],
    [
      "a fenced block",
      '<tool_call>\n```json\n{"name": "terminal", "arguments": {"command": "ls"}}\n```\n</tool_call>',
      known,
      [["terminal", { command: "ls" }]],
      "",
    ],
    [
      "tagged calls are taken even for unknown tools",
      '<tool_call>{"name": "launch_rocket", "arguments": {}}</tool_call>',
      known,
      [["launch_rocket", {}]],
      "",
    ],
    [
      "Llama-style <function=name>{json}</function>",
      'Checking. <function=web_search>{"query": "weather"}</function>',
      known,
      [["web_search", { query: "weather" }]],
      "Checking.",
    ],
    [
      "Qwen3-Coder XML parameters inside <tool_call>",
      "<tool_call>\n<function=read_file>\n<parameter=path>\nsrc/a.ts\n</parameter>\n<parameter=limit>\n20\n</parameter>\n</function>\n</tool_call>",
      known,
      [["read_file", { path: "src/a.ts", limit: 20 }]],
      "",
    ],
    [
      "bare JSON reply",
      '{"name": "terminal", "arguments": {"command": "date"}}',
      known,
      [["terminal", { command: "date" }]],
      "",
    ],
    [
      "bare JSON in a code fence",
      '```json\n{"name": "web_search", "parameters": {"query": "x"}}\n```',
      known,
      [["web_search", { query: "x" }]],
      "",
    ],
    [
      "bare JSON in OpenAI's shape",
      '{"type": "function", "function": {"name": "terminal", "arguments": "{\\"command\\":\\"ls\\"}"}}',
      known,
      [["terminal", { command: "ls" }]],
      "",
    ],
    [
      "bare JSON array of calls",
      '[{"name": "terminal", "arguments": {}}, {"name": "read_file", "arguments": {"path": "a"}}]',
      known,
      [
        ["terminal", {}],
        ["read_file", { path: "a" }],
      ],
      "",
    ],
    [
      "bare JSON naming an unknown tool is an answer",
      '{"name": "Ada Lovelace", "arguments": {"born": 1815}}',
      known,
      [],
      '{"name": "Ada Lovelace", "arguments": {"born": 1815}}',
    ],
    ["bare JSON without arguments is an answer", '{"name": "terminal"}', known, [], '{"name": "terminal"}'],
    [
      "bare JSON with any name counts when no tool names are given",
      '{"name": "whatever", "arguments": {}}',
      undefined,
      [["whatever", {}]],
      "",
    ],
    [
      "JSON inside prose is not a call",
      'Here is the payload: {"name": "terminal", "arguments": {}}',
      known,
      [],
      'Here is the payload: {"name": "terminal", "arguments": {}}',
    ],
    ["plain text", "Hello, world.", known, [], "Hello, world."],
    ["empty text", "", known, [], ""],
    [
      "unicode survives",
      '日本語 <tool_call>{"name":"terminal","arguments":{"command":"echo 🙂"}}</tool_call>',
      known,
      [["terminal", { command: "echo 🙂" }]],
      "日本語",
    ],
  ])("%s", (_label, text, names, calls, remaining) => {
    const result = extract(text, names);
    expect(result.calls).toEqual(calls);
    expect(result.remainingText).toBe(remaining);
  });

  it("gives every call a distinct generated id", () => {
    const text =
      '<tool_call>{"name":"a","arguments":{}}</tool_call><tool_call>{"name":"b","arguments":{}}</tool_call>';
    const { calls } = extractTextToolCalls(text);
    expect(calls).toHaveLength(2);
    expect(calls[0]?.id).toMatch(/^call_[0-9a-f]{24}$/);
    expect(calls[0]?.id).not.toBe(calls[1]?.id);
    expect(calls[0]?.type).toBe("function");
  });

  it("keeps a string argument that is not JSON as the raw arguments text", () => {
    const { calls } = extractTextToolCalls('<tool_call>{"name":"terminal","arguments":"ls -la"}</tool_call>');
    expect(calls[0]?.function.arguments).toBe("ls -la");
  });
});
