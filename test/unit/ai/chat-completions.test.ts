import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseResetHeaders } from "../../../src/ai/error-timing.js";
import { createChatCompletionsTransport } from "../../../src/ai/transports/chat-completions.js";
import { type ChatRequest, ProviderError, type StreamEvent, type Transport } from "../../../src/ai/types.js";
import {
  disconnectMidStream,
  type FakeLlm,
  hang,
  httpError,
  rawText,
  reply,
  startFakeLlm,
  truncatedStream,
} from "../../support/fake-llm.js";
import { collect, failure, finishOf, textOf } from "../../support/stream-helpers.js";

const request: ChatRequest = { model: "test-model", messages: [{ role: "user", content: "hello" }] };

let llm: FakeLlm;
let transport: Transport;

beforeEach(async () => {
  llm = await startFakeLlm();
  transport = createChatCompletionsTransport({ baseUrl: llm.url, apiKey: "sk-test" });
});

afterEach(async () => {
  await llm.close();
});

describe.each([true, false])("chat-completions transport (stream: %s)", (stream) => {
  beforeEach(() => {
    transport = createChatCompletionsTransport({ baseUrl: llm.url, apiKey: "sk-test", stream });
  });

  it("returns text, reasoning and usage, ending with one finish event", async () => {
    llm.enqueue(
      reply()
        .reasoning("Thinking it through.")
        .text("Hello there, how can I help?")
        .usage({ prompt: 12, completion: 7, cached: 4, reasoning: 3 }),
    );
    const events = await collect(transport.stream(request));
    expect(textOf(events, "text_delta").join("")).toBe("Hello there, how can I help?");
    expect(textOf(events, "reasoning_delta").join("")).toBe("Thinking it through.");
    if (stream) expect(textOf(events, "text_delta").length).toBeGreaterThan(1);
    expect(events.filter((e) => e.type === "finish")).toHaveLength(1);
    expect(events.find((e) => e.type === "usage")).toEqual({
      type: "usage",
      usage: { inputTokens: 12, outputTokens: 7, cacheReadTokens: 4, reasoningTokens: 3 },
    });
    const finish = finishOf(events);
    expect(finish.reason).toBe("stop");
    expect(finish.message).toEqual({
      role: "assistant",
      content: "Hello there, how can I help?",
      reasoning: "Thinking it through.",
      finish_reason: "stop",
    });
  });

  it("assembles parallel tool calls whose arguments arrive split across chunks", async () => {
    llm.enqueue(
      reply()
        .text("Let me look.")
        .toolCall("read_file", { path: "src/main.ts", offset: 10 }, "call_a")
        .toolCall("terminal", { command: "ls -la /tmp" }, "call_b"),
    );
    const events = await collect(transport.stream(request));
    const calls = events.flatMap((e) => (e.type === "tool_call" ? [e] : []));
    expect(
      calls.map((c) => [c.index, c.call.id, c.call.function.name, JSON.parse(c.call.function.arguments)]),
    ).toEqual([
      [0, "call_a", "read_file", { path: "src/main.ts", offset: 10 }],
      [1, "call_b", "terminal", { command: "ls -la /tmp" }],
    ]);
    const deltas = events.filter((e) => e.type === "tool_call_delta");
    if (stream) expect(deltas.length).toBeGreaterThan(4);
    const finish = finishOf(events);
    expect(finish.reason).toBe("tool_calls");
    expect(finish.message.content).toBe("Let me look.");
    expect(finish.message.tool_calls?.map((c) => c.id)).toEqual(["call_a", "call_b"]);
  });

  it("reports tool calls with finish_reason stop as tool_calls", async () => {
    llm.enqueue(reply().toolCall("clarify", { question: "Which file?" }).finish("stop"));
    const finish = finishOf(await collect(transport.stream(request)));
    expect(finish.reason).toBe("tool_calls");
    expect(finish.message.content).toBeNull();
  });

  it("passes `<tool_call>` text through as text (extraction is the caller's choice)", async () => {
    const text = '<tool_call>{"name": "terminal", "arguments": {"command": "pwd"}}</tool_call>';
    llm.enqueue(rawText(text));
    const finish = finishOf(await collect(transport.stream(request)));
    expect(finish.message.content).toBe(text);
    expect(finish.message.tool_calls).toBeUndefined();
  });

  it("maps HTTP 500 to a ProviderError with status and body", async () => {
    llm.enqueue(httpError(500, { error: { message: "upstream exploded", type: "server_error" } }));
    const { error } = await failure(transport.stream(request));
    expect(error).toBeInstanceOf(ProviderError);
    const e = error as ProviderError;
    expect(e.status).toBe(500);
    expect(e.transport).toBe(false);
    expect(e.partial).toBe(false);
    expect(e.body).toContain("upstream exploded");
    expect(e.message).toContain("upstream exploded");
  });

  it("maps 429 with retry-after to retryAfterMs, and makes exactly one request (SDK retries off)", async () => {
    llm.enqueue(httpError(429, undefined, { "retry-after": "7" }));
    const { error } = await failure(transport.stream(request));
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).status).toBe(429);
    expect((error as ProviderError).retryAfterMs).toBe(7000);
    expect(llm.chatRequests).toHaveLength(1);
  });

  it("treats a connection dropped mid-response as a partial transport error", async () => {
    llm.enqueue(disconnectMidStream(3));
    const { error, events } = await failure(transport.stream(request));
    expect(error).toBeInstanceOf(ProviderError);
    const e = error as ProviderError;
    expect(e.transport).toBe(true);
    expect(e.status).toBeUndefined();
    expect(e.partial).toBe(stream);
    if (stream) expect(textOf(events, "text_delta").length).toBeGreaterThan(0);
    expect(events.some((ev) => ev.type === "finish")).toBe(false);
  });
});

