import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AgentEvent } from "../../../src/agent/events.js";
import { runLoop } from "../../../src/agent/loop.js";
import { classifyApiError } from "../../../src/ai/error-classifier.js";
import {
  bedrockAuth,
  createBedrockTransport,
  endpointFor,
  resolveRegion,
} from "../../../src/ai/transports/bedrock-converse.js";
import { REASONING_REDACTED, REASONING_TEXT } from "../../../src/ai/transports/bedrock-convert.js";
import { type ChatRequest, type Message, ProviderError, type ToolSchema } from "../../../src/ai/types.js";
import { disconnectMidStream, hang, reply, truncatedStream } from "../../support/fake-llm.js";
import { fakeSignature } from "../../support/fake-llm-anthropic.js";
import {
  awsError,
  bedrockReply,
  type FakeBedrock,
  startFakeBedrock,
  streamException,
} from "../../support/fake-llm-bedrock.js";
import { collect, failure, finishOf, textOf } from "../../support/stream-helpers.js";

const MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
/** Fake static credentials: the SDK signs with them and never looks further (no ~/.aws, no IMDS). */
const ENV = {
  AWS_ACCESS_KEY_ID: "AKIDFAKEEXAMPLE",
  AWS_SECRET_ACCESS_KEY: "fake-secret",
  AWS_REGION: "eu-west-3",
};

const request: ChatRequest = {
  model: MODEL,
  messages: [
    { role: "system", content: "You are Hermes." },
    { role: "user", content: "hello" },
  ],
};

const terminal: ToolSchema = {
  type: "function",
  function: {
    name: "terminal",
    description: "Run a shell command",
    parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
  },
};

let bedrock: FakeBedrock;
const bodyOf = (i = 0) => bedrock.requests[i]?.body as Record<string, unknown>;

beforeEach(async () => {
  bedrock = await startFakeBedrock();
});

afterEach(async () => {
  await bedrock.close();
});

