/**
 * A scripted OpenAI-compatible chat-completions server on 127.0.0.1 for unit and end-to-end tests.
 * Each POST /v1/chat/completions takes the next queued reply; with none left it answers 500 so a
 * test that under-scripts fails loudly. Streaming requests get SSE with text and tool-call
 * arguments split over several chunks, so clients must assemble deltas. Failures are scripted too:
 * HTTP errors with any status and headers (`httpError`, `rateLimited`), errors inside a 200
 * stream (`streamError`), hangs, stalls, drops and truncated streams.
 *
 *   const llm = await startFakeLlm();
 *   llm.enqueue(reply().text("hi").usage({ prompt: 10, completion: 2 }));
 *   // point a client at llm.url, then inspect llm.requests
 *   await llm.close();
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { answerAnthropic, anthropicPairingError } from "./fake-llm-anthropic.js";
import { answerResponses } from "./fake-llm-responses.js";
import { openStream, parseJson, readBody, SSE_HEADERS, sendJson, split, write } from "./fake-llm-wire.js";

/**
 * Model endpoints and the wire protocol each speaks. Every one takes the same scripted replies, so
 * one script drives a conversation over chat completions, Anthropic Messages or the Responses API.
 */
const MODEL_ROUTES: Record<string, "chat" | "anthropic" | "responses"> = {
  "/v1/chat/completions": "chat",
  "/v1/messages": "anthropic",
  "/v1/responses": "responses",
};

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body; the raw text when it was not JSON; undefined for requests without a body. */
  body: unknown;
}

export type MessageSpec = {
  kind: "message";
  text: string;
  reasoning: string;
  reasoningField: "reasoning_content" | "reasoning";
  toolCalls: { id: string | undefined; name: string; arguments: string }[];
  usage: { prompt: number; completion: number; cached?: number; reasoning?: number } | undefined;
  finish: string | undefined;
};

export type ReplySpec =
  | MessageSpec
  | { kind: "http_error"; status: number; body: string; headers: Record<string, string> }
  | { kind: "hang" }
  | { kind: "disconnect"; afterChunks: number; message: MessageSpec }
  | { kind: "truncate"; afterChunks: number; message: MessageSpec }
  | { kind: "stall"; afterChunks: number; message: MessageSpec }
  | StreamErrorSpec;

/** A 200 stream that carries an error after `afterChunks` chunks of `message` (see `streamError`). */
export interface StreamErrorSpec {
  kind: "stream_error";
  afterChunks: number;
  message: MessageSpec;
  /** The error event's JSON. */
  data: unknown;
  /** SSE event name; undefined: the wire's usual one (none on chat completions, else "error"). */
  event: string | undefined;
  /** Extra headers on the 200 response (a Retry-After, for example). */
  headers: Record<string, string>;
}

/** Anything `enqueue` accepts. */
export interface ScriptedReply {
  readonly spec: ReplySpec;
  readonly delayMs: number;
}

abstract class BaseReply implements ScriptedReply {
  delayMs = 0;
  abstract readonly spec: ReplySpec;
  /** Wait this long before answering (time to headers). */
  delay(ms: number): this {
    this.delayMs = ms;
    return this;
  }
}

export class ReplyBuilder extends BaseReply {
  readonly spec: MessageSpec = {
    kind: "message",
    text: "",
    reasoning: "",
    reasoningField: "reasoning_content",
    toolCalls: [],
    usage: undefined,
    finish: undefined,
  };

  text(text: string): this {
    this.spec.text += text;
    return this;
  }

  /** Reasoning, sent as `delta.reasoning_content` (DeepSeek, vLLM) or `delta.reasoning` (OpenRouter). */
  reasoning(text: string, field: "reasoning_content" | "reasoning" = "reasoning_content"): this {
    this.spec.reasoning += text;
    this.spec.reasoningField = field;
    return this;
  }

