import { describe, expect, it } from "vitest";
import {
  buildConverseRequest,
  convertMessages,
  convertTools,
  imageBlock,
  isErrorResult,
  REASONING_REDACTED,
  REASONING_TEXT,
  toolUseId,
  type WireBlock,
} from "../../../src/ai/transports/bedrock-convert.js";
import type { ChatRequest, Message, ToolCall, ToolSchema } from "../../../src/ai/types.js";

const CLAUDE = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
const NOVA = "amazon.nova-pro-v1:0";

const call = (id: string, name: string, args: string): ToolCall => ({
  id,
  type: "function",
  function: { name, arguments: args },
});

const tool = (name: string, parameters: Record<string, unknown> = { type: "object" }): ToolSchema => ({
  type: "function",
  function: { name, description: `Runs ${name}.`, parameters },
});

/** A tool-calling conversation: user, assistant(reasoning + 2 calls), 2 results, user, assistant, user. */
const conversation: Message[] = [
  { role: "system", content: "You are Hermes." },
  { role: "user", content: "List the files and read README." },
  {
    role: "assistant",
    content: "Looking.",
    reasoning: "Let me think.",
    reasoning_details: [{ type: REASONING_TEXT, text: "Let me think.", signature: "sig-abc" }],
    tool_calls: [
      call("tooluse_1", "terminal", '{"command":"ls"}'),
      call("tooluse_2", "read_file", "{bad json"),
    ],
  },
  { role: "tool", tool_call_id: "tooluse_1", name: "terminal", content: "README.md\nsrc" },
  { role: "tool", tool_call_id: "tooluse_2", name: "read_file", content: '{"error": "no such file"}' },
  { role: "user", content: "Thanks, now summarise." },
  { role: "assistant", content: "It is a readme." },
  { role: "user", content: "Shorter." },
];

const cachePoints = (blocks: readonly WireBlock[]) =>
  blocks.filter((b) => b["cachePoint"] !== undefined).length;

