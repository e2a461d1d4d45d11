/**
 * Measures the fixed overhead of every request: each system-prompt layer and each tool schema, in
 * bytes (UTF-8), characters (UTF-16 code units, as `String.length` counts them and as the context
 * file cap is applied) and tokens (o200k_base, the GPT-4o/GPT-5 encoding: other providers' tokenizers
 * differ by some percent, but the proportions hold). Loaded only by `hermes prompt-size`, so the
 * tokenizer's tables never load on the chat start-up path.
 */
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import type { ToolSchema } from "../../ai/types.js";
import { type PromptLayer, renderPrompt } from "./layers.js";

export interface LayerSize {
  id: string;
  title: string;
  bytes: number;
  chars: number;
  tokens: number;
}

export interface ToolSize {
  name: string;
  bytes: number;
  tokens: number;
}

export interface PromptSize {
  layers: LayerSize[];
  tools: ToolSize[];
  totals: {
    /** The rendered system prompt, separators between layers included. */
    systemPrompt: { bytes: number; chars: number; tokens: number };
    /** The tool schemas, summed over tools. */
    tools: { count: number; bytes: number; tokens: number };
    /** System prompt plus tool schemas: sent with every request of the session. */
    fixed: { bytes: number; tokens: number };
  };
}

/** Special-token look-alikes (`<|endoftext|>`) in a context file count as plain text, never throw. */
const PLAIN = { disallowedSpecial: new Set<string>() };

/** Tokens of `text` in the o200k_base encoding. */
export function tokenCount(text: string): number {
  return text ? countTokens(text, PLAIN) : 0;
}

/** Sizes of each layer, each tool schema (as serialised on the wire) and the totals. */
export function measurePrompt(input: {
  layers: readonly PromptLayer[];
  tools: readonly ToolSchema[];
}): PromptSize {
  const layers = input.layers.map((layer) => ({
    id: layer.id,
    title: layer.title,
    bytes: Buffer.byteLength(layer.text, "utf8"),
    chars: layer.text.length,
    tokens: tokenCount(layer.text),
  }));
  const tools = input.tools.map((tool) => {
    const json = JSON.stringify(tool);
    return { name: tool.function.name, bytes: Buffer.byteLength(json, "utf8"), tokens: tokenCount(json) };
  });
  const text = renderPrompt(input.layers);
  const systemPrompt = {
    bytes: Buffer.byteLength(text, "utf8"),
    chars: text.length,
    tokens: tokenCount(text),
  };
  const toolTotals = {
    count: tools.length,
    bytes: tools.reduce((sum, t) => sum + t.bytes, 0),
    tokens: tools.reduce((sum, t) => sum + t.tokens, 0),
  };
  return {
    layers,
    tools,
    totals: {
      systemPrompt,
      tools: toolTotals,
      fixed: {
        bytes: systemPrompt.bytes + toolTotals.bytes,
        tokens: systemPrompt.tokens + toolTotals.tokens,
      },
    },
  };
}
