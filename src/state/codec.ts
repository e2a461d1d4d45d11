/**
 * Row ↔ object mapping between `state.db`'s snake_case columns and the camelCase types, written
 * so Python Hermes reads what we write and we read what it wrote.
 *
 * Message content follows Python's encoding: a plain string is stored as is; anything else (a
 * multimodal parts array) is stored as `"\x00json:" + JSON`. Reading accepts that prefix and the
 * `"\x01json:"` one newer Python versions write. A stored string without the prefix is always
 * returned as a string, even when it happens to look like JSON.
 */
import type { ContentPart, FinishReason, Message, ToolCall } from "../ai/types.js";
import { type SessionRecord, SessionStoreError, type StoredMessage } from "./types.js";

export const CONTENT_JSON_PREFIX = "\u0000json:";
const CONTENT_JSON_PREFIXES = ["\u0000json:", "\u0001json:"];

export type Row = Record<string, unknown>;

const ROLES = new Set<string>(["system", "user", "assistant", "tool"]);
const FINISH_REASONS = new Set<string>([
  "stop",
  "tool_calls",
  "length",
  "content_filter",
  "error",
  "aborted",
]);

export function isRole(value: unknown): value is Message["role"] {
  return typeof value === "string" && ROLES.has(value);
}

export function encodeContent(content: Message["content"] | undefined): string | null {
  if (content === null || content === undefined) return null;
  if (typeof content === "string") return content;
  return CONTENT_JSON_PREFIX + JSON.stringify(content);
}

function isContentPart(value: unknown): value is ContentPart {
  if (!value || typeof value !== "object") return false;
  const part = value as Record<string, unknown>;
  if (part["type"] === "text") return typeof part["text"] === "string";
  if (part["type"] === "image_url") {
    const image = part["image_url"];
    return (
      !!image && typeof image === "object" && typeof (image as Record<string, unknown>)["url"] === "string"
    );
  }
  return false;
}

export function decodeContent(raw: unknown): Message["content"] {
  if (raw === null || raw === undefined) return null;
  const text = typeof raw === "string" ? raw : Buffer.isBuffer(raw) ? raw.toString("utf8") : String(raw);
  for (const prefix of CONTENT_JSON_PREFIXES) {
    if (!text.startsWith(prefix)) continue;
    const body = text.slice(prefix.length);
    try {
      const value: unknown = JSON.parse(body);
      if (Array.isArray(value) && value.every(isContentPart)) {
        return value.map((p) =>
          p.type === "text"
            ? { type: "text", text: p.text }
            : { type: "image_url", image_url: { url: p.image_url.url } },
        );
      }
      if (typeof value === "string") return value;
    } catch {
      // Not JSON after all: hand the text back rather than lose it.
    }
    return body;
  }
  return text;
}

/** Text of stored content for previews and snippets (parts joined, prefix never shown). */
export function contentText(raw: unknown): string {
  const content = decodeContent(raw);
  if (content === null) return "";
  if (typeof content === "string") return content;
  return content
    .filter((p): p is { type: "text"; text: string } => p.type === "text")
    .map((p) => p.text)
    .join(" ");
}

export function encodeToolCalls(calls: Message["tool_calls"]): string | null {
  return calls && calls.length > 0 ? JSON.stringify(calls) : null;
}

/** Parses a stored `tool_calls` cell into OpenAI-style calls; null when absent or unreadable. */
export function decodeToolCalls(raw: unknown): ToolCall[] | null {
  if (typeof raw !== "string" || raw === "") return null;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  if (!Array.isArray(value)) return null;
  const calls: ToolCall[] = [];
  for (const item of value) {
    if (!item || typeof item !== "object") continue;
    const call = item as Record<string, unknown>;
    const fn = (call["function"] && typeof call["function"] === "object" ? call["function"] : {}) as Record<
      string,
      unknown
    >;
    const args = fn["arguments"];
    calls.push({
      id: typeof call["id"] === "string" ? call["id"] : String(call["id"] ?? ""),
      type: "function",
      function: {
        name: typeof fn["name"] === "string" ? fn["name"] : String(fn["name"] ?? ""),
        arguments: typeof args === "string" ? args : JSON.stringify(args ?? {}),
      },
    });
  }
  return calls.length > 0 ? calls : null;
}

/** Number of tool calls an assistant message carries (what `tool_call_count` adds up). */
export function toolCallCount(message: Pick<Message, "role" | "tool_calls">): number {
  return message.role === "assistant" ? (message.tool_calls?.length ?? 0) : 0;
}

const num = (v: unknown, fallback = 0): number => {
  if (v === null || v === undefined || v === "") return fallback;
  const n = Number(v);
  return Number.isFinite(n) ? n : fallback;
};
const numOrNull = (v: unknown): number | null => (v === null || v === undefined || v === "" ? null : num(v));
const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