describe("convertMessages", () => {
  it("splits out the system prompt, carries toolUse → toolResult, and merges results with the next user text", () => {
    const { system, messages } = convertMessages(conversation, { claude: true });
    expect(system).toEqual([{ text: "You are Hermes." }]);
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user"]);
    expect(messages[1]?.content).toEqual([
      { reasoningContent: { reasoningText: { text: "Let me think.", signature: "sig-abc" } } },
      { text: "Looking." },
      { toolUse: { toolUseId: "tooluse_1", name: "terminal", input: { command: "ls" } } },
      // Malformed arguments become {} rather than failing the request.
      { toolUse: { toolUseId: "tooluse_2", name: "read_file", input: {} } },
    ]);
    expect(messages[2]?.content).toEqual([
      { toolResult: { toolUseId: "tooluse_1", content: [{ text: "README.md\nsrc" }] } },
      {
        toolResult: {
          toolUseId: "tooluse_2",
          content: [{ text: '{"error": "no such file"}' }],
          status: "error",
        },
      },
      { text: "Thanks, now summarise." },
    ]);
  });

  it("leaves toolResult.status out for models other than Claude", () => {
    const { messages } = convertMessages(conversation, { claude: false });
    expect(JSON.stringify(messages)).not.toContain('"status"');
  });

  it("never mutates the caller's messages", () => {
    const copy = structuredClone(conversation);
    buildConverseRequest({
      model: CLAUDE,
      messages: conversation,
      tools: [tool("terminal"), tool("read_file")],
    });
    expect(conversation).toEqual(copy);
  });

  it.each<[string, Message[], unknown[]]>([
    [
      "a conversation that starts with the assistant gets a placeholder user turn",
      [{ role: "assistant", content: "Hello, I am ready." }],
      [
        { role: "user", content: [{ text: "(empty)" }] },
        { role: "assistant", content: [{ text: "Hello, I am ready." }] },
      ],
    ],
    [
      "only a system prompt still sends one user message",
      [{ role: "system", content: "sys" }],
      [{ role: "user", content: [{ text: "(empty)" }] }],
    ],
    [
      "blank text is dropped and an empty turn says (empty)",
      [
        { role: "user", content: "   " },
        { role: "assistant", content: "" },
      ],
      [
        { role: "user", content: [{ text: "(empty)" }] },
        { role: "assistant", content: [{ text: "(empty)" }] },
      ],
    ],
    [
      "consecutive user messages merge into one turn",
      [
        { role: "user", content: "one" },
        { role: "user", content: [{ type: "text", text: "two" }] },
      ],
      [{ role: "user", content: [{ text: "one" }, { text: "two" }] }],
    ],
    [
      "a tool result without its call becomes text",
      [
        { role: "user", content: "hi" },
        { role: "assistant", content: "ok" },
        { role: "tool", tool_call_id: "ghost", content: "late output" },
      ],
      [
        { role: "user", content: [{ text: "hi" }] },
        { role: "assistant", content: [{ text: "ok" }] },
        { role: "user", content: [{ text: "[result of tool call ghost]\nlate output" }] },
      ],
    ],
    [
      "a call without a result gets an error stand-in",
      [
        { role: "user", content: "hi" },
        { role: "assistant", content: null, tool_calls: [call("c1", "terminal", "{}")] },
      ],
      [
        { role: "user", content: [{ text: "hi" }] },
        { role: "assistant", content: [{ toolUse: { toolUseId: "c1", name: "terminal", input: {} } }] },
        {
          role: "user",
          content: [
            {
              toolResult: {
                toolUseId: "c1",
                content: [{ text: expect.stringContaining("no result was recorded") }],
                status: "error",
              },
            },
          ],
        },
      ],
    ],
    [
      "ids Bedrock would reject are rewritten the same way on use and result",
      [
        { role: "user", content: "hi" },
        { role: "assistant", content: null, tool_calls: [call("call:1/x", "terminal", "{}")] },
        { role: "tool", tool_call_id: "call:1/x", content: "" },
      ],
      [
        { role: "user", content: [{ text: "hi" }] },
        { role: "assistant", content: [{ toolUse: { toolUseId: "call_1_x", name: "terminal", input: {} } }] },
        {
          role: "user",
          content: [{ toolResult: { toolUseId: "call_1_x", content: [{ text: "(no output)" }] } }],
        },
      ],
    ],
  ])("%s", (_name, input, expected) => {
    expect(convertMessages(input, { claude: true }).messages).toEqual(expected);
  });

  it("keeps reasoning only on the first part of merged assistant turns, and replays redacted bytes", () => {
    const { messages } = convertMessages([
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: "first",
        reasoning_details: [
          { type: REASONING_REDACTED, data: Buffer.from([1, 2, 3]).toString("base64") },
          { type: REASONING_TEXT, text: "unsigned", signature: "" },
          { type: "thinking", thinking: "Anthropic's own", signature: "x" },
        ],
      },
      {
        role: "assistant",
        content: "second",
        reasoning_details: [{ type: REASONING_TEXT, text: "later", signature: "s2" }],
      },
    ]);
    expect(messages[1]?.content).toEqual([
      { reasoningContent: { redactedContent: new Uint8Array([1, 2, 3]) } },
      { text: "first" },
      { text: "second" },
    ]);
  });

  it("renders the tool exchange as text when the request declares no tools", () => {
    const { messages } = convertMessages(conversation.slice(0, 5), { claude: true, toolsAsText: true });
    const flat = JSON.stringify(messages);
    expect(flat).not.toContain("toolUse");
    expect(flat).not.toContain("toolResult");
    expect(messages[1]?.content).toContainEqual({
      text: '[called tool terminal with arguments {"command":"ls"}]',
    });
    expect(messages[2]?.content[0]).toEqual({ text: "[result of tool call tooluse_1]\nREADME.md\nsrc" });
  });

  it("sends image parts as bytes and tool results with images as mixed content", () => {
    const png = Buffer.from("fake png bytes");
    const { messages } = convertMessages([
      {
        role: "user",
        content: [
          { type: "text", text: "What is this?" },
          { type: "image_url", image_url: { url: `data:image/png;base64,${png.toString("base64")}` } },
        ],
      },
      { role: "assistant", content: null, tool_calls: [call("c1", "screenshot", "{}")] },
      {
        role: "tool",
        tool_call_id: "c1",
        content: [
          { type: "text", text: "captured" },
          { type: "image_url", image_url: { url: "data:image/jpeg;base64,AAAA" } },
        ],
      },
    ]);
    expect(messages[0]?.content[1]).toEqual({
      image: { format: "png", source: { bytes: new Uint8Array(png) } },
    });
    expect(messages[2]?.content[0]).toEqual({
      toolResult: {
        toolUseId: "c1",
        content: [
          { text: "captured" },
          { image: { format: "jpeg", source: { bytes: new Uint8Array(Buffer.from("AAAA", "base64")) } } },
        ],
      },
    });
  });
});