describe.each([true, false])("bedrock transport over HTTP (stream: %s)", (stream) => {
  const transport = () => createBedrockTransport({ baseUrl: bedrock.url, env: ENV, stream });

  it("returns text, reasoning with its signature, and usage with cache reads and writes", async () => {
    bedrock.enqueue(
      bedrockReply()
        .reasoning("Thinking it through.")
        .text("Hello there, how can I help?")
        .usage({ prompt: 1200, completion: 9, cached: 1000 })
        .cacheWrite(150),
    );
    const events = await collect(transport().stream(request));
    expect(textOf(events, "text_delta").join("")).toBe("Hello there, how can I help?");
    expect(textOf(events, "reasoning_delta").join("")).toBe("Thinking it through.");
    if (stream) expect(textOf(events, "text_delta").length).toBeGreaterThan(1);
    expect(events.filter((e) => e.type === "finish")).toHaveLength(1);
    expect(events.find((e) => e.type === "usage")).toEqual({
      type: "usage",
      usage: { inputTokens: 1200, outputTokens: 9, cacheReadTokens: 1000, cacheWriteTokens: 150 },
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
            type: REASONING_TEXT,
            text: "Thinking it through.",
            signature: fakeSignature("Thinking it through."),
          },
        ],
        finish_reason: "stop",
      },
    });
  });

  it("posts to the model's route, signed with SigV4 for the region, with cache points on a Claude request", async () => {
    bedrock.enqueue(reply().text("ok"));
    await collect(transport().stream(request));
    const recorded = bedrock.requests[0];
    expect(recorded?.operation).toBe(stream ? "converse-stream" : "converse");
    expect(recorded?.modelId).toBe(MODEL);
    expect(recorded?.headers["authorization"]).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDFAKEEXAMPLE\/\d{8}\/eu-west-3\/bedrock\/aws4_request/,
    );
    expect(recorded?.headers["amz-sdk-request"]).toMatch(/max=1/);
    expect(bodyOf()).toEqual({
      system: [{ text: "You are Hermes." }, { cachePoint: { type: "default" } }],
      inferenceConfig: { maxTokens: 16384 },
      messages: [{ role: "user", content: [{ text: "hello" }, { cachePoint: { type: "default" } }] }],
    });
  });

  it("assembles parallel tool calls whose input arrives split across deltas", async () => {
    bedrock.enqueue(
      reply()
        .text("Let me look.")
        .toolCall("read_file", { path: "src/main.ts", offset: 10 }, "tooluse_a")
        .toolCall("terminal", { command: "ls -la /tmp" }, "tooluse_b"),
    );
    const events = await collect(transport().stream({ ...request, tools: [terminal] }));
    const calls = events.flatMap((e) => (e.type === "tool_call" ? [e] : []));
    expect(
      calls.map((c) => [c.index, c.call.id, c.call.function.name, JSON.parse(c.call.function.arguments)]),
    ).toEqual([
      [0, "tooluse_a", "read_file", { path: "src/main.ts", offset: 10 }],
      [1, "tooluse_b", "terminal", { command: "ls -la /tmp" }],
    ]);
    if (stream) {
      expect(
        events.filter((e) => e.type === "tool_call_delta" && e.argumentsDelta).length,
      ).toBeGreaterThanOrEqual(6);
    }
    expect(finishOf(events)).toMatchObject({ reason: "tool_calls", message: { content: "Let me look." } });
  });

  it.each([
    ["length", "length"],
    ["stop_sequence", "stop"],
    ["guardrail_intervened", "content_filter"],
    ["content_filter", "content_filter"],
  ])("maps the scripted finish %s to %s", async (scripted, expected) => {
    bedrock.enqueue(reply().text("partial answer").finish(scripted));
    expect(finishOf(await collect(transport().stream(request))).reason).toBe(expected);
  });

  it("maps a 429 ThrottlingException to a ProviderError that classifies as rate_limit, with one request only", async () => {
    bedrock.enqueue(
      awsError(429, "ThrottlingException", "Too many requests, please wait before trying again.", {
        "retry-after": "3",
      }),
    );
    const { error, events } = await failure(transport().stream(request));
    expect(events).toEqual([]);
    expect(error).toBeInstanceOf(ProviderError);
    const e = error as ProviderError;
    expect(e).toMatchObject({ status: 429, transport: false, partial: false, retryAfterMs: 3000 });
    expect(JSON.parse(e.body ?? "")).toEqual({
      __type: "ThrottlingException",
      message: "Too many requests, please wait before trying again.",
    });
    expect(e.message).toContain("Too many requests");
    expect(e.baseUrl).toBe(bedrock.url);
    expect(classifyApiError(e)).toMatchObject({ reason: "rate_limit", retryable: true, retryAfterMs: 3000 });
    expect(bedrock.requests).toHaveLength(1);
  });

  it.each([
    [400, "ValidationException", "Input is too long for requested model.", "context_overflow"],
    [400, "ValidationException", "The provided model identifier is invalid.", "model_not_found"],
    [
      403,
      "AccessDeniedException",
      "You don't have access to the model with the specified model ID.",
      "auth_permanent",
    ],
    [503, "ServiceUnavailableException", "Bedrock is unable to process your request.", "overloaded"],
    [424, "ModelErrorException", "The model returned an error.", "server_error"],
  ])("maps HTTP %s %s to a ProviderError classified as %s", async (status, type, message, reason) => {
    bedrock.enqueue(awsError(status, type, message));
    const { error } = await failure(transport().stream(request));
    expect(error).toMatchObject({ status, transport: false });
    expect(classifyApiError(error).reason).toBe(reason);
  });

  it("treats a connection dropped mid-response as a transport error", async () => {
    bedrock.enqueue(disconnectMidStream(4));
    const { error, events } = await failure(transport().stream(request));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ transport: true, partial: stream });
    if (stream) expect(textOf(events, "text_delta").join("")).not.toBe("");
    expect(events.some((e) => e.type === "finish")).toBe(false);
    expect(classifyApiError(error).retryable).toBe(true);
  });

  it("reports an answer cut short without an error as a transport error", async () => {
    bedrock.enqueue(truncatedStream(4));
    const { error, events } = await failure(transport().stream(request));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ transport: true, partial: stream });
    if (stream) expect((error as Error).message).toContain("no messageStop");
    expect(events.some((e) => e.type === "finish")).toBe(false);
  });

  it("reports malformed model output as a retryable model error", async () => {
    bedrock.enqueue(reply().text("garbled").finish("malformed_tool_use"));
    const { error } = await failure(transport().stream(request));
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as Error).message).toContain("malformed_tool_use");
    expect(classifyApiError(error)).toMatchObject({ reason: "server_error", retryable: true });
  });
});

