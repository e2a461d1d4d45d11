/** Rough token counts for planning compression: about four characters a token. */
import type { Message } from "../../ai/types.js";

/** What an image part is counted as (providers bill roughly this for a mid-sized image). */
const IMAGE_TOKENS = 800;
/** Per-message overhead (role, separators). */
const MESSAGE_OVERHEAD = 4;

export function estimateTextTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Tokens of one message as sent: its text, image parts, and tool calls' names and arguments. */
export function estimateMessageTokens(message: Message): number {
  let tokens = MESSAGE_OVERHEAD;
  const { content } = message;
  if (typeof content === "string") tokens += estimateTextTokens(content);
  else if (content) {
    for (const part of content) {
      tokens += part.type === "text" ? estimateTextTokens(part.text) : IMAGE_TOKENS;
    }
  }
  for (const call of message.tool_calls ?? []) {
    tokens += estimateTextTokens(call.function.name) + estimateTextTokens(call.function.arguments) + 4;
  }
  return tokens;
}

export function estimateTokens(messages: readonly Message[]): number {
  let total = 0;
  for (const message of messages) total += estimateMessageTokens(message);
  return total;
}

/** True when the prompt has reached `threshold` (a fraction, 0.5 by default) of the context window. */
export function shouldCompress(input: {
  promptTokens: number;
  contextLength: number;
  threshold?: number;
}): boolean {
  const threshold = input.threshold ?? 0.5;
  if (input.contextLength <= 0 || threshold <= 0) return false;
  return input.promptTokens >= input.contextLength * threshold;
}
