import { describe, expect, it } from "vitest";
import {
  buildAnthropicBody,
  convertMessages,
  convertTools,
  defaultMaxTokens,
  imageBlock,
  normalizeModelName,
  thinkingParams,
} from "../../../src/ai/transports/anthropic-convert.js";
import type { ChatRequest, Message, ToolCall } from "../../../src/ai/types.js";

const call = (id: string, name: string, args: string): ToolCall => ({
  id,
  type: "function",
  function: { name, arguments: args },
});

const signed = { type: "thinking", thinking: "Let me think.", signature: "sig-abc" };
const redacted = { type: "redacted_thinking", data: "opaque-data" };

/** A tool-calling conversation: user, assistant(thinking + 2 calls), 2 results, user, assistant. */
const conversation: Message[] = [
  { role: "system", content: "You are Hermes." },
  { role: "user", content: "List the files and read README." },
  {
    role: "assistant",
    content: "Looking.",
    reasoning: "Let me think.",
    reasoning_details: [signed, redacted],
    tool_calls: [
      call("toolu_1", "terminal", '{"command":"ls"}'),
      call("toolu_2", "read_file", '{"path":"README.md"}'),
    ],
  },
  { role: "tool", tool_call_id: "toolu_1", name: "terminal", content: "README.md\nsrc" },
  { role: "tool", tool_call_id: "toolu_2", name: "read_file", content: "# Readme" },
  { role: "user", content: "Thanks, now summarise." },
  { role: "assistant", content: "It is a readme." },
  { role: "user", content: "Shorter." },
];

function breakpoints(body: Record<string, unknown>): unknown[] {
  const found: unknown[] = [];
  const visit = (value: unknown) => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (typeof value === "object" && value !== null) {
      const record = value as Record<string, unknown>;
      if ("cache_control" in record) found.push(record["cache_control"]);
      Object.values(record).forEach(visit);
    }
  };
  visit(body["system"]);
  visit(body["messages"]);
  visit(body["tools"]);
  return found;
}