describe("bedrock transport: in-stream failures and aborts", () => {
  const transport = () => createBedrockTransport({ baseUrl: bedrock.url, env: ENV });

  it.each([
    ["throttlingException", "Too many tokens, please wait.", 429, "rate_limit"],
    ["serviceUnavailableException", "Service is temporarily unavailable.", 503, "overloaded"],
    ["modelStreamErrorException", "The model stream failed.", 424, "server_error"],
    ["internalServerException", "Internal failure.", 500, "server_error"],
    ["validationException", "Input is too long for requested model.", 400, "context_overflow"],
  ])(
    "maps an in-stream %s after some text to status %s, partial, classified %s",
    async (type, message, status, reason) => {
      bedrock.enqueue(streamException(type, message, 3));
      const { error, events } = await failure(transport().stream(request));
      expect(error).toBeInstanceOf(ProviderError);
      expect(error).toMatchObject({ status, partial: true, transport: false });
      expect((error as Error).message).toContain(message);
      expect(textOf(events, "text_delta").join("")).not.toBe("");
      expect(classifyApiError(error).reason).toBe(reason);
    },
  );

  it("marks an in-stream exception before any content as not partial", async () => {
    bedrock.enqueue(streamException("throttlingException", "slow down", 1));
    const { error } = await failure(transport().stream(request));
    expect(error).toMatchObject({ status: 429, partial: false });
  });

  it("honours an abort signal while waiting for the answer", async () => {
    bedrock.enqueue(hang());
    const controller = new AbortController();
    const pending = failure(transport().stream(request, controller.signal));
    await bedrock.waitForRequests(1);
    controller.abort();
    const { error } = await pending;
    expect((error as Error).name).toBe("AbortError");
  });

  it("honours an abort signal in the middle of a stream", async () => {
    bedrock.enqueue(reply().text("A long answer that the user interrupts part way through."));
    const controller = new AbortController();
    const events: string[] = [];
    let caught: unknown;
    try {
      for await (const event of transport().stream(request, controller.signal)) {
        events.push(event.type);
        if (event.type === "text_delta") controller.abort();
      }
    } catch (error) {
      caught = error;
    }
    expect((caught as Error).name).toBe("AbortError");
    expect(events).toEqual(["text_delta"]);
  });

  it("does not start a request when the signal is already aborted", async () => {
    const { error } = await failure(transport().stream(request, AbortSignal.abort()));
    expect((error as Error).name).toBe("AbortError");
    expect(bedrock.requests).toHaveLength(0);
  });

  it("times out with a transport error when the server sends nothing for timeoutMs", async () => {
    bedrock.enqueue(hang());
    const quick = createBedrockTransport({ baseUrl: bedrock.url, env: ENV, timeoutMs: 150 });
    const { error } = await failure(quick.stream(request));
    expect(error).toMatchObject({ transport: true, partial: false });
    expect((error as Error).message).toContain("timed out");
    expect(classifyApiError(error).reason).toBe("timeout");
  });

  it("cuts a stream whose response never starts within stallTimeoutMs, as a retryable stall", async () => {
    bedrock.enqueue(hang());
    const quick = createBedrockTransport({ baseUrl: bedrock.url, env: ENV, stallTimeoutMs: 150 });
    const started = Date.now();
    const { error } = await failure(quick.stream(request));
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(error).toMatchObject({ transport: true, partial: false, stalled: true });
    expect((error as Error).message).toMatch(
      /sent no response headers within 0.2 s.*agent.stream_stall_timeout/,
    );
  });

  it("reports a refused connection as a transport error", async () => {
    const closed = await startFakeBedrock();
    await closed.close();
    const { error } = await failure(
      createBedrockTransport({ baseUrl: closed.url, env: ENV }).stream(request),
    );
    expect(error).toMatchObject({ transport: true, partial: false });
    expect((error as Error).message).toContain("Could not connect");
  });
});

