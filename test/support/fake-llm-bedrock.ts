/**
 * A scripted AWS Bedrock runtime on 127.0.0.1, speaking the Converse API's real REST shapes:
 * `POST /model/{modelId}/converse` answers JSON, `POST /model/{modelId}/converse-stream` answers
 * `application/vnd.amazon.eventstream` (binary frames with `:event-type`, `:content-type` and
 * `:message-type` headers; errors as `:message-type: exception` frames with `:exception-type`).
 * HTTP errors carry `x-amzn-errortype` and a `{"message": ...}` body, as AWS sends them.
 *
 * It takes the same scripted replies as the other fakes (`reply()`, `hang()`,
 * `disconnectMidStream()`, `truncatedStream()` from fake-llm.ts; there `afterChunks` counts
 * event-stream frames) plus Bedrock's own: `bedrockReply()` (adds cache-write tokens and redacted
 * reasoning), `awsError()` and `streamException()`. Text, reasoning and tool input are split
 * over several deltas; reasoning gets the signature `fakeSignature(text)`. Like Bedrock it
 * rejects a malformed conversation with a 400 ValidationException (roles must alternate
 * starting with a user, no blank text, each toolUse answered by exactly one toolResult in the
 * next message, tool blocks need a toolConfig, at most four cache points), so a client bug
 * shows as a failed test. Every request is recorded with its headers and parsed body.
 *
 *   const bedrock = await startFakeBedrock();
 *   bedrock.enqueue(reply().text("hi").usage({ prompt: 10, completion: 2 }));
 *   // point the transport at bedrock.url, then inspect bedrock.requests
 *   await bedrock.close();
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { EventStreamCodec, type MessageHeaders } from "@smithy/eventstream-codec";
import { fromUtf8, toUtf8 } from "@smithy/util-utf8";
import { type MessageSpec, ReplyBuilder, type ReplySpec, reply, type ScriptedReply } from "./fake-llm.js";
import { fakeSignature } from "./fake-llm-anthropic.js";
import { openStream, parseJson, readBody, sendJson, split, write } from "./fake-llm-wire.js";

type Json = Record<string, unknown>;

/** A Converse reply with Bedrock-only extras: cache-write tokens and a redacted reasoning block. */
export class BedrockReplyBuilder extends ReplyBuilder {
  cacheWriteTokens: number | undefined;
  /** Base64 of a `redactedContent` reasoning block sent before any other content. */
  redactedReasoning: string | undefined;

  cacheWrite(tokens: number): this {
    this.cacheWriteTokens = tokens;
    return this;
  }

  redacted(base64: string): this {
    this.redactedReasoning = base64;
    return this;
  }
}

export function bedrockReply(): BedrockReplyBuilder {
  return new BedrockReplyBuilder();
}

type BedrockSpec =
  | ReplySpec
  | { kind: "aws_error"; status: number; type: string; message: string; headers: Record<string, string> }
  | { kind: "stream_exception"; type: string; message: string; afterEvents: number; partial: MessageSpec };

interface BedrockScripted {
  readonly spec: BedrockSpec;
  readonly delayMs: number;
}

/** An HTTP error as Bedrock sends it: `x-amzn-errortype: <type>:<namespace>` and `{"message": ...}`. */
export function awsError(
  status: number,
  type: string,
  message: string,
  headers: Record<string, string> = {},
): BedrockScripted {
  return { spec: { kind: "aws_error", status, type, message, headers }, delayMs: 0 };
}

/**
 * A 200 event stream that sends `afterEvents` frames of `partial` (default: none), then an exception
 * frame (`throttlingException`, `modelStreamErrorException`, `serviceUnavailableException`,
 * `validationException`, `internalServerException`), then ends.
 */
export function streamException(
  type: string,
  message: string,
  afterEvents = 0,
  partial: ReplyBuilder = reply().text("This answer breaks off in the middle."),
): BedrockScripted {
  return {
    spec: { kind: "stream_exception", type, message, afterEvents, partial: partial.spec },
    delayMs: 0,
  };
}