describe("convertMessages", () => {
  it("moves system prompts out, merges tool results and the next user text into one user turn", () => {
    const { system, messages } = convertMessages(conversation);
    expect(system).toEqual([{ type: "text", text: "You are Hermes." }]);
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user"]);
    expect(messages[2]?.content).toEqual([
      { type: "tool_result", tool_use_id: "toolu_1", content: "README.md\nsrc" },
      { type: "tool_result", tool_use_id: "toolu_2", content: "# Readme" },
      { type: "text", text: "Thanks, now summarise." },
    ]);
  });

  it("replays thinking blocks with their signatures first, then text, then tool_use with parsed input", () => {
    const { messages } = convertMessages(conversation);
    expect(messages[1]).toEqual({
      role: "assistant",
      content: [
        { type: "thinking", thinking: "Let me think.", signature: "sig-abc" },
        { type: "redacted_thinking", data: "opaque-data" },
        { type: "text", text: "Looking." },
        { type: "tool_use", id: "toolu_1", name: "terminal", input: { command: "ls" } },
        { type: "tool_use", id: "toolu_2", name: "read_file", input: { path: "README.md" } },
      ],
    });
  });

  it("drops unsigned thinking and reasoning details of other providers; never sends `reasoning`", () => {
    const { messages } = convertMessages([
      { role: "user", content: "hi" },
      {
        role: "assistant",
        content: "hello",
        reasoning: "plain reasoning text",
        reasoning_details: [
          { type: "thinking", thinking: "no signature" },
          { type: "reasoning.text", text: "OpenRouter detail", signature: "x" },
          { type: "redacted_thinking", data: "" },
        ],
      },
      { role: "user", content: "again" },
    ]);
    expect(messages[1]?.content).toEqual([{ type: "text", text: "hello" }]);
  });

  it("merges consecutive same-role messages, keeping only the first assistant part's thinking", () => {
    const { messages } = convertMessages([
      { role: "user", content: "one" },
      { role: "user", content: "two" },
      { role: "assistant", content: "a", reasoning_details: [signed] },
      { role: "assistant", content: "b", reasoning_details: [{ ...signed, signature: "other" }] },
      { role: "user", content: "three" },
    ]);
    expect(messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "one" },
          { type: "text", text: "two" },
        ],
      },
      {
        role: "assistant",
        content: [signed, { type: "text", text: "a" }, { type: "text", text: "b" }],
      },
      { role: "user", content: [{ type: "text", text: "three" }] },
    ]);
  });

  it("converts data: URLs to base64 images and http URLs to url images", () => {
    const { messages } = convertMessages([
      {
        role: "user",
        content: [
          { type: "text", text: "What is in these?" },
          { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
          { type: "image_url", image_url: { url: "https://example.com/cat.jpg" } },
        ],
      },
    ]);
    expect(messages[0]?.content).toEqual([
      { type: "text", text: "What is in these?" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
      { type: "image", source: { type: "url", url: "https://example.com/cat.jpg" } },
    ]);
    expect(imageBlock("data:image/jpg;base64,AAAA")).toMatchObject({ source: { media_type: "image/jpeg" } });
    expect(imageBlock("data:image/svg+xml;base64,PHN2Zz4=")).toEqual({
      type: "text",
      text: "[image omitted: image/svg+xml is not an image format the model accepts]",
    });
  });

  it("keeps images in tool results as blocks", () => {
    const { messages } = convertMessages([
      { role: "user", content: "shot" },
      { role: "assistant", content: null, tool_calls: [call("t1", "screenshot", "{}")] },
      {
        role: "tool",
        tool_call_id: "t1",
        content: [
          { type: "text", text: "Here it is" },
          { type: "image_url", image_url: { url: "data:image/webp;base64,UklGRg==" } },
        ],
      },
    ]);
    expect(messages[2]?.content).toEqual([
      {
        type: "tool_result",
        tool_use_id: "t1",
        content: [
          { type: "text", text: "Here it is" },
          { type: "image", source: { type: "base64", media_type: "image/webp", data: "UklGRg==" } },
        ],
      },
    ]);
  });

  it("sends unparseable or non-object arguments as {} and sanitises tool ids on both sides", () => {
    const { messages } = convertMessages([
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: null,
        tool_calls: [call("call:1/a", "t", "{not json"), call("call_2", "t", "[1,2]")],
      },
      { role: "tool", tool_call_id: "call:1/a", content: "" },
      { role: "tool", tool_call_id: "call_2", content: "ok" },
    ]);
    expect(messages[1]?.content).toEqual([
      { type: "tool_use", id: "call_1_a", name: "t", input: {} },
      { type: "tool_use", id: "call_2", name: "t", input: {} },
    ]);
    expect(messages[2]?.content).toEqual([
      { type: "tool_result", tool_use_id: "call_1_a", content: "(no output)" },
      { type: "tool_result", tool_use_id: "call_2", content: "ok" },
    ]);
  });

  it("answers a tool call whose result is missing and turns a result without its call into text", () => {
    const { messages } = convertMessages([
      { role: "user", content: "go" },
      { role: "assistant", content: null, tool_calls: [call("a", "t", "{}"), call("b", "t", "{}")] },
      { role: "tool", tool_call_id: "b", content: "B done" },
      { role: "tool", tool_call_id: "zzz", content: "stray" },
      { role: "assistant", content: "next", tool_calls: [call("c", "t", "{}")] },
    ]);
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user"]);
    const results = messages[2]?.content ?? [];
    expect(results.map((b) => [b["type"], b["tool_use_id"]])).toEqual([
      ["tool_result", "a"],
      ["tool_result", "b"],
      ["text", undefined],
    ]);
    expect(results[0]).toMatchObject({ is_error: true });
    expect(results[2]).toEqual({ type: "text", text: "[result of tool call zzz]\nstray" });
    expect(messages[4]?.content).toEqual([
      expect.objectContaining({ type: "tool_result", tool_use_id: "c" }),
    ]);
  });

  it("never sends blank text blocks", () => {
    const { system, messages } = convertMessages([
      { role: "system", content: "   " },
      { role: "user", content: "" },
      { role: "assistant", content: "  \n" },
      { role: "user", content: [{ type: "text", text: "" }] },
    ]);
    expect(system).toEqual([]);
    expect(messages).toEqual([
      { role: "user", content: [{ type: "text", text: "(empty)" }] },
      { role: "assistant", content: [{ type: "text", text: "(empty)" }] },
      { role: "user", content: [{ type: "text", text: "(empty)" }] },
    ]);
  });

  it("does not mutate the caller's messages", () => {
    const copy = structuredClone(conversation);
    buildAnthropicBody({ model: "claude-sonnet-4-5", messages: conversation }, baseOptions);
    expect(conversation).toEqual(copy);
  });
});

