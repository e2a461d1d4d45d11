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

/** `messages`, or a copy where every message holding a lone surrogate is repaired. */
export function wellFormedMessages(messages: readonly Message[]): readonly Message[] {
  let out: Message[] | undefined;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i] as Message;
    const fixed = wellFormedMessage(message);
    if (fixed !== message) {
      out ??= messages.slice();
      out[i] = fixed;
    }
  }
  return out ?? messages;
}

function wellFormedMessage(message: Message): Message {
  let changed = false;
  const fix = (text: string): string => {
    const result = wellFormed(text);
    if (result !== text) changed = true;
    return result;
  };
  let content = message.content;
  if (typeof content === "string") content = fix(content);
  else if (Array.isArray(content))
    content = content.map((part) => (part.type === "text" ? { ...part, text: fix(part.text) } : part));
  const toolCalls = message.tool_calls?.map((call) => ({
    ...call,
    function: { ...call.function, arguments: fix(call.function.arguments) },
  }));
  const reasoning = message.reasoning === undefined ? undefined : fix(message.reasoning);
  if (!changed) return message;
  return {
    ...message,
    content,
    ...(toolCalls ? { tool_calls: toolCalls } : {}),
    ...(reasoning !== undefined ? { reasoning } : {}),
  };
}
