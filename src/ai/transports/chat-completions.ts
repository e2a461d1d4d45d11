/**
 * The chat-completions wire (`api_mode: chat_completions`): OpenAI-compatible endpoints
 * (OpenRouter, Nous, OpenAI, vLLM, Ollama, llama.cpp, LM Studio, ...) over the official `openai`
 * SDK (`openai-client.ts`), as a `WireProtocol` for the one transport skeleton (`wire.ts`): the
 * request body, the in-band error frames gateways send, and what a finished answer looks like.
 */
import type { ChatCompletion, ChatCompletionChunk } from "openai/resources/chat/completions";
import type { Stream } from "openai/streaming";
import type { ChatRequest, StreamEvent, Transport } from "../types.js";
import { ResponseAssembler } from "./chat-completions-assembler.js";
import { ChatBodyWriter } from "./chat-completions-body.js";
import { chatStreamTarget, openChatStream } from "./chat-stream.js";
import { isClaudeModel } from "./claude-model.js";
import { createOpenAIClient, type OpenAIClient, readOpenAIError } from "./openai-client.js";
import { DEFAULT_STALL_MS } from "./stall.js";
import { createWireTransport, type WireReader } from "./wire.js";
import { answeredWith, type WireFailure } from "./wire-failure.js";
import { asRecord } from "./wire-values.js";

export interface ChatCompletionsOptions {
  /** Base URL including the version path, e.g. `https://openrouter.ai/api/v1`. */
  baseUrl: string;
  /** Sent as a bearer token; when absent no Authorization header is sent (local servers). */
  apiKey?: string | undefined;
  /** Send the key under this header instead of as a bearer (Azure AI Foundry's `api-key`). */
  apiKeyHeader?: string | undefined;
  defaultHeaders?: Record<string, string> | undefined;
  /** Time allowed until the response headers arrive. Defaults to the SDK's (10 minutes). */
  timeoutMs?: number | undefined;
  /** Stream with SSE (default) or ask for one JSON body and synthesise the same events from it. */
  stream?: boolean | undefined;
  /**
   * How long a streamed request may go without progress before it is cut as stalled, in ms
   * (default 60 000; 0 never): from sending the request to the response headers, from there to
   * the first chunk, and between chunks. A local server that takes longer to read a long prompt
   * needs a larger `agent.stream_stall_timeout` (the error says so).
   */
  stallTimeoutMs?: number | undefined;
  /** Fields added to every request body (OpenRouter's `provider` preferences); the request's own win. */
  extraBody?: Record<string, unknown> | undefined;
  /**
   * Anthropic prompt-cache breakpoints for Claude models behind this endpoint (OpenRouter passes
   * `cache_control` through): the system prompt and the last three other messages, with this TTL.
   */
  claudeCacheTtl?: "5m" | "1h" | undefined;
}

/** A transport speaking chat completions. Creating it loads nothing; the SDK loads on the first request. */
export function createChatCompletionsTransport(options: ChatCompletionsOptions): Transport {
  const { baseUrl } = options;
  const streaming = options.stream ?? true;
  const writer = new ChatBodyWriter();
  // The body goes to the SDK as JSON already written (its content-type set, so the SDK sends the
  // string as it is): the writer reuses the JSON of everything an earlier request already sent.
  const body = <T extends "json" | "chunks">(request: ChatRequest, as: T) => {
    const merged = options.extraBody
      ? { ...request, extraBody: { ...options.extraBody, ...request.extraBody } }
      : request;
    const cacheTtl =
      options.claudeCacheTtl && isClaudeModel(request.model) ? options.claudeCacheTtl : undefined;
    return writer[as](merged, streaming, cacheTtl) as T extends "json" ? string : Uint8Array[];
  };
  const post = (client: OpenAIClient["client"], request: ChatRequest, signal: AbortSignal) => {
    return client.post("/chat/completions", {
      body: body(request, "json"),
      headers: { "content-type": "application/json" },
      stream: streaming,
      signal,
    });
  };
  return createWireTransport<OpenAIClient>({
    apiMode: "chat_completions",
    baseUrl,
    streaming,
    stallMs: options.stallTimeoutMs ?? DEFAULT_STALL_MS,
    finishMarker: "no finish_reason",
    createClient: () =>
      createOpenAIClient({
        baseUrl,
        apiKey: options.apiKey,
        apiKeyHeader: options.apiKeyHeader,
        headers: options.defaultHeaders,
        timeoutMs: options.timeoutMs,
      }),
    reader: () => new ChatReader(baseUrl),
    openStream: async (openai, request, { signal }) => {
      // The SDK client's own request, sent and read without its stream layers (chat-stream.ts).
      const target = await chatStreamTarget(openai);
      if (target) {
        const events = await openChatStream(openai, target, body(request, "chunks"), signal);
        if (events) return events;
      }
      return post(openai.client, request, signal) as Promise<Stream<ChatCompletionChunk>>;
    },
    fullCall: ({ client }, request, { signal }) => post(client, request, signal) as Promise<ChatCompletion>,
    readError: (err, { sdk }) => readOpenAIError(err, sdk, baseUrl),
  });
}

