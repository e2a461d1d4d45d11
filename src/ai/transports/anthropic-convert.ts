/**
 * Internal (OpenAI-style) requests → Anthropic Messages API request bodies. Pure: no I/O, no SDK.
 *
 * What the Messages API insists on, and how each rule is met here:
 * - System prompts live outside `messages`: every `system` message becomes a text block of `system`.
 * - Roles alternate user/assistant: tool results become `user` messages of `tool_result` blocks, and
 *   consecutive same-role messages merge into one (tool results first, then any user text).
 * - Every `tool_use` is answered by exactly one `tool_result` in the very next user message
 *   (`tool-pairing.ts`, shared with Bedrock): a missing result gets a stand-in (the tool_use is
 *   never dropped, which would void a signed thinking block), and a result whose call is not in
 *   the previous assistant turn, or a second result for one call, becomes plain text.
 * - Text blocks are never blank: blank text is dropped and an empty message says "(empty)".
 * - Signed thinking blocks go back exactly as received, first in their assistant turn.
 * - `max_tokens` is required; thinking budgets must fit under it.
 */
import { INTERRUPTED_TOOL_RESULT } from "../history-repair.js";
import { type ChatRequest, type ContentPart, type Message, messageText, type ToolSchema } from "../types.js";
import { claudeToolSchema, isClaudeModel } from "./claude-model.js";
import { type MergeWire, mergeSameRole, type PairingWire, pairToolResults } from "./tool-pairing.js";
import { positiveInt } from "./wire-values.js";

export type CacheTtl = "5m" | "1h";

export type WireBlock = Record<string, unknown>;

export interface WireMessage {
  role: "user" | "assistant";
  content: WireBlock[];
}

export interface BuildOptions {
  /** Place `cache_control` breakpoints (system + last 3 messages). */
  promptCaching: boolean;
  cacheTtl: CacheTtl;
  stream: boolean;
}

const EMPTY_TEXT = "(empty)";
const NO_OUTPUT = "(no output)";
/** Same wording as the history repair, which normally answers such calls before a request is built. */
const MISSING_RESULT = INTERRUPTED_TOOL_RESULT;
const THINKING_TYPES = new Set(["thinking", "redacted_thinking"]);
/** Image types the Messages API accepts inline. */
const IMAGE_TYPES = new Set(["image/jpeg", "image/png", "image/gif", "image/webp"]);

/** Thinking budgets (tokens) for models that take `thinking: {type: "enabled", budget_tokens}`. */
export const THINKING_BUDGETS: Readonly<Record<string, number>> = {
  minimal: 1024,
  low: 4000,
  medium: 8000,
  high: 16000,
  xhigh: 32000,
  max: 32000,
};

/**
 * The request body for `POST /v1/messages`. `extraBody` goes in first: it may add fields
 * (`metadata`, `stop_sequences`, `thinking`, `output_config`, ...) and its `thinking`,
 * `max_tokens` and `temperature` win over the derived ones, but it cannot replace the model,
 * system prompt, messages, tools or stream mode.
 */
export function buildAnthropicBody(request: ChatRequest, options: BuildOptions): Record<string, unknown> {
  const extra = request.extraBody ?? {};
  const body: Record<string, unknown> = { ...extra };
  const model = normalizeModelName(request.model);
  const { system, messages } = convertMessages(request.messages);
  body["model"] = model;
  body["messages"] = messages;
  if (system.length > 0) body["system"] = system;
  else delete body["system"];
  if (request.tools && request.tools.length > 0) body["tools"] = convertTools(request.tools);
  else delete body["tools"];

  const thinking = "thinking" in extra ? undefined : thinkingParams(model, request.reasoningEffort);
  if (thinking?.thinking) body["thinking"] = thinking.thinking;
  if (thinking?.effort) {
    const current = body["output_config"];
    const base = typeof current === "object" && current !== null ? current : {};
    body["output_config"] = { ...base, effort: thinking.effort };
  }
  if (!("max_tokens" in extra)) {
    const wanted = positiveInt(request.maxTokens) ?? defaultMaxTokens(model);
    // Thinking tokens count toward max_tokens, and the budget must stay below it.
    body["max_tokens"] = thinking?.budget ? Math.max(wanted, thinking.budget + 4096) : wanted;
  }
  const thinkingOn = isThinkingOn(body["thinking"]);
  if (request.temperature !== undefined && !("temperature" in extra)) {
    // Extended thinking rejects any temperature but 1; newer Claude models reject sampling params.
    if (!thinkingOn && !forbidsSamplingParams(model)) body["temperature"] = request.temperature;
  }
  body["stream"] = options.stream;
  if (options.promptCaching) applyCacheControl(system, messages, options.cacheTtl);
  // Messages go last, so the stable parts (system prompt, tools) lead every request's bytes and
  // the conversation only grows at the end.
  delete body["messages"];
  body["messages"] = messages;
  return body;
}

