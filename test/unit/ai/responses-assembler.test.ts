import { describe, expect, it } from "vitest";
import { mapResponsesUsage, ResponsesAssembler } from "../../../src/ai/transports/responses-assembler.js";
import type { StreamEvent } from "../../../src/ai/types.js";

function run(events: unknown[]): { events: StreamEvent[]; assembler: ResponsesAssembler } {
  const assembler = new ResponsesAssembler();
  const out = events.flatMap((e) => assembler.addEvent(e));
  if (assembler.terminal && assembler.terminal.kind !== "failed") out.push(...assembler.finishEvents());
  return { events: out, assembler };
}

function finish(events: StreamEvent[]) {
  const last = events.at(-1);
  if (last?.type !== "finish") throw new Error("no finish");
  return last;
}

const reasoning = {
  id: "rs_1",
  type: "reasoning",
  summary: [
    { type: "summary_text", text: "First part." },
    { type: "summary_text", text: "Second part." },
  ],
  encrypted_content: "ENC",
};

describe("ResponsesAssembler", () => {
  it("takes everything from response.completed when a server streams no deltas", () => {
    const { events } = run([
      { type: "response.created", response: { status: "in_progress" } },
      {
        type: "response.completed",
        response: {
          status: "completed",
          output: [
            reasoning,
            {
              id: "msg_1",
              type: "message",
              role: "assistant",
              content: [{ type: "output_text", text: "Hi." }],
            },
            { id: "fc_1", type: "function_call", call_id: "call_1", name: "t", arguments: '{"x":1}' },
          ],
          usage: { input_tokens: 10, output_tokens: 4 },
        },
      },
    ]);
    const types = events.map((e) => e.type);
    expect(types).toEqual([
      "reasoning_delta",
      "reasoning_delta",
      "text_delta",
      "tool_call",
      "usage",
      "finish",
    ]);
    const message = finish(events).message;
    expect(message.reasoning).toBe("First part.\n\nSecond part.");
    expect(message.content).toBe("Hi.");
    expect(message.tool_calls).toEqual([
      { id: "call_1", type: "function", function: { name: "t", arguments: '{"x":1}' } },
    ]);
    expect(message.codex_reasoning_items).toEqual([reasoning]);
    expect(finish(events).reason).toBe("tool_calls");
  });

  it("does not double what streamed when the final output repeats it", () => {
    const { events } = run([
      {
        type: "response.output_item.added",
        output_index: 0,
        item: { id: "rs_1", type: "reasoning", summary: [] },
      },
      {
        type: "response.reasoning_summary_text.delta",
        item_id: "rs_1",
        summary_index: 0,
        delta: "First part.",
      },
      {
        type: "response.reasoning_summary_text.delta",
        item_id: "rs_1",
        summary_index: 1,
        delta: "Second part.",
      },
      { type: "response.output_item.done", output_index: 0, item: reasoning },
      { type: "response.output_text.delta", item_id: "msg_1", output_index: 1, delta: "Hi" },
      { type: "response.output_text.delta", item_id: "msg_1", output_index: 1, delta: "." },
      {
        type: "response.output_item.added",
        output_index: 2,
        item: { id: "fc_1", type: "function_call", call_id: "call_1", name: "t", arguments: "" },
      },
      { type: "response.function_call_arguments.delta", item_id: "fc_1", output_index: 2, delta: '{"x"' },
      { type: "response.function_call_arguments.delta", item_id: "fc_1", output_index: 2, delta: ":1}" },
      {
        type: "response.output_item.done",
        output_index: 2,
        item: { id: "fc_1", type: "function_call", call_id: "call_1", name: "t", arguments: '{"x":1}' },
      },
      {
        type: "response.completed",
        response: {
          output: [
            reasoning,
            { id: "msg_1", type: "message", content: [{ type: "output_text", text: "Hi." }] },
            { id: "fc_1", type: "function_call", call_id: "call_1", name: "t", arguments: '{"x":1}' },
          ],
        },
      },
    ]);
    const message = finish(events).message;
    expect(message.reasoning).toBe("First part.\n\nSecond part.");
    expect(message.content).toBe("Hi.");
    expect(message.tool_calls).toHaveLength(1);
    expect(message.codex_reasoning_items).toHaveLength(1);
    expect(events.filter((e) => e.type === "tool_call")).toHaveLength(1);
  });

  it("assembles arguments for a call whose output_item.added never came, and ids it when call_id is missing", () => {
    const { events } = run([
      { type: "response.function_call_arguments.delta", item_id: "fc_9", output_index: 0, delta: "{}" },
      { type: "response.completed", response: { output: [] } },
    ]);
    const calls = finish(events).message.tool_calls ?? [];
    expect(calls).toHaveLength(1);
    expect(calls[0]?.id).toMatch(/^call_[0-9a-f]{24}$/);
    expect(calls[0]?.function.arguments).toBe("{}");
  });

  it("ignores events after the terminal one and odd input", () => {
    const assembler = new ResponsesAssembler();
    expect(assembler.addEvent(null)).toEqual([]);
    expect(assembler.addEvent("text")).toEqual([]);
    expect(assembler.addEvent({ type: "response.output_text.delta" })).toEqual([]);
    assembler.addEvent({
      type: "response.incomplete",
      response: { incomplete_details: { reason: "max_output_tokens" } },
    });
    expect(assembler.addEvent({ type: "response.output_text.delta", delta: "late" })).toEqual([]);
    const last = assembler.finishEvents().at(-1);
    expect(last).toMatchObject({ type: "finish", reason: "length", message: { content: "" } });
  });

  it("keeps a call cut off by max_output_tokens, with what arrived, under a length finish", () => {
    const { events } = run([
      {
        type: "response.output_item.added",
        output_index: 0,
        item: { type: "function_call", id: "fc_1", call_id: "call_a", name: "write_file", arguments: "" },
      },
      {
        type: "response.function_call_arguments.delta",
        item_id: "fc_1",
        output_index: 0,
        delta: '{"path": "a.txt", "content": "abc',
      },
      {
        type: "response.output_item.done",
        output_index: 0,
        item: {
          type: "function_call",
          id: "fc_1",
          call_id: "call_a",
          name: "write_file",
          arguments: '{"path": "a.txt", "content": "abc',
          status: "incomplete",
        },
      },
      { type: "response.incomplete", response: { incomplete_details: { reason: "max_output_tokens" } } },
    ]);
    // Not announced as a finished call while streaming...
    expect(events.filter((e) => e.type === "tool_call")).toHaveLength(0);
    // ...but kept, so the agent can answer it as cut off instead of dropping it silently.
    const done = finish(events);
    expect(done.reason).toBe("length");
    expect(done.message.tool_calls).toEqual([
      {
        id: "call_a",
        type: "function",
        function: { name: "write_file", arguments: '{"path": "a.txt", "content": "abc' },
      },
    ]);
  });

  it("a complete call in a response that then hit the limit still finishes as length", () => {
    const { events } = run([
      {
        type: "response.output_item.done",
        output_index: 0,
        item: { type: "function_call", id: "fc_2", call_id: "call_b", name: "terminal", arguments: "{}" },
      },
      { type: "response.incomplete", response: { incomplete_details: { reason: "max_output_tokens" } } },
    ]);
    expect(finish(events).reason).toBe("length");
  });

  it("reads raw reasoning text deltas (open-weight models) as reasoning", () => {
    const { events } = run([
      { type: "response.reasoning_text.delta", item_id: "rs_2", content_index: 0, delta: "hmm" },
      { type: "response.completed", response: {} },
    ]);
    expect(finish(events).message.reasoning).toBe("hmm");
  });
});

describe("mapResponsesUsage", () => {
  it.each([
    [undefined, undefined],
    [{}, undefined],
    [
      { input_tokens: 5, output_tokens: 2 },
      { inputTokens: 5, outputTokens: 2 },
    ],
    [
      {
        input_tokens: 50,
        output_tokens: 20,
        input_tokens_details: { cached_tokens: 40 },
        output_tokens_details: { reasoning_tokens: 15 },
      },
      { inputTokens: 50, outputTokens: 20, cacheReadTokens: 40, reasoningTokens: 15 },
    ],
  ])("%j → %j", (raw, expected) => {
    expect(mapResponsesUsage(raw)).toEqual(expected);
  });
});