describe("chat-completions transport: wire details", () => {
  it("sends model, messages, tools, limits, streaming options and extra body fields", async () => {
    llm.enqueue(reply().text("ok"));
    await collect(
      transport.stream({
        model: "m-1",
        messages: [
          { role: "system", content: "be brief" },
          {
            role: "user",
            content: [
              { type: "text", text: "look" },
              { type: "image_url", image_url: { url: "data:," } },
            ],
          },
          {
            role: "assistant",
            content: null,
            reasoning: "secret thoughts",
            tool_calls: [{ id: "call_1", type: "function", function: { name: "t", arguments: "{}" } }],
            finish_reason: "tool_calls",
          },
          { role: "tool", tool_call_id: "call_1", name: "t", content: '{"ok":true}' },
        ],
        tools: [
          {
            type: "function",
            function: { name: "t", description: "a tool", parameters: { type: "object" } },
          },
        ],
        maxTokens: 256,
        temperature: 0.2,
        reasoningEffort: "high",
        extraBody: { provider: { sort: "price" }, stream: false, model: "hijacked" },
      }),
    );
    const sent = llm.chatRequests[0];
    expect(sent?.headers["authorization"]).toBe("Bearer sk-test");
    expect(sent?.body).toEqual({
      model: "m-1",
      messages: [
        { role: "system", content: "be brief" },
        {
          role: "user",
          content: [
            { type: "text", text: "look" },
            { type: "image_url", image_url: { url: "data:," } },
          ],
        },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "call_1", type: "function", function: { name: "t", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: "call_1", content: '{"ok":true}' },
      ],
      tools: [
        { type: "function", function: { name: "t", description: "a tool", parameters: { type: "object" } } },
      ],
      max_tokens: 256,
      temperature: 0.2,
      reasoning_effort: "high",
      provider: { sort: "price" },
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it("omits empty tools and sends no Authorization header without a key", async () => {
    const keyless = createChatCompletionsTransport({ baseUrl: llm.url });
    llm.enqueue(reply().text("ok"));
    await collect(keyless.stream({ ...request, tools: [] }));
    const sent = llm.chatRequests[0];
    expect(sent?.headers["authorization"]).toBeUndefined();
    expect(sent?.body).not.toHaveProperty("tools");
  });

  it("keeps a non-JSON error body verbatim", async () => {
    llm.enqueue(httpError(502, "<html>Bad Gateway</html>"));
    const { error } = await failure(transport.stream(request));
    expect((error as ProviderError).status).toBe(502);
    expect((error as ProviderError).body).toBe("<html>Bad Gateway</html>");
  });

  it("reads reasoning sent as delta.reasoning", async () => {
    llm.enqueue(reply().reasoning("step one, step two", "reasoning").text("done"));
    const events = await collect(transport.stream(request));
    expect(textOf(events, "reasoning_delta").join("")).toBe("step one, step two");
  });

  it("treats a stream that ends cleanly without a finish_reason as dropped", async () => {
    llm.enqueue(truncatedStream(3));
    const { error } = await failure(transport.stream(request));
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).transport).toBe(true);
    expect((error as ProviderError).partial).toBe(true);
    expect((error as ProviderError).message).toMatch(/ended before/);
  });

  it("reports an unreachable server as a transport error that is not partial", async () => {
    const url = llm.url;
    await llm.close();
    const dead = createChatCompletionsTransport({ baseUrl: url, apiKey: "k" });
    const { error } = await failure(dead.stream(request));
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).transport).toBe(true);
    expect((error as ProviderError).partial).toBe(false);
    llm = await startFakeLlm();
  });

  it("maps a 200 body carrying an error object to a ProviderError (non-streaming)", async () => {
    const plain = createChatCompletionsTransport({ baseUrl: llm.url, apiKey: "k", stream: false });
    llm.enqueue(httpError(200, { error: { message: "no endpoints found", code: 404 } }));
    const { error } = await failure(plain.stream(request));
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).status).toBe(404);
  });

  it("stops a hanging request promptly when the signal aborts, without wrapping the abort", async () => {
    llm.enqueue(hang());
    const controller = new AbortController();
    const pending = failure(transport.stream(request, controller.signal));
    await llm.waitForRequests(1);
    controller.abort();
    const { error } = await pending;
    expect(error).not.toBeInstanceOf(ProviderError);
    expect((error as Error).name).toBe("AbortError");
  });

  it("stops mid-stream when aborted between events", async () => {
    llm.enqueue(reply().text("a fairly long answer that streams in several pieces"));
    const controller = new AbortController();
    const events: StreamEvent[] = [];
    let caught: unknown;
    try {
      for await (const event of transport.stream(request, controller.signal)) {
        events.push(event);
        if (event.type === "text_delta") controller.abort();
      }
    } catch (error) {
      caught = error;
    }
    expect((caught as Error).name).toBe("AbortError");
    expect(events.some((e) => e.type === "finish")).toBe(false);
  });

  it("throws AbortError without a request when the signal is already aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    const { error } = await failure(transport.stream(request, controller.signal));
    expect((error as Error).name).toBe("AbortError");
    expect(llm.chatRequests).toHaveLength(0);
  });
});

describe("Retry-After as every transport reads it (parseResetHeaders)", () => {
  const headers = (h: Record<string, string>) => new Headers(h);
  const now = Date.parse("2025-01-01T00:00:00Z");

  it.each([
    [{ "retry-after": "3" }, 3000],
    [{ "retry-after": "1.5" }, 1500],
    [{ "retry-after-ms": "250" }, 250],
    [{ "retry-after-ms": "250", "retry-after": "9" }, 250],
    [{ "retry-after": "Wed, 01 Jan 2025 00:00:10 GMT" }, 10_000],
    [{ "retry-after": "Tue, 31 Dec 2024 23:59:00 GMT" }, 0],
    [{ "retry-after": "soon" }, undefined],
    [{}, undefined],
  ])("%j → %s", (h, expected) => {
    expect(parseResetHeaders(headers(h), now).retryAfterMs).toBe(expected);
  });
});