export function rowToSession(r: Row): SessionRecord {
  return {
    id: String(r["id"]),
    source: String(r["source"] ?? ""),
    userId: str(r["user_id"]),
    model: str(r["model"]),
    modelConfig: str(r["model_config"]),
    systemPrompt: str(r["system_prompt"]),
    parentSessionId: str(r["parent_session_id"]),
    startedAt: num(r["started_at"]),
    endedAt: numOrNull(r["ended_at"]),
    endReason: str(r["end_reason"]),
    messageCount: num(r["message_count"]),
    toolCallCount: num(r["tool_call_count"]),
    apiCallCount: num(r["api_call_count"]),
    inputTokens: num(r["input_tokens"]),
    outputTokens: num(r["output_tokens"]),
    cacheReadTokens: num(r["cache_read_tokens"]),
    cacheWriteTokens: num(r["cache_write_tokens"]),
    reasoningTokens: num(r["reasoning_tokens"]),
    estimatedCostUsd: numOrNull(r["estimated_cost_usd"]),
    actualCostUsd: numOrNull(r["actual_cost_usd"]),
    costStatus: str(r["cost_status"]),
    costSource: str(r["cost_source"]),
    pricingVersion: str(r["pricing_version"]),
    cwd: str(r["cwd"]),
    gitBranch: str(r["git_branch"]),
    gitRepoRoot: str(r["git_repo_root"]),
    billingProvider: str(r["billing_provider"]),
    billingBaseUrl: str(r["billing_base_url"]),
    title: str(r["title"]),
    archived: num(r["archived"]) !== 0,
  };
}

/** A message row as stored; `null` for rows whose role is not a conversation role (Python's `session_meta`). */
export function rowToStoredMessage(r: Row): StoredMessage | null {
  if (!isRole(r["role"])) return null;
  return {
    id: num(r["id"]),
    sessionId: String(r["session_id"]),
    role: r["role"],
    content: decodeContent(r["content"]),
    toolCallId: str(r["tool_call_id"]),
    toolCalls: decodeToolCalls(r["tool_calls"]),
    toolName: str(r["tool_name"]),
    timestamp: num(r["timestamp"]),
    tokenCount: numOrNull(r["token_count"]),
    finishReason: str(r["finish_reason"]),
    reasoning: str(r["reasoning"]),
    ...jsonArrayField("reasoningDetails", r["reasoning_details"]),
    ...jsonArrayField("codexReasoningItems", r["codex_reasoning_items"]),
    active: r["active"] === undefined ? true : num(r["active"], 1) !== 0,
  };
}

/** `{[key]: array}` for a JSON array column; nothing for NULL or text that is not a JSON array. */
function jsonArrayField<K extends string>(key: K, value: unknown): { [P in K]?: unknown[] } {
  if (typeof value !== "string" || value === "") return {};
  try {
    const parsed: unknown = JSON.parse(value);
    return Array.isArray(parsed) && parsed.length > 0 ? ({ [key]: parsed } as { [P in K]?: unknown[] }) : {};
  } catch {
    return {};
  }
}

function encodeJsonArray(value: unknown[] | undefined): string | null {
  return value && value.length > 0 ? JSON.stringify(value) : null;
}

/** The message as the agent sends it: only keys that carry a value. */
export function storedToMessage(m: StoredMessage): Message {
  const out: Message = { role: m.role, content: m.content };
  if (m.toolCalls && m.toolCalls.length > 0 && m.role === "assistant") out.tool_calls = m.toolCalls;
  if (m.toolCallId !== null && m.role === "tool") out.tool_call_id = m.toolCallId;
  if (m.toolName !== null && m.role === "tool") out.name = m.toolName;
  if (m.reasoning !== null && m.reasoning !== "") out.reasoning = m.reasoning;
  if (m.reasoningDetails && m.role === "assistant") out.reasoning_details = m.reasoningDetails;
  if (m.codexReasoningItems && m.role === "assistant") out.codex_reasoning_items = m.codexReasoningItems;
  if (m.finishReason !== null && FINISH_REASONS.has(m.finishReason))
    out.finish_reason = m.finishReason as FinishReason;
  return out;
}

/** Throws `invalid` for a message that is not the documented shape (nothing is written then). */
export function validateMessage(message: Message): void {
  const fail = (why: string) => {
    throw new SessionStoreError("invalid", `Cannot store the message: ${why}.`);
  };
  if (!message || typeof message !== "object") fail("it is not an object");
  if (!isRole(message.role)) fail(`unknown role ${JSON.stringify(message.role)}`);
  const { content } = message;
  if (content !== null && content !== undefined && typeof content !== "string") {
    if (!Array.isArray(content) || !content.every(isContentPart)) {
      fail("content must be text, null, or an array of text/image_url parts");
    }
  }
  if (message.tool_calls !== undefined && !Array.isArray(message.tool_calls))
    fail("tool_calls must be an array");
}

/** Column values for inserting one message (everything but session id, timestamp and token count). */
export function messageColumns(message: Message): {
  role: string;
  content: string | null;
  tool_call_id: string | null;
  tool_calls: string | null;
  tool_name: string | null;
  finish_reason: string | null;
  reasoning: string | null;
  reasoning_details: string | null;
  codex_reasoning_items: string | null;
} {
  validateMessage(message);
  return {
    role: message.role,
    content: encodeContent(message.content),
    tool_call_id: message.tool_call_id ?? null,
    tool_calls: encodeToolCalls(message.tool_calls),
    tool_name: message.name ?? null,
    finish_reason: message.finish_reason ?? null,
    reasoning: message.reasoning ?? null,
    reasoning_details: encodeJsonArray(message.reasoning_details),
    codex_reasoning_items: encodeJsonArray(message.codex_reasoning_items),
  };
}

/** Whitespace collapsed, cut to `max` characters with an ellipsis. */
export function collapse(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
