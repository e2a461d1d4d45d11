import { describe, expect, it } from "vitest";
import { isClaudeModel } from "../../../src/ai/transports/claude-model.js";

/**
 * One rule for every wire: the union of what the chat-completions transport (router ids) and the
 * Bedrock converter (Bedrock ids) used to accept, and nothing that merely mentions the vendor.
 */
describe("isClaudeModel", () => {
  it.each([
    // Anthropic's own ids and their dotted spellings.
    ["claude-sonnet-4-5", true],
    ["claude-opus-4.6", true],
    ["Claude-3-Haiku-20240307", true],
    // Routers (OpenRouter, LiteLLM) put the vendor first.
    ["anthropic/claude-sonnet-4", true],
    ["openrouter/anthropic/claude-3.5-sonnet", true],
    ["anthropic/some-future-model", true],
    // Bedrock: foundation models, cross-region inference profiles, ARNs.
    ["anthropic.claude-3-haiku-20240307-v1:0", true],
    ["us.anthropic.claude-sonnet-4-5-20250929-v1:0", true],
    ["arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-5-sonnet-20240620-v1:0", true],
    ["anthropic.some-future-model-v1:0", true],
    // Not Claude: other vendors, and ids that only contain the word.
    ["amazon.nova-pro-v1:0", false],
    ["meta.llama3-70b-instruct-v1:0", false],
    ["openai/gpt-4o", false],
    ["MiniMax-M2", false],
    ["not-anthropic-model", false],
    ["anthropicish/gpt", false],
    ["", false],
  ])("%s → %s", (id, expected) => {
    expect(isClaudeModel(id)).toBe(expected);
  });
});
