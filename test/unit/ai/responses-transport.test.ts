import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createResponsesTransport } from "../../../src/ai/transports/codex-responses.js";
import { type ChatRequest, ProviderError, type StreamEvent, type Transport } from "../../../src/ai/types.js";
import {
  disconnectMidStream,
  type FakeLlm,
  hang,
  httpError,
  reply,
  startFakeLlm,
  truncatedStream,
} from "../../support/fake-llm.js";
import { fakeEncryptedContent } from "../../support/fake-llm-responses.js";
import { collect, failure, finishOf, textOf } from "../../support/stream-helpers.js";

const request: ChatRequest = {
  model: "gpt-test",
  messages: [
    { role: "system", content: "Be brief." },
    { role: "user", content: "hello" },
  ],
};

let llm: FakeLlm;
let transport: Transport;

beforeEach(async () => {
  llm = await startFakeLlm();
  transport = createResponsesTransport({ baseUrl: llm.url, apiKey: "sk-test" });
});

afterEach(async () => {
  await llm.close();
});

describe("responses transport: streaming assembly", () => {
  it("streams text and reasoning, keeps the reasoning item, and maps usage with cached and reasoning tokens", async () => {
    llm.enqueue(
      reply()
        .reasoning("Thinking it through.")
        .text("Hello there, how can I help?")
        .usage({ prompt: 120, completion: 30, cached: 100, reasoning: 12 }),
    );
    const events = await collect(transport.stream(request));
    expect(transport.apiMode).toBe("codex_responses");
    expect(textOf(events, "text_delta").length).toBeGreaterThan(1);
    expect(textOf(events, "text_delta").join("")).toBe("Hello there, how can I help?");
    expect(textOf(events, "reasoning_delta").join("")).toBe("Thinking it through.");
    expect(events.filter((e) => e.type === "finish")).toHaveLength(1);
    expect(events.find((e) => e.type === "usage")).toEqual({
      type: "usage",
      usage: { inputTokens: 120, outputTokens: 30, cacheReadTokens: 100, reasoningTokens: 12 },
    });
    const finish = finishOf(events);
    expect(finish.reason).toBe("stop");
    expect(finish.message).toEqual({
      role: "assistant",
      content: "Hello there, how can I help?",
      reasoning: "Thinking it through.",
      finish_reason: "stop",
      codex_reasoning_items: [
        {
          id: "rs_fake_0",
          type: "reasoning",
          summary: [{ type: "summary_text", text: "Thinking it through." }],
          encrypted_content: fakeEncryptedContent("Thinking it through."),
        },
      ],
    });
  });

  it("sends the request to /v1/responses in the Responses shape with a bearer key", async () => {
    llm.enqueue(reply().text("ok"));
    await collect(transport.stream({ ...request, reasoningEffort: "low", maxTokens: 50 }));
    const recorded = llm.chatRequests[0];
    expect(recorded?.path).toBe("/v1/responses");
    expect(recorded?.headers["authorization"]).toBe("Bearer sk-test");
    expect(recorded?.body).toMatchObject({
      model: "gpt-test",
      instructions: "Be brief.",
      input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "hello" }] }],
      store: false,
      include: ["reasoning.encrypted_content"],
      stream: true,
      max_output_tokens: 50,
      reasoning: { effort: "low", summary: "auto" },
    });
  });

  it("assembles parallel function calls whose arguments arrive split, keeping call_id as the id", async () => {
    llm.enqueue(
      reply()
        .text("Let me check.")
        .toolCall("read_file", { path: "a.txt", limit: 200 }, "call_a")
        .toolCall("terminal", { command: "ls -la /tmp && echo done" }),
    );
    const events = await collect(transport.stream(request));
    const deltas = events.filter((e) => e.type === "tool_call_delta");
    expect(deltas.filter((d) => d.argumentsDelta).length).toBeGreaterThan(2);
    expect(deltas[0]).toMatchObject({ index: 0, id: "call_a", name: "read_file" });
    const calls = events.flatMap((e) => (e.type === "tool_call" ? [e] : []));
    expect(calls.map((c) => c.index)).toEqual([0, 1]);
    const finish = finishOf(events);
    expect(finish.reason).toBe("tool_calls");
    expect(finish.message.content).toBe("Let me check.");
    expect(finish.message.tool_calls).toEqual([
      {
        id: "call_a",
        type: "function",
        function: { name: "read_file", arguments: JSON.stringify({ path: "a.txt", limit: 200 }) },
      },
      {
        id: "call_fake_1",
        type: "function",
        function: { name: "terminal", arguments: JSON.stringify({ command: "ls -la /tmp && echo done" }) },
      },
    ]);
  });

  it("reports response.incomplete for max_output_tokens as finish length, keeping the partial text", async () => {
    llm.enqueue(
      reply().text("A long answer that gets cut").finish("length").usage({ prompt: 5, completion: 9 }),
    );
    const finish = finishOf(await collect(transport.stream(request)));
    expect(finish.reason).toBe("length");
    expect(finish.message.content).toBe("A long answer that gets cut");
  });

  it("reports an incomplete response cut by the content filter as content_filter", async () => {
    llm.enqueue(reply().text("Partial").finish("content_filter"));
    expect(finishOf(await collect(transport.stream(request))).reason).toBe("content_filter");
  });

  it("keeps a function call cut off by the token limit under a length finish (the agent answers it, never runs it)", async () => {
    llm.enqueue(reply().text("Calling").toolCall("t", '{"a": "unfinish').finish("length"));
    const finish = finishOf(await collect(transport.stream(request)));
    expect(finish.reason).toBe("length");
    expect(finish.message.tool_calls?.map((c) => c.function)).toEqual([
      { name: "t", arguments: '{"a": "unfinish' },
    ]);
  });

  it("the fake server's non-streaming JSON is a Responses object", async () => {
    llm.enqueue(
      reply().reasoning("r").text("hi").toolCall("t", { a: 1 }, "call_x").usage({ prompt: 3, completion: 1 }),
    );
    const res = await fetch(`${llm.url}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", input: "hi" }),
    });
    expect(await res.json()).toMatchObject({
      object: "response",
      status: "completed",
      output: [
        { type: "reasoning", encrypted_content: fakeEncryptedContent("r") },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "hi" }] },
        { type: "function_call", call_id: "call_x", name: "t", arguments: '{"a":1}' },
      ],
      usage: { input_tokens: 3, output_tokens: 1, input_tokens_details: { cached_tokens: 0 } },
    });
  });
});

describe("responses transport: errors", () => {
  it("maps 429 with retry-after to retryAfterMs and exposes the response headers, with one request", async () => {
    llm.enqueue(
      httpError(
        429,
        { error: { message: "Rate limit reached", type: "requests", code: "rate_limit_exceeded" } },
        { "retry-after": "7", "x-ratelimit-reset-requests": "6.5s" },
      ),
    );
    const { error } = await failure(transport.stream(request));
    expect(error).toBeInstanceOf(ProviderError);
    const e = error as ProviderError;
    expect(e.status).toBe(429);
    expect(e.retryAfterMs).toBe(7000);
    expect(e.transport).toBe(false);
    expect(e.headers?.["x-ratelimit-reset-requests"]).toBe("6.5s");
    expect(e.message).toContain("Rate limit reached");
    expect(llm.chatRequests).toHaveLength(1);
  });

  it("keeps the body of a 400 context_length_exceeded for the classifier", async () => {
    llm.enqueue(
      httpError(400, {
        error: {
          message: "Your input exceeds the context window of this model.",
          type: "invalid_request_error",
          param: "input",
          code: "context_length_exceeded",
        },
      }),
    );
    const { error } = await failure(transport.stream(request));
    const e = error as ProviderError;
    expect(e.status).toBe(400);
    expect(e.body).toContain("context_length_exceeded");
    expect(e.message).toContain("exceeds the context window");
    expect(e.retryAfterMs).toBeUndefined();
  });

  it("treats a connection dropped mid-stream as a partial transport error", async () => {
    llm.enqueue(disconnectMidStream(5));
    const { error, events } = await failure(transport.stream(request));
    expect(textOf(events, "text_delta").join("")).not.toBe("");
    expect(error).toMatchObject({ name: "ProviderError", transport: true, partial: true });
  });

  it("treats a stream that ends cleanly without response.completed as dropped", async () => {
    llm.enqueue(truncatedStream(5));
    const { error } = await failure(transport.stream(request));
    expect(error).toMatchObject({ transport: true, partial: true });
    expect((error as Error).message).toContain("response.completed");
  });

  it("a dropped stream before any content is a transport error that is not partial", async () => {
    llm.enqueue(disconnectMidStream(1));
    const { error, events } = await failure(transport.stream(request));
    expect(events).toEqual([]);
    expect(error).toMatchObject({ transport: true, partial: false });
  });

  it("times out a server that never answers, as a transport error", async () => {
    transport = createResponsesTransport({ baseUrl: llm.url, stallTimeoutMs: 150 });
    llm.enqueue(hang());
    const { error } = await failure(transport.stream(request));
    expect(error).toMatchObject({ name: "ProviderError", transport: true, partial: false });
    expect((error as Error).message).toContain("timed out");
    expect((error as Error).cause).toMatchObject({ name: "TimeoutError" });
  });

  it("cuts a stream that stalls after it started, as a partial transport error", async () => {
    const encoder = new TextEncoder();
    let requestSignal: AbortSignal | null | undefined;
    const stalledFetch: typeof fetch = async (_url, init) => {
      requestSignal = init?.signal;
      return new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            const events = [
              { type: "response.created", response: { id: "r", status: "in_progress", output: [] } },
              { type: "response.output_text.delta", item_id: "msg_1", output_index: 0, delta: "Hel" },
            ];
            for (const [i, e] of events.entries()) {
              controller.enqueue(
                encoder.encode(`event: ${e.type}\ndata: ${JSON.stringify({ ...e, sequence_number: i })}\n\n`),
              );
            }
            // ...and nothing more, ever.
          },
        }),
        { status: 200, headers: { "content-type": "text/event-stream" } },
      );
    };
    transport = createResponsesTransport({
      baseUrl: "http://responses.invalid/v1",
      stallTimeoutMs: 150,
      fetch: stalledFetch,
    });
    const { error, events } = await failure(transport.stream(request));
    expect(textOf(events, "text_delta")).toEqual(["Hel"]);
    expect(error).toMatchObject({ name: "ProviderError", transport: true, partial: true });
    expect((error as Error).message).toContain("stalled");
    // The request's own signal is aborted, which is what makes a real fetch close the socket.
    expect(requestSignal?.aborted).toBe(true);
  });

  it("maps an in-stream error event and response.failed to ProviderErrors with a status from their code", async () => {
    const sse =
      (events: object[]): typeof fetch =>
      async () =>
        new Response(
          events
            .map(
              (e, i) =>
                `event: ${(e as { type: string }).type}\ndata: ${JSON.stringify({ ...e, sequence_number: i })}\n\n`,
            )
            .join(""),
          { status: 200, headers: { "content-type": "text/event-stream" } },
        );
    const failed = createResponsesTransport({
      baseUrl: "http://responses.invalid/v1",
      fetch: sse([
        { type: "response.created", response: { id: "r", status: "in_progress", output: [] } },
        { type: "response.output_text.delta", item_id: "m", output_index: 0, delta: "Hi" },
        {
          type: "response.failed",
          response: {
            id: "r",
            status: "failed",
            output: [],
            error: { code: "server_error", message: "The model crashed." },
          },
        },
      ]),
    });
    const first = await failure(failed.stream(request));
    expect(first.error).toMatchObject({
      name: "ProviderError",
      status: 500,
      transport: false,
      partial: true,
    });
    expect((first.error as ProviderError).body).toContain("server_error");
    expect((first.error as Error).message).toContain("The model crashed.");

    const errored = createResponsesTransport({
      baseUrl: "http://responses.invalid/v1",
      fetch: sse([{ type: "error", code: "rate_limit_exceeded", message: "Slow down.", param: null }]),
    });
    const second = await failure(errored.stream(request));
    expect(second.error).toMatchObject({ status: 429, partial: false });
    expect((second.error as ProviderError).body).toContain("rate_limit_exceeded");
  });

  it("reports an unreachable server as a transport error that is not partial", async () => {
    const url = llm.url;
    await llm.close();
    const { error } = await failure(createResponsesTransport({ baseUrl: url }).stream(request));
    expect(error).toMatchObject({ transport: true, partial: false });
    llm = await startFakeLlm();
  });

  it("stops a hanging request promptly when the signal aborts, without wrapping the abort", async () => {
    llm.enqueue(hang());
    const controller = new AbortController();
    const pending = failure(transport.stream(request, controller.signal));
    await llm.waitForRequests(1);
    controller.abort();
    const { error } = await pending;
    expect(error).toMatchObject({ name: "AbortError" });
  });

  it("stops mid-stream when aborted between events", async () => {
    llm.enqueue(reply().text("one two three four five six seven"));
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
    expect(caught).toMatchObject({ name: "AbortError" });
    expect(events.some((e) => e.type === "finish")).toBe(false);
  });
});
