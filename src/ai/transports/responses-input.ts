/**
 * Internal messages → an OpenAI Responses API request body. Stateless by default (`store: false`):
 * the whole conversation travels as `input` items on every request, with the model's earlier
 * reasoning replayed as encrypted reasoning items so it carries across turns.
 */
import { createHash } from "node:crypto";
import type { ChatRequest, ContentPart, Message, ToolSchema } from "../types.js";
import { asRecord } from "./wire-values.js";

type Item = Record<string, unknown>;

export interface ResponsesBodyOptions {
  /** Let the provider keep the response (`store: true`); reasoning items are then replayed by id. */
  store: boolean;
}

/**
 * The Responses request body (always streaming). `extraBody` goes in first, so it can add fields
 * (`prompt_cache_key`, `text.verbosity`, ...) but cannot change model, input, stream or store.
 * Leading system messages become `instructions`; a system message later in the history becomes a
 * `developer` message in place.
 */
export function buildResponsesBody(
  request: ChatRequest,
  options: ResponsesBodyOptions,
): Record<string, unknown> {
  const body: Record<string, unknown> = { ...request.extraBody };
  const messages = request.messages;
  let start = 0;
  const instructions: string[] = [];
  while (start < messages.length && messages[start]?.role === "system") {
    const text = plainText(messages[start]?.content ?? null);
    if (text !== "") instructions.push(text);
    start++;
  }
  body["model"] = request.model;
  if (instructions.length > 0) body["instructions"] = instructions.join("\n\n");
  body["input"] = toResponsesInput(messages.slice(start), options);
  if (request.tools && request.tools.length > 0) {
    body["tools"] = request.tools.map(toResponsesTool);
    body["tool_choice"] ??= "auto";
  }
  if (request.maxTokens !== undefined) body["max_output_tokens"] = request.maxTokens;
  if (request.temperature !== undefined) body["temperature"] = request.temperature;
  if (request.reasoningEffort) body["reasoning"] = { effort: request.reasoningEffort, summary: "auto" };
  body["store"] = options.store;
  if (!options.store) {
    // Without stored state the reasoning only survives as encrypted content we hold and send back.
    const include = Array.isArray(body["include"]) ? (body["include"] as unknown[]) : [];
    body["include"] = include.includes("reasoning.encrypted_content")
      ? include
      : [...include, "reasoning.encrypted_content"];
  }
  body["stream"] = true;
  // The conversation goes last, so each request's bytes are a prefix of the next one's.
  const input = body["input"];
  delete body["input"];
  body["input"] = input;
  return body;
}

export function toResponsesTool(tool: ToolSchema): Item {
  return {
    type: "function",
    name: tool.function.name,
    description: tool.function.description,
    parameters: tool.function.parameters,
    // Hermes schemas use optional properties, which strict mode rejects.
    strict: false,
  };
}

/**
 * Messages (without the leading system prompt) → `input` items. Per assistant message, in the
 * order the API produced them: its reasoning items, its text as an output message, its tool calls
 * as `function_call` items. Tool results become `function_call_output` items; a tool message
 * without a call id cannot be paired, so its content travels as a user message rather than being lost.
 */
export function toResponsesInput(messages: readonly Message[], options: ResponsesBodyOptions): Item[] {
  const items: Item[] = [];
  const replayedReasoning = new Set<string>();
  for (const message of messages) {
    switch (message.role) {
      case "system":
        items.push({ type: "message", role: "developer", content: inputParts(message.content) });
        break;
      case "user":
        items.push({ type: "message", role: "user", content: inputParts(message.content) });
        break;
      case "assistant":
        items.push(...assistantItems(message, options, replayedReasoning));
        break;
      case "tool": {
        const id = message.tool_call_id?.trim();
        if (!id) {
          const label = message.name ? `Result of tool ${message.name}` : "Tool result";
          items.push({
            type: "message",
            role: "user",
            content: [{ type: "input_text", text: `${label}:\n${plainText(message.content)}` }],
          });
          break;
        }
        items.push({ type: "function_call_output", call_id: toWireCallId(id), output: toolOutput(message) });
        break;
      }
    }
  }
  return items;
}

function assistantItems(message: Message, options: ResponsesBodyOptions, replayed: Set<string>): Item[] {
  const items: Item[] = [];
  for (const raw of message.codex_reasoning_items ?? []) {
    const item = replayableReasoning(raw, options.store);
    if (!item) continue;
    const id = asRecord(raw)?.["id"];
    if (typeof id === "string" && id !== "") {
      // The same item twice in one input is rejected; it can repeat after history edits.
      if (replayed.has(id)) continue;
      replayed.add(id);
    }
    items.push(item);
  }
  const text = plainText(message.content);
  const calls = message.tool_calls ?? [];
  // Every reasoning item must be followed by an output item, so reasoning alone gets an empty message.
  if (text !== "" || (calls.length === 0 && items.length > 0)) {
    items.push({ type: "message", role: "assistant", content: [{ type: "output_text", text }] });
  }
  for (const call of calls) {
    items.push({
      type: "function_call",
      call_id: toWireCallId(call.id),
      name: call.function.name,
      arguments: call.function.arguments.trim() === "" ? "{}" : call.function.arguments,
    });
  }
  return items;
}

/**
 * A stored reasoning item as it goes back on the wire, or undefined when it cannot be replayed.
 * Stateless (`store: false`): only items carrying `encrypted_content` are useful, and their `id` is
 * dropped because the API would look it up among stored items and answer 404. Stored: sent whole.
 */
function replayableReasoning(raw: unknown, store: boolean): Item | undefined {
  const item = asRecord(raw);
  if (item?.["type"] !== "reasoning") return undefined;
  if (store) return { ...item };
  const encrypted = item["encrypted_content"];
  if (typeof encrypted !== "string" || encrypted === "") return undefined;
  const { id: _id, ...rest } = item;
  return rest;
}

const VALID_CALL_ID = /^[\x21-\x7e]{1,64}$/;

/**
 * The wire `call_id` for an internal tool-call id. Ids the Responses API produced (`call_...`) and
 * most others pass through unchanged, so prompt-cache prefixes stay stable. The API rejects a
 * call_id over 64 characters; such ids (and ids with spaces or non-ASCII characters, from other
 * providers or older sessions) map to `call_` + the first 32 hex digits of their SHA-256. The
 * mapping is a pure function of the id, so a `function_call` and its `function_call_output` keep
 * matching without any state.
 */
export function toWireCallId(id: string): string {
  if (VALID_CALL_ID.test(id)) return id;
  return `call_${createHash("sha256").update(id, "utf8").digest("hex").slice(0, 32)}`;
}

function inputParts(content: Message["content"]): Item[] {
  if (content == null) return [{ type: "input_text", text: "" }];
  if (typeof content === "string") return [{ type: "input_text", text: content }];
  const parts = content.map(inputPart);
  return parts.length > 0 ? parts : [{ type: "input_text", text: "" }];
}

function inputPart(part: ContentPart): Item {
  if (part.type === "text") return { type: "input_text", text: part.text };
  return { type: "input_image", image_url: part.image_url.url, detail: "auto" };
}

/** A tool result: plain text, or text and image parts when the tool returned parts. */
function toolOutput(message: Message): string | Item[] {
  const { content } = message;
  if (content == null) return "";
  if (typeof content === "string") return content;
  return content.map(inputPart);
}

function plainText(content: Message["content"]): string {
  if (content == null) return "";
  if (typeof content === "string") return content;
  return content.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");
}
