/**
 * An editor's prompt (ACP content blocks) as the user message Hermes sends the model: text as
 * text, images as `image_url` data parts, embedded file contents (the editor's "context") as
 * fenced text naming their URI, links as a line naming them. Pure.
 */
import type { ContentBlock } from "@agentclientprotocol/sdk";
import type { ContentPart } from "../ai/types.js";
import { fenced } from "./tool-updates.js";

/** Images the model may be sent (what `attachments/images.ts` accepts from the CLI). */
const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

export interface PromptInput {
  /** A plain string when the prompt is text only, else parts. */
  content: string | ContentPart[];
  /** Blocks that were left out, one line each, for the editor to show. */
  skipped: string[];
}

/** Converts the prompt; never throws (an unusable block is skipped and reported). */
export function promptInput(blocks: readonly ContentBlock[]): PromptInput {
  const parts: ContentPart[] = [];
  const skipped: string[] = [];
  const text = (value: string) => {
    const last = parts[parts.length - 1];
    if (last?.type === "text") last.text += `\n\n${value}`;
    else parts.push({ type: "text", text: value });
  };
  for (const block of blocks) {
    switch (block.type) {
      case "text":
        if (block.text) text(block.text);
        break;
      case "image":
        if (!IMAGE_TYPES.has(block.mimeType)) {
          skipped.push(`an image of type ${block.mimeType} (the model takes PNG, JPEG, GIF or WebP)`);
          break;
        }
        parts.push({ type: "image_url", image_url: { url: `data:${block.mimeType};base64,${block.data}` } });
        break;
      case "resource": {
        const resource = block.resource;
        if ("text" in resource && typeof resource.text === "string") {
          text(`Context from ${resource.uri}:\n${fenced(resource.text)}`);
        } else {
          skipped.push(`the binary resource ${resource.uri} (only text context can be sent)`);
        }
        break;
      }
      case "resource_link":
        text(`[Referenced: ${block.name} <${block.uri}>]`);
        break;
      case "audio":
        skipped.push("an audio clip (audio prompts are not supported)");
        break;
      default:
        skipped.push("a content block of an unknown type");
    }
  }
  if (parts.every((p) => p.type === "text")) {
    return { content: parts.map((p) => (p as { text: string }).text).join("\n\n"), skipped };
  }
  return { content: parts, skipped };
}