  /** A tool call; arguments may be an object or a raw string (to script malformed JSON). */
  toolCall(name: string, args: Record<string, unknown> | string = {}, id?: string): this {
    this.spec.toolCalls.push({ id, name, arguments: typeof args === "string" ? args : JSON.stringify(args) });
    return this;
  }

  usage(usage: { prompt: number; completion: number; cached?: number; reasoning?: number }): this {
    this.spec.usage = usage;
    return this;
  }

  /** Finish reason; defaults to "tool_calls" when there are tool calls, else "stop". */
  finish(reason: string): this {
    this.spec.finish = reason;
    return this;
  }
}

class FailureReply extends BaseReply {
  constructor(readonly spec: ReplySpec) {
    super();
  }
}

export function reply(): ReplyBuilder {
  return new ReplyBuilder();
}

/** A reply whose content is `text` verbatim, e.g. a `<tool_call>` block a local model wrote as text. */
export function rawText(text: string): ReplyBuilder {
  return reply().text(text);
}

/** An HTTP error; `body` objects are sent as JSON. The default body is OpenAI's error shape. */
export function httpError(
  status: number,
  body?: unknown,
  headers: Record<string, string> = {},
): ScriptedReply {
  const text =
    body === undefined
      ? JSON.stringify({
          error: { message: `fake-llm: scripted HTTP ${status}`, type: "fake_error", code: status },
        })
      : typeof body === "string"
        ? body
        : JSON.stringify(body);
  return new FailureReply({ kind: "http_error", status, body: text, headers });
}

/** Accepts the request and never answers (until the client gives up or `close()` is called). */
export function hang(): ScriptedReply {
  return new FailureReply({ kind: "hang" });
}

/** Sends `afterChunks` SSE chunks of `message` (default: some text), then destroys the socket. */
export function disconnectMidStream(
  afterChunks = 2,
  message: ReplyBuilder = defaultPartial(),
): ScriptedReply {
  return new FailureReply({ kind: "disconnect", afterChunks, message: message.spec });
}

/** Sends `afterChunks` chunks, then goes silent with the connection open (until the client cuts it). */
export function stallMidStream(afterChunks = 2, message: ReplyBuilder = defaultPartial()): ScriptedReply {
  return new FailureReply({ kind: "stall", afterChunks, message: message.spec });
}

/** Sends `afterChunks` chunks, then ends the response cleanly: no finish_reason, no [DONE]. */
export function truncatedStream(afterChunks = 2, message: ReplyBuilder = defaultPartial()): ScriptedReply {
  return new FailureReply({ kind: "truncate", afterChunks, message: message.spec });
}

/**
 * A 200 response whose stream carries an error: `afterChunks` chunks of `message` (default: no
 * content chunks at all), then one SSE event with `data` as its JSON, then the end of the stream.
 * OpenAI-compatible servers and OpenRouter send `data: {"error": {...}}` with no event name;
 * Anthropic sends `event: error` with `{"type":"error","error":{"type":"overloaded_error",...}}`;
 * the Responses API `event: error` with `{"type":"error","code":...,"message":...}`. `event`
 * overrides the event name; `headers` go on the 200 (Retry-After, rate-limit resets).
 */
export function streamError(
  data: unknown,
  options: {
    afterChunks?: number;
    message?: ReplyBuilder;
    event?: string;
    headers?: Record<string, string>;
  } = {},
): ScriptedReply {
  return new FailureReply({
    kind: "stream_error",
    afterChunks: options.afterChunks ?? 0,
    message: (options.message ?? reply()).spec,
    data,
    event: options.event,
    headers: options.headers ?? {},
  });
}

/** A 429 with `Retry-After: seconds` (seconds may be fractional) and an OpenAI-style rate-limit body. */
export function rateLimited(seconds: number, message = "Rate limit exceeded"): ScriptedReply {
  return httpError(
    429,
    { error: { message, type: "rate_limit_error", code: "rate_limit_exceeded" } },
    { "retry-after": String(seconds) },
  );
}

