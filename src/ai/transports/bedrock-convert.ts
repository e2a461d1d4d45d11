/**
 * Internal (OpenAI-style) requests → AWS Bedrock Converse request objects, in the shape the AWS
 * SDK's `ConverseCommand` / `ConverseStreamCommand` take (images as `Uint8Array` bytes). Pure: no
 * I/O, no SDK.
 *
 * What Converse insists on, and how each rule is met here:
 * - System prompts live outside `messages`: every `system` message becomes a `{text}` block.
 * - The conversation starts with a user message and roles alternate: tool results become `user`
 *   messages of `toolResult` blocks, consecutive same-role messages merge (tool results first),
 *   and a conversation that would start with the assistant gets a placeholder user turn first.
 * - Every `toolUse` is answered by exactly one `toolResult` in the next message
 *   (`tool-pairing.ts`, shared with Anthropic): a missing result gets a stand-in, a result whose
 *   call is not in the previous turn, or a second result for one call, becomes plain text.
 * - `toolUse`/`toolResult` blocks need a `toolConfig`: a request without tools (a final summary
 *   call) gets the tool exchange rendered as text instead.
 * - Text blocks are never blank; only inline (`data:`) images in png/jpeg/gif/webp are accepted.
 * - `toolResult.status` is a Claude-only field, so it is sent to Claude models only.
 * - Signed reasoning goes back exactly as received, first in its assistant turn.
 */
import { INTERRUPTED_TOOL_RESULT } from "../history-repair.js";
import { type ChatRequest, type ContentPart, type Message, messageText, type ToolSchema } from "../types.js";
import {
  defaultMaxTokens,
  forbidsSamplingParams,
  parseArguments,
  thinkingParams,
} from "./anthropic-convert.js";
import { claudeToolSchema, isClaudeModel } from "./claude-model.js";
import { type MergeWire, mergeSameRole, type PairingWire, pairToolResults } from "./tool-pairing.js";
import { asRecord, positiveInt, str } from "./wire-values.js";

export type WireBlock = Record<string, unknown>;

export interface WireMessage {
  role: "user" | "assistant";
  content: WireBlock[];
}

/** `guardrailConfig` of a Converse request (a Bedrock guardrail applied to the conversation). */
export interface BedrockGuardrail {
  guardrailIdentifier: string;
  guardrailVersion: string;
  trace?: "enabled" | "disabled" | "enabled_full";
  /** Streaming only: "sync" (default) or "async". */
  streamProcessingMode?: "sync" | "async";
}

export interface BedrockBuildOptions {
  /** Place `cachePoint` blocks (system + last 3 messages) on Claude models. Default true. */
  promptCaching?: boolean;
  guardrail?: BedrockGuardrail | undefined;
}

/** `reasoning_details` entry for a signed reasoning block (only this transport reads it). */
export const REASONING_TEXT = "bedrock_reasoning_text";
/** `reasoning_details` entry for a redacted reasoning block; `data` is base64. */
export const REASONING_REDACTED = "bedrock_reasoning_redacted";

const EMPTY_TEXT = "(empty)";
const NO_OUTPUT = "(no output)";
/** Same wording as the history repair, which normally answers such calls before a request is built. */
const MISSING_RESULT = INTERRUPTED_TOOL_RESULT;
const IMAGE_FORMATS: Readonly<Record<string, string>> = {
  "image/png": "png",
  "image/jpeg": "jpeg",
  "image/jpg": "jpeg",
  "image/gif": "gif",
  "image/webp": "webp",
};
const CACHE_POINT: WireBlock = { cachePoint: { type: "default" } };
/** The call id a `toolResult` block answers. */
const resultId = (b: WireBlock) => str(asRecord(b["toolResult"])?.["toolUseId"]);

/**
 * The input of a Converse / ConverseStream command. `extraBody` goes in first: it may add fields
 * (`additionalModelRequestFields`, `guardrailConfig`, `performanceConfig`, `requestMetadata`,
 * `toolConfig.toolChoice`, `inferenceConfig.topP`, ...) and its `inferenceConfig` values win over
 * the derived ones, but it cannot replace the model, system prompt, messages or tools. `messages`
 * is the last key, after the stable parts.
 */
