/**
 * The last guard before a request leaves for the provider: every message's text (content, tool
 * call arguments, reasoning) passes the secret redactor. Tool results are already redacted where
 * they enter the conversation; this catches the rest (a secret the user typed, an answer that
 * echoed one, a system prompt built from a context file holding one).
 *
 * History only grows and its message objects are reused from request to request, so each message
 * is redacted once and remembered (per redactor version: a secret registered later rescans). The
 * provider's own key travels in the transport's headers, which this wrapper never touches.
 */
import type { Redactor } from "../util/redact.js";
import type { ChatRequest, ContentPart, Message, Transport } from "./types.js";

/** `transport` with every request's messages redacted by `redactor` first. */
export function redactingTransport(transport: Transport, redactor: Redactor): Transport {
  const cache = new WeakMap<Message, { version: number; out: Message }>();
  // The system message is rebuilt as a new object for every request; remember its text instead.
  let system: { version: number; text: string; out: string } | undefined;

  const redactMessage = (message: Message): Message => {
    if (message.role === "system" && typeof message.content === "string") {
      const text = message.content;
      if (system?.version !== redactor.version || system.text !== text) {
        system = { version: redactor.version, text, out: redactor.redact(text) };
      }
      return system.out === text ? message : { ...message, content: system.out };
    }
    const hit = cache.get(message);
    if (hit && hit.version === redactor.version) return hit.out;
    const out = redactMessageText(message, (text) => redactor.redact(text));
    cache.set(message, { version: redactor.version, out });
    return out;
  };

  return {
    get apiMode() {
      return transport.apiMode;
    },
    stream(request: ChatRequest, signal?: AbortSignal) {
      if (!redactor.enabled) return transport.stream(request, signal);
      const messages = request.messages.map(redactMessage);
      const changed = messages.some((m, i) => m !== request.messages[i]);
      return transport.stream(changed ? { ...request, messages } : request, signal);
    },
  };
}

/**
 * Pure: `message` with `redact` applied to its text, tool-call arguments and reasoning; the same
 * object when nothing changed. Images and the provider's opaque reasoning blocks are left as they
 * are (signed; altering them would make the provider refuse the replay).
 */
export function redactMessageText(message: Message, redact: (text: string) => string): Message {
  let out: Message | undefined;
  const { content } = message;
  if (typeof content === "string") {
    const next = redact(content);
    if (next !== content) out = { ...message, content: next };
  } else if (Array.isArray(content)) {
    let parts: ContentPart[] | undefined;
    content.forEach((part, i) => {
      if (part.type !== "text") return;
      const next = redact(part.text);
      if (next === part.text) return;
      parts ??= content.slice();
      parts[i] = { ...part, text: next };
    });
    if (parts) out = { ...message, content: parts };
  }
  if (message.tool_calls) {
    let calls: typeof message.tool_calls | undefined;
    message.tool_calls.forEach((call, i) => {
      const next = redact(call.function.arguments);
      if (next === call.function.arguments) return;
      calls ??= message.tool_calls?.slice();
      if (calls) calls[i] = { ...call, function: { ...call.function, arguments: next } };
    });
    if (calls) out = { ...(out ?? message), tool_calls: calls };
  }
  if (message.reasoning !== undefined) {
    const next = redact(message.reasoning);
    if (next !== message.reasoning) out = { ...(out ?? message), reasoning: next };
  }
  return out ?? message;
}
