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

export class ChatBodyWriter {
  private readonly messageJson = new WeakMap<Message, string>();
  private readonly toolJson = toolJsonMemory;
  private system: { text: string; json: string } | undefined;

  json(request: ChatRequest, streaming: boolean, cacheTtl?: "5m" | "1h"): string {
    const head = requestHead(request, streaming);
    let out = "{";
    for (const key of Object.keys(head)) {
      const value = head[key];
      const json =
        key === "tools" && request.tools && value === request.tools
          ? this.toolsJson(request.tools)
          : JSON.stringify(value);
      // JSON.stringify leaves out keys whose value has no JSON form (undefined, functions).
      if (json === undefined) continue;
      out += `${out === "{" ? "" : ","}${JSON.stringify(key)}:${json}`;
    }
    return `${out}${out === "{" ? "" : ","}"messages":[${this.messagesJson(request.messages, cacheTtl).join(",")}]}`;
  }

  private toolsJson(tools: readonly ToolSchema[]): string {
    const parts = tools.map((tool) => {
      let json = this.toolJson.get(tool);
      if (json === undefined) {
        json = JSON.stringify(tool) ?? "null";
        this.toolJson.set(tool, json);
      }
      return json;
    });
    return `[${parts.join(",")}]`;
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
