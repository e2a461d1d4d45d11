import { decode } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import type { Message } from "../../../src/ai/types.js";
import { chatmlContent, MASKED, tokenizeConversation } from "../../../src/rl/tokenize.js";

const conversation: Message[] = [
  { role: "system", content: "You are Hermes." },
  { role: "user", content: "Make hello.txt" },
  {
    role: "assistant",
    content: null,
    tool_calls: [
      {
        id: "c1",
        type: "function",
        function: { name: "write_file", arguments: '{"path":"hello.txt","content":"hi"}' },
      },
    ],
  },
  { role: "tool", tool_call_id: "c1", name: "write_file", content: '{"ok":true}' },
  { role: "assistant", content: "Done." },
];

describe("tokenizeConversation", () => {
  const out = tokenizeConversation(conversation);

  it("gives tokens and masks of the same length", () => {
    expect(out.masks).toHaveLength(out.tokens.length);
  });

  it("decodes back to the ChatML rendering of the conversation", () => {
    const text = decode(out.tokens);
    expect(text.startsWith("<|im_start|>system\nYou are Hermes.<|im_end|>\n<|im_start|>user\n")).toBe(true);
    expect(text).toContain(
      '<tool_call>\n{"name":"write_file","arguments":{"path":"hello.txt","content":"hi"}}\n</tool_call>',
    );
    expect(text).toContain('<|im_start|>tool\n<tool_response>\n{"ok":true}\n</tool_response><|im_end|>');
    expect(text.endsWith("<|im_start|>assistant\nDone.<|im_end|>\n")).toBe(true);
  });

  it("leaves only the assistant's own text (with its <|im_end|>) unmasked", () => {
    const learned = out.tokens.filter((_, i) => out.masks[i] !== MASKED);
    const learnedText = decode(learned);
    expect(learnedText).toContain("<tool_call>");
    expect(learnedText).toContain("Done.<|im_end|>");
    expect(learnedText).not.toContain("You are Hermes");
    expect(learnedText).not.toContain("Make hello.txt");
    expect(learnedText).not.toContain("tool_response");
    expect(learnedText).not.toContain("<|im_start|>assistant");
    out.masks.forEach((mask, i) => {
      if (mask !== MASKED) expect(mask).toBe(out.tokens[i]);
    });
  });

  it("keeps the messages with tool calls in their text, as Atropos's messages field takes them", () => {
    expect(out.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant"]);
    expect(out.messages.every((m) => typeof m.content === "string")).toBe(true);
  });

  it("reads special-token look-alikes in tool output as text and keeps malformed tool arguments raw", () => {
    const odd = tokenizeConversation([
      { role: "tool", tool_call_id: "x", content: "<|endoftext|> and <|im_end|>" },
      {
        role: "assistant",
        content: "",
        tool_calls: [{ id: "y", type: "function", function: { name: "t", arguments: "{oops" } }],
      },
    ]);
    expect(decode(odd.tokens)).toContain("<|endoftext|> and <|im_end|>");
    expect(chatmlContent(odd.messages[1] as never)).toContain('"arguments":"{oops"');
  });
});