export function buildConverseRequest(
  request: ChatRequest,
  options: BedrockBuildOptions = {},
): Record<string, unknown> {
  const extra = request.extraBody ?? {};
  const body: Record<string, unknown> = { ...extra };
  const modelId = request.model.trim();
  const claude = isClaudeModel(modelId);
  const tools = request.tools && request.tools.length > 0 ? convertTools(request.tools) : undefined;
  const { system, messages } = convertMessages(request.messages, { claude, toolsAsText: !tools });
  body["modelId"] = modelId;
  if (system.length > 0) body["system"] = system;
  else delete body["system"];
  const extraTools = asRecord(extra["toolConfig"]);
  if (tools) body["toolConfig"] = { ...extraTools, tools };
  else delete body["toolConfig"];

  const extraInference = asRecord(extra["inferenceConfig"]) ?? {};
  const inference: Record<string, unknown> = {};
  const additional: Record<string, unknown> = { ...asRecord(extra["additionalModelRequestFields"]) };
  const thinking =
    claude && !("thinking" in additional) ? thinkingParams(modelId, request.reasoningEffort) : {};
  if (thinking.thinking) additional["thinking"] = thinking.thinking;
  if (thinking.effort) {
    additional["output_config"] = { ...asRecord(additional["output_config"]), effort: thinking.effort };
  }
  const wanted = positiveInt(request.maxTokens) ?? (claude ? defaultMaxTokens(modelId) : undefined);
  if (wanted !== undefined) {
    // Thinking tokens count toward maxTokens, and the budget must stay below it.
    inference["maxTokens"] = thinking.budget ? Math.max(wanted, thinking.budget + 4096) : wanted;
  }
  const thinkingOn = isThinkingOn(additional["thinking"]);
  if (request.temperature !== undefined && !thinkingOn && !(claude && forbidsSamplingParams(modelId))) {
    inference["temperature"] = request.temperature;
  }
  Object.assign(inference, extraInference);
  if (Object.keys(inference).length > 0) body["inferenceConfig"] = inference;
  if (Object.keys(additional).length > 0) body["additionalModelRequestFields"] = additional;
  if (options.guardrail && !("guardrailConfig" in extra)) body["guardrailConfig"] = { ...options.guardrail };
  if ((options.promptCaching ?? true) && claude) applyCachePoints(system, messages);
  delete body["messages"];
  body["messages"] = messages;
  return body;
}

export interface ConvertOptions {
  /** Claude models take `toolResult.status`. */
  claude?: boolean;
  /** Render tool calls and results as text (a request that declares no tools). */
  toolsAsText?: boolean;
}

/**
 * Splits internal messages into Converse `system` blocks and an alternating `messages` list that
 * starts with a user turn. Never mutates its input.
 */
export function convertMessages(
  input: readonly Message[],
  options: ConvertOptions = {},
): { system: WireBlock[]; messages: WireMessage[] } {
  const system: WireBlock[] = [];
  const converted: WireMessage[] = [];
  for (const message of input) {
    switch (message.role) {
      case "system": {
        const text = messageText({ content: message.content });
        if (text.trim()) system.push({ text });
        break;
      }
      case "user":
        converted.push({ role: "user", content: partBlocks(message.content) });
        break;
      case "assistant":
        converted.push({ role: "assistant", content: assistantBlocks(message, options) });
        break;
      case "tool":
        converted.push({ role: "user", content: [toolResultBlock(message, options)] });
        break;
    }
  }
  let messages = mergeSameRole(converted, MERGE);
  if (!options.toolsAsText) messages = pairToolResults(messages, pairing(options.claude ?? false));
  if (messages[0]?.role !== "user") messages.unshift({ role: "user", content: [] });
  for (const message of messages) {
    if (message.content.length === 0) message.content.push({ text: EMPTY_TEXT });
  }
  return { system, messages };
}

/** Tool schemas as `toolConfig.tools`; a repeated name is dropped (Bedrock rejects duplicates). */
export function convertTools(tools: readonly ToolSchema[]): WireBlock[] {
  const seen = new Set<string>();
  const out: WireBlock[] = [];
  for (const tool of tools) {
    const { name, description, parameters } = tool.function;
    if (seen.has(name)) continue;
    seen.add(name);
    const spec: WireBlock = { name, inputSchema: { json: claudeToolSchema(parameters) } };
    // The field has a minimum length of 1: an empty description is left out.
    if (description?.trim()) spec["description"] = description;
    out.push({ toolSpec: spec });
  }
  return out;
}

/**
 * Prompt-cache checkpoints: one after the system prompt and one at the end of each of the last
 * three messages, four in all (Bedrock's limit). Claude models only; the caller decides.
 */
export function applyCachePoints(system: WireBlock[], messages: WireMessage[]): void {
  if (system.length > 0) system.push({ ...CACHE_POINT });
  for (const message of messages.slice(-3)) message.content.push({ ...CACHE_POINT });
}

/**
 * An image part: a base64 `data:` URL in a format Bedrock reads becomes an `image` block with its
 * bytes. Anything else (a web URL, SVG, a non-base64 data URL) becomes a text note, because
 * Converse takes no image URLs and one bad image in history would fail every later request.
 */
export function imageBlock(url: string): WireBlock {
  const trimmed = url.trim();
  if (!trimmed.startsWith("data:")) {
    const shown = trimmed.length > 200 ? `${trimmed.slice(0, 200)}…` : trimmed;
    return { text: `[image omitted: Bedrock accepts only inline images, not a URL (${shown})]` };
  }
  const comma = trimmed.indexOf(",");
  const header = trimmed.slice("data:".length, comma === -1 ? undefined : comma);
  const mediaType = (header.split(";")[0] ?? "").trim().toLowerCase() || "image/jpeg";
  const format = IMAGE_FORMATS[mediaType];
  if (!format || !header.includes(";base64") || comma === -1) {
    return { text: `[image omitted: ${mediaType} is not an image format the model accepts]` };
  }
  const bytes = new Uint8Array(Buffer.from(trimmed.slice(comma + 1), "base64"));
  return { image: { format, source: { bytes } } };
}