function defaultPartial(): ReplyBuilder {
  return reply().text("This answer is going to be cut off somewhere in the middle of it.");
}

export interface FakeLlm {
  /** Base URL ending in `/v1`. */
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Model requests only (/v1/chat/completions, /v1/messages, /v1/responses). */
  readonly chatRequests: RecordedRequest[];
  enqueue(...replies: ScriptedReply[]): void;
  /**
   * Answers chat requests with a function of the request instead of the queue (for concurrent
   * clients, where arrival order is not known). Returning undefined falls back to the queue.
   * Pass undefined to remove it.
   */
  respondWith(responder: Responder | undefined): void;
  /** Scripted replies not yet consumed. */
  readonly pending: number;
  /** Resolves once at least `count` chat-completion requests have arrived. */
  waitForRequests(count: number): Promise<void>;
  /** Stops the server, cutting any open (for example hanging) connections. */
  close(): Promise<void>;
}

export type Responder = (
  request: RecordedRequest,
) => ScriptedReply | undefined | Promise<ScriptedReply | undefined>;

export interface FakeLlmOptions {
  /** Model ids listed by GET /v1/models. */
  models?: string[];
  /** Extra fields for a listed model's entry (`context_length`, `max_model_len`, ...). */
  modelInfo?: Record<string, Record<string, unknown>>;
  /**
   * Answer Anthropic Messages requests whose tool_use/tool_result blocks do not pair up with the
   * real API's HTTP 400 (`invalid_request_error`), before taking a scripted reply.
   */
  strictToolPairs?: boolean;
  /**
   * Refuse every request (the model listing included) with Azure's HTTP 401 unless it carries
   * this header with this value and no `Authorization` header, as an Azure AI Foundry endpoint
   * keyed by `api-key` does. With `header: "authorization"` it is a server keyed by bearer:
   * `value` is the whole header (`Bearer <key>`).
   */
  requireKey?: { header: string; value: string };
  /**
   * Serve the model routes under this path too, as if it were `/v1` (Vertex AI's
   * `/v1beta1/projects/P/locations/R/endpoints/openapi`): `<basePath>/chat/completions` is chat.
   */
  basePath?: string;
}

