import { describe, expect, it } from "vitest";
import {
  buildResponsesBody,
  toResponsesInput,
  toWireCallId,
} from "../../../src/ai/transports/responses-input.js";
import type { ChatRequest, Message } from "../../../src/ai/types.js";

const stateless = { store: false };

const reasoningItem = {
  id: "rs_abc",
  type: "reasoning",
  summary: [{ type: "summary_text", text: "Look at the file first." }],
  encrypted_content: "gAAAAencrypted",
};

describe("buildResponsesBody", () => {
  it("puts the system prompt in instructions and the rest in input, stateless, streaming", () => {
    const request: ChatRequest = {
      model: "gpt-5-codex",
      messages: [
        { role: "system", content: "You are Hermes." },
        { role: "user", content: "hello" },
      ],
      tools: [
        {
          type: "function",
          function: {
            name: "read_file",
            description: "Reads a file",
            parameters: { type: "object", properties: { path: { type: "string" } } },
          },
        },
      ],
      maxTokens: 1000,
      temperature: 0.2,
      reasoningEffort: "high",
      extraBody: { prompt_cache_key: "session-1", model: "overridden?", stream: false, store: true },
    };
    const body = buildResponsesBody(request, stateless);
    expect(body).toEqual({
      prompt_cache_key: "session-1",
      model: "gpt-5-codex",
      instructions: "You are Hermes.",
      input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "hello" }] }],
      tools: [
        {
          type: "function",
          name: "read_file",
          description: "Reads a file",
          parameters: { type: "object", properties: { path: { type: "string" } } },
          strict: false,
        },
      ],
      tool_choice: "auto",
      max_output_tokens: 1000,
      temperature: 0.2,
      reasoning: { effort: "high", summary: "auto" },
      store: false,
      include: ["reasoning.encrypted_content"],
      stream: true,
    });
  });

  it("omits tools, limits and include when not asked for, and keeps extra include entries", () => {
    const body = buildResponsesBody(
      { model: "m", messages: [{ role: "user", content: "x" }], tools: [] },
      { store: true },
    );
    expect(body).not.toHaveProperty("tools");
    expect(body).not.toHaveProperty("instructions");
    expect(body).not.toHaveProperty("max_output_tokens");
    expect(body).not.toHaveProperty("reasoning");
    expect(body).not.toHaveProperty("include");
    expect(body["store"]).toBe(true);
    const withInclude = buildResponsesBody(
      { model: "m", messages: [], extraBody: { include: ["message.output_text.logprobs"] } },
      stateless,
    );
    expect(withInclude["include"]).toEqual(["message.output_text.logprobs", "reasoning.encrypted_content"]);
  });

  it("sends a later system message as a developer message in place", () => {
    const body = buildResponsesBody(
      {
        model: "m",
        messages: [
          { role: "system", content: "one" },
          { role: "user", content: "hi" },
          { role: "system", content: "note" },
        ],
      },
      stateless,
    );
    expect(body["instructions"]).toBe("one");
    expect(body["input"]).toEqual([
      { type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] },
      { type: "message", role: "developer", content: [{ type: "input_text", text: "note" }] },
    ]);
  });
});

