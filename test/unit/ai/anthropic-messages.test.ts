import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AgentEvent } from "../../../src/agent/events.js";
import { runLoop } from "../../../src/agent/loop.js";
import {
  apiRoot,
  authHeaders,
  createAnthropicTransport,
} from "../../../src/ai/transports/anthropic-messages.js";
import {
  type ChatRequest,
  type Message,
  ProviderError,
  type StreamEvent,
  type ToolSchema,
  type Transport,
} from "../../../src/ai/types.js";
import {
  disconnectMidStream,
  type FakeLlm,
  hang,
  httpError,
  reply,
  startFakeLlm,
  truncatedStream,
} from "../../support/fake-llm.js";
import { fakeSignature } from "../../support/fake-llm-anthropic.js";
import { collect, failure, finishOf, textOf } from "../../support/stream-helpers.js";

const request: ChatRequest = {
  model: "claude-sonnet-4-5",
  messages: [
    { role: "system", content: "You are Hermes." },
    { role: "user", content: "hello" },
  ],
};

const bodyOf = (llm: FakeLlm, i = 0) => llm.chatRequests[i]?.body as Record<string, unknown>;

let llm: FakeLlm;

beforeEach(async () => {
  llm = await startFakeLlm();
});

afterEach(async () => {
  await llm.close();
});

