/**
 * Transport for OpenAI-compatible chat-completions endpoints (OpenRouter, Nous, OpenAI, vLLM,
 * Ollama, llama.cpp, LM Studio, ...) over the official `openai` SDK. The SDK is imported on first
 * use, not at module load, because this module sits on the CLI's start-up path. SDK retries are
 * off: retry policy belongs to the caller, driven by `ProviderError`'s fields.
 */
import type OpenAI from "openai";
import type {
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionCreateParamsStreaming,
} from "openai/resources/chat/completions";
import { type ChatRequest, type Message, ProviderError, type StreamEvent, type Transport } from "../types.js";
import { ResponseAssembler } from "./chat-completions-assembler.js";
import { DEFAULT_STALL_MS, StallError, stallSeconds, withinStall } from "./stall.js";
import { asRecord } from "./wire-values.js";

type OpenAIModule = typeof import("openai");

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

let sdkPromise: Promise<OpenAIModule> | undefined;

function loadSdk(): Promise<OpenAIModule> {
  sdkPromise ??= import("openai").catch((err: unknown) => {
    sdkPromise = undefined;
    throw err;
  });
  return sdkPromise;
}

export function createChatCompletionsTransport(options: ChatCompletionsOptions): Transport {
  const streaming = options.stream ?? true;
  let clientPromise: Promise<{ sdk: OpenAIModule; client: OpenAI }> | undefined;
  const getClient = () => {
    clientPromise ??= loadSdk().then((sdk) => ({ sdk, client: makeClient(sdk, options) }));
    return clientPromise;
  };
  return {
    apiMode: "chat_completions",
    stream: (request, signal) =>
      runRequest(
        getClient,
        options.baseUrl,
        options.extraBody
          ? { ...request, extraBody: { ...options.extraBody, ...request.extraBody } }
          : request,
        signal,
        streaming,
        options.stallTimeoutMs ?? DEFAULT_STALL_MS,
        options.claudeCacheTtl,
      ),
  };
}

function makeClient(sdk: OpenAIModule, options: ChatCompletionsOptions): OpenAI {
  const headers: Record<string, string | null> = { ...options.defaultHeaders };
  // The SDK insists on a key; a placeholder plus a removed header sends a keyless request.
  if (!options.apiKey) headers["Authorization"] = null;
  return new sdk.default({
    apiKey: options.apiKey || "unused",
    baseURL: options.baseUrl,
    maxRetries: 0,
    timeout: options.timeoutMs,
    defaultHeaders: headers,
    // Without these the SDK would pick up OPENAI_ORG_ID / OPENAI_PROJECT_ID / OPENAI_ADMIN_KEY from
    // the environment and send them to whatever provider this is.
    organization: null,
    project: null,
    adminAPIKey: null,
    logLevel: "off",
  });
}

