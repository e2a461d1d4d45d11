/**
 * Strict role alternation for the wire. History may hold two user messages in a row (a turn
 * interrupted before the model said anything, then a new message); providers reject or mishandle
 * that, so requests merge such runs into one user message. The stored history stays as it happened.
 */
import type { ContentPart, Message } from "../ai/types.js";

/** Returns `messages` itself when nothing needs merging, else a copy with user runs merged. */
export function mergeUserRuns(messages: readonly Message[]): readonly Message[] {
  let needed = false;
  for (let i = 1; i < messages.length; i++) {
    if (messages[i]?.role === "user" && messages[i - 1]?.role === "user") {
      needed = true;
      break;
    }
  }
  if (!needed) return messages;
  const out: Message[] = [];
  for (const message of messages) {
    const last = out[out.length - 1];
    if (message.role === "user" && last?.role === "user") {
      out[out.length - 1] = { ...last, content: joinContent(last.content, message.content) };
    } else {
      out.push(message);
    }
  }
  return out;
}

function joinContent(a: Message["content"], b: Message["content"]): Message["content"] {
  if (typeof a === "string" && typeof b === "string") return a && b ? `${a}\n\n${b}` : a || b;
  return [...asParts(a), ...asParts(b)];
}

function asParts(content: Message["content"]): ContentPart[] {
  if (content === null || content === "") return [];
  return typeof content === "string" ? [{ type: "text", text: content }] : content;
}