describe("imageBlock", () => {
  it.each([
    ["data:image/webp;base64,UklG", { image: { format: "webp", source: { bytes: expect.any(Uint8Array) } } }],
    ["data:image/jpg;base64,AAAA", { image: { format: "jpeg", source: { bytes: expect.any(Uint8Array) } } }],
    ["data:image/svg+xml;base64,PHN2Zz4=", { text: expect.stringContaining("image/svg+xml is not") }],
    ["data:image/png,rawtext", { text: expect.stringContaining("not an image format") }],
    [
      "https://example.com/cat.png",
      { text: expect.stringContaining("not a URL (https://example.com/cat.png)") },
    ],
  ])("%s", (url, expected) => {
    expect(imageBlock(url)).toEqual(expected);
  });
});

describe("small helpers", () => {
  it.each([
    ['{"error": "boom"}', true],
    ['  {"error": {"code": 1}}', true],
    ['{"result": "fine"}', false],
    ["error: not json", false],
    ["{broken", false],
  ])("isErrorResult(%s) = %s", (text, expected) => {
    expect(isErrorResult(text)).toBe(expected);
  });

  it("toolUseId keeps valid ids, rewrites others and caps the length at 64", () => {
    expect(toolUseId("tooluse_Ab-9")).toBe("tooluse_Ab-9");
    expect(toolUseId("a.b c")).toBe("a_b_c");
    expect(toolUseId("x".repeat(80))).toHaveLength(64);
    expect(toolUseId("")).toBe("tool_0");
  });

  it("convertTools drops duplicate names, leaves out empty descriptions and makes schemas objects", () => {
    const tools = convertTools([
      tool("a", { anyOf: [{ type: "object" }], properties: { x: { type: "string" } } }),
      tool("a"),
      { type: "function", function: { name: "b", description: "", parameters: {} } },
    ]);
    expect(tools).toEqual([
      {
        toolSpec: {
          name: "a",
          description: "Runs a.",
          inputSchema: { json: { type: "object", properties: { x: { type: "string" } } } },
        },
      },
      { toolSpec: { name: "b", inputSchema: { json: { type: "object", properties: {} } } } },
    ]);
  });
});