describe("bedrock transport: configuration", () => {
  it("sends a Bedrock API key as a bearer token instead of signing", async () => {
    bedrock.enqueue(reply().text("ok"));
    const transport = createBedrockTransport({
      baseUrl: bedrock.url,
      env: { ...ENV, AWS_BEARER_TOKEN_BEDROCK: "bedrock-api-key-123" },
    });
    await collect(transport.stream(request));
    expect(bedrock.requests[0]?.headers["authorization"]).toBe("Bearer bedrock-api-key-123");
  });

  it("signs with a session token and sends extra headers, signed along", async () => {
    bedrock.enqueue(reply().text("ok"));
    const transport = createBedrockTransport({
      baseUrl: bedrock.url,
      region: "ap-south-1",
      env: { ...ENV, AWS_SESSION_TOKEN: "session-tok" },
      headers: { "x-hermes-test": "yes" },
    });
    await collect(transport.stream(request));
    const headers = bedrock.requests[0]?.headers ?? {};
    expect(headers["x-amz-security-token"]).toBe("session-tok");
    expect(headers["x-hermes-test"]).toBe("yes");
    expect(headers["authorization"]).toContain("/ap-south-1/bedrock/aws4_request");
    expect(headers["authorization"]).toContain("x-hermes-test");
  });

  it("sends no cache points to a model other than Claude, and the guardrail when configured", async () => {
    bedrock.enqueue(reply().text("ok"));
    const transport = createBedrockTransport({
      baseUrl: bedrock.url,
      env: ENV,
      guardrail: { guardrailIdentifier: "gr-abc", guardrailVersion: "1" },
    });
    await collect(transport.stream({ ...request, model: "amazon.nova-pro-v1:0" }));
    expect(bedrock.requests[0]?.modelId).toBe("amazon.nova-pro-v1:0");
    expect(JSON.stringify(bodyOf())).not.toContain("cachePoint");
    expect(bodyOf()["guardrailConfig"]).toEqual({ guardrailIdentifier: "gr-abc", guardrailVersion: "1" });
  });

  it.each([
    [{ region: "eu-central-1", baseUrl: "https://bedrock-runtime.us-west-2.amazonaws.com" }, "eu-central-1"],
    [
      { baseUrl: "https://bedrock-runtime.us-west-2.amazonaws.com", env: { AWS_REGION: "eu-west-1" } },
      "us-west-2",
    ],
    [{ baseUrl: "https://bedrock-runtime-fips.us-gov-west-1.amazonaws.com/" }, "us-gov-west-1"],
    [{ baseUrl: "https://vpce-0a1b.bedrock-runtime.ap-northeast-1.vpce.amazonaws.com" }, "ap-northeast-1"],
    [{ baseUrl: "http://127.0.0.1:9000", env: { AWS_REGION: "eu-west-1" } }, "eu-west-1"],
    [{ env: { AWS_DEFAULT_REGION: "ca-central-1" } }, "ca-central-1"],
    [{ env: {} }, "us-east-1"],
  ])("resolveRegion(%j) = %s", (options, expected) => {
    expect(resolveRegion(options)).toBe(expected);
  });

  it.each([
    [undefined, undefined],
    ["https://bedrock-runtime.us-east-1.amazonaws.com/", undefined],
    ["https://bedrock-runtime.cn-north-1.amazonaws.com.cn", undefined],
    ["http://127.0.0.1:9000/", "http://127.0.0.1:9000"],
    [
      "https://vpce-0a1b.bedrock-runtime.us-east-1.vpce.amazonaws.com",
      "https://vpce-0a1b.bedrock-runtime.us-east-1.vpce.amazonaws.com",
    ],
  ])("endpointFor(%s) = %s", (baseUrl, expected) => {
    expect(endpointFor(baseUrl)).toBe(expected);
  });

  it.each([
    [
      { AWS_BEARER_TOKEN_BEDROCK: "k", AWS_ACCESS_KEY_ID: "a", AWS_SECRET_ACCESS_KEY: "s" },
      { kind: "bearer", token: "k" },
    ],
    [
      { AWS_ACCESS_KEY_ID: "a", AWS_SECRET_ACCESS_KEY: "s", AWS_SESSION_TOKEN: "t" },
      { kind: "static", accessKeyId: "a", secretAccessKey: "s", sessionToken: "t" },
    ],
    [
      { AWS_ACCESS_KEY_ID: "a", AWS_PROFILE: "work" },
      { kind: "chain", profile: "work" },
    ],
    [{ AWS_BEARER_TOKEN_BEDROCK: "  " }, { kind: "chain" }],
  ])("bedrockAuth(%j)", (env, expected) => {
    expect(bedrockAuth(env)).toEqual(expected);
  });
});

