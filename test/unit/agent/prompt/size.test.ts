import { describe, expect, it } from "vitest";
import type { PromptLayer } from "../../../../src/agent/prompt/layers.js";
import { renderPrompt } from "../../../../src/agent/prompt/layers.js";
import { measurePrompt, tokenCount } from "../../../../src/agent/prompt/size.js";
import type { ToolSchema } from "../../../../src/ai/types.js";

const layers: PromptLayer[] = [
  { id: "identity", title: "Identity (default)", text: "You are Hermes. Héllo ✨ 漢字" },
  { id: "platform", title: "Platform hint (cli)", text: "You are in a terminal." },
  { id: "context", title: "Project context (AGENTS.md)", text: "Literal <|endoftext|> in a file." },
];

const tools: ToolSchema[] = [
  {
    type: "function",
    function: {
      name: "read_file",
      description: "Read a file — with an em dash",
      parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    },
  },
  { type: "function", function: { name: "todo", description: "Plan", parameters: { type: "object" } } },
];

describe("measurePrompt", () => {
  const size = measurePrompt({ layers, tools });

  it("measures each layer in UTF-8 bytes, characters and tokens", () => {
    for (const [i, layer] of layers.entries()) {
      const measured = size.layers[i];
      expect(measured).toEqual({
        id: layer.id,
        title: layer.title,
        bytes: Buffer.byteLength(layer.text, "utf8"),
        chars: layer.text.length,
        tokens: tokenCount(layer.text),
      });
      expect(measured?.tokens).toBeGreaterThan(0);
    }
    expect(size.layers[0]?.bytes).toBeGreaterThan(size.layers[0]?.chars ?? 0);
  });

  it("measures each tool schema as serialised on the wire", () => {
    expect(size.tools).toEqual(
      tools.map((t) => ({
        name: t.function.name,
        bytes: Buffer.byteLength(JSON.stringify(t), "utf8"),
        tokens: tokenCount(JSON.stringify(t)),
      })),
    );
  });

  it("totals the rendered prompt (separators included), the tools, and both", () => {
    const text = renderPrompt(layers);
    expect(size.totals.systemPrompt).toEqual({
      bytes: Buffer.byteLength(text, "utf8"),
      chars: text.length,
      tokens: tokenCount(text),
    });
    const layerBytes = size.layers.reduce((sum, l) => sum + l.bytes, 0);
    expect(size.totals.systemPrompt.bytes).toBe(layerBytes + 2 * (layers.length - 1));
    expect(size.totals.tools).toEqual({
      count: 2,
      bytes: size.tools.reduce((sum, t) => sum + t.bytes, 0),
      tokens: size.tools.reduce((sum, t) => sum + t.tokens, 0),
    });
    expect(size.totals.fixed).toEqual({
      bytes: size.totals.systemPrompt.bytes + size.totals.tools.bytes,
      tokens: size.totals.systemPrompt.tokens + size.totals.tools.tokens,
    });
  });

  it("counts nothing for nothing", () => {
    expect(measurePrompt({ layers: [], tools: [] }).totals).toEqual({
      systemPrompt: { bytes: 0, chars: 0, tokens: 0 },
      tools: { count: 0, bytes: 0, tokens: 0 },
      fixed: { bytes: 0, tokens: 0 },
    });
    expect(tokenCount("")).toBe(0);
  });
});
