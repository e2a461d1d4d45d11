import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  formatSize,
  renderPrompt,
  renderResourceContents,
  renderToolResult,
} from "../../../../src/tools/mcp/results.js";
import { describeTool, normaliseInputSchema } from "../../../../src/tools/mcp/tools.js";

const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

describe("MCP results as the model sees them", () => {
  it("joins text blocks and writes images to a file it names", async () => {
    const imageDir = mkdtempSync(join(tmpdir(), "hermes-mcp-img-"));
    const text = await renderToolResult(
      {
        content: [
          { type: "text", text: "first" },
          { type: "image", mimeType: "image/png", data: PNG },
          { type: "text", text: "second" },
        ],
      },
      { server: "pics", imageDir },
    );
    expect(typeof text).toBe("string");
    const lines = String(text).split("\n");
    expect(lines[0]).toBe("first");
    expect(lines[2]).toBe("second");
    const path = /saved to (\S+)\]/.exec(lines[1] ?? "")?.[1] ?? "";
    expect(lines[1]).toMatch(/^\[image image\/png, 70 B, saved to .*pics-[0-9a-f]{16}\.png\]$/);
    expect(existsSync(path)).toBe(true);
    expect(readFileSync(path).subarray(1, 4).toString()).toBe("PNG");
  });

  it("summarises audio and binary resources instead of pasting base64", async () => {
    const text = String(
      await renderToolResult(
        {
          content: [
            { type: "audio", mimeType: "audio/wav", data: Buffer.alloc(3000).toString("base64") },
            {
              type: "resource",
              resource: { uri: "file:///a.bin", mimeType: "application/zip", blob: "AAAA" },
            },
            { type: "resource", resource: { uri: "memo://1", mimeType: "text/plain", text: "hello" } },
            { type: "resource_link", uri: "file:///doc.md", name: "doc", mimeType: "text/markdown" },
          ],
        },
        { server: "s" },
      ),
    );
    expect(text).toContain("[audio audio/wav, 2.9 KB, not shown]");
    expect(text).toContain("[resource file:///a.bin: application/zip, 3 B, not shown]");
    expect(text).toContain("[resource memo://1 (text/plain)]\nhello");
    expect(text).toContain('[resource link file:///doc.md "doc" (text/markdown)]');
    expect(text).not.toContain("AAAA");
  });

  it("turns isError into {error}, and falls back to structured content", async () => {
    expect(
      await renderToolResult(
        { content: [{ type: "text", text: "disk full" }], isError: true },
        { server: "s" },
      ),
    ).toEqual({ error: "disk full" });
    expect(await renderToolResult({ content: [], isError: true }, { server: "s" })).toEqual({
      error: "The tool reported an error without a message.",
    });
    expect(await renderToolResult({ content: [], structuredContent: { temp: 21 } }, { server: "s" })).toBe(
      '{"temp":21}',
    );
    expect(await renderToolResult({ content: [] }, { server: "s" })).toBe("(the tool returned no content)");
  });

  it("renders resources and prompts", async () => {
    expect(renderResourceContents({ contents: [{ uri: "a://1", text: "body" }] })).toBe("body");
    expect(
      await renderPrompt(
        {
          description: "Greets",
          messages: [
            { role: "user", content: { type: "text", text: "Say hi to Ana" } },
            { role: "assistant", content: { type: "text", text: "Hi Ana" } },
          ],
        },
        { server: "s" },
      ),
    ).toBe("Description: Greets\n\nuser: Say hi to Ana\n\nassistant: Hi Ana");
  });

  it("formats sizes", () => {
    expect([formatSize(10), formatSize(2048), formatSize(5 * 1024 * 1024)]).toEqual([
      "10 B",
      "2.0 KB",
      "5.0 MB",
    ]);
  });
});

describe("MCP tool definitions", () => {
  it("keeps short descriptions and cuts long ones at a word", () => {
    expect(describeTool({ name: "t", description: "  Reads a file.  " }, "s")).toBe("Reads a file.");
    expect(describeTool({ name: "t" }, "fs")).toBe('Tool "t" of the MCP server "fs".');
    const long = describeTool({ name: "t", description: "word ".repeat(400) }, "s");
    expect(long.length).toBeLessThanOrEqual(1024);
    expect(long.endsWith("word…")).toBe(true);
  });

  it("makes any input schema an object schema ajv can compile", () => {
    expect(normaliseInputSchema(undefined)).toEqual({ type: "object", properties: {} });
    expect(
      normaliseInputSchema({ $schema: "https://json-schema.org/draft/2020-12/schema", type: "object" }),
    ).toEqual({ type: "object", properties: {} });
    expect(normaliseInputSchema({ properties: { a: { type: "string" } } })).toEqual({
      type: "object",
      properties: { a: { type: "string" } },
    });
  });
});