describe.each([true, false])("anthropic transport over HTTP (stream: %s)", (stream) => {
  let transport: Transport;
  beforeEach(() => {
    transport = createAnthropicTransport({ baseUrl: llm.url, apiKey: "sk-ant-api-test", stream });
  });

  it("returns text, thinking with its signature, and usage with cache reads", async () => {
    llm.enqueue(
      reply()
        .reasoning("Thinking it through.")
        .text("Hello there, how can I help?")
        .usage({ prompt: 120, completion: 9, cached: 100, reasoning: 4 }),
    );
    const events = await collect(transport.stream(request));
    expect(textOf(events, "text_delta").join("")).toBe("Hello there, how can I help?");
    expect(textOf(events, "reasoning_delta").join("")).toBe("Thinking it through.");
    if (stream) expect(textOf(events, "text_delta").length).toBeGreaterThan(1);
    expect(events.filter((e) => e.type === "finish")).toHaveLength(1);
    expect(events.find((e) => e.type === "usage")).toEqual({
      type: "usage",
      usage: {
        inputTokens: 120,
        outputTokens: 9,
        cacheReadTokens: 100,
        cacheWriteTokens: 0,
        reasoningTokens: 4,
      },
    });
    expect(finishOf(events)).toEqual({
      type: "finish",
      reason: "stop",
      message: {
        role: "assistant",
        content: "Hello there, how can I help?",
        reasoning: "Thinking it through.",
        reasoning_details: [
          {
            type: "thinking",
            thinking: "Thinking it through.",
            signature: fakeSignature("Thinking it through."),
          },
        ],
        finish_reason: "stop",
      },
    });
  });

  it("posts to /v1/messages with x-api-key only, the system prompt apart, and cache breakpoints", async () => {
    llm.enqueue(reply().text("ok"));
    await collect(transport.stream(request));
    const recorded = llm.chatRequests[0];
    expect(recorded?.path).toBe("/v1/messages");
    expect(recorded?.headers["x-api-key"]).toBe("sk-ant-api-test");
    expect(recorded?.headers["authorization"]).toBeUndefined();
    expect(recorded?.headers["anthropic-version"]).toBeTruthy();
    expect(recorded?.headers["x-stainless-retry-count"]).toBe("0");
    expect(bodyOf(llm)).toMatchObject({
      model: "claude-sonnet-4-5",
      max_tokens: 16384,
      stream,
      system: [{ type: "text", text: "You are Hermes.", cache_control: { type: "ephemeral" } }],
      messages: [
        { role: "user", content: [{ type: "text", text: "hello", cache_control: { type: "ephemeral" } }] },
      ],
    });
  });

  it("assembles parallel tool calls whose arguments arrive split across deltas", async () => {
    llm.enqueue(
      reply()
        .text("Let me look.")
        .toolCall("read_file", { path: "src/main.ts", offset: 10 }, "toolu_a")
        .toolCall("terminal", { command: "ls -la /tmp" }, "toolu_b"),
    );
    const events = await collect(transport.stream(request));
    const calls = events.flatMap((e) => (e.type === "tool_call" ? [e] : []));
    expect(
      calls.map((c) => [c.index, c.call.id, c.call.function.name, JSON.parse(c.call.function.arguments)]),
    ).toEqual([
      [0, "toolu_a", "read_file", { path: "src/main.ts", offset: 10 }],
      [1, "toolu_b", "terminal", { command: "ls -la /tmp" }],
    ]);
    const argDeltas = events.filter((e) => e.type === "tool_call_delta" && e.argumentsDelta);
    if (stream) expect(argDeltas.length).toBeGreaterThanOrEqual(6);
    const finish = finishOf(events);
    expect(finish.reason).toBe("tool_calls");
    expect(finish.message.content).toBe("Let me look.");
    expect(finish.message.tool_calls?.map((c) => c.id)).toEqual(["toolu_a", "toolu_b"]);
  });

  it.each([
    ["length", "length"],
    ["stop_sequence", "stop"],
    ["pause_turn", "stop"],
    ["content_filter", "content_filter"],
  ])("maps the scripted finish %s to %s", async (scripted, expected) => {
    llm.enqueue(reply().text("partial answer").finish(scripted));
    expect(finishOf(await collect(transport.stream(request))).reason).toBe(expected);
  });

  it("maps 429 with retry-after to retryAfterMs and headers, with exactly one request (SDK retries off)", async () => {
    llm.enqueue(
      httpError(
        429,
        {
          type: "error",
          error: {
            type: "rate_limit_error",
            message: "Number of request tokens has exceeded your rate limit.",
          },
        },
        { "retry-after": "7", "anthropic-ratelimit-tokens-reset": "2030-01-01T00:00:00Z" },
      ),
    );
    const { error } = await failure(transport.stream(request));
    expect(error).toBeInstanceOf(ProviderError);
    const e = error as ProviderError;
    expect(e.status).toBe(429);
    expect(e.retryAfterMs).toBe(7000);
    expect(e.transport).toBe(false);
    expect(e.message).toContain("exceeded your rate limit");
    expect(e.headers?.["anthropic-ratelimit-tokens-reset"]).toBe("2030-01-01T00:00:00Z");
    expect(e.baseUrl).toBe(apiRoot(llm.url));
    expect(llm.chatRequests).toHaveLength(1);
  });

  it("maps 529 overloaded to a ProviderError with its status and type in the body", async () => {
    llm.enqueue(
      httpError(529, { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }),
    );
    const { error } = await failure(transport.stream(request));
    expect(error).toMatchObject({ status: 529, transport: false, partial: false });
    expect((error as ProviderError).body).toContain("overloaded_error");
    expect(llm.chatRequests).toHaveLength(1);
  });

  it("keeps the body of a 400 prompt-too-long error", async () => {
    const message = "prompt is too long: 210000 tokens > 200000 maximum";
    llm.enqueue(httpError(400, { type: "error", error: { type: "invalid_request_error", message } }));
    const { error } = await failure(transport.stream(request));
    const e = error as ProviderError;
    expect(e.status).toBe(400);
    expect(JSON.parse(e.body ?? "")).toEqual({
      type: "error",
      error: { type: "invalid_request_error", message },
    });
    expect(e.message).toContain(message);
  });

  it("keeps a non-JSON error body", async () => {
    llm.enqueue(httpError(502, "<html>Bad Gateway</html>"));
    const { error } = await failure(transport.stream(request));
    expect(error).toMatchObject({ status: 502, body: "<html>Bad Gateway</html>" });
  });

  it("reports an answer cut short without an error as a transport error", async () => {
    llm.enqueue(truncatedStream(5));
    const { error, events } = await failure(transport.stream(request));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ transport: true, partial: stream });
    if (stream) expect((error as Error).message).toContain("no stop_reason");
    expect(events.some((e) => e.type === "finish")).toBe(false);
  });

  it("treats a connection dropped mid-response as a transport error", async () => {
    llm.enqueue(disconnectMidStream(6));
    const { error, events } = await failure(transport.stream(request));
    expect(error).toBeInstanceOf(ProviderError);
    const e = error as ProviderError;
    expect(e.transport).toBe(true);
    expect(e.partial).toBe(stream);
    if (stream) expect(textOf(events, "text_delta").join("")).not.toBe("");
    expect(events.some((ev) => ev.type === "finish")).toBe(false);
  });
});