/**
 * Splits internal messages into Anthropic's `system` blocks and an alternating `messages` list.
 * Never mutates its input: every block is a fresh object, so cache markers added later cannot leak
 * into the caller's history.
 */
export function convertMessages(input: readonly Message[]): { system: WireBlock[]; messages: WireMessage[] } {
  const system: WireBlock[] = [];
  const converted: WireMessage[] = [];
  for (const message of input) {
    switch (message.role) {
      case "system": {
        const text = messageText({ content: message.content });
        if (text.trim()) system.push({ type: "text", text });
        break;
      }
      case "user":
        converted.push({ role: "user", content: userBlocks(message.content) });
        break;
      case "assistant":
        converted.push({ role: "assistant", content: assistantBlocks(message) });
        break;
      case "tool":
        converted.push({ role: "user", content: [toolResultBlock(message)] });
        break;
    }
  }
  const messages = pairToolResults(mergeSameRole(converted, MERGE), PAIRING);
  for (const message of messages) {
    if (message.content.length === 0) message.content.push({ type: "text", text: EMPTY_TEXT });
  }
  return { system, messages };
}

/** Tool schemas in Anthropic's shape; a repeated name is dropped (the API rejects duplicates). */
export function convertTools(tools: readonly ToolSchema[]): WireBlock[] {
  const seen = new Set<string>();
  const out: WireBlock[] = [];
  for (const tool of tools) {
    const { name, description, parameters } = tool.function;
    if (seen.has(name)) continue;
    seen.add(name);
    out.push({ name, description, input_schema: claudeToolSchema(parameters) });
  }
  return out;
}

/**
 * Prompt-cache breakpoints, "system_and_3": the system prompt's last block and the last
 * cacheable block of each of the last three messages. At most four, the API's limit. Thinking
 * blocks never carry one (a marker there breaks signature checks).
 */