/** Reads one chat-completions response through the assembler, with the checks the wire needs. */
class ChatReader implements WireReader {
  private readonly assembler = new ResponseAssembler();

  constructor(private readonly baseUrl: string) {}

  get hasContent(): boolean {
    return this.assembler.hasContent;
  }

  get finished(): boolean {
    return this.assembler.finished;
  }

  event(chunk: unknown): StreamEvent[] | WireFailure {
    return errorFrame(chunk, this.baseUrl) ?? this.assembler.addChunk(chunk);
  }

  response(response: unknown): StreamEvent[] | WireFailure {
    return fullResponseFailure(response, this.baseUrl) ?? this.assembler.addResponse(response);
  }

  finishFailure(): WireFailure | undefined {
    if (this.assembler.finishReason !== "error") return undefined;
    // OpenRouter reports an upstream failure mid-stream this way.
    return {
      message: `The provider at ${this.baseUrl} stopped the answer with finish_reason "error".`,
      transport: true,
    };
  }

  finishEvents(): StreamEvent[] {
    return this.assembler.finishEvents();
  }
}

/** Some gateways answer HTTP 200 with an error object, or with something that is not a completion. */
function fullResponseFailure(response: unknown, baseUrl: string): WireFailure | undefined {
  const r = asRecord(response);
  const error = r?.["error"];
  if (error !== undefined && error !== null) {
    const body = JSON.stringify(error);
    const code = asRecord(error)?.["code"];
    return {
      message: `The provider at ${baseUrl} returned an error: ${body}`,
      body,
      ...(typeof code === "number" ? { status: code } : {}),
    };
  }
  if (!Array.isArray(r?.["choices"]) || r["choices"].length === 0) {
    return {
      message: `The response from ${baseUrl} has no choices; it is not a chat completion.`,
      body: JSON.stringify(response)?.slice(0, 2000),
    };
  }
  return undefined;
}

/**
 * An error frame inside a 200 stream that lacks the `error` key the SDK checks for: vLLM's
 * `{"object":"error","message":...,"code":400}`, or a bare `{"message":...,"code":429}` sent as
 * `event: error`. Undefined for an ordinary chunk (anything with `choices`).
 */
function errorFrame(chunk: unknown, baseUrl: string): WireFailure | undefined {
  const c = asRecord(chunk);
  if (!c || Array.isArray(c["choices"])) return undefined;
  const message = c["message"];
  const worded = typeof message === "string" && (c["code"] !== undefined || c["type"] !== undefined);
  if (c["object"] !== "error" && !worded) return undefined;
  const code = c["code"];
  const status = typeof code === "number" && code >= 400 && code < 600 ? code : undefined;
  const body = JSON.stringify({ error: c });
  const detail = typeof message === "string" && message !== "" ? message : body;
  return answeredWith(baseUrl, { status, body, detail, where: "mid-stream" });
}