describe("anthropic transport: failures", () => {
  it("rejects a 200 JSON body that carries an error instead of a message (non-streaming)", async () => {
    const transport = createAnthropicTransport({ baseUrl: llm.url, apiKey: "k", stream: false });
    llm.enqueue(
      httpError(200, { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }),
    );
    const { error } = await failure(transport.stream(request));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ status: 529, transport: false });
    expect((error as ProviderError).body).toContain("overloaded_error");
  });

  it("aborts with a transport timeout when the server sends nothing for stallTimeoutMs", async () => {
    const transport = createAnthropicTransport({ baseUrl: llm.url, apiKey: "k", stallTimeoutMs: 150 });
    llm.enqueue(hang());
    const { error } = await failure(transport.stream(request));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ transport: true, partial: false });
    expect((error as Error).message).toMatch(/stalled.*timed out/);
  });

  it("honours an abort signal with an AbortError", async () => {
    const transport = createAnthropicTransport({ baseUrl: llm.url, apiKey: "k" });
    llm.enqueue(hang());
    const controller = new AbortController();
    const pending = failure(transport.stream(request, controller.signal));
    await llm.waitForRequests(1);
    controller.abort();
    const { error } = await pending;
    expect((error as Error).name).toBe("AbortError");
  });

  it("reports a refused connection as a transport error", async () => {
    const closed = await startFakeLlm();
    const url = closed.url;
    await closed.close();
    const transport = createAnthropicTransport({ baseUrl: url, apiKey: "k" });
    const { error } = await failure(transport.stream(request));
    expect(error).toMatchObject({ transport: true, partial: false });
    expect((error as Error).message).toContain("Could not connect");
  });
});

