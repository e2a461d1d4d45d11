import { describe, expect, it } from "vitest";
import { buildRequestBody, ChatBodyWriter } from "../../../src/ai/transports/chat-completions-body.js";
import type { ChatRequest, Message, ToolSchema } from "../../../src/ai/types.js";

const tool = (name: string): ToolSchema => ({
  type: "function",
  function: {
    name,
    description: `The ${name} tool: "quoted", \\ backslashed, ünïcödé, and a line\nbreak.`,
    parameters: { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
  },
});

const history: Message[] = [
  { role: "user", content: "Plan the work 🚀 (and a lone \ud800 surrogate)." },
  {
    role: "assistant",
    content: null,
    reasoning: "never sent back",
    tool_calls: [{ id: "c1", type: "function", function: { name: "todo", arguments: '{"a":"x"}' } }],
  },
  { role: "tool", tool_call_id: "c1", name: "todo", content: '{"ok":true}' },
  {
    role: "user",
    content: [
      { type: "text", text: "Look at this" },
      { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
    ],
  } as Message,
  { role: "assistant", content: "Done." },
];

/** Requests a conversation sends in turn: the system message rebuilt each time, history growing. */
function requests(base: Omit<ChatRequest, "messages">): ChatRequest[] {
  const out: ChatRequest[] = [];
  for (let n = 1; n <= history.length; n++) {
    out.push({ ...base, messages: [{ role: "system", content: "You are Hermes." }, ...history.slice(0, n)] });
  }
  return out;
}

const tools = [tool("todo"), tool("terminal")];

describe("ChatBodyWriter", () => {
  it.each([
    ["plain", { model: "m" }, true, undefined],
    [
      "tools, limits and extra fields",
      {
        model: "m",
        tools,
        maxTokens: 50,
        temperature: 0.2,
        reasoningEffort: "high",
        extraBody: { provider: { order: ["a"] }, tools: 0, skip: undefined },
      },
      true,
      undefined,
    ],
    [
      "extra fields that try to replace the transport's own",
      {
        model: "m",
        tools,
        extraBody: { model: "other", stream: false, stream_options: { x: 1 }, messages: [], max_tokens: 9 },
      },
      false,
      undefined,
    ],
    ["Claude cache breakpoints", { model: "anthropic/claude-x", tools }, true, "5m"],
    [
      "Claude cache breakpoints, 1h",
      { model: "anthropic/claude-x", extraBody: { transforms: [] } },
      false,
      "1h",
    ],
  ] as const)(
    "writes exactly what JSON.stringify writes for each request of a conversation: %s",
    (_name, base, streaming, ttl) => {
      const writer = new ChatBodyWriter();
      for (const request of requests(base as Omit<ChatRequest, "messages">)) {
        const expected = JSON.stringify(buildRequestBody(request, streaming, ttl));
        // Twice: the second time from memory.
        expect(writer.json(request, streaming, ttl)).toBe(expected);
        expect(writer.json(request, streaming, ttl)).toBe(expected);
        expect(writer.bytes(request, streaming, ttl).equals(Buffer.from(expected, "utf8"))).toBe(true);
        expect(writer.bytes(request, streaming, ttl).equals(Buffer.from(expected, "utf8"))).toBe(true);
      }
    },
  );

  it("bytes: an earlier body is never changed by later ones, and a history that is not a continuation starts over", () => {
    const writer = new ChatBodyWriter();
    const reqs = requests({ model: "m", tools });
    const sent = reqs.map((request) => writer.bytes(request, true));
    // A request in flight still holds exactly what it was given.
    sent.forEach((body, i) => {
      expect(body.toString("utf8")).toBe(JSON.stringify(buildRequestBody(reqs[i]!, true)));
    });
    const system = { role: "system", content: "You are Hermes." } as const;
    const cases: ChatRequest[] = [
      // Compression: the middle replaced by a summary.
      { model: "m", tools, messages: [system, { role: "user", content: "Summary: ☃ so far" }, history[4]!] },
      // Back to an earlier point (a retry without the last message), then a different model.
      { model: "m", tools, messages: [system, history[0]!] },
      { model: "m2", tools, messages: [system, history[0]!, history[1]!] },
      // No messages at all, and a body bigger than the first buffer (multi-byte text).
      { model: "m2", messages: [] },
      { model: "m2", messages: [system, { role: "user", content: "é🚀".repeat(40_000) }] },
    ];
    for (const request of cases) {
      expect(writer.bytes(request, true).toString("utf8")).toBe(
        JSON.stringify(buildRequestBody(request, true)),
      );
    }
  });

  it("chunks: the pieces a body is sent in never change, while the conversation grows or starts over", () => {
    const writer = new ChatBodyWriter();
    const reqs = requests({ model: "m", tools });
    const sent = reqs.map((request) => writer.chunks(request, true));
    // Compression and an edited copy of a message: not a continuation, written anew.
    const system = { role: "system", content: "You are Hermes." } as const;
    const later: ChatRequest[] = [
      { model: "m", tools, messages: [system, { role: "user", content: "Summary: ☃ so far" }, history[4]!] },
      {
        model: "m",
        tools,
        messages: [system, { ...history[0]!, content: "edited" } as Message, history[1]!],
      },
      {
        model: "m",
        tools,
        messages: [system, { ...history[0]!, content: "edited" } as Message, history[1]!],
      },
      // A growing conversation whose body outgrows the first buffer.
      ...Array.from({ length: 6 }, (_, n) => ({
        model: "m",
        tools,
        messages: [
          system,
          ...Array.from({ length: n + 1 }, () => ({ role: "user" as const, content: "ü".repeat(9000) })),
        ],
      })),
    ];
    const laterSent = later.map((request) => writer.chunks(request, true));
    [...reqs, ...later].forEach((request, i) => {
      const body = Buffer.concat([...sent, ...laterSent][i]!).toString("utf8");
      expect(body).toBe(JSON.stringify(buildRequestBody(request, true)));
    });
  });

  it("bytes: writers of one process interleaving different heads each write their own body", () => {
    const one = new ChatBodyWriter();
    const two = new ChatBodyWriter();
    const a = requests({ model: "m", tools });
    const b = requests({ model: "other", tools: [tool("solo")], maxTokens: 5 });
    for (let i = 0; i < a.length; i++) {
      for (const [writer, request] of [
        [one, a[i]!],
        [two, b[i]!],
        [new ChatBodyWriter(), a[i]!],
      ] as const) {
        expect(writer.bytes(request, true).toString("utf8")).toBe(
          JSON.stringify(buildRequestBody(request, true)),
        );
      }
    }
  });

  it("a changed system prompt, tool list or message object is written anew, never the remembered text", () => {
    const writer = new ChatBodyWriter();
    const first: ChatRequest = {
      model: "m",
      tools,
      messages: [{ role: "system", content: "A" }, history[0]!],
    };
    writer.json(first, true);
    const changed: ChatRequest = {
      model: "m",
      tools: [tool("todo"), tool("other")],
      messages: [{ role: "system", content: "B" }, { ...history[0]!, content: "an edited copy" } as Message],
    };
    const json = writer.json(changed, true);
    expect(json).toBe(JSON.stringify(buildRequestBody(changed, true)));
    expect(json).toContain('"content":"B"');
    expect(json).toContain("an edited copy");
    expect(json).toContain('"name":"other"');
  });

  it("the Claude breakpoints move with the conversation: a message marked last time is sent unmarked now", () => {
    const writer = new ChatBodyWriter();
    const reqs = requests({ model: "anthropic/claude-x" });
    for (const request of reqs) writer.json(request, true, "5m");
    const last = JSON.parse(writer.json(reqs.at(-1)!, true, "5m")) as {
      messages: Array<{ content: unknown }>;
    };
    // user, tool, user(parts), assistant carry text; the first user message is the fourth back: unmarked.
    expect(last.messages[1]?.content).toBe(history[0]!.content);
    expect(JSON.stringify(last.messages.at(-1)?.content)).toContain("cache_control");
  });
});