async function* runRequest(
  getClient: () => Promise<{ sdk: OpenAIModule; client: OpenAI }>,
  baseUrl: string,
  request: ChatRequest,
  signal: AbortSignal | undefined,
  streaming: boolean,
  stallMs: number,
  claudeCacheTtl: "5m" | "1h" | undefined,
): AsyncGenerator<StreamEvent> {
  if (signal?.aborted) throw abortError(signal);
  const { sdk, client } = await getClient();
  const cacheTtl = claudeCacheTtl && isClaudeModel(request.model) ? claudeCacheTtl : undefined;
  const body = buildRequestBody(request, streaming, cacheTtl);
  const assembler = new ResponseAssembler();
  // One controller for the caller's abort and the stall watchdog.
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener("abort", onAbort, { once: true });
  const requestOptions = { signal: controller.signal };
  let stage: "headers" | "first chunk" | "chunk" = "headers";
  try {
    if (streaming) {
      // Headers that never come are a stall like any other: without this bound a hung server
      // would hold the turn for the SDK's 10-minute timeout.
      stage = "headers";
      const stream = await withinStall(
        client.chat.completions.create(
          body as unknown as ChatCompletionCreateParamsStreaming,
          requestOptions,
        ),
        stallMs,
        controller,
      );
      const iterator = stream[Symbol.asyncIterator]();
      stage = "first chunk";
      while (true) {
        const next = await withinStall(iterator.next(), stallMs, controller);
        if (next.done) break;
        stage = "chunk";
        const frame = errorFrame(next.value, baseUrl, assembler.hasContent);
        if (frame) throw frame;
        yield* assembler.addChunk(next.value);
      }
    } else {
      const response: unknown = await client.chat.completions.create(
        body as unknown as ChatCompletionCreateParamsNonStreaming,
        requestOptions,
      );
      checkFullResponse(response, baseUrl);
      yield* assembler.addResponse(response);
    }
  } catch (err) {
    if (err instanceof StallError && !signal?.aborted) {
      const seconds = stallSeconds(err.ms);
      const what =
        stage === "chunk"
          ? `the stream from ${baseUrl} stalled: no data for ${seconds} mid-answer`
          : `${baseUrl} sent no ${stage === "headers" ? "response headers" : "data"} within ${seconds}`;
      throw new ProviderError(
        `${what.charAt(0).toUpperCase()}${what.slice(1)}, so the request was cut (agent.stream_stall_timeout; raise it for a local server that reads long prompts slowly).`,
        { transport: true, partial: assembler.hasContent, stalled: true, cause: err },
      );
    }
    throw toProviderError(err, sdk, baseUrl, signal, assembler.hasContent);
  } finally {
    signal?.removeEventListener("abort", onAbort);
  }
  // The SDK ends a stream quietly when it is aborted, so the signal has to be checked here.
  if (signal?.aborted) throw abortError(signal);
  if (!assembler.finished) {
    throw new ProviderError(
      `The stream from ${baseUrl} ended before the model finished its answer (no finish_reason); the connection probably dropped.`,
      { transport: true, partial: assembler.hasContent },
    );
  }
  if (assembler.finishReason === "error") {
    // OpenRouter reports an upstream failure mid-stream this way.
    throw new ProviderError(`The provider at ${baseUrl} stopped the answer with finish_reason "error".`, {
      transport: true,
      partial: assembler.hasContent,
    });
  }
  yield* assembler.finishEvents();
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

/** Claude model ids as OpenRouter and other routers name them (`anthropic/claude-sonnet-4`). */
export function isClaudeModel(model: string): boolean {
  return /claude|^anthropic\//i.test(model);
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

function checkFullResponse(response: unknown, baseUrl: string): void {
  const r = asRecord(response);
  // Some gateways answer HTTP 200 with an error object instead of a completion.
  const error = r?.["error"];
  if (error !== undefined && error !== null) {
    const body = JSON.stringify(error);
    const code = asRecord(error)?.["code"];
    throw new ProviderError(`The provider at ${baseUrl} returned an error: ${body}`, {
      body,
      ...(typeof code === "number" ? { status: code } : {}),
    });
  }
  if (!Array.isArray(r?.["choices"]) || r["choices"].length === 0) {
    throw new ProviderError(`The response from ${baseUrl} has no choices; it is not a chat completion.`, {
      body: JSON.stringify(response)?.slice(0, 2000),
    });
  }
}

/**
 * An error frame inside a 200 stream that lacks the `error` key the SDK checks for: vLLM's
 * `{"object":"error","message":...,"code":400}`, or a bare `{"message":...,"code":429}` sent as
 * `event: error`. Undefined for an ordinary chunk (anything with `choices`).
 */
function errorFrame(chunk: unknown, baseUrl: string, partial: boolean): ProviderError | undefined {
  const c = asRecord(chunk);
  if (!c || Array.isArray(c["choices"])) return undefined;
  const message = c["message"];
  const worded = typeof message === "string" && (c["code"] !== undefined || c["type"] !== undefined);
  if (c["object"] !== "error" && !worded) return undefined;
  const code = c["code"];
  const status = typeof code === "number" && code >= 400 && code < 600 ? code : undefined;
  const body = JSON.stringify({ error: c });
  const detail = typeof message === "string" && message !== "" ? message : body;
  return new ProviderError(
    `The provider at ${baseUrl} answered with ${status !== undefined ? `HTTP ${status}` : "an error"} mid-stream: ${clip(detail, 500)}`,
    { ...(status !== undefined ? { status } : {}), body, partial },
  );
}

/** An Error named "AbortError", carrying the signal's reason as its cause. */
export function abortError(signal: AbortSignal): Error {
  const error = new Error("The request was aborted.", { cause: signal.reason });
  error.name = "AbortError";
  return error;
}

function toProviderError(
  err: unknown,
  sdk: OpenAIModule,
  baseUrl: string,
  signal: AbortSignal | undefined,
  partial: boolean,
): Error {
  if (signal?.aborted) return abortError(signal);
  if (err instanceof ProviderError) return err;
  if (err instanceof sdk.APIConnectionError) {
    const timedOut = err instanceof sdk.APIConnectionTimeoutError;
    const cause = err.cause instanceof Error ? `: ${describe(err.cause)}` : "";
    return new ProviderError(
      timedOut
        ? `The request to ${baseUrl} timed out before the server answered.`
        : `Could not connect to ${baseUrl}${cause}. Is the server running and the base URL right?`,
      { transport: true, partial, cause: err },
    );
  }
  if (err instanceof sdk.APIError) {
    const code = asRecord(err.error)?.["code"];
    // No status means the error arrived inside a 200 stream; gateways put the real status in `code`.
    const status = err.status ?? (typeof code === "number" ? code : undefined);
    // A non-JSON error body only survives in the SDK's message, behind "<status> ".
    const body =
      err.error === undefined
        ? err.message.replace(/^\d{3} /, "")
        : (JSON.stringify(err.error) ?? String(err.error));
    const message = asRecord(err.error)?.["message"];
    const detail = typeof message === "string" && message !== "" ? message : body;
    const retryAfterMs = parseRetryAfter(err.headers);
    const summary = status !== undefined ? `HTTP ${status}` : "an error";
    return new ProviderError(`The provider at ${baseUrl} answered with ${summary}: ${clip(detail, 500)}`, {
      ...(status !== undefined ? { status } : {}),
      body,
      partial,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      cause: err,
    });
  }
  // Anything else escaping the SDK mid-stream is the wire failing: undici's "terminated" (the
  // server closed the socket), ECONNRESET, "socket hang up", "premature close", or a chunk cut short.
  return new ProviderError(`The connection to ${baseUrl} failed mid-response: ${describe(err)}`, {
    transport: true,
    partial,
    cause: err,
  });
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause =
    err.cause instanceof Error && err.cause.message !== err.message ? ` (${err.cause.message})` : "";
  return `${err.message}${cause}`;
}

interface HeaderSource {
  get(name: string): string | null;
}

/**
 * Milliseconds to wait according to `retry-after-ms` (milliseconds) or `retry-after` (seconds or
 * an HTTP date). Undefined when neither is present or parseable; never negative.
 */
export function parseRetryAfter(
  headers: HeaderSource | undefined,
  now: number = Date.now(),
): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get("retry-after-ms")?.trim();
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Math.round(Number(ms));
  const value = headers.get("retry-after")?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
