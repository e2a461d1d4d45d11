import { describe, expect, it } from "vitest";
import {
  BedrockAssembler,
  normalizeStopReason,
  streamException,
} from "../../../src/ai/transports/bedrock-assembler.js";
import { REASONING_REDACTED, REASONING_TEXT } from "../../../src/ai/transports/bedrock-convert.js";
import type { StreamEvent } from "../../../src/ai/types.js";

/** Feeds events as the AWS SDK yields them and returns everything, finish included. */
function run(events: unknown[]): StreamEvent[] {
  const assembler = new BedrockAssembler();
  const out = events.flatMap((e) => assembler.addEvent(e));
  expect(assembler.finished).toBe(true);
  return [...out, ...assembler.finishEvents()];
}

const delta = (contentBlockIndex: number, d: unknown) => ({
  contentBlockDelta: { contentBlockIndex, delta: d },
});
const stop = (contentBlockIndex: number) => ({ contentBlockStop: { contentBlockIndex } });
const finishOf = (events: StreamEvent[]) => {
  const last = events.at(-1);
  if (last?.type !== "finish") throw new Error("no finish");
  return last;
};

describe("BedrockAssembler (stream)", () => {
  it("assembles reasoning with its signature, text and a tool call split over deltas", () => {
    const events = run([
      { messageStart: { role: "assistant" } },
      delta(0, { reasoningContent: { text: "Think " } }),
      delta(0, { reasoningContent: { text: "hard." } }),
      delta(0, { reasoningContent: { signature: "sig-1" } }),
      stop(0),
      delta(1, { text: "Let me " }),
      delta(1, { text: "look." }),
      stop(1),
      {
        contentBlockStart: {
          contentBlockIndex: 2,
          start: { toolUse: { toolUseId: "tooluse_a", name: "read_file" } },
        },
      },
      delta(2, { toolUse: { input: '{"pa' } }),
      delta(2, { toolUse: { input: 'th":"a.md"}' } }),
      stop(2),
      { messageStop: { stopReason: "tool_use" } },
      {
        metadata: {
          usage: {
            inputTokens: 10,
            outputTokens: 7,
            totalTokens: 137,
            cacheReadInputTokens: 100,
            cacheWriteInputTokens: 20,
          },
          metrics: { latencyMs: 5 },
        },
      },
    ]);
    expect(events).toEqual([
      { type: "reasoning_delta", text: "Think " },
      { type: "reasoning_delta", text: "hard." },
      { type: "text_delta", text: "Let me " },
      { type: "text_delta", text: "look." },
      { type: "tool_call_delta", index: 0, id: "tooluse_a", name: "read_file" },
      { type: "tool_call_delta", index: 0, argumentsDelta: '{"pa' },
      { type: "tool_call_delta", index: 0, argumentsDelta: 'th":"a.md"}' },
      {
        type: "tool_call",
        index: 0,
        call: {
          id: "tooluse_a",
          type: "function",
          function: { name: "read_file", arguments: '{"path":"a.md"}' },
        },
      },
      {
        type: "usage",
        usage: { inputTokens: 130, outputTokens: 7, cacheReadTokens: 100, cacheWriteTokens: 20 },
      },
      {
        type: "finish",
        reason: "tool_calls",
        message: {
          role: "assistant",
          content: "Let me look.",
          reasoning: "Think hard.",
          reasoning_details: [{ type: REASONING_TEXT, text: "Think hard.", signature: "sig-1" }],
          tool_calls: [
            {
              id: "tooluse_a",
              type: "function",
              function: { name: "read_file", arguments: '{"path":"a.md"}' },
            },
          ],
          finish_reason: "tool_calls",
        },
      },
    ]);
  });

  it("keeps redacted reasoning as base64 across several byte chunks and separates reasoning blocks", () => {
    const events = run([
      delta(0, { reasoningContent: { redactedContent: new Uint8Array([1, 2]) } }),
      delta(0, { reasoningContent: { redactedContent: new Uint8Array([3, 4, 5]) } }),
      delta(1, { reasoningContent: { text: "one" } }),
      delta(2, { reasoningContent: { text: "two" } }),
      delta(3, { text: "answer" }),
      { messageStop: { stopReason: "end_turn" } },
    ]);
    const finish = finishOf(events);
    expect(finish.message.reasoning).toBe("one\n\ntwo");
    expect(finish.message.reasoning_details).toEqual([
      { type: REASONING_REDACTED, data: Buffer.from([1, 2, 3, 4, 5]).toString("base64") },
      { type: REASONING_TEXT, text: "one", signature: "" },
      { type: REASONING_TEXT, text: "two", signature: "" },
    ]);
    expect(events.filter((e) => e.type === "usage")).toEqual([]);
  });

  it("closes tool calls that never got contentBlockStop, and gives a tool call without an id a fresh one", () => {
    const events = run([
      delta(0, { toolUse: { input: '{"x":1}' } }),
      { contentBlockStart: { contentBlockIndex: 1, start: { toolUse: { toolUseId: "t2", name: "b" } } } },
      { messageStop: { stopReason: "tool_use" } },
    ]);
    const calls = events.flatMap((e) => (e.type === "tool_call" ? [e.call] : []));
    expect(calls.map((c) => c.function.arguments)).toEqual(['{"x":1}', "{}"]);
    expect(calls[0]?.id).toMatch(/^call_[0-9a-f]{24}$/);
    expect(finishOf(events).message.content).toBeNull();
  });

  it("ignores unknown events, odd values and deltas for blocks of another kind without throwing", () => {
    const assembler = new BedrockAssembler();
    for (const odd of [
      null,
      42,
      "x",
      [],
      {},
      { somethingNew: {} },
      delta(0, null),
      delta(0, { citation: {} }),
    ]) {
      expect(assembler.addEvent(odd)).toEqual([]);
    }
    assembler.addEvent(delta(1, { text: "hi" }));
    expect(assembler.addEvent(delta(1, { toolUse: { input: "{}" } }))).toEqual([]);
    expect(assembler.hasContent).toBe(true);
    expect(assembler.finished).toBe(false);
  });

  it("counts an answer as complete only once messageStop arrived", () => {
    const assembler = new BedrockAssembler();
    assembler.addEvent(delta(0, { text: "partial" }));
    expect(assembler.finished).toBe(false);
    assembler.addEvent({ messageStop: {} });
    expect(assembler.finished).toBe(true);
    expect(finishOf(assembler.finishEvents()).reason).toBe("stop");
  });
});