describe("fake Bedrock", () => {
  it.each([
    [[{ role: "assistant", content: [{ text: "hi" }] }], "must start with a user message"],
    [[{ role: "user", content: [{ text: " " }] }], "is blank"],
    [
      [
        { role: "user", content: [{ text: "hi" }] },
        { role: "assistant", content: [{ toolUse: { toolUseId: "t1", name: "x", input: {} } }] },
        { role: "user", content: [{ text: "no result" }] },
      ],
      "Expected toolResult blocks",
    ],
  ])("rejects what Bedrock rejects with a 400 ValidationException (%#)", async (messages, expected) => {
    const response = await fetch(`${bedrock.url}/model/${encodeURIComponent(MODEL)}/converse`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ messages }),
    });
    expect(response.status).toBe(400);
    expect(response.headers.get("x-amzn-errortype")).toMatch(/^ValidationException:/);
    expect(((await response.json()) as { message: string }).message).toContain(expected);
  });
});

describe("bedrock transport in the agent loop", () => {
  it("carries toolUse → toolResult and the signed reasoning into the next request", async () => {
    const transport = createBedrockTransport({ baseUrl: bedrock.url, env: ENV });
    bedrock.enqueue(
      bedrockReply()
        .redacted(Buffer.from("opaque").toString("base64"))
        .reasoning("I should list the directory.")
        .text("Listing.")
        .toolCall("terminal", { command: "ls" }, "tooluse_1")
        .usage({ prompt: 50, completion: 10 })
        .cacheWrite(40),
      reply()
        .reasoning("The listing shows a README.")
        .text("There is a README.")
        .usage({ prompt: 80, completion: 6, cached: 50 }),
    );
    const messages: Message[] = [{ role: "user", content: "What is here?" }];
    const events: AgentEvent[] = [];
    const executed: unknown[] = [];
    const result = await runLoop(
      messages,
      {
        transport,
        model: MODEL,
        tools: [terminal],
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
    expect(result.usage).toMatchObject({
      inputTokens: 130,
      outputTokens: 16,
      cacheReadTokens: 50,
      cacheWriteTokens: 40,
    });
    expect(executed).toEqual([{ command: "ls" }]);
    const signature = fakeSignature("I should list the directory.");
    expect(messages[1]?.reasoning_details).toEqual([
      { type: REASONING_REDACTED, data: Buffer.from("opaque").toString("base64") },
      { type: REASONING_TEXT, text: "I should list the directory.", signature },
    ]);

    const second = bodyOf(1);
    expect(second["toolConfig"]).toEqual({
      tools: [
        {
          toolSpec: {
            name: "terminal",
            description: "Run a shell command",
            inputSchema: { json: terminal.function.parameters },
          },
        },
      ],
    });
    // Three messages: each is one of the last three, so each ends with a cache point. The SDK
    // sends the redacted reasoning bytes as base64.
    expect(second["messages"]).toEqual([
      { role: "user", content: [{ text: "What is here?" }, { cachePoint: { type: "default" } }] },
      {
        role: "assistant",
        content: [
          { reasoningContent: { redactedContent: Buffer.from("opaque").toString("base64") } },
          { reasoningContent: { reasoningText: { text: "I should list the directory.", signature } } },
          { text: "Listing." },
          { toolUse: { toolUseId: "tooluse_1", name: "terminal", input: { command: "ls" } } },
          { cachePoint: { type: "default" } },
        ],
      },
      {
        role: "user",
        content: [
          {
            toolResult: {
              toolUseId: "tooluse_1",
              content: [{ text: JSON.stringify({ output: "README.md" }) }],
            },
          },
          { cachePoint: { type: "default" } },
        ],
      },
    ]);
    expect(events.filter((e) => e.type === "reasoning_delta").length).toBeGreaterThan(1);
  });
});
