/**
 * Errors delivered inside a 200 stream, through the real transports against the fake LLM: each
 * must surface as a `ProviderError` the classifier reads like the HTTP error it stands for (a
 * rate limit is a rate limit whether it came as a 429 or as an `error` event mid-stream).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { classifyApiError, type FailoverReason } from "../../../src/ai/error-classifier.js";
import { createAnthropicTransport } from "../../../src/ai/transports/anthropic-messages.js";
import { createChatCompletionsTransport } from "../../../src/ai/transports/chat-completions.js";
import { createResponsesTransport } from "../../../src/ai/transports/codex-responses.js";
import { ProviderError, type Transport } from "../../../src/ai/types.js";
import {
  type FakeLlm,
  reply,
  type ScriptedReply,
  startFakeLlm,
  streamError,
} from "../../support/fake-llm.js";

let llm: FakeLlm;
beforeAll(async () => {
  llm = await startFakeLlm();
});
afterAll(async () => {
  await llm.close();
});

async function failure(
  transport: Transport,
  scripted: ScriptedReply,
): Promise<{ error: unknown; text: string }> {
  llm.enqueue(scripted);
  let text = "";
  try {
    for await (const event of transport.stream(
      { model: "fake-model", messages: [{ role: "user", content: "hi" }] },
      new AbortController().signal,
    )) {
      if (event.type === "text_delta") text += event.text;
    }
  } catch (error) {
    return { error, text };
  }
  throw new Error("the stream ended without the scripted error");
}

const chat = () => createChatCompletionsTransport({ baseUrl: llm.url, stallTimeoutMs: 5_000 });
const anthropic = () =>
  createAnthropicTransport({
    baseUrl: llm.url.replace(/\/v1$/, ""),
    apiKey: "sk-ant-test",
    stallTimeoutMs: 5_000,
  });
const responses = () => createResponsesTransport({ baseUrl: llm.url, apiKey: "sk-test" });

interface Case {
  name: string;
  transport: () => Transport;
  scripted: () => ScriptedReply;
  reason: FailoverReason;
  status?: number;
  retryLimit?: number;
}

const partial = () => reply().text("The first part of an answer that will not finish");

const cases: Case[] = [
  {
    name: "chat completions: OpenRouter-style error chunk with code 429",
    transport: chat,
    scripted: () =>
      streamError({ error: { code: 429, message: "Rate limit exceeded: free-models-per-min" } }),
    reason: "rate_limit",
    status: 429,
  },
  {
    name: "chat completions: error chunk naming a rate limit only in words",
    transport: chat,
    scripted: () => streamError({ error: { message: "Rate limit exceeded, please slow down" } }),
    reason: "rate_limit",
  },
  {
    name: "chat completions: `event: error` carrying an overloaded error",
    transport: chat,
    scripted: () =>
      streamError({ error: { message: "The engine is currently overloaded" } }, { event: "error" }),
    reason: "overloaded",
  },
  {
    name: "chat completions: OpenRouter upstream failure after text (error + finish_reason error)",
    transport: chat,
    scripted: () =>
      streamError(
        {
          id: "gen-1",
          object: "chat.completion.chunk",
          error: { code: "server_error", message: "Provider disconnected unexpectedly" },
          choices: [{ index: 0, delta: { content: "" }, finish_reason: "error" }],
        },
        { afterChunks: 2, message: partial() },
      ),
    reason: "server_error",
    retryLimit: 1,
  },
  {
    name: "chat completions: vLLM error frame without an `error` key",
    transport: chat,
    scripted: () =>
      streamError({
        object: "error",
        message: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.",
        type: "BadRequestError",
        code: 400,
      }),
    reason: "context_overflow",
    status: 400,
  },
  {
    name: "chat completions: bare {message, code} under `event: error`",
    transport: chat,
    scripted: () => streamError({ message: "Too many requests", code: 429 }, { event: "error" }),
    reason: "rate_limit",
    status: 429,
  },
  {
    name: "chat completions: a credit error mid-stream",
    transport: chat,
    scripted: () => streamError({ error: { code: 402, message: "Insufficient credits" } }),
    reason: "billing",
    status: 402,
  },
  {
    name: "anthropic: event: error overloaded_error before any content",
    transport: anthropic,
    scripted: () =>
      streamError({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }),
    reason: "overloaded",
    status: 529,
  },
  {
    name: "anthropic: event: error rate_limit_error after some text",
    transport: anthropic,
    scripted: () =>
      streamError(
        {
          type: "error",
          error: { type: "rate_limit_error", message: "Number of requests has exceeded your rate limit" },
        },
        { afterChunks: 2, message: partial() },
      ),
    reason: "rate_limit",
    status: 429,
  },
  {
    name: "anthropic: event: error api_error (an unexplained server error)",
    transport: anthropic,
    scripted: () =>
      streamError({ type: "error", error: { type: "api_error", message: "Internal server error" } }),
    reason: "server_error",
    status: 500,
    retryLimit: 1,
  },
  {
    name: "responses: error event rate_limit_exceeded",
    transport: responses,
    scripted: () =>
      streamError({ type: "error", code: "rate_limit_exceeded", message: "Rate limit reached for requests" }),
    reason: "rate_limit",
    status: 429,
  },
  {
    name: "responses: error event context_length_exceeded",
    transport: responses,
    scripted: () =>
      streamError({
        type: "error",
        code: "context_length_exceeded",
        message: "Your input exceeds the context window of this model.",
      }),
    reason: "context_overflow",
    status: 400,
  },
];

describe("errors inside a 200 stream, through the transports", () => {
  it.each(cases.map((c) => [c.name, c] as const))("%s", async (_name, c) => {
    const { error } = await failure(c.transport(), c.scripted());
    expect(error).toBeInstanceOf(ProviderError);
    const classified = classifyApiError(error);
    expect(classified.reason).toBe(c.reason);
    expect(classified.status).toBe(c.status);
    expect(classified.retryLimit).toBe(c.retryLimit);
  });

  it("reads a Retry-After sent on the 200 that carried the error", async () => {
    const { error } = await failure(
      chat(),
      streamError(
        { error: { code: 429, message: "Rate limit exceeded" } },
        { headers: { "retry-after": "2" } },
      ),
    );
    expect(classifyApiError(error)).toMatchObject({ reason: "rate_limit", retryAfterMs: 2_000 });
  });
});