export async function startFakeLlm(options: FakeLlmOptions = {}): Promise<FakeLlm> {
  const models = options.models ?? ["fake-model"];
  const queue: ScriptedReply[] = [];
  const requests: RecordedRequest[] = [];
  const chatRequests: RecordedRequest[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const sockets = new Set<Socket>();
  let responder: Responder | undefined;

  const server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: `fake-llm: ${String(err)}` } });
      else res.destroy();
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const record: RecordedRequest = {
      method: req.method ?? "",
      path: req.url ?? "",
      headers: req.headers,
      body: raw === "" ? undefined : parseJson(raw),
    };
    requests.push(record);
    const asked = (req.url ?? "").split("?")[0] ?? "";
    const base = options.basePath?.replace(/\/+$/, "");
    const path = base && asked.startsWith(`${base}/`) ? `/v1${asked.slice(base.length)}` : asked;
    const gate = options.requireKey;
    const bearerGate = gate?.header.toLowerCase() === "authorization";
    if (
      gate &&
      (req.headers[gate.header.toLowerCase()] !== gate.value || (!bearerGate && req.headers.authorization))
    ) {
      sendJson(res, 401, {
        error: {
          code: "401",
          message: "Access denied due to invalid subscription key or wrong API endpoint.",
        },
      });
      return;
    }

    if (req.method === "GET" && path === "/v1/models") {
      sendJson(res, 200, {
        object: "list",
        data: models.map((id) => ({
          id,
          object: "model",
          created: 0,
          owned_by: "fake-llm",
          ...options.modelInfo?.[id],
        })),
      });
      return;
    }
    // Claude on Vertex AI: `…/publishers/anthropic/models/MODEL:streamRawPredict` (or `:rawPredict`).
    const vertexClaude = /\/publishers\/anthropic\/models\/([^/:]+):(streamRawPredict|rawPredict)$/.exec(
      path,
    );
    const wire = req.method !== "POST" ? undefined : vertexClaude ? "anthropic" : MODEL_ROUTES[path ?? ""];
    if (!wire) {
      sendJson(res, 404, { error: { message: `fake-llm: no route for ${req.method} ${path}` } });
      return;
    }
    chatRequests.push(record);
    for (const waiter of [...waiters]) {
      if (chatRequests.length >= waiter.count) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
    if (
      vertexClaude &&
      (record.body as Record<string, unknown> | undefined)?.["anthropic_version"] !== "vertex-2023-10-16"
    ) {
      sendJson(res, 400, {
        type: "error",
        error: {
          type: "invalid_request_error",
          message: "anthropic_version: Input should be 'vertex-2023-10-16'",
        },
      });
      return;
    }
    const pairing =
      options.strictToolPairs && wire === "anthropic" ? anthropicPairingError(record.body) : undefined;
    if (pairing) {
      sendJson(res, 400, { type: "error", error: { type: "invalid_request_error", message: pairing } });
      return;
    }
    const scripted = (responder ? await responder(record) : undefined) ?? queue.shift();
    if (!scripted) {
      sendJson(res, 500, {
        error: {
          message: "fake-llm: no scripted reply left (enqueue one per expected request)",
          type: "fake_llm",
        },
      });
      return;
    }
    if (scripted.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, scripted.delayMs));
    const body =
      typeof record.body === "object" && record.body !== null ? (record.body as Record<string, unknown>) : {};
    const model = vertexClaude
      ? decodeURIComponent(vertexClaude[1] ?? "")
      : typeof body["model"] === "string"
        ? body["model"]
        : (models[0] ?? "fake-model");
    const stream = vertexClaude ? vertexClaude[2] === "streamRawPredict" : body["stream"] === true;
    const streamOptions = body["stream_options"];
    const includeUsage =
      typeof streamOptions === "object" &&
      streamOptions !== null &&
      (streamOptions as Record<string, unknown>)["include_usage"] === true;
    const ctx: AnswerContext = { model, stream, includeUsage };
    if (wire === "anthropic") await answerAnthropic(res, scripted.spec, ctx);
    else if (wire === "responses") await answerResponses(res, scripted.spec, ctx);
    else await answer(res, scripted.spec, ctx);
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    chatRequests,
    enqueue: (...replies) => {
      queue.push(...replies);
    },
    respondWith: (fn) => {
      responder = fn;
    },
    get pending() {
      return queue.length;
    },
    waitForRequests: (count) =>
      chatRequests.length >= count
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            waiters.push({ count, resolve });
          }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

export interface AnswerContext {
  model: string;
  stream: boolean;
  includeUsage: boolean;
}

async function answer(res: ServerResponse, spec: ReplySpec, ctx: AnswerContext): Promise<void> {
  switch (spec.kind) {
    case "hang":
      return;
    case "http_error":
      res.writeHead(spec.status, { "content-type": "application/json", ...spec.headers });
      res.end(spec.body);
      return;
    case "message":
      if (ctx.stream) {
        await writeSse(res, streamChunks(spec, ctx));
        res.end("data: [DONE]\n\n");
      } else {
        sendJson(res, 200, fullResponse(spec, ctx));
      }
      return;
    case "stall":
      if (ctx.stream) await writeSse(res, streamChunks(spec.message, ctx).slice(0, spec.afterChunks));
      return;
    case "stream_error": {
      // The first chunk only opens the assistant message; `afterChunks` counts content after it.
      const chunks = streamChunks(spec.message, ctx).slice(0, spec.afterChunks + 1);
      await writeSse(res, chunks, spec.headers);
      const event = spec.event ? `event: ${spec.event}\n` : "";
      await write(res, `${event}data: ${JSON.stringify(spec.data)}\n\n`);
      res.end();
      return;
    }
    case "disconnect":
    case "truncate": {
      if (ctx.stream) {
        await writeSse(res, streamChunks(spec.message, ctx).slice(0, spec.afterChunks));
      } else {
        // A body cut short: the client sees invalid JSON or a reset, never a complete answer.
        res.writeHead(200, { "content-type": "application/json" });
        await write(res, JSON.stringify(fullResponse(spec.message, ctx)).slice(0, 20));
      }
      if (spec.kind === "disconnect") res.socket?.destroy();
      else res.end();
      return;
    }
  }
}