describe("toResponsesInput", () => {
  it("orders reasoning, text and function calls per assistant turn, then the tool outputs", () => {
    const messages: Message[] = [
      { role: "user", content: "read a.txt and b.txt" },
      {
        role: "assistant",
        content: "Reading both.",
        reasoning: "Look at the file first.",
        codex_reasoning_items: [reasoningItem],
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "read_file", arguments: '{"path":"a.txt"}' } },
          { id: "call_2", type: "function", function: { name: "read_file", arguments: "" } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", name: "read_file", content: "A" },
      { role: "tool", tool_call_id: "call_2", name: "read_file", content: "B" },
      { role: "assistant", content: "Done." },
    ];
    expect(toResponsesInput(messages, stateless)).toEqual([
      { type: "message", role: "user", content: [{ type: "input_text", text: "read a.txt and b.txt" }] },
      {
        type: "reasoning",
        summary: [{ type: "summary_text", text: "Look at the file first." }],
        encrypted_content: "gAAAAencrypted",
      },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Reading both." }] },
      { type: "function_call", call_id: "call_1", name: "read_file", arguments: '{"path":"a.txt"}' },
      { type: "function_call", call_id: "call_2", name: "read_file", arguments: "{}" },
      { type: "function_call_output", call_id: "call_1", output: "A" },
      { type: "function_call_output", call_id: "call_2", output: "B" },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Done." }] },
    ]);
  });

  it("replays reasoning with its id when stored, and skips unreplayable or repeated items when stateless", () => {
    const assistant: Message = {
      role: "assistant",
      content: null,
      codex_reasoning_items: [
        reasoningItem,
        { id: "rs_plain", type: "reasoning", summary: [] },
        "not an item",
        { type: "message" },
      ],
      tool_calls: [{ id: "call_1", type: "function", function: { name: "t", arguments: "{}" } }],
    };
    expect(toResponsesInput([assistant], { store: true })[0]).toEqual(reasoningItem);
    const stateless1 = toResponsesInput([assistant, { ...assistant, tool_calls: [] }], stateless);
    expect(stateless1.filter((i) => i["type"] === "reasoning")).toHaveLength(1);
    expect(stateless1.map((i) => i["type"])).toEqual(["reasoning", "function_call"]);
  });

  it("follows reasoning with an empty assistant message when the turn had nothing else", () => {
    const items = toResponsesInput(
      [{ role: "assistant", content: "", codex_reasoning_items: [reasoningItem] }],
      stateless,
    );
    expect(items.map((i) => i["type"])).toEqual(["reasoning", "message"]);
    expect(items[1]).toEqual({
      type: "message",
      role: "assistant",
      content: [{ type: "output_text", text: "" }],
    });
  });

  it("sends user images as input_image and multimodal tool results as parts", () => {
    const items = toResponsesInput(
      [
        {
          role: "user",
          content: [
            { type: "text", text: "what is this?" },
            { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
          ],
        },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "call_s", type: "function", function: { name: "screenshot", arguments: "{}" } }],
        },
        {
          role: "tool",
          tool_call_id: "call_s",
          content: [
            { type: "text", text: "screen:" },
            { type: "image_url", image_url: { url: "https://example.test/s.png" } },
          ],
        },
      ],
      stateless,
    );
    expect(items[0]).toEqual({
      type: "message",
      role: "user",
      content: [
        { type: "input_text", text: "what is this?" },
        { type: "input_image", image_url: "data:image/png;base64,AAAA", detail: "auto" },
      ],
    });
    expect(items[2]).toEqual({
      type: "function_call_output",
      call_id: "call_s",
      output: [
        { type: "input_text", text: "screen:" },
        { type: "input_image", image_url: "https://example.test/s.png", detail: "auto" },
      ],
    });
  });

  it("maps call ids the API would reject to the same surrogate on both sides", () => {
    const longId = `toolu_${"x".repeat(80)}`;
    const spaced = "call with spaces";
    const items = toResponsesInput(
      [
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: longId, type: "function", function: { name: "a", arguments: "{}" } },
            { id: spaced, type: "function", function: { name: "b", arguments: "{}" } },
          ],
        },
        { role: "tool", tool_call_id: longId, content: "1" },
        { role: "tool", tool_call_id: spaced, content: "2" },
      ],
      stateless,
    );
    const ids = items.map((i) => i["call_id"]);
    expect(ids[0]).toMatch(/^call_[0-9a-f]{32}$/);
    expect(ids[1]).toMatch(/^call_[0-9a-f]{32}$/);
    expect(ids[0]).not.toBe(ids[1]);
    expect(ids[2]).toBe(ids[0]);
    expect(ids[3]).toBe(ids[1]);
    expect(toWireCallId(longId)).toBe(ids[0]);
    // Valid ids, from this API or others, pass through untouched.
    for (const id of ["call_abc123", "toolu_01A09q90qw90lq917835lq9", "fc-1:2.3"])
      expect(toWireCallId(id)).toBe(id);
  });

  it("sends a tool result without a call id as user text instead of dropping it", () => {
    const items = toResponsesInput([{ role: "tool", name: "terminal", content: "exit 0" }], stateless);
    expect(items).toEqual([
      {
        type: "message",
        role: "user",
        content: [{ type: "input_text", text: "Result of tool terminal:\nexit 0" }],
      },
    ]);
  });
});
