/**
 * A rollout's conversation as Atropos token sequences: the messages rendered in ChatML (the
 * template Hermes models are trained on: `<|im_start|>role\n…<|im_end|>\n`, tool calls as
 * `<tool_call>{json}</tool_call>` in the assistant's text, results as `<tool_response>` in `tool`
 * turns), tokenized with o200k_base from gpt-tokenizer. Atropos's server names no tokenizer (its
 * `/info` gives only batch size and token limit), so a trainer with another vocabulary must
 * retokenize from `messages` (send them with `--include-messages`): the masks mark which
 * characters are the model's own, which is what carries over.
 *
 * Masks follow Atropos's convention: -100 for tokens the trainer must not learn (system, user and
 * tool turns, each turn's `<|im_start|>role\n` header), the token id itself for the assistant's
 * own text up to and including its `<|im_end|>`. Pure apart from the tokenizer tables.
 */
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { type Message, messageText } from "../ai/types.js";

/** Special-token look-alikes in a tool's output are plain text, never a throw. */
const PLAIN = { disallowedSpecial: new Set<string>() };
export const MASKED = -100;

export interface TokenizedRollout {
  tokens: number[];
  masks: number[];
  /** `{role, content}` per turn, as Atropos's `messages` field takes them (tool calls in the text). */
  messages: { role: string; content: string }[];
}

/** A message's text as the model produced or read it, tool calls and results in Hermes's tags. */
export function chatmlContent(message: Message): string {
  const text = messageText(message);
  if (message.role === "assistant" && message.tool_calls?.length) {
    const calls = message.tool_calls.map((call) => {
      let args: unknown = call.function.arguments;
      try {
        args = JSON.parse(call.function.arguments);
      } catch {
        // Malformed arguments stay the raw string the model wrote: that is what it must learn from.
      }
      return `<tool_call>\n${JSON.stringify({ name: call.function.name, arguments: args })}\n</tool_call>`;
    });
    return [text, ...calls].filter((part) => part !== "").join("\n");
  }
  if (message.role === "tool") return `<tool_response>\n${text}\n</tool_response>`;
  return text;
}

/** Tokens and masks of a conversation (see the file comment). */
export function tokenizeConversation(messages: readonly Message[]): TokenizedRollout {
  const tokens: number[] = [];
  const masks: number[] = [];
  const out: { role: string; content: string }[] = [];
  const push = (text: string, learn: boolean) => {
    if (!text) return;
    for (const id of encode(text, PLAIN)) {
      tokens.push(id);
      masks.push(learn ? id : MASKED);
    }
  };
  for (const message of messages) {
    const content = chatmlContent(message);
    out.push({ role: message.role, content });
    const learn = message.role === "assistant";
    push(`<|im_start|>${message.role}\n`, false);
    push(`${content}<|im_end|>`, learn);
    push("\n", false);
  }
  return { tokens, masks, messages: out };
}