/** Resolves once the chunks are handed to the socket, so a following destroy cannot swallow them. */
async function writeSse(
  res: ServerResponse,
  chunks: unknown[],
  headers: Record<string, string> = {},
): Promise<void> {
  openStream(res, { ...SSE_HEADERS, ...headers });
  for (const chunk of chunks) await write(res, `data: ${JSON.stringify(chunk)}\n\n`);
}

function finishReason(spec: MessageSpec): string {
  return spec.finish ?? (spec.toolCalls.length > 0 ? "tool_calls" : "stop");
}

function usageJson(spec: MessageSpec): Record<string, unknown> | undefined {
  const u = spec.usage;
  if (!u) return undefined;
  return {
    prompt_tokens: u.prompt,
    completion_tokens: u.completion,
    total_tokens: u.prompt + u.completion,
    prompt_tokens_details: { cached_tokens: u.cached ?? 0 },
    completion_tokens_details: { reasoning_tokens: u.reasoning ?? 0 },
  };
}

function callId(spec: MessageSpec, index: number): string {
  return spec.toolCalls[index]?.id ?? `call_fake_${index}`;
}

function streamChunks(spec: MessageSpec, ctx: AnswerContext): unknown[] {
  const base = { id: "chatcmpl-fake", object: "chat.completion.chunk", created: 0, model: ctx.model };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const chunks: unknown[] = [chunk({ role: "assistant", content: "" })];
  for (const piece of split(spec.reasoning, 3)) chunks.push(chunk({ [spec.reasoningField]: piece }));
  for (const piece of split(spec.text, 4)) chunks.push(chunk({ content: piece }));
  spec.toolCalls.forEach((call, index) => {
    chunks.push(
      chunk({
        tool_calls: [
          { index, id: callId(spec, index), type: "function", function: { name: call.name, arguments: "" } },
        ],
      }),
    );
    for (const piece of split(call.arguments, 3)) {
      chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  chunks.push(chunk({}, finishReason(spec)));
  const usage = usageJson(spec);
  if (usage && ctx.includeUsage) chunks.push({ ...base, choices: [], usage });
  return chunks;
}

function fullResponse(spec: MessageSpec, ctx: AnswerContext): Record<string, unknown> {
  const message: Record<string, unknown> = {
    role: "assistant",
    content: spec.text === "" ? null : spec.text,
  };
  if (spec.reasoning !== "") message[spec.reasoningField] = spec.reasoning;
  if (spec.toolCalls.length > 0) {
    message["tool_calls"] = spec.toolCalls.map((call, index) => ({
      id: callId(spec, index),
      type: "function",
      function: { name: call.name, arguments: call.arguments },
    }));
  }
  const response: Record<string, unknown> = {
    id: "chatcmpl-fake",
    object: "chat.completion",
    created: 0,
    model: ctx.model,
    choices: [{ index: 0, message, finish_reason: finishReason(spec) }],
  };
  const usage = usageJson(spec);
  if (usage) response["usage"] = usage;
  return response;
}

/** How many chat requests carry `text` in their latest user message: the turns a message started. */
export function turnsAsking(llm: Pick<FakeLlm, "chatRequests">, text: string): number {
  return llm.chatRequests.filter((r) => {
    const messages = (r.body as { messages?: Array<{ role: string; content: unknown }> }).messages ?? [];
    const user = messages.filter((m) => m.role === "user").at(-1);
    return JSON.stringify(user?.content ?? "").includes(text);
  }).length;
}
