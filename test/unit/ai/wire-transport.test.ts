/**
 * What the one transport skeleton (`createWireTransport`) guarantees on every wire, checked through
 * the four real transports against the loopback fakes: each failure is a `ProviderError` that
 * names the endpoint in its declared `baseUrl` (so the classifier never reads it from message
 * text), an HTTP answer keeps its status, headers and Retry-After, an error inside a 200 gets the
 * status it stands for, a stream that ends early or goes silent says so.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { classifyApiError } from "../../../src/ai/error-classifier.js";
import { apiRoot, createAnthropicTransport } from "../../../src/ai/transports/anthropic-messages.js";
import { createBedrockTransport } from "../../../src/ai/transports/bedrock-converse.js";
import { createChatCompletionsTransport } from "../../../src/ai/transports/chat-completions.js";
import { createResponsesTransport } from "../../../src/ai/transports/codex-responses.js";
import { type ChatRequest, ProviderError, type Transport } from "../../../src/ai/types.js";
import {
  type FakeLlm,
  hang,
  httpError,
  type ScriptedReply,
  startFakeLlm,
  streamError,
  truncatedStream,
} from "../../support/fake-llm.js";
import {
  awsError,
  type FakeBedrock,
  startFakeBedrock,
  streamException,
} from "../../support/fake-llm-bedrock.js";
import { failure } from "../../support/stream-helpers.js";

type BedrockScripted = Parameters<FakeBedrock["enqueue"]>[0];

let llm: FakeLlm;
let bedrock: FakeBedrock;
/** A loopback port nothing listens on. */
let refusedUrl: string;

beforeAll(async () => {
  llm = await startFakeLlm();
  bedrock = await startFakeBedrock();
  const closed = await startFakeLlm();
  refusedUrl = closed.url;
  await closed.close();
});
afterAll(async () => {
  await llm.close();
  await bedrock.close();
});

const request: ChatRequest = {
  model: "claude-sonnet-4-5",
  messages: [{ role: "user", content: "hi" }],
};
const RATE_HEADERS = { "retry-after": "2", "x-ratelimit-remaining-requests": "0" };

interface Wire {
  name: string;
  /** A transport to `url` (the fake's URL, or the refused one); a generous stall window unless given. */
  make: (url: string, stallMs?: number) => Transport;
  /** The `baseUrl` its errors must carry for `url`. */
  endpoint: (url: string) => string;
  enqueue: (scripted: ScriptedReply | BedrockScripted) => void;
  url: () => string;
  rateLimited: () => ScriptedReply | BedrockScripted;
  inBandRateLimit: () => ScriptedReply | BedrockScripted;
}

const STALL_MS = 150;
/** Long enough that a loaded machine never trips it where no stall is scripted. */
const SLOW_MS = 30_000;
const ENV = {
  AWS_ACCESS_KEY_ID: "AKIDFAKEEXAMPLE",
  AWS_SECRET_ACCESS_KEY: "fake-secret",
  AWS_REGION: "eu-west-3",
};

const wires: Wire[] = [
  {
    name: "chat completions",
    make: (url, stallMs = SLOW_MS) =>
      createChatCompletionsTransport({ baseUrl: url, stallTimeoutMs: stallMs }),
    endpoint: (url) => url,
    enqueue: (s) => llm.enqueue(s as ScriptedReply),
    url: () => llm.url,
    rateLimited: () => httpError(429, undefined, RATE_HEADERS),
    inBandRateLimit: () => streamError({ error: { code: 429, message: "Rate limit exceeded" } }),
  },
  {
    name: "anthropic messages",
    make: (url, stallMs = SLOW_MS) =>
      createAnthropicTransport({ baseUrl: url, apiKey: "sk-ant-test", stallTimeoutMs: stallMs }),
    endpoint: (url) => apiRoot(url),
    enqueue: (s) => llm.enqueue(s as ScriptedReply),
    url: () => llm.url,
    rateLimited: () =>
      httpError(
        429,
        { type: "error", error: { type: "rate_limit_error", message: "slow down" } },
        RATE_HEADERS,
      ),
    inBandRateLimit: () =>
      streamError({ type: "error", error: { type: "rate_limit_error", message: "Rate limit exceeded" } }),
  },
  {
    name: "responses",
    make: (url, stallMs = SLOW_MS) =>
      createResponsesTransport({ baseUrl: url, apiKey: "sk-test", stallTimeoutMs: stallMs }),
    endpoint: (url) => url,
    enqueue: (s) => llm.enqueue(s as ScriptedReply),
    url: () => llm.url,
    rateLimited: () => httpError(429, undefined, RATE_HEADERS),
    inBandRateLimit: () =>
      streamError({ type: "error", code: "rate_limit_exceeded", message: "Rate limit reached" }),
  },
  {
    name: "bedrock converse",
    make: (url, stallMs = SLOW_MS) =>
      createBedrockTransport({ baseUrl: url, env: ENV, stallTimeoutMs: stallMs }),
    endpoint: (url) => url,
    enqueue: (s) => bedrock.enqueue(s),
    url: () => bedrock.url,
    rateLimited: () => awsError(429, "ThrottlingException", "Too many requests", RATE_HEADERS),
    inBandRateLimit: () => streamException("throttlingException", "Too many requests"),
  },
];