export function applyCacheControl(system: WireBlock[], messages: WireMessage[], ttl: CacheTtl): void {
  const marker = () => (ttl === "1h" ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" });
  const lastSystem = system.at(-1);
  if (lastSystem) lastSystem["cache_control"] = marker();
  for (const message of messages.slice(-3)) {
    const block = [...message.content].reverse().find((b) => !THINKING_TYPES.has(String(b["type"])));
    if (block) block["cache_control"] = marker();
  }
}

/**
 * Model id as Anthropic spells it: an OpenRouter-style `anthropic/` prefix is dropped and version
 * dots become hyphens for Claude ids (`claude-opus-4.6` → `claude-opus-4-6`). Other ids pass as-is.
 */
export function normalizeModelName(model: string): string {
  let name = model.trim();
  if (name.toLowerCase().startsWith("anthropic/")) name = name.slice("anthropic/".length);
  if (name.toLowerCase().startsWith("claude-")) name = name.replace(/\./g, "-");
  return name;
}

/** Older Claude families that take budget-based thinking only (no adaptive thinking). */
const LEGACY_THINKING = [
  "claude-3",
  "claude-opus-4-0",
  "claude-opus-4-1",
  "claude-sonnet-4-0",
  "claude-opus-4-2025",
  "claude-sonnet-4-2025",
  "claude-opus-4-5",
  "claude-sonnet-4-5",
  "claude-haiku-4-5",
];
/** Adaptive families that have no "xhigh" effort and still accept sampling parameters. */
const ADAPTIVE_NO_XHIGH = ["claude-opus-4-6", "claude-sonnet-4-6"];
/** Claude models without extended thinking at all. */
const NO_THINKING = ["claude-3-haiku", "claude-3-opus", "claude-3-sonnet", "claude-3-5"];

const matches = (model: string, families: readonly string[]) => {
  const m = model.toLowerCase();
  return families.some((f) => m.includes(f));
};

/** True for Claude models that take `thinking: {type: "adaptive"}` plus `output_config.effort`. */
export function supportsAdaptiveThinking(model: string): boolean {
  return isClaudeModel(model) && !matches(model, LEGACY_THINKING);
}

/** True for models that reject temperature / top_p / top_k (Claude after the 4.6 family). */
export function forbidsSamplingParams(model: string): boolean {
  return supportsAdaptiveThinking(model) && !matches(model, ADAPTIVE_NO_XHIGH);
}

export interface ThinkingParams {
  thinking?: Record<string, unknown>;
  /** `output_config.effort` for adaptive thinking. */
  effort?: string;
  /** `budget_tokens` when thinking is budget-based. */
  budget?: number;
}

/**
 * Maps Hermes's `reasoning_effort` onto Anthropic thinking. Empty: nothing is sent (the model's
 * default). "none"/"off": adaptive Claude models get `{type: "disabled"}` (they think unless told
 * not to); others get nothing. Otherwise adaptive models (Claude 4.6 and later) get
 * `{type: "adaptive", display: "summarized"}` with `output_config.effort`, and older Claude and
 * Anthropic-compatible models (MiniMax, ...) get `{type: "enabled", budget_tokens}` from
 * `THINKING_BUDGETS` (unknown levels count as "medium").
 */
export function thinkingParams(model: string, effort: string | undefined): ThinkingParams {
  const level = (effort ?? "").trim().toLowerCase();
  if (level === "") return {};
  if (["none", "off", "disabled", "false"].includes(level)) {
    return supportsAdaptiveThinking(model) ? { thinking: { type: "disabled" } } : {};
  }
  if (isClaudeModel(model) && matches(model, NO_THINKING)) return {};
  if (supportsAdaptiveThinking(model)) {
    let mapped = (
      {
        minimal: "low",
        low: "low",
        medium: "medium",
        high: "high",
        xhigh: "xhigh",
        max: "max",
        ultra: "max",
      } as Record<string, string>
    )[level];
    mapped ??= "medium";
    if (mapped === "xhigh" && matches(model, ADAPTIVE_NO_XHIGH)) mapped = "max";
    return { thinking: { type: "adaptive", display: "summarized" }, effort: mapped };
  }
  const budget = THINKING_BUDGETS[level] ?? THINKING_BUDGETS["medium"] ?? 8000;
  return { thinking: { type: "enabled", budget_tokens: budget }, budget };
}

/**
 * `max_tokens` when the caller set none. Kept moderate rather than each model's ceiling: Anthropic
 * counts `max_tokens` against the output-token rate limit when a request starts.
 */
export function defaultMaxTokens(model: string): number {
  const m = model.toLowerCase();
  if (m.includes("claude-3-5")) return 8192;
  if (/claude-3-(opus|sonnet|haiku)/.test(m)) return 4096;
  return 16384;
}

function isThinkingOn(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return false;
  const type = (value as Record<string, unknown>)["type"];
  return type !== "disabled";
}

function textBlock(text: string): WireBlock {
  return { type: "text", text };
}

function userBlocks(content: Message["content"]): WireBlock[] {
  if (content == null) return [];
  if (typeof content === "string") return content.trim() ? [textBlock(content)] : [];
  return partBlocks(content);
}

function partBlocks(parts: readonly ContentPart[]): WireBlock[] {
  const out: WireBlock[] = [];
  for (const part of parts) {
    const block = partBlock(part);
    if (block) out.push(block);
  }
  return out;
}

function partBlock(part: ContentPart): WireBlock | undefined {
  if (part.type === "text") return part.text.trim() ? textBlock(part.text) : undefined;
  return imageBlock(part.image_url.url);
}

/**
 * An image part: a `data:` URL becomes a base64 source, anything else a URL source. An inline type
 * the API refuses (SVG, BMP, ...) becomes a note, because one bad image in history would fail every
 * later request.
 */
export function imageBlock(url: string): WireBlock {
  const trimmed = url.trim();
  if (!trimmed.startsWith("data:")) return { type: "image", source: { type: "url", url: trimmed } };
  const comma = trimmed.indexOf(",");
  const header = trimmed.slice("data:".length, comma === -1 ? undefined : comma);
  const data = comma === -1 ? "" : trimmed.slice(comma + 1);
  let mediaType = (header.split(";")[0] ?? "").trim().toLowerCase();
  if (mediaType === "image/jpg") mediaType = "image/jpeg";
  if (mediaType === "") mediaType = "image/jpeg";
  if (!IMAGE_TYPES.has(mediaType) || !header.includes(";base64")) {
    return textBlock(`[image omitted: ${mediaType} is not an image format the model accepts]`);
  }
  return { type: "image", source: { type: "base64", media_type: mediaType, data } };
}

/** Thinking blocks to replay, rebuilt from their known fields only; unsigned ones are dropped. */
function replayThinking(details: readonly unknown[] | undefined): WireBlock[] {
  const out: WireBlock[] = [];
  for (const raw of details ?? []) {
    if (typeof raw !== "object" || raw === null) continue;
    const d = raw as Record<string, unknown>;
    if (d["type"] === "thinking" && typeof d["signature"] === "string" && d["signature"] !== "") {
      out.push({
        type: "thinking",
        thinking: typeof d["thinking"] === "string" ? d["thinking"] : "",
        signature: d["signature"],
      });
    } else if (d["type"] === "redacted_thinking" && typeof d["data"] === "string" && d["data"] !== "") {
      out.push({ type: "redacted_thinking", data: d["data"] });
    }
  }
  return out;
}

function assistantBlocks(message: Message): WireBlock[] {
  const blocks = replayThinking(message.reasoning_details);
  const text = messageText({ content: message.content });
  if (text.trim()) blocks.push(textBlock(text));
  for (const call of message.tool_calls ?? []) {
    blocks.push({
      type: "tool_use",
      id: toolId(call.id),
      name: call.function.name,
      input: parseArguments(call.function.arguments),
    });
  }
  if (!blocks.some((b) => !THINKING_TYPES.has(String(b["type"])))) blocks.push(textBlock(EMPTY_TEXT));
  return blocks;
}

/**
 * A tool call's `input`: the arguments parsed as a JSON object. Arguments that are not a JSON
 * object become `{}`: the API accepts only an object, and `{}` is what the agent loop runs a tool
 * with when it cannot repair its arguments (the tool result then says so).
 */
export function parseArguments(raw: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/** Tool ids must match [a-zA-Z0-9_-]; other characters become "_" (the same on use and result). */
export function toolId(id: string): string {
  return id.replace(/[^a-zA-Z0-9_-]/g, "_") || "tool_0";
}

function toolResultBlock(message: Message): WireBlock {
  const { content } = message;
  let value: string | WireBlock[];
  if (Array.isArray(content) && content.some((p) => p.type === "image_url")) {
    value = partBlocks(content);
  } else {
    value = messageText({ content: content });
  }
  if (value.length === 0 || (typeof value === "string" && !value.trim())) value = NO_OUTPUT;
  return { type: "tool_result", tool_use_id: toolId(message.tool_call_id ?? ""), content: value };
}

function isPlaceholder(block: WireBlock): boolean {
  return block["type"] === "text" && block["text"] === EMPTY_TEXT;
}

/** Tool-call pairing in Messages API blocks (the rules are in `tool-pairing.ts`). */
const PAIRING: PairingWire = {
  callId: (b) => (b["type"] === "tool_use" ? String(b["id"]) : undefined),
  resultId: (b) => (b["type"] === "tool_result" ? String(b["tool_use_id"]) : undefined),
  resultText: (b) => {
    const content = b["content"];
    if (typeof content === "string") return content;
    if (!Array.isArray(content)) return "";
    return content.map((p: WireBlock) => (p["type"] === "text" ? String(p["text"]) : "[image]")).join("\n");
  },
  textBlock,
  missingResult: (id) => ({ type: "tool_result", tool_use_id: id, content: MISSING_RESULT, is_error: true }),
};

/** Same-role merging in Messages API blocks (the rules are in `tool-pairing.ts`). */
const MERGE: MergeWire = {
  resultId: PAIRING.resultId,
  isReasoning: (b) => THINKING_TYPES.has(String(b["type"])),
  isPlaceholder,
  placeholder: () => textBlock(EMPTY_TEXT),
};