/** Tool ids must match [a-zA-Z0-9_-]{1,64}; other characters become "_" (the same on use and result). */
export function toolUseId(id: string): string {
  return id.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64) || "tool_0";
}

/** True when a tool's result is the registry's error shape, `{"error": ...}`. */
export function isErrorResult(text: string): boolean {
  if (!text.trimStart().startsWith("{")) return false;
  try {
    const value: unknown = JSON.parse(text);
    return asRecord(value)?.["error"] !== undefined;
  } catch {
    return false;
  }
}

// ── blocks ──────────────────────────────────────────────────────────────

function isThinkingOn(value: unknown): boolean {
  const type = asRecord(value)?.["type"];
  return type !== undefined && type !== "disabled";
}

function partBlocks(content: Message["content"]): WireBlock[] {
  if (content == null) return [];
  if (typeof content === "string") return content.trim() ? [{ text: content }] : [];
  return content.flatMap((part: ContentPart): WireBlock[] => {
    if (part.type === "text") return part.text.trim() ? [{ text: part.text }] : [];
    return [imageBlock(part.image_url.url)];
  });
}

const isReasoning = (block: WireBlock) => block["reasoningContent"] !== undefined;
const isPlaceholder = (block: WireBlock) => block["text"] === EMPTY_TEXT;

/** Reasoning blocks to replay, rebuilt from their known fields; unsigned text is dropped. */
function replayReasoning(details: readonly unknown[] | undefined): WireBlock[] {
  const out: WireBlock[] = [];
  for (const raw of details ?? []) {
    const d = asRecord(raw);
    if (d?.["type"] === REASONING_TEXT && typeof d["signature"] === "string" && d["signature"] !== "") {
      const text = typeof d["text"] === "string" ? d["text"] : "";
      out.push({ reasoningContent: { reasoningText: { text, signature: d["signature"] } } });
    } else if (d?.["type"] === REASONING_REDACTED && typeof d["data"] === "string" && d["data"] !== "") {
      out.push({ reasoningContent: { redactedContent: new Uint8Array(Buffer.from(d["data"], "base64")) } });
    }
  }
  return out;
}

function assistantBlocks(message: Message, options: ConvertOptions): WireBlock[] {
  const blocks = replayReasoning(message.reasoning_details);
  const text = messageText({ content: message.content });
  if (text.trim()) blocks.push({ text });
  for (const call of message.tool_calls ?? []) {
    if (options.toolsAsText) {
      blocks.push({
        text: `[called tool ${call.function.name} with arguments ${call.function.arguments || "{}"}]`,
      });
      continue;
    }
    // Malformed arguments become {}: Claude takes only an object, and {} is what the agent loop
    // runs the tool with when it cannot repair them (its result then says so).
    blocks.push({
      toolUse: {
        toolUseId: toolUseId(call.id),
        name: call.function.name,
        input: parseArguments(call.function.arguments),
      },
    });
  }
  if (blocks.every(isReasoning)) blocks.push({ text: EMPTY_TEXT });
  return blocks;
}

function toolResultBlock(message: Message, options: ConvertOptions): WireBlock {
  const id = toolUseId(message.tool_call_id ?? "");
  const { content } = message;
  const text = messageText({ content: content });
  if (options.toolsAsText) return { text: `[result of tool call ${id}]\n${text.trim() ? text : NO_OUTPUT}` };
  let parts: WireBlock[];
  if (Array.isArray(content) && content.some((p) => p.type === "image_url")) parts = partBlocks(content);
  else parts = text.trim() ? [{ text }] : [];
  if (parts.length === 0) parts = [{ text: NO_OUTPUT }];
  const result: WireBlock = { toolUseId: id, content: parts };
  if (options.claude && isErrorResult(text)) result["status"] = "error";
  return { toolResult: result };
}

/** Tool-call pairing in Converse blocks (the rules are in `tool-pairing.ts`). */
function pairing(claude: boolean): PairingWire {
  return {
    callId: (b) => str(asRecord(b["toolUse"])?.["toolUseId"]),
    resultId,
    resultText: (b) => {
      const content = asRecord(b["toolResult"])?.["content"];
      const parts = Array.isArray(content) ? (content as WireBlock[]) : [];
      return parts.map((p) => (typeof p["text"] === "string" ? p["text"] : "[image]")).join("\n");
    },
    textBlock: (text) => ({ text }),
    missingResult: (id) => ({
      toolResult: {
        toolUseId: id,
        content: [{ text: MISSING_RESULT }],
        ...(claude ? { status: "error" } : {}),
      },
    }),
  };
}

/** Same-role merging in Converse blocks (the rules are in `tool-pairing.ts`). */
const MERGE: MergeWire = {
  resultId,
  isReasoning,
  isPlaceholder,
  placeholder: () => ({ text: EMPTY_TEXT }),
};
