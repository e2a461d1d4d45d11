/**
 * What an MCP tool's result becomes for the model: text as it is, images written to a file the
 * agent can open (vision, the file tools), audio and binary resources summarised by type and size
 * rather than pasted as base64, and `isError` as `{"error": ...}`.
 */
import { createHash } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CallToolResult, GetPromptResult, ReadResourceResult } from "@modelcontextprotocol/sdk/types.js";
import { sanitizeNamePart } from "./names.js";

export interface RenderOptions {
  /** Server name, used in saved file names. */
  server: string;
  /** Where images are written; default `<tmpdir>/hermes-mcp-images-<uid>` (mode 0700). */
  imageDir?: string;
}

/** Whatever a content block may be; unknown types are summarised, never dropped silently. */
type Block = { type: string; [key: string]: unknown };

/** The tool's result as a string for the model, or `{error}` when the server flagged an error. */
export async function renderToolResult(
  result: CallToolResult,
  options: RenderOptions,
): Promise<string | { error: string }> {
  const parts: string[] = [];
  for (const block of (result.content ?? []) as Block[]) parts.push(await renderBlock(block, options));
  let text = parts.filter((part) => part !== "").join("\n");
  if (text === "" && result.structuredContent !== undefined) text = JSON.stringify(result.structuredContent);
  if (result.isError) return { error: text || "The tool reported an error without a message." };
  return text === "" ? "(the tool returned no content)" : text;
}

/** `resources/read` contents: text resources as text, binary ones summarised. */
export function renderResourceContents(result: ReadResourceResult): string {
  const parts = result.contents.map((item) => {
    const mime = item.mimeType ? ` (${item.mimeType})` : "";
    if ("text" in item && typeof item.text === "string") {
      return result.contents.length === 1 ? item.text : `[resource ${item.uri}${mime}]\n${item.text}`;
    }
    const blob = "blob" in item && typeof item.blob === "string" ? item.blob : "";
    return `[resource ${item.uri}: ${item.mimeType ?? "binary"}, ${formatSize(base64Bytes(blob))}, not shown]`;
  });
  return parts.join("\n\n") || "(the resource is empty)";
}

/** A prompt's messages as `role: text` blocks, resources and images summarised. */
export async function renderPrompt(result: GetPromptResult, options: RenderOptions): Promise<string> {
  const lines: string[] = [];
  if (result.description) lines.push(`Description: ${result.description}`);
  for (const message of result.messages) {
    lines.push(`${message.role}: ${await renderBlock(message.content as Block, options)}`);
  }
  return lines.join("\n\n");
}

async function renderBlock(block: Block, options: RenderOptions): Promise<string> {
  switch (block.type) {
    case "text":
      return typeof block["text"] === "string" ? block["text"] : "";
    case "image":
      return renderImage(block, options);
    case "audio": {
      const data = typeof block["data"] === "string" ? block["data"] : "";
      return `[audio ${stringField(block, "mimeType") ?? "audio"}, ${formatSize(base64Bytes(data))}, not shown]`;
    }
    case "resource_link": {
      const name = stringField(block, "name");
      const mime = stringField(block, "mimeType");
      return `[resource link ${stringField(block, "uri") ?? "?"}${name ? ` "${name}"` : ""}${mime ? ` (${mime})` : ""}]`;
    }
    case "resource": {
      const resource = (block["resource"] ?? {}) as {
        uri?: string;
        mimeType?: string;
        text?: unknown;
        blob?: unknown;
      };
      if (typeof resource.text === "string") {
        return `[resource ${resource.uri ?? "?"}${resource.mimeType ? ` (${resource.mimeType})` : ""}]\n${resource.text}`;
      }
      const blob = typeof resource.blob === "string" ? resource.blob : "";
      return `[resource ${resource.uri ?? "?"}: ${resource.mimeType ?? "binary"}, ${formatSize(base64Bytes(blob))}, not shown]`;
    }
    default:
      return `[${String(block.type)} content, not shown]`;
  }
}

async function renderImage(block: Block, options: RenderOptions): Promise<string> {
  const data = typeof block["data"] === "string" ? block["data"] : "";
  const mime = stringField(block, "mimeType") ?? "image";
  const summary = `${mime}, ${formatSize(base64Bytes(data))}`;
  if (!data) return `[image ${summary}, empty]`;
  const bytes = Buffer.from(data, "base64");
  // Per user and private: a tool's images may be as personal as its other results.
  const dir = options.imageDir ?? join(tmpdir(), `hermes-mcp-images-${process.getuid?.() ?? "user"}`);
  const hash = createHash("sha256").update(bytes).digest("hex").slice(0, 16);
  const file = join(dir, `${sanitizeNamePart(options.server)}-${hash}.${extensionFor(mime)}`);
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await writeFile(file, bytes);
    return `[image ${summary}, saved to ${file}]`;
  } catch (error) {
    return `[image ${summary}, not shown: could not save it (${error instanceof Error ? error.message : String(error)})]`;
  }
}

function extensionFor(mime: string): string {
  const sub = mime.split("/")[1]?.toLowerCase() ?? "";
  if (sub === "jpeg") return "jpg";
  if (sub === "svg+xml") return "svg";
  return /^[a-z0-9]{1,8}$/.test(sub) ? sub : "bin";
}

function stringField(block: Block, key: string): string | undefined {
  const value = block[key];
  return typeof value === "string" && value !== "" ? value : undefined;
}

function base64Bytes(data: string): number {
  const clean = data.replace(/\s/g, "");
  const padding = clean.endsWith("==") ? 2 : clean.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((clean.length * 3) / 4) - padding);
}

/** 512 B, 1.2 KB, 3.4 MB. */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