export interface BedrockRecordedRequest {
  method: string;
  /** The raw request path, e.g. `/model/us.anthropic.claude-sonnet-4-5-v1%3A0/converse-stream`. */
  path: string;
  /** "converse" or "converse-stream"; undefined for any other route. */
  operation: "converse" | "converse-stream" | undefined;
  /** The model id from the path, URL-decoded. */
  modelId: string | undefined;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body; the raw text when it was not JSON. */
  body: unknown;
}

export interface FakeBedrock {
  /** The endpoint root, e.g. `http://127.0.0.1:PORT` (pass as the transport's `baseUrl`). */
  readonly url: string;
  readonly requests: BedrockRecordedRequest[];
  enqueue(...replies: (ScriptedReply | BedrockScripted)[]): void;
  /** Scripted replies not yet consumed. */
  readonly pending: number;
  /** Resolves once at least `count` requests have arrived. */
  waitForRequests(count: number): Promise<void>;
  /** Stops the server, cutting any open (for example hanging) connections. */
  close(): Promise<void>;
}

const ROUTE = /^\/model\/([^/]+)\/(converse|converse-stream)$/;
const ERROR_NAMESPACE = "http://internal.amazon.com/coral/com.amazon.bedrock/";
const codec = new EventStreamCodec(toUtf8, fromUtf8);