describe("BedrockAssembler (full Converse output)", () => {
  it("replays a complete output as the same events a stream would give", () => {
    const assembler = new BedrockAssembler();
    const events = [
      ...assembler.addOutput({
        output: {
          message: {
            role: "assistant",
            content: [
              { reasoningContent: { reasoningText: { text: "Hmm.", signature: "sig-9" } } },
              { reasoningContent: { redactedContent: new Uint8Array([9]) } },
              { text: "Calling." },
              { toolUse: { toolUseId: "tooluse_1", name: "terminal", input: { command: "ls" } } },
            ],
          },
        },
        stopReason: "tool_use",
        usage: { inputTokens: 3, outputTokens: 4, totalTokens: 7 },
        metrics: { latencyMs: 1 },
        $metadata: { httpStatusCode: 200 },
      }),
      ...assembler.finishEvents(),
    ];
    expect(events.filter((e) => e.type === "text_delta")).toEqual([{ type: "text_delta", text: "Calling." }]);
    expect(events.find((e) => e.type === "usage")).toEqual({
      type: "usage",
      usage: { inputTokens: 3, outputTokens: 4 },
    });
    const finish = finishOf(events);
    expect(finish.reason).toBe("tool_calls");
    expect(finish.message).toEqual({
      role: "assistant",
      content: "Calling.",
      reasoning: "Hmm.",
      reasoning_details: [
        { type: REASONING_TEXT, text: "Hmm.", signature: "sig-9" },
        { type: REASONING_REDACTED, data: Buffer.from([9]).toString("base64") },
      ],
      tool_calls: [
        { id: "tooluse_1", type: "function", function: { name: "terminal", arguments: '{"command":"ls"}' } },
      ],
      finish_reason: "tool_calls",
    });
  });

  it("treats an output without a stop reason or content as an empty normal stop", () => {
    const assembler = new BedrockAssembler();
    const events = [...assembler.addOutput({}), ...assembler.finishEvents()];
    expect(events).toEqual([
      { type: "finish", reason: "stop", message: { role: "assistant", content: "", finish_reason: "stop" } },
    ]);
  });
});

describe("normalizeStopReason", () => {
  it.each([
    ["end_turn", false, "stop"],
    ["stop_sequence", false, "stop"],
    ["tool_use", true, "tool_calls"],
    ["max_tokens", false, "length"],
    // A call in a response cut off by the output limit must not look like a finished call.
    ["max_tokens", true, "length"],
    ["model_context_window_exceeded", false, "length"],
    ["guardrail_intervened", false, "content_filter"],
    ["content_filtered", false, "content_filter"],
    ["malformed_tool_use", true, "error"],
    ["malformed_model_output", false, "error"],
    ["something_new", true, "tool_calls"],
    [undefined, false, "stop"],
  ])("%s (calls: %s) → %s", (raw, calls, expected) => {
    expect(normalizeStopReason(raw, calls)).toBe(expected);
  });
});

describe("streamException", () => {
  it.each([
    [
      { throttlingException: { message: "slow down" } },
      { type: "ThrottlingException", message: "slow down" },
    ],
    [
      { modelStreamErrorException: { message: "oops", originalStatusCode: 500 } },
      { type: "ModelStreamErrorException", message: "oops" },
    ],
    [{ serviceUnavailableException: {} }, { type: "ServiceUnavailableException", message: "" }],
    [{ validationException: { Message: "bad" } }, { type: "ValidationException", message: "bad" }],
    [{ internalServerException: { message: "x" } }, { type: "InternalServerException", message: "x" }],
    [{ messageStop: { stopReason: "end_turn" } }, undefined],
    [null, undefined],
  ])("%j", (event, expected) => {
    expect(streamException(event)).toEqual(expected);
  });
});
