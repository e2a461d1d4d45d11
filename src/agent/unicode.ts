/**
 * Lone UTF-16 surrogates (half of an emoji cut by a byte limit, bytes of a binary file decoded as
 * text) are valid in a JavaScript string but not in the UTF-8 a provider reads: some reject the
 * whole request, others fail mid-stream. Requests are sanitised before they leave, replacing each
 * lone surrogate with U+FFFD; well-formed text is passed through untouched (same object).
 */
import type { Message } from "../ai/types.js";

declare global {
  interface String {
    isWellFormed(): boolean;
    toWellFormed(): string;
  }
}

/** `text` with lone surrogates replaced by U+FFFD; the same string when there are none. */
export function wellFormed(text: string): string {
  return text.isWellFormed() ? text : text.toWellFormed();
}

/** Messages already found well-formed: history only grows, so each is checked once. */
const checked = new WeakSet<Message>();

/** `messages`, or a copy where every message holding a lone surrogate is repaired. */
export function wellFormedMessages(messages: readonly Message[]): readonly Message[] {
  let out: Message[] | undefined;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i] as Message;
    if (checked.has(message)) continue;
    if (isWellFormedMessage(message)) {
      checked.add(message);
      continue;
    }
    out ??= messages.slice();
    out[i] = repairMessage(message);
  }
  return out ?? messages;
}

function isWellFormedMessage(message: Message): boolean {
  const { content } = message;
  if (typeof content === "string" && !content.isWellFormed()) return false;
  if (Array.isArray(content) && content.some((p) => p.type === "text" && !p.text.isWellFormed()))
    return false;
  if (message.reasoning !== undefined && !message.reasoning.isWellFormed()) return false;
  return !message.tool_calls?.some((c) => !c.function.arguments.isWellFormed());
}

function repairMessage(message: Message): Message {
  const { content } = message;
  return {
    ...message,
    content:
      typeof content === "string"
        ? wellFormed(content)
        : Array.isArray(content)
          ? content.map((part) => (part.type === "text" ? { ...part, text: wellFormed(part.text) } : part))
          : content,
    ...(message.tool_calls
      ? {
          tool_calls: message.tool_calls.map((call) => ({
            ...call,
            function: { ...call.function, arguments: wellFormed(call.function.arguments) },
          })),
        }
      : {}),
    ...(message.reasoning !== undefined ? { reasoning: wellFormed(message.reasoning) } : {}),
  };
}