describe("buildConverseRequest", () => {
  const base: ChatRequest = {
    model: CLAUDE,
    messages: conversation,
    tools: [tool("terminal"), tool("read_file")],
  };

  it("puts cache points after the system prompt and on the last three messages of a Claude request", () => {
    const body = buildConverseRequest(base);
    const system = body["system"] as WireBlock[];
    const messages = body["messages"] as { content: WireBlock[] }[];
    expect(system.at(-1)).toEqual({ cachePoint: { type: "default" } });
    expect(messages.map((m) => cachePoints(m.content))).toEqual([0, 0, 1, 1, 1]);
    expect(messages.map((m) => m.content.at(-1))).toContainEqual({ cachePoint: { type: "default" } });
  });

  it.each([
    ["a model other than Claude", { ...base, model: NOVA }, {}],
    ["caching turned off", base, { promptCaching: false }],
  ])("sends no cache points for %s", (_name, request, options) => {
    expect(JSON.stringify(buildConverseRequest(request, options))).not.toContain("cachePoint");
  });

  it("declares tools as toolSpecs, derives inferenceConfig, and puts messages last", () => {
    const body = buildConverseRequest({ ...base, maxTokens: 2048, temperature: 0.3 });
    expect(body["modelId"]).toBe(CLAUDE);
    expect(body["toolConfig"]).toEqual({
      tools: [
        {
          toolSpec: {
            name: "terminal",
            description: "Runs terminal.",
            inputSchema: { json: expect.any(Object) },
          },
        },
        {
          toolSpec: {
            name: "read_file",
            description: "Runs read_file.",
            inputSchema: { json: expect.any(Object) },
          },
        },
      ],
    });
    expect(body["inferenceConfig"]).toEqual({ maxTokens: 2048, temperature: 0.3 });
    expect(Object.keys(body).at(-1)).toBe("messages");
  });

  it("gives Claude a default maxTokens and leaves other models to their own default", () => {
    expect(buildConverseRequest({ model: CLAUDE, messages: [] })["inferenceConfig"]).toEqual({
      maxTokens: 16384,
    });
    expect(buildConverseRequest({ model: NOVA, messages: [] })["inferenceConfig"]).toBeUndefined();
  });

  it("turns reasoning effort into Claude thinking, dropping temperature and raising maxTokens over the budget", () => {
    const body = buildConverseRequest({
      model: "anthropic.claude-3-7-sonnet-20250219-v1:0",
      messages: [{ role: "user", content: "hi" }],
      reasoningEffort: "high",
      temperature: 0.5,
      maxTokens: 4000,
    });
    expect(body["additionalModelRequestFields"]).toEqual({
      thinking: { type: "enabled", budget_tokens: 16000 },
    });
    expect(body["inferenceConfig"]).toEqual({ maxTokens: 20096 });
  });

  it("lets extraBody add fields and override inference values, but not replace model, messages or tools", () => {
    const body = buildConverseRequest(
      {
        ...base,
        maxTokens: 100,
        extraBody: {
          modelId: "other",
          messages: [],
          inferenceConfig: { topP: 0.9, maxTokens: 50 },
          toolConfig: { toolChoice: { any: {} }, tools: [] },
          additionalModelRequestFields: { top_k: 5 },
          requestMetadata: { team: "a" },
        },
      },
      { guardrail: { guardrailIdentifier: "gr-1", guardrailVersion: "2" } },
    );
    expect(body["modelId"]).toBe(CLAUDE);
    expect((body["messages"] as unknown[]).length).toBe(5);
    expect(body["inferenceConfig"]).toEqual({ maxTokens: 50, topP: 0.9 });
    expect(body["toolConfig"]).toMatchObject({ toolChoice: { any: {} } });
    expect((body["toolConfig"] as { tools: unknown[] }).tools).toHaveLength(2);
    expect(body["additionalModelRequestFields"]).toEqual({ top_k: 5 });
    expect(body["requestMetadata"]).toEqual({ team: "a" });
    expect(body["guardrailConfig"]).toEqual({ guardrailIdentifier: "gr-1", guardrailVersion: "2" });
  });

  it("renders past tool use as text when no tools are declared (Bedrock requires a toolConfig for tool blocks)", () => {
    const body = buildConverseRequest({ model: CLAUDE, messages: conversation });
    expect(body["toolConfig"]).toBeUndefined();
    expect(JSON.stringify(body["messages"])).not.toContain("toolUse");
  });
});