const baseOptions = { promptCaching: true, cacheTtl: "5m" as const, stream: true };

describe("prompt caching (system_and_3)", () => {
  const request: ChatRequest = {
    model: "claude-sonnet-4-5",
    messages: conversation,
    tools: [{ type: "function", function: { name: "terminal", description: "Run", parameters: {} } }],
  };

  it("marks the system prompt's last block and the last block of each of the last 3 messages", () => {
    const body = buildAnthropicBody(request, baseOptions);
    const marker = { type: "ephemeral" };
    const system = body["system"] as Record<string, unknown>[];
    expect(system.at(-1)?.["cache_control"]).toEqual(marker);
    const messages = body["messages"] as { content: Record<string, unknown>[] }[];
    const marked = messages.map((m) => m.content.findIndex((b) => "cache_control" in b));
    // 5 wire messages: the first two unmarked, the last three marked on their last block.
    expect(marked).toEqual([-1, -1, 2, 0, 0]);
    expect(breakpoints(body)).toEqual([marker, marker, marker, marker]);
  });

  it("adds ttl only for 1h", () => {
    const body = buildAnthropicBody(request, { ...baseOptions, cacheTtl: "1h" });
    expect(breakpoints(body)).toEqual(Array(4).fill({ type: "ephemeral", ttl: "1h" }));
    expect(JSON.stringify(buildAnthropicBody(request, baseOptions))).not.toContain("ttl");
  });

  it("never uses more than 4 breakpoints, never marks thinking blocks, and none when off", () => {
    const long: Message[] = [
      { role: "system", content: "a" },
      { role: "system", content: "b" },
    ];
    for (let i = 0; i < 10; i++) {
      long.push({ role: "user", content: `q${i}` });
      long.push({ role: "assistant", content: "", reasoning_details: [signed] });
    }
    const body = buildAnthropicBody({ model: "claude-sonnet-4-5", messages: long }, baseOptions);
    expect(breakpoints(body)).toHaveLength(4);
    const messages = body["messages"] as { content: Record<string, unknown>[] }[];
    const last = messages.at(-1)?.content ?? [];
    expect(last[0]).toEqual(signed);
    expect(last[1]).toMatchObject({ type: "text", text: "(empty)", cache_control: { type: "ephemeral" } });
    expect(breakpoints(buildAnthropicBody(request, { ...baseOptions, promptCaching: false }))).toEqual([]);
  });

  it("uses 3 breakpoints when there is no system prompt", () => {
    const body = buildAnthropicBody(
      { model: "claude-sonnet-4-5", messages: conversation.slice(1) },
      baseOptions,
    );
    expect(body["system"]).toBeUndefined();
    expect(breakpoints(body)).toHaveLength(3);
  });
});