/** A one-off SSE server for wire behaviour the scripted server does not produce. */
async function sseServer(
  handler: (
    res: ServerResponse,
    send: (event: Record<string, unknown>) => void,
    req: IncomingMessage,
  ) => void,
): Promise<{ url: string; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.flushHeaders();
      handler(
        res,
        (event) => res.write(`event: ${String(event["type"])}\ndata: ${JSON.stringify(event)}\n\n`),
        req,
      );
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

const messageStart = { type: "message_start", message: { usage: { input_tokens: 3, output_tokens: 1 } } };

describe("anthropic transport: stream edge cases", () => {
  it("keeps a slow stream alive while pings arrive, and stalls once they stop", async () => {
    const timers: NodeJS.Timeout[] = [];
    const server = await sseServer((res, send, req) => {
      send(messageStart);
      send({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
      send({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Slow" } });
      if (req.headers["x-mode"] === "stall") return; // then silence
      let pings = 0;
      const timer = setInterval(() => {
        send({ type: "ping" });
        if (++pings === 8) {
          clearInterval(timer);
          send({ type: "content_block_stop", index: 0 });
          send({ type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 2 } });
          send({ type: "message_stop" });
          res.end();
        }
      }, 40);
      timers.push(timer);
    });
    try {
      const alive = createAnthropicTransport({ baseUrl: server.url, apiKey: "k", stallTimeoutMs: 150 });
      const events = await collect(alive.stream(request));
      expect(finishOf(events).message.content).toBe("Slow");

      const stalls = createAnthropicTransport({
        baseUrl: server.url,
        apiKey: "k",
        stallTimeoutMs: 150,
        headers: { "x-mode": "stall" },
      });
      const { error, events: partialEvents } = await failure(stalls.stream(request));
      expect(error).toMatchObject({ transport: true, partial: true });
      expect((error as Error).message).toContain("stalled");
      expect(textOf(partialEvents, "text_delta")).toEqual(["Slow"]);
    } finally {
      for (const t of timers) clearInterval(t);
      await server.close();
    }
  });

  it("does not count a slow consumer as a stalled server", async () => {
    const server = await sseServer((res, send) => {
      send(messageStart);
      send({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
      send({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "a" } });
      send({ type: "content_block_stop", index: 0 });
      send({ type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 2 } });
      send({ type: "message_stop" });
      res.end();
    });
    try {
      const transport = createAnthropicTransport({ baseUrl: server.url, apiKey: "k", stallTimeoutMs: 50 });
      const events: StreamEvent[] = [];
      for await (const event of transport.stream(request)) {
        events.push(event);
        await new Promise((resolve) => setTimeout(resolve, 120));
      }
      expect(finishOf(events).message.content).toBe("a");
    } finally {
      await server.close();
    }
  });

  it("maps an error event inside the stream to its HTTP status, as partial", async () => {
    const server = await sseServer((res, send) => {
      send(messageStart);
      send({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
      send({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Half" } });
      send({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } });
      res.end();
    });
    try {
      const transport = createAnthropicTransport({ baseUrl: server.url, apiKey: "k" });
      const { error } = await failure(transport.stream(request));
      expect(error).toBeInstanceOf(ProviderError);
      expect(error).toMatchObject({ status: 529, partial: true, transport: false });
      expect((error as ProviderError).body).toContain("overloaded_error");
    } finally {
      await server.close();
    }
  });
});

describe("anthropic transport: configuration", () => {
  it("sends an OAuth token as a bearer with the OAuth beta, merged with caller betas", async () => {
    const transport = createAnthropicTransport({
      baseUrl: `${llm.url}/`,
      authToken: "sk-ant-oat01-token",
      headers: { "anthropic-beta": "interleaved-thinking-2025-05-14", "X-Extra": "1" },
      cacheTtl: "1h",
    });
    llm.enqueue(reply().text("ok"));
    await collect(transport.stream(request));
    const headers = llm.chatRequests[0]?.headers ?? {};
    expect(headers["authorization"]).toBe("Bearer sk-ant-oat01-token");
    expect(headers["x-api-key"]).toBeUndefined();
    expect(headers["anthropic-beta"]).toBe("oauth-2025-04-20,interleaved-thinking-2025-05-14");
    expect(headers["x-extra"]).toBe("1");
    expect(JSON.stringify(bodyOf(llm))).toContain('"ttl":"1h"');
  });

  it("chooses exactly one credential header", () => {
    expect(authHeaders("sk-ant-api03-x", "tok")).toEqual({
      "x-api-key": "sk-ant-api03-x",
      authorization: null,
    });
    expect(authHeaders(undefined, "minimax-key")).toEqual({
      authorization: "Bearer minimax-key",
      "x-api-key": null,
    });
    expect(authHeaders("sk-ant-oat01-y", undefined)).toEqual({
      authorization: "Bearer sk-ant-oat01-y",
      "x-api-key": null,
      "anthropic-beta": "oauth-2025-04-20",
    });
    expect(authHeaders(undefined, undefined)).toEqual({ authorization: null, "x-api-key": null });
  });

  it("sends no credential at all to a keyless endpoint, even with ANTHROPIC_API_KEY set", async () => {
    const saved = process.env["ANTHROPIC_API_KEY"];
    process.env["ANTHROPIC_API_KEY"] = "sk-from-env";
    try {
      const transport = createAnthropicTransport({ baseUrl: llm.url, promptCaching: false });
      llm.enqueue(reply().text("ok"));
      await collect(transport.stream(request));
      const headers = llm.chatRequests[0]?.headers ?? {};
      expect(headers["authorization"]).toBeUndefined();
      expect(headers["x-api-key"]).toBeUndefined();
      expect(JSON.stringify(bodyOf(llm))).not.toContain("cache_control");
    } finally {
      if (saved === undefined) delete process.env["ANTHROPIC_API_KEY"];
      else process.env["ANTHROPIC_API_KEY"] = saved;
    }
  });

  it.each([
    ["https://api.anthropic.com", "https://api.anthropic.com"],
    ["https://api.anthropic.com/v1/", "https://api.anthropic.com"],
    ["https://api.minimax.io/anthropic", "https://api.minimax.io/anthropic"],
  ])("uses %s as API root %s", (input, expected) => {
    expect(apiRoot(input)).toBe(expected);
  });
});

describe("anthropic transport in the agent loop", () => {
  it("runs a multi-turn tool conversation and sends thinking signatures back on the next request", async () => {
    const transport = createAnthropicTransport({ baseUrl: llm.url, apiKey: "k" });
    llm.enqueue(
      reply()
        .reasoning("I should list the directory.")
        .text("Listing.")
        .toolCall("terminal", { command: "ls" }, "toolu_1")
        .usage({ prompt: 50, completion: 10, cached: 0 }),
      reply()
        .reasoning("The listing shows a README.")
        .text("There is a README.")
        .usage({ prompt: 80, completion: 6, cached: 50 }),
    );
    const tools: ToolSchema[] = [
      {
        type: "function",
        function: {
          name: "terminal",
          description: "Run a shell command",
          parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
        },
      },
    ];
    const messages: Message[] = [{ role: "user", content: "What is here?" }];
    const events: AgentEvent[] = [];
    const executed: unknown[] = [];
    const result = await runLoop(
      messages,
      {
        transport,
        model: "claude-sonnet-4-5",
        tools,
        systemPrompt: "You are Hermes.",
        maxIterations: 5,
        traits: () => ({ parallelSafe: true, interactive: false }),
        executeTool: async (call) => {
          executed.push(call.args);
          return { content: JSON.stringify({ output: "README.md" }), ok: true };
        },
        unknownToolMisses: { count: 0 },
        emit: (event) => events.push(event),
      },
      new AbortController().signal,
    );
    expect(result).toMatchObject({ reason: "completed", text: "There is a README.", iterations: 2 });
    expect(result.usage).toMatchObject({ inputTokens: 130, outputTokens: 16, cacheReadTokens: 50 });
    expect(executed).toEqual([{ command: "ls" }]);
    expect(messages[1]?.reasoning_details).toEqual([
      {
        type: "thinking",
        thinking: "I should list the directory.",
        signature: fakeSignature("I should list the directory."),
      },
    ]);

    const second = bodyOf(llm, 1);
    expect(second["tools"]).toEqual([
      {
        name: "terminal",
        description: "Run a shell command",
        input_schema: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
      },
    ]);
    expect(second["messages"]).toEqual([
      // Three messages: each is one of the last three, so each carries a breakpoint.
      {
        role: "user",
        content: [{ type: "text", text: "What is here?", cache_control: { type: "ephemeral" } }],
      },
      {
        role: "assistant",
        content: [
          {
            type: "thinking",
            thinking: "I should list the directory.",
            signature: fakeSignature("I should list the directory."),
          },
          { type: "text", text: "Listing." },
          {
            type: "tool_use",
            id: "toolu_1",
            name: "terminal",
            input: { command: "ls" },
            cache_control: { type: "ephemeral" },
          },
        ],
      },
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "toolu_1",
            content: JSON.stringify({ output: "README.md" }),
            cache_control: { type: "ephemeral" },
          },
        ],
      },
    ]);
    expect(events.filter((e) => e.type === "reasoning_delta").length).toBeGreaterThan(1);
  });
});
