/**
 * The chat-completions wire (`api_mode: chat_completions`): OpenAI-compatible endpoints
 * (OpenRouter, Nous, OpenAI, vLLM, Ollama, llama.cpp, LM Studio, ...) over the official `openai`
 * SDK (`openai-client.ts`), as a `WireProtocol` for the one transport skeleton (`wire.ts`): the
 * request body, the in-band error frames gateways send, and what a finished answer looks like.
 */
import type {
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionCreateParamsStreaming,
} from "openai/resources/chat/completions";
import type { ChatRequest, Message, StreamEvent, Transport } from "../types.js";
import { ResponseAssembler } from "./chat-completions-assembler.js";
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
  const body = (request: ChatRequest): Record<string, unknown> => {
    const merged = options.extraBody
      ? { ...request, extraBody: { ...options.extraBody, ...request.extraBody } }
      : request;
    const cacheTtl =
      options.claudeCacheTtl && isClaudeModel(request.model) ? options.claudeCacheTtl : undefined;
    return buildRequestBody(merged, streaming, cacheTtl);
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
        headers: options.defaultHeaders,
        timeoutMs: options.timeoutMs,
      }),
    reader: () => new ChatReader(baseUrl),
    openStream: ({ client }, request, { signal }) =>
      client.chat.completions.create(body(request) as unknown as ChatCompletionCreateParamsStreaming, {
        signal,
      }),
    fullCall: ({ client }, request, { signal }) =>
      client.chat.completions.create(body(request) as unknown as ChatCompletionCreateParamsNonStreaming, {
        signal,
      }),
    readError: (err, { sdk }) => readOpenAIError(err, sdk, baseUrl),
  });
}

/**
 * The chat-completions request body. `extraBody` goes in first so it can add provider fields
 * (provider routing, `max_completion_tokens`, ...) but cannot change what this transport relies on
 * (model, messages, stream mode, usage reporting).
 */
export function buildRequestBody(
  request: ChatRequest,
  streaming: boolean,
  cacheTtl?: "5m" | "1h",
): Record<string, unknown> {
  const body: Record<string, unknown> = { ...request.extraBody };
  body["model"] = request.model;
  if (request.tools && request.tools.length > 0) body["tools"] = request.tools;
  if (request.maxTokens !== undefined) body["max_tokens"] = request.maxTokens;
  if (request.temperature !== undefined) body["temperature"] = request.temperature;
  if (request.reasoningEffort) body["reasoning_effort"] = request.reasoningEffort;
  body["stream"] = streaming;
  if (streaming) body["stream_options"] = { include_usage: true };
  else delete body["stream_options"];
  // Messages go last: the growing conversation then only ever appends to the request bytes, so
  // each request is a byte prefix of the next (what prefix caches in proxies and servers reuse).
  delete body["messages"];
  const messages = request.messages.map(toWireMessage);
  if (cacheTtl) markCacheBreakpoints(messages, cacheTtl);
  body["messages"] = messages;
  return body;
}

/**
 * Anthropic's four cache breakpoints in chat-completions shape: `cache_control` on the last text
 * part of the system message and of the last three other messages that have text (content
 * becomes a parts array for those). Changes `messages` in place.
 */
export function markCacheBreakpoints(messages: Array<Record<string, unknown>>, ttl: "5m" | "1h"): void {
  const marker = ttl === "1h" ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" };
  const mark = (message: Record<string, unknown>): boolean => {
    const content = message["content"];
    if (typeof content === "string") {
      if (content === "") return false;
      message["content"] = [{ type: "text", text: content, cache_control: marker }];
      return true;
    }
    if (!Array.isArray(content)) return false;
    const parts = content as Array<Record<string, unknown>>;
    for (let i = parts.length - 1; i >= 0; i--) {
      if (parts[i]?.["type"] === "text") {
        message["content"] = parts.map((p, j) => (j === i ? { ...p, cache_control: marker } : p));
        return true;
      }
    }
    return false;
  };
  const system = messages.find((m) => m["role"] === "system");
  if (system) mark(system);
  let left = 3;
  for (let i = messages.length - 1; i >= 0 && left > 0; i--) {
    const message = messages[i] as Record<string, unknown>;
    if (message["role"] === "system") continue;
    if (mark(message)) left--;
  }
}

/**
 * One internal message in OpenAI's wire shape. Assistant `reasoning` is dropped: providers differ
 * on whether they accept it back (DeepSeek rejects `reasoning_content` in input), and sending it
 * as content would make the model read its own thoughts as something it said.
 */
export function toWireMessage(message: Message): Record<string, unknown> {
  switch (message.role) {
    case "assistant": {
      const hasCalls = (message.tool_calls?.length ?? 0) > 0;
      const wire: Record<string, unknown> = {
        role: "assistant",
        content: message.content ?? (hasCalls ? null : ""),
      };
      if (hasCalls) wire["tool_calls"] = message.tool_calls;
      return wire;
    }
    case "tool":
      return { role: "tool", tool_call_id: message.tool_call_id ?? "", content: message.content ?? "" };
    default:
      return { role: message.role, content: message.content ?? "" };
  }
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
