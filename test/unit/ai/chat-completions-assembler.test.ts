import { describe, expect, it } from "vitest";
import {
  mapUsage,
  normalizeFinishReason,
  ResponseAssembler,
} from "../../../src/ai/transports/chat-completions-assembler.js";
import type { StreamEvent } from "../../../src/ai/types.js";

const chunk = (
  delta: Record<string, unknown>,
  finish: string | null = null,
  extra: Record<string, unknown> = {},
) => ({
  choices: [{ index: 0, delta, finish_reason: finish }],
  ...extra,
});

function run(chunks: unknown[]): StreamEvent[] {
  const a = new ResponseAssembler();
  const events = chunks.flatMap((c) => a.addChunk(c));
  expect(a.finished).toBe(true);
  return [...events, ...a.finishEvents()];
}

function calls(events: StreamEvent[]) {
  return events.flatMap((e) => (e.type === "tool_call" ? [e.call] : []));
}

describe("ResponseAssembler: tool calls from servers that differ", () => {
  it("takes a whole call sent in one chunk", () => {
    const events = run([
      chunk({
        tool_calls: [{ index: 0, id: "c1", type: "function", function: { name: "f", arguments: '{"a":1}' } }],
      }),
      chunk({}, "tool_calls"),
    ]);
    expect(calls(events)).toEqual([
      { id: "c1", type: "function", function: { name: "f", arguments: '{"a":1}' } },
    ]);
  });

  it("generates ids when the server sends none, and {} for empty arguments", () => {
    const events = run([
      chunk({ tool_calls: [{ index: 0, function: { name: "now" } }] }),
      chunk({}, "tool_calls"),
    ]);
    const [call] = calls(events);
    expect(call?.id).toMatch(/^call_[0-9a-f]{24}$/);
    expect(call?.function).toEqual({ name: "now", arguments: "{}" });
  });

  it("does not duplicate ids or names that a server repeats on every chunk", () => {
    const part = (args: string) => ({
      index: 0,
      id: "c1",
      type: "function",
      function: { name: "f", arguments: args },
    });
    const events = run([
      chunk({ tool_calls: [part('{"a"')] }),
      chunk({ tool_calls: [part(":2}")] }),
      chunk({}, "stop"),
    ]);
    expect(calls(events)).toEqual([
      { id: "c1", type: "function", function: { name: "f", arguments: '{"a":2}' } },
    ]);
    const deltas = events.filter((e) => e.type === "tool_call_delta");
    expect(deltas).toEqual([
      { type: "tool_call_delta", index: 0, id: "c1", name: "f", argumentsDelta: '{"a"' },
      { type: "tool_call_delta", index: 0, argumentsDelta: ":2}" },
    ]);
  });

  it("separates parallel calls that reuse index 0 with distinct ids", () => {
    const events = run([
      chunk({ tool_calls: [{ index: 0, id: "c1", function: { name: "a", arguments: "{}" } }] }),
      chunk({ tool_calls: [{ index: 0, id: "c2", function: { name: "b", arguments: "{}" } }] }),
      chunk({}, "tool_calls"),
    ]);
    expect(calls(events).map((c) => [c.id, c.function.name])).toEqual([
      ["c1", "a"],
      ["c2", "b"],
    ]);
  });

  it("handles calls without an index: by id, else continuing the last call", () => {
    const events = run([
      chunk({ tool_calls: [{ id: "c1", function: { name: "a", arguments: '{"x":' } }] }),
      chunk({ tool_calls: [{ function: { arguments: "1}" } }] }),
      chunk({ tool_calls: [{ id: "c2", function: { name: "b", arguments: "{}" } }] }),
      chunk({}, "tool_calls"),
    ]);
    expect(calls(events).map((c) => [c.id, c.function.arguments])).toEqual([
      ["c1", '{"x":1}'],
      ["c2", "{}"],
    ]);
  });

  it("accepts arguments sent as an object", () => {
    const events = run([
      chunk(
        { tool_calls: [{ index: 0, id: "c1", function: { name: "f", arguments: { q: "x" } } }] },
        "tool_calls",
      ),
    ]);
    expect(calls(events)[0]?.function.arguments).toBe('{"q":"x"}');
  });

  it("emits tool_call events at the finish reason, before the trailing usage chunk", () => {
    const a = new ResponseAssembler();
    a.addChunk(chunk({ tool_calls: [{ index: 0, id: "c1", function: { name: "f", arguments: "{}" } }] }));
    expect(a.addChunk(chunk({}, "tool_calls")).map((e) => e.type)).toEqual(["tool_call"]);
    expect(a.addChunk({ choices: [], usage: { prompt_tokens: 1, completion_tokens: 2 } })).toEqual([]);
    expect(a.finishEvents().map((e) => e.type)).toEqual(["usage", "finish"]);
  });
});

describe("ResponseAssembler: reasoning", () => {
  it.each([
    ["reasoning_content", { reasoning_content: "r" }],
    ["reasoning", { reasoning: "r" }],
    ["reasoning_details text", { reasoning_details: [{ type: "reasoning.text", text: "r" }] }],
    ["reasoning_details summary", { reasoning_details: [{ type: "reasoning.summary", summary: "r" }] }],
    ["reasoning with duplicate details (OpenRouter)", { reasoning: "r", reasoning_details: [{ text: "r" }] }],
  ])("reads %s once", (_label, delta) => {
    const events = run([chunk(delta), chunk({ content: "x" }, "stop")]);
    expect(events.filter((e) => e.type === "reasoning_delta")).toEqual([
      { type: "reasoning_delta", text: "r" },
    ]);
  });

  it("ignores chunks of unexpected shape instead of throwing", () => {
    const a = new ResponseAssembler();
    for (const odd of [
      null,
      42,
      "x",
      [],
      { choices: null },
      { choices: [null] },
      { choices: [{ delta: 5 }] },
    ]) {
      expect(a.addChunk(odd)).toEqual([]);
    }
    expect(a.finished).toBe(false);
  });
});

describe("normalizeFinishReason", () => {
  it.each([
    ["stop", false, "stop"],
    ["stop", true, "tool_calls"],
    ["tool_calls", true, "tool_calls"],
    ["function_call", true, "tool_calls"],
    ["length", false, "length"],
    ["length", true, "length"],
    ["max_tokens", false, "length"],
    ["content_filter", false, "content_filter"],
    ["eos", false, "stop"],
    [undefined, false, "stop"],
  ] as const)("%s (tool calls: %s) → %s", (raw, hasCalls, expected) => {
    expect(normalizeFinishReason(raw, hasCalls)).toBe(expected);
  });
});

describe("mapUsage", () => {
  it.each([
    [
      { prompt_tokens: 10, completion_tokens: 5 },
      { inputTokens: 10, outputTokens: 5 },
    ],
    [
      {
        prompt_tokens: 10,
        completion_tokens: 5,
        prompt_tokens_details: { cached_tokens: 8, cache_write_tokens: 2 },
        completion_tokens_details: { reasoning_tokens: 3 },
      },
      { inputTokens: 10, outputTokens: 5, cacheReadTokens: 8, cacheWriteTokens: 2, reasoningTokens: 3 },
    ],
    [
      { prompt_tokens: 10, completion_tokens: 5, prompt_cache_hit_tokens: 6 },
      { inputTokens: 10, outputTokens: 5, cacheReadTokens: 6 },
    ],
    [{ total_tokens: 3 }, undefined],
    [null, undefined],
  ])("%j", (raw, expected) => {
    expect(mapUsage(raw)).toEqual(expected);
  });
});