async function failWith(
  wire: Wire,
  scripted: ScriptedReply | BedrockScripted,
  stallMs?: number,
): Promise<ProviderError> {
  wire.enqueue(scripted);
  const { error } = await failure(wire.make(wire.url(), stallMs).stream(request));
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

describe.each(wires)("every failure on the $name wire", (wire) => {
  it("an HTTP 429: status, headers and Retry-After on the error, and the endpoint as baseUrl", async () => {
    const error = await failWith(wire, wire.rateLimited());
    expect(error).toMatchObject({ status: 429, retryAfterMs: 2000, transport: false, partial: false });
    expect(error.baseUrl).toBe(wire.endpoint(wire.url()));
    expect(error.headers?.["retry-after"]).toBe("2");
    expect(error.headers?.["x-ratelimit-remaining-requests"]).toBe("0");
    expect(classifyApiError(error)).toMatchObject({
      reason: "rate_limit",
      retryAfterMs: 2000,
      baseUrl: wire.endpoint(wire.url()),
    });
  });

  it("a rate limit inside a 200 stream: the status it stands for, and the endpoint", async () => {
    const error = await failWith(wire, wire.inBandRateLimit());
    expect(error.status).toBe(429);
    expect(error.baseUrl).toBe(wire.endpoint(wire.url()));
    expect(classifyApiError(error).reason).toBe("rate_limit");
  });

  it("a stream that ends without its finishing event: a transport error naming what was missing", async () => {
    const error = await failWith(wire, truncatedStream(3));
    expect(error).toMatchObject({ transport: true, stalled: false });
    expect(error.message).toMatch(
      /ended before the model finished its answer \(no [^)]+\); the connection probably dropped/,
    );
    expect(error.baseUrl).toBe(wire.endpoint(wire.url()));
  });

  it("a server that never answers: cut by the one stall watchdog within the window", async () => {
    const started = Date.now();
    const error = await failWith(wire, hang(), STALL_MS);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(error).toMatchObject({ transport: true, partial: false, stalled: true });
    expect(error.message).toMatch(
      /sent no response headers within 0.2 s.*timed out.*agent.stream_stall_timeout/,
    );
    expect(error.baseUrl).toBe(wire.endpoint(wire.url()));
    expect(classifyApiError(error).reason).toBe("timeout");
  });

  it("a refused local port: the classifier tells the user nothing is listening there, from baseUrl alone", async () => {
    const { error } = await failure(wire.make(refusedUrl).stream(request));
    expect(error).toBeInstanceOf(ProviderError);
    const e = error as ProviderError;
    expect(e).toMatchObject({ transport: true, partial: false });
    expect(e.baseUrl).toBe(wire.endpoint(refusedUrl));
    const classified = classifyApiError(e);
    expect(classified.reason).toBe("local_server_down");
    expect(classified.message).toContain(`nothing is listening at ${wire.endpoint(refusedUrl)}`);
  });
});

describe("the classifier reads the endpoint only from declared fields", () => {
  it("does not recover a URL from message text (a model or a body can put any URL there)", () => {
    const error = new ProviderError("Could not connect to http://127.0.0.1:8080/v1: connect ECONNREFUSED", {
      transport: true,
      cause: Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }),
    });
    const classified = classifyApiError(error);
    expect(classified.baseUrl).toBeUndefined();
    // Without an endpoint nothing says the server is local: a refused connection is retried.
    expect(classified.reason).toBe("timeout");
    const declared = new ProviderError(error.message, {
      transport: true,
      cause: error.cause,
      baseUrl: "http://127.0.0.1:8080/v1",
    });
    expect(classifyApiError(declared)).toMatchObject({
      reason: "local_server_down",
      baseUrl: "http://127.0.0.1:8080/v1",
    });
  });
});
