/**
 * The chat-completions request body, as an object (`buildRequestBody`) and as the bytes sent
 * (`ChatBodyWriter`). The writer produces exactly `JSON.stringify(buildRequestBody(...))` but
 * remembers the JSON of what repeats from request to request: each history message (history only
 * grows and its message objects are reused, as `redacting-transport.ts` and `unicode.ts` rely
 * on too), each tool schema, and the system prompt's text (its message object is rebuilt for
 * every request). A step of the loop then serialises only the messages it added, instead of the
 * whole conversation and every tool schema again (about 25 KB at the first call, growing).
 */
import type { ChatRequest, Message, ToolSchema } from "../types.js";

/**
 * The body's fields before `messages`, in the order they are sent. `extraBody` goes in first so it
 * can add provider fields (provider routing, `max_completion_tokens`, ...) but cannot change what
 * this transport relies on (model, messages, stream mode, usage reporting).
 */
function requestHead(request: ChatRequest, streaming: boolean): Record<string, unknown> {
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
  return body;
}

/** The chat-completions request body (see `requestHead` for the order of its fields). */
export function buildRequestBody(
  request: ChatRequest,
  streaming: boolean,
  cacheTtl?: "5m" | "1h",
): Record<string, unknown> {
  const body = requestHead(request, streaming);
  const messages = request.messages.map(toWireMessage);
  if (cacheTtl) markCacheBreakpoints(messages, cacheTtl);
  body["messages"] = messages;
  return body;
}

/**
 * Anthropic's four cache breakpoints in chat-completions shape: `cache_control` on the last text
 * part of the system message and of the last three other messages that have text (content
 * becomes a parts array for those). Changes `messages` in place; returns the indexes it changed.
 */
