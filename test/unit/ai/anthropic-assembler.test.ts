import { describe, expect, it } from "vitest";
import { AnthropicAssembler, normalizeStopReason } from "../../../src/ai/transports/anthropic-assembler.js";
import type { StreamEvent } from "../../../src/ai/types.js";

function run(events: unknown[]): { events: StreamEvent[]; assembler: AnthropicAssembler } {
  const assembler = new AnthropicAssembler();
  const out = events.flatMap((e) => assembler.addEvent(e));
  if (assembler.finished) out.push(...assembler.finishEvents());
  return { events: out, assembler };
}

const start = (usage: Record<string, unknown>) => ({ type: "message_start", message: { usage } });
const blockStart = (index: number, content_block: Record<string, unknown>) => ({
  type: "content_block_start",
  index,
  content_block,
});
const delta = (index: number, d: Record<string, unknown>) => ({
  type: "content_block_delta",
  index,
  delta: d,
});
const stop = (index: number) => ({ type: "content_block_stop", index });
const messageDelta = (stop_reason: string, usage: Record<string, unknown> = {}) => ({
  type: "message_delta",
  delta: { stop_reason },
  usage,
});

describe("AnthropicAssembler", () => {
  it("assembles interleaved thinking, redacted thinking, text and tool use, keeping blocks for replay", () => {
    const { events } = run([
      start({
        input_tokens: 10,
        cache_read_input_tokens: 100,
        cache_creation_input_tokens: 50,
        output_tokens: 1,
      }),
      blockStart(0, { type: "thinking", thinking: "", signature: "" }),
      delta(0, { type: "thinking_delta", thinking: "First " }),
      delta(0, { type: "thinking_delta", thinking: "thought." }),
      delta(0, { type: "signature_delta", signature: "sig-1" }),
      stop(0),
      blockStart(1, { type: "redacted_thinking", data: "REDACTED" }),
      stop(1),
      blockStart(2, { type: "text", text: "" }),
      delta(2, { type: "text_delta", text: "Let me " }),
      delta(2, { type: "text_delta", text: "check." }),
      stop(2),
      blockStart(3, { type: "tool_use", id: "toolu_9", name: "terminal", input: {} }),
      delta(3, { type: "input_json_delta", partial_json: '{"comm' }),
      delta(3, { type: "input_json_delta", partial_json: 'and":"ls"}' }),
      stop(3),
      blockStart(4, { type: "thinking", thinking: "", signature: "" }),
      delta(4, { type: "thinking_delta", thinking: "Second." }),
      delta(4, { type: "signature_delta", signature: "sig-2" }),
      stop(4),
      messageDelta("tool_use", { output_tokens: 42, output_tokens_details: { thinking_tokens: 12 } }),
      { type: "message_stop" },
    ]);
    expect(events.filter((e) => e.type === "reasoning_delta").map((e) => e.text)).toEqual([
      "First ",
      "thought.",
      "\n\nSecond.",
    ]);
    expect(events.filter((e) => e.type === "tool_call_delta")).toEqual([
      { type: "tool_call_delta", index: 0, id: "toolu_9", name: "terminal" },
      { type: "tool_call_delta", index: 0, argumentsDelta: '{"comm' },
      { type: "tool_call_delta", index: 0, argumentsDelta: 'and":"ls"}' },
    ]);
    // The tool call completes at its content_block_stop, before the stream ends.
    const callAt = events.findIndex((e) => e.type === "tool_call");
    expect(events[callAt + 1]).toEqual({ type: "reasoning_delta", text: "\n\nSecond." });
    expect(events.find((e) => e.type === "usage")).toEqual({
      type: "usage",
      usage: {
        inputTokens: 160,
        outputTokens: 42,
        cacheReadTokens: 100,
        cacheWriteTokens: 50,
        reasoningTokens: 12,
      },
    });
    expect(events.at(-1)).toEqual({
      type: "finish",
      reason: "tool_calls",
      message: {
        role: "assistant",
        content: "Let me check.",
        finish_reason: "tool_calls",
        reasoning: "First thought.\n\nSecond.",
        reasoning_details: [
          { type: "thinking", thinking: "First thought.", signature: "sig-1" },
          { type: "redacted_thinking", data: "REDACTED" },
          { type: "thinking", thinking: "Second.", signature: "sig-2" },
        ],
        tool_calls: [
          { id: "toolu_9", type: "function", function: { name: "terminal", arguments: '{"command":"ls"}' } },
        ],
      },
    });
  });

  it("is not finished without a stop reason, and reports partial content", () => {
    const { assembler } = run([
      start({ input_tokens: 1 }),
      blockStart(0, { type: "text" }),
      delta(0, { type: "text_delta", text: "Hi" }),
    ]);
    expect(assembler.finished).toBe(false);
    expect(assembler.hasContent).toBe(true);
  });

  it("ignores unknown events, block types and deltas (pings, server tools, citations)", () => {
    const { events } = run([
      { type: "ping" },
      "garbage",
      null,
      blockStart(0, { type: "server_tool_use", id: "srv", name: "web_search", input: {} }),
      delta(0, { type: "input_json_delta", partial_json: "{}" }),
      stop(0),
      blockStart(1, { type: "text", text: "Answer" }),
      delta(1, { type: "citations_delta", citation: {} }),
      stop(1),
      messageDelta("end_turn"),
    ]);
    expect(events.map((e) => e.type)).toEqual(["text_delta", "finish"]);
  });

  it("takes a tool input given whole in content_block_start, and `{}` for a call with no input", () => {
    const { events } = run([
      blockStart(0, { type: "tool_use", id: "a", name: "x", input: { q: 1 } }),
      stop(0),
      blockStart(1, { type: "tool_use", id: "b", name: "y", input: {} }),
      messageDelta("tool_use"),
    ]);
    const finish = events.at(-1);
    expect(finish?.type === "finish" && finish.message.tool_calls?.map((c) => c.function.arguments)).toEqual([
      '{"q":1}',
      "{}",
    ]);
    expect(finish?.type === "finish" && finish.message.content).toBeNull();
    expect(events.filter((e) => e.type === "usage")).toEqual([]);
  });

  it("replays a full (non-streamed) message as the same events", () => {
    const assembler = new AnthropicAssembler();
    const events = assembler.addMessage({
      content: [
        { type: "thinking", thinking: "Hmm.", signature: "s" },
        { type: "text", text: "Done." },
        { type: "tool_use", id: "t", name: "n", input: { a: [1] } },
      ],
      stop_reason: "tool_use",
      usage: { input_tokens: 5, output_tokens: 3, cache_read_input_tokens: null },
    });
    events.push(...assembler.finishEvents());
    expect(events.map((e) => e.type)).toEqual([
      "reasoning_delta",
      "text_delta",
      "tool_call_delta",
      "tool_call_delta",
      "tool_call",
      "usage",
      "finish",
    ]);
    const finish = events.at(-1);
    expect(finish).toMatchObject({
      reason: "tool_calls",
      message: {
        content: "Done.",
        reasoning_details: [{ type: "thinking", thinking: "Hmm.", signature: "s" }],
        tool_calls: [{ id: "t", function: { name: "n", arguments: '{"a":[1]}' } }],
      },
    });
    expect(events.find((e) => e.type === "usage")).toEqual({
      type: "usage",
      usage: { inputTokens: 5, outputTokens: 3 },
    });
  });
});

describe("normalizeStopReason", () => {
  it.each([
    ["end_turn", false, "stop"],
    ["stop_sequence", false, "stop"],
    ["pause_turn", false, "stop"],
    ["tool_use", true, "tool_calls"],
    ["end_turn", true, "tool_calls"],
    ["max_tokens", true, "length"],
    ["model_context_window_exceeded", false, "length"],
    ["refusal", false, "content_filter"],
    [undefined, false, "stop"],
  ] as const)("%s (tool calls: %s) → %s", (raw, calls, expected) => {
    expect(normalizeStopReason(raw, calls)).toBe(expected);
  });
});