export async function startFakeBedrock(): Promise<FakeBedrock> {
  const queue: (ScriptedReply | BedrockScripted)[] = [];
  const requests: BedrockRecordedRequest[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const sockets = new Set<Socket>();

  const server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendError(res, 500, "InternalServerException", `fake-bedrock: ${String(err)}`);
      else res.destroy();
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const match = ROUTE.exec((req.url ?? "").split("?")[0] ?? "");
    const record: BedrockRecordedRequest = {
      method: req.method ?? "",
      path: req.url ?? "",
      operation: match ? (match[2] as "converse" | "converse-stream") : undefined,
      modelId: match?.[1] ? decodeURIComponent(match[1]) : undefined,
      headers: req.headers,
      body: raw === "" ? undefined : parseJson(raw),
    };
    requests.push(record);
    for (const waiter of [...waiters]) {
      if (requests.length >= waiter.count) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
    if (req.method !== "POST" || !match) {
      sendError(res, 404, "UnknownOperationException", `fake-bedrock: no route for ${req.method} ${req.url}`);
      return;
    }
    const invalid = validateConverse(record.body);
    if (invalid) {
      sendError(res, 400, "ValidationException", invalid);
      return;
    }
    const scripted = queue.shift();
    if (!scripted) {
      sendError(res, 500, "InternalServerException", "fake-bedrock: no scripted reply left");
      return;
    }
    if (scripted.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, scripted.delayMs));
    await answer(res, scripted, record.operation === "converse-stream");
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    enqueue: (...replies) => {
      queue.push(...replies);
    },
    get pending() {
      return queue.length;
    },
    waitForRequests: (count) =>
      requests.length >= count
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

async function answer(res: ServerResponse, scripted: ScriptedReply | BedrockScripted, stream: boolean) {
  const spec = scripted.spec;
  const extras = scripted instanceof BedrockReplyBuilder ? scripted : undefined;
  switch (spec.kind) {
    case "hang":
      return;
    case "http_error":
      res.writeHead(spec.status, { "content-type": "application/json", ...spec.headers });
      res.end(spec.body);
      return;
    case "aws_error":
      sendError(res, spec.status, spec.type, spec.message, spec.headers);
      return;
    case "message":
      if (stream) {
        await writeFrames(res, streamFrames(spec, extras));
        res.end();
      } else {
        sendJson(res, 200, converseOutput(spec, extras), requestId());
      }
      return;
    case "stream_exception": {
      const frames = streamFrames(spec.partial, undefined).slice(0, spec.afterEvents);
      frames.push(exceptionFrame(spec.type, spec.message));
      await writeFrames(res, frames);
      res.end();
      return;
    }
    case "disconnect":
    case "truncate": {
      if (stream) {
        await writeFrames(res, streamFrames(spec.message, undefined).slice(0, spec.afterChunks));
      } else {
        // A body cut short: the client sees invalid JSON or a reset, never a complete answer.
        res.writeHead(200, { "content-type": "application/json" });
        await write(res, Buffer.from(JSON.stringify(converseOutput(spec.message, undefined)).slice(0, 20)));
      }
      if (spec.kind === "disconnect") res.socket?.destroy();
      else res.end();
      return;
    }
  }
}

// ── wire shapes ─────────────────────────────────────────────────────────

const STOP_REASONS: Record<string, string> = {
  stop: "end_turn",
  tool_calls: "tool_use",
  length: "max_tokens",
  content_filter: "content_filtered",
};

function stopReason(spec: MessageSpec): string {
  if (spec.finish === undefined) return spec.toolCalls.length > 0 ? "tool_use" : "end_turn";
  return STOP_REASONS[spec.finish] ?? spec.finish;
}

function callId(spec: MessageSpec, index: number): string {
  return spec.toolCalls[index]?.id ?? `tooluse_fake_${index}`;
}

/** Bedrock's usage: `inputTokens` excludes cache reads and writes, `totalTokens` counts them. */
function usageJson(spec: MessageSpec, extras: BedrockReplyBuilder | undefined): Json {
  const u = spec.usage ?? { prompt: 0, completion: 0 };
  const read = u.cached ?? 0;
  const written = extras?.cacheWriteTokens ?? 0;
  return {
    inputTokens: Math.max(0, u.prompt - read - written),
    outputTokens: u.completion,
    totalTokens: u.prompt + u.completion,
    cacheReadInputTokens: read,
    cacheWriteInputTokens: written,
  };
}

function toolInput(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

function converseOutput(spec: MessageSpec, extras: BedrockReplyBuilder | undefined): Json {
  const content: Json[] = [];
  if (extras?.redactedReasoning)
    content.push({ reasoningContent: { redactedContent: extras.redactedReasoning } });
  if (spec.reasoning !== "") {
    content.push({
      reasoningContent: { reasoningText: { text: spec.reasoning, signature: fakeSignature(spec.reasoning) } },
    });
  }
  if (spec.text !== "") content.push({ text: spec.text });
  spec.toolCalls.forEach((call, i) => {
    content.push({
      toolUse: { toolUseId: callId(spec, i), name: call.name, input: toolInput(call.arguments) },
    });
  });
  return {
    output: { message: { role: "assistant", content } },
    stopReason: stopReason(spec),
    usage: usageJson(spec, extras),
    metrics: { latencyMs: 42 },
  };
}

/** Event-stream frames in Bedrock's order: blocks, then messageStop, then metadata (usage). */
function streamFrames(spec: MessageSpec, extras: BedrockReplyBuilder | undefined): Uint8Array[] {
  const frames: Uint8Array[] = [eventFrame("messageStart", { role: "assistant" })];
  let index = 0;
  const delta = (d: Json) =>
    frames.push(eventFrame("contentBlockDelta", { contentBlockIndex: index, delta: d }));
  const stop = () => frames.push(eventFrame("contentBlockStop", { contentBlockIndex: index++ }));
  if (extras?.redactedReasoning) {
    delta({ reasoningContent: { redactedContent: extras.redactedReasoning } });
    stop();
  }
  if (spec.reasoning !== "") {
    for (const text of split(spec.reasoning, 3)) delta({ reasoningContent: { text } });
    delta({ reasoningContent: { signature: fakeSignature(spec.reasoning) } });
    stop();
  }
  if (spec.text !== "") {
    for (const text of split(spec.text, 4)) delta({ text });
    stop();
  }
  spec.toolCalls.forEach((call, i) => {
    frames.push(
      eventFrame("contentBlockStart", {
        contentBlockIndex: index,
        start: { toolUse: { toolUseId: callId(spec, i), name: call.name } },
      }),
    );
    for (const input of split(call.arguments, 3)) delta({ toolUse: { input } });
    stop();
  });
  frames.push(eventFrame("messageStop", { stopReason: stopReason(spec) }));
  frames.push(eventFrame("metadata", { usage: usageJson(spec, extras), metrics: { latencyMs: 42 } }));
  return frames;
}

function frame(headers: Record<string, string>, payload: Json): Uint8Array {
  const wire: MessageHeaders = {};
  for (const [name, value] of Object.entries(headers)) wire[name] = { type: "string", value };
  return codec.encode({ headers: wire, body: fromUtf8(JSON.stringify(payload)) });
}

/** Bedrock pads event payloads with a `p` field to hide their length; clients must ignore it. */
function eventFrame(type: string, payload: Json): Uint8Array {
  return frame(
    { ":event-type": type, ":content-type": "application/json", ":message-type": "event" },
    { ...payload, p: "abcdefghijklmnopqrstuvwxyzABCDEF".slice(0, 1 + (type.length % 16)) },
  );
}

function exceptionFrame(type: string, message: string): Uint8Array {
  return frame(
    { ":exception-type": type, ":content-type": "application/json", ":message-type": "exception" },
    { message },
  );
}

// ── validation, as Bedrock does it ──────────────────────────────────────

const isObj = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** The ValidationException message Bedrock would send for this body, or undefined when it is valid. */
function validateConverse(body: unknown): string | undefined {
  if (!isObj(body)) return "The request body is not a JSON object.";
  const messages = body["messages"];
  if (!Array.isArray(messages) || messages.length === 0) return "The messages field is required.";
  let cachePoints = Array.isArray(body["system"])
    ? body["system"].filter((b) => isObj(b) && b["cachePoint"]).length
    : 0;
  let usesTools = false;
  let expected: string[] = [];
  for (const [i, raw] of messages.entries()) {
    if (!isObj(raw) || !Array.isArray(raw["content"])) return `messages.${i}: content must be a list.`;
    const role = raw["role"];
    if (i === 0 && role !== "user")
      return "A conversation must start with a user message. Try again with a conversation that starts with a user message.";
    if (i > 0 && role === (messages[i - 1] as Json)["role"])
      return "A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.";
    const blocks = raw["content"].filter(isObj);
    if (blocks.length === 0) return `messages.${i}: the content field is empty.`;
    const results = blocks.flatMap((b) =>
      isObj(b["toolResult"]) ? [String(b["toolResult"]["toolUseId"])] : [],
    );
    if (results.length !== expected.length || !expected.every((id) => results.includes(id))) {
      return `Expected toolResult blocks at messages.${i}.content for the following Ids: ${expected.join(", ")}, but found: ${results.join(", ")}`;
    }
    expected = [];
    for (const block of blocks) {
      if (typeof block["text"] === "string" && block["text"].trim() === "")
        return `The text field in the ContentBlock object at messages.${i}.content is blank. Add text to the text field, and try again.`;
      if (block["cachePoint"]) cachePoints++;
      if (isObj(block["toolUse"])) expected.push(String(block["toolUse"]["toolUseId"]));
      if (block["toolUse"] || block["toolResult"]) usesTools = true;
    }
  }
  if (expected.length > 0) return "The conversation ends with toolUse blocks that have no toolResult.";
  if (usesTools && !isObj(body["toolConfig"]))
    return "The toolConfig field must be defined when using toolUse and toolResult content blocks.";
  if (cachePoints > 4) return `A maximum of 4 cache points is allowed, found ${cachePoints}.`;
  return undefined;
}

// ── plumbing ────────────────────────────────────────────────────────────

function requestId(): Record<string, string> {
  return { "x-amzn-requestid": randomUUID() };
}

function sendError(
  res: ServerResponse,
  status: number,
  type: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    "content-type": "application/json",
    "x-amzn-errortype": `${type}:${ERROR_NAMESPACE}`,
    ...requestId(),
    ...headers,
  });
  res.end(JSON.stringify({ message }));
}

/** Resolves once the frames are handed to the socket, so a following destroy cannot swallow them. */
async function writeFrames(res: ServerResponse, frames: Uint8Array[]): Promise<void> {
  openStream(res, { "content-type": "application/vnd.amazon.eventstream", ...requestId() });
  for (const f of frames) await write(res, f);
}