export function markCacheBreakpoints(
  messages: Array<Record<string, unknown>>,
  ttl: "5m" | "1h",
): Set<number> {
  const marker = ttl === "1h" ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" };
  const marked = new Set<number>();
  const mark = (index: number): boolean => {
    const message = messages[index] as Record<string, unknown>;
    const content = message["content"];
    if (typeof content === "string") {
      if (content === "") return false;
      message["content"] = [{ type: "text", text: content, cache_control: marker }];
      marked.add(index);
      return true;
    }
    if (!Array.isArray(content)) return false;
    const parts = content as Array<Record<string, unknown>>;
    for (let i = parts.length - 1; i >= 0; i--) {
      if (parts[i]?.["type"] === "text") {
        message["content"] = parts.map((p, j) => (j === i ? { ...p, cache_control: marker } : p));
        marked.add(index);
        return true;
      }
    }
    return false;
  };
  const system = messages.findIndex((m) => m["role"] === "system");
  if (system >= 0) mark(system);
  let left = 3;
  for (let i = messages.length - 1; i >= 0 && left > 0; i--) {
    if (messages[i]?.["role"] === "system") continue;
    if (mark(i)) left--;
  }
  return marked;
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

/**
 * Writes request bodies as JSON, byte for byte what `JSON.stringify(buildRequestBody(...))` gives,
 * from remembered pieces (see the file comment). One per transport; the memory is weak (a message
 * or tool schema no longer used is forgotten with it). A message must not be changed after it was
 * sent once, which holds for the agent's history: it is appended to, never edited in place.
 */
/**
 * Tool schemas' JSON, shared by every writer of the process: the registry hands each session the
 * same schema objects (tools.schemas caches them; never changed once built), and a server starting
 * a session per request would otherwise serialise every schema again for each one.
 */
const toolJsonMemory = new WeakMap<ToolSchema, string>();

/**
 * The last tool list's JSON, shared by every writer too: a server's sessions each bring a new
 * array of the same schemas, whose JSON (tens of KB) would otherwise be joined again per session.
 */
let lastToolList: { list: readonly ToolSchema[]; json: string } | undefined;

/** The last body head (parts, text and UTF-8 bytes), shared the same way: one per process. */
let lastHead: { parts: string[]; json: string; bytes?: Buffer } | undefined;

export class ChatBodyWriter {
  private readonly messageJson = new WeakMap<Message, string>();
  private readonly toolJson = toolJsonMemory;
  private system: { text: string; json: string } | undefined;
  /** The bytes of the last body up to its last message, grown as the conversation grows. */
  private encoded: EncodedPrefix | undefined;

  json(request: ChatRequest, streaming: boolean, cacheTtl?: "5m" | "1h"): string {
    return `${this.headJson(request, streaming)}${this.messagesJson(request.messages, cacheTtl).join(",")}]}`;
  }

  /** The same body as `json`, as UTF-8 bytes in one buffer of its own (see `chunks`). */
  bytes(request: ChatRequest, streaming: boolean, cacheTtl?: "5m" | "1h"): Buffer {
    return Buffer.concat(this.chunks(request, streaming, cacheTtl));
  }

  /**
   * The same body as `json`, as UTF-8 bytes to be sent one after the other. Successive requests of
   * one conversation only append messages, so the bytes of the earlier ones are kept and only the
   * new ones are encoded: the body is neither built as one string and encoded whole for every
   * request nor copied into a buffer of its own (tens of KB, growing, a large part of what a step
   * of the loop allocates). The first chunk is a view of the kept bytes up to the last message,
   * which are never written again (appending writes after them, into a new buffer when it grows),
   * so requests in flight at once (a title request beside the loop's) are safe; the second is `]}`.
   */
  chunks(request: ChatRequest, streaming: boolean, cacheTtl?: "5m" | "1h"): Uint8Array[] {
    // Breakpoints move with every request, so nothing before the last message stays the same.
    if (cacheTtl) return [Buffer.from(this.json(request, streaming, cacheTtl), "utf8")];
    const head = this.headJson(request, streaming);
    const { messages } = request;
    let encoded = this.encoded;
    if (!encoded || encoded.head !== head || !this.continues(encoded, messages)) {
      encoded = new EncodedPrefix(head);
      this.encoded = encoded;
    }
    for (let i = encoded.sources.length; i < messages.length; i++) {
      const message = messages[i] as Message;
      encoded.append(message, this.oneMessage(message));
    }
    return [encoded.view(), CLOSE];
  }

  /**
   * Whether `messages` begins with the messages `encoded` holds: the same objects (their JSON is
   * what was written, as messages are not changed once sent), or others whose JSON is the same
   * (the system message, rebuilt for every request).
   */
  private continues(encoded: EncodedPrefix, messages: readonly Message[]): boolean {
    const { sources, pieces } = encoded;
    if (sources.length > messages.length) return false;
    for (let i = 0; i < sources.length; i++) {
      const message = messages[i] as Message;
      if (message === sources[i]) continue;
      if (this.oneMessage(message) !== pieces[i]) return false;
      sources[i] = message;
    }
    return true;
  }

  /** `{` and every field before `messages`, then `"messages":[`. */
  private headJson(request: ChatRequest, streaming: boolean): string {
    const head = requestHead(request, streaming);
    const parts: string[] = [];
    for (const key of Object.keys(head)) {
      const value = head[key];
      const json =
        key === "tools" && request.tools && value === request.tools
          ? this.toolsJson(request.tools)
          : JSON.stringify(value);
      // JSON.stringify leaves out keys whose value has no JSON form (undefined, functions).
      if (json === undefined) continue;
      parts.push(key, json);
    }
    // The same string object while nothing in it changes, for this writer and the next.
    const last = lastHead;
    if (last && last.parts.length === parts.length && last.parts.every((part, i) => part === parts[i])) {
      return last.json;
    }
    let out = "{";
    for (let i = 0; i < parts.length; i += 2) {
      out += `${out === "{" ? "" : ","}${JSON.stringify(parts[i])}:${parts[i + 1]}`;
    }
    const json = `${out}${out === "{" ? "" : ","}"messages":[`;
    lastHead = { parts, json };
    return json;
  }

  private toolsJson(tools: readonly ToolSchema[]): string {
    const last = lastToolList;
    if (last && last.list.length === tools.length && last.list.every((tool, i) => tool === tools[i])) {
      return last.json;
    }
    const parts = tools.map((tool) => {
      let json = this.toolJson.get(tool);
      if (json === undefined) {
        json = JSON.stringify(tool) ?? "null";
        this.toolJson.set(tool, json);
      }
      return json;
    });
    const json = `[${parts.join(",")}]`;
    lastToolList = { list: tools.slice(), json };
    return json;
  }

  private messagesJson(messages: readonly Message[], cacheTtl: "5m" | "1h" | undefined): string[] {
    if (!cacheTtl) return messages.map((m) => this.oneMessage(m));
    // The breakpoints move with every request: the marked messages are written fresh, the rest
    // from memory.
    const wire = messages.map(toWireMessage);
    const marked = markCacheBreakpoints(wire, cacheTtl);
    return messages.map((m, i) => (marked.has(i) ? JSON.stringify(wire[i]) : this.oneMessage(m)));
  }

  private oneMessage(message: Message): string {
    if (message.role === "system" && typeof message.content === "string") {
      // Rebuilt as a new object for every request: remember its text instead.
      if (this.system?.text !== message.content) {
        this.system = { text: message.content, json: JSON.stringify(toWireMessage(message)) };
      }
      return this.system.json;
    }
    let json = this.messageJson.get(message);
    if (json === undefined) {
      json = JSON.stringify(toWireMessage(message));
      this.messageJson.set(message, json);
    }
    return json;
  }
}

/** The end of every body: the messages array and the object closed. */
const CLOSE = Buffer.from("]}", "utf8");

/**
 * A body's bytes up to its last message (`{...,"messages":[m1,m2`), appended to in place: bytes
 * once written are never changed, so views of them can be sent while more is appended.
 */
class EncodedPrefix {
  /** The messages written, and the JSON written for each. */
  readonly sources: Message[] = [];
  readonly pieces: string[] = [];
  private buffer: Buffer;
  private length = 0;

  constructor(readonly head: string) {
    // A server's sessions start from the same head (model, tools): its bytes are encoded once.
    const shared = lastHead?.json === head ? lastHead : undefined;
    if (shared) shared.bytes ??= Buffer.from(head, "utf8");
    const headBytes = shared?.bytes;
    // Room for the head and the first messages; it doubles when the conversation outgrows it.
    this.buffer = Buffer.allocUnsafe((headBytes?.length ?? Buffer.byteLength(head, "utf8")) + 16 * 1024);
    if (headBytes) this.length = headBytes.copy(this.buffer, 0);
    else this.write(head);
  }

  append(message: Message, piece: string): void {
    this.write(this.pieces.length > 0 ? `,${piece}` : piece);
    this.sources.push(message);
    this.pieces.push(piece);
  }

  /** The bytes written so far (a view: they never change). */
  view(): Buffer {
    return this.buffer.subarray(0, this.length);
  }

  private write(text: string): void {
    // At most three bytes per UTF-16 unit: room for the worst case, then the exact count.
    const room = this.length + text.length * 3;
    if (room > this.buffer.length) {
      const grown = Buffer.allocUnsafe(Math.max(room, this.buffer.length * 2));
      this.buffer.copy(grown, 0, 0, this.length);
      this.buffer = grown;
    }
    this.length += this.buffer.write(text, this.length, "utf8");
  }
}