describe("buildAnthropicBody", () => {
  it("converts tools, requires max_tokens, and keeps transport-owned fields out of extraBody's reach", () => {
    const body = buildAnthropicBody(
      {
        model: "anthropic/claude-sonnet-4.5",
        messages: [{ role: "user", content: "hi" }],
        tools: [
          {
            type: "function",
            function: { name: "t", description: "d", parameters: { type: "object", properties: { a: {} } } },
          },
          { type: "function", function: { name: "t", description: "dup", parameters: {} } },
          { type: "function", function: { name: "u", description: "e", parameters: { anyOf: [] } } },
        ],
        temperature: 0.3,
        extraBody: { model: "evil", stream: false, metadata: { user_id: "u1" } },
      },
      { ...baseOptions, promptCaching: false },
    );
    expect(body).toMatchObject({
      model: "claude-sonnet-4-5",
      max_tokens: 16384,
      temperature: 0.3,
      stream: true,
      metadata: { user_id: "u1" },
      tools: [
        { name: "t", description: "d", input_schema: { type: "object", properties: { a: {} } } },
        { name: "u", description: "e", input_schema: { type: "object", properties: {} } },
      ],
    });
    expect(convertTools([])).toEqual([]);
  });

  it("maps reasoning effort to a thinking budget on budget-thinking models and drops temperature", () => {
    const body = buildAnthropicBody(
      {
        model: "claude-sonnet-4-5",
        messages: [{ role: "user", content: "hi" }],
        reasoningEffort: "high",
        maxTokens: 4096,
        temperature: 0.2,
      },
      baseOptions,
    );
    expect(body["thinking"]).toEqual({ type: "enabled", budget_tokens: 16000 });
    expect(body["max_tokens"]).toBe(16000 + 4096);
    expect(body["temperature"]).toBeUndefined();
  });

  it("uses adaptive thinking with output_config.effort on newer Claude models", () => {
    const body = buildAnthropicBody(
      {
        model: "claude-opus-4-7",
        messages: [{ role: "user", content: "hi" }],
        reasoningEffort: "low",
        temperature: 1,
      },
      baseOptions,
    );
    expect(body["thinking"]).toEqual({ type: "adaptive", display: "summarized" });
    expect(body["output_config"]).toEqual({ effort: "low" });
    expect(body["temperature"]).toBeUndefined();
  });

  it("lets extraBody choose thinking and max_tokens itself", () => {
    const body = buildAnthropicBody(
      {
        model: "claude-sonnet-4-5",
        messages: [{ role: "user", content: "hi" }],
        reasoningEffort: "high",
        extraBody: { thinking: { type: "enabled", budget_tokens: 2048 }, max_tokens: 5000 },
      },
      baseOptions,
    );
    expect(body["thinking"]).toEqual({ type: "enabled", budget_tokens: 2048 });
    expect(body["max_tokens"]).toBe(5000);
  });
});

describe("thinkingParams", () => {
  it.each([
    ["claude-sonnet-4-5", "low", { thinking: { type: "enabled", budget_tokens: 4000 }, budget: 4000 }],
    ["claude-sonnet-4-5", "medium", { thinking: { type: "enabled", budget_tokens: 8000 }, budget: 8000 }],
    [
      "claude-3-7-sonnet-latest",
      "bogus",
      { thinking: { type: "enabled", budget_tokens: 8000 }, budget: 8000 },
    ],
    ["MiniMax-M2", "high", { thinking: { type: "enabled", budget_tokens: 16000 }, budget: 16000 }],
    ["claude-opus-4-6", "xhigh", { thinking: { type: "adaptive", display: "summarized" }, effort: "max" }],
    ["claude-opus-4-8", "xhigh", { thinking: { type: "adaptive", display: "summarized" }, effort: "xhigh" }],
    ["claude-sonnet-5", "minimal", { thinking: { type: "adaptive", display: "summarized" }, effort: "low" }],
    ["claude-opus-4-7", "none", { thinking: { type: "disabled" } }],
    ["claude-sonnet-4-5", "none", {}],
    ["claude-3-5-haiku-latest", "high", {}],
    ["claude-opus-4-7", "", {}],
    ["claude-opus-4-7", undefined, {}],
  ])("%s with effort %s", (model, effort, expected) => {
    expect(thinkingParams(model, effort)).toEqual(expected);
  });
});

describe("model names and defaults", () => {
  it.each([
    ["anthropic/claude-opus-4.6", "claude-opus-4-6"],
    ["claude-sonnet-4-5", "claude-sonnet-4-5"],
    ["MiniMax-M2.1", "MiniMax-M2.1"],
  ])("%s → %s", (input, output) => {
    expect(normalizeModelName(input)).toBe(output);
  });

  it("picks max_tokens by model family", () => {
    expect(defaultMaxTokens("claude-3-5-sonnet-latest")).toBe(8192);
    expect(defaultMaxTokens("claude-3-haiku-20240307")).toBe(4096);
    expect(defaultMaxTokens("claude-sonnet-4-5")).toBe(16384);
  });
});
