/**
 * Provider-neutral message and stream types. One internal message shape (OpenAI-style); each
 * transport converts to and from its wire format at the boundary and nothing else knows wire formats.
 */

export type Role = "system" | "user" | "assistant" | "tool";

export interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export type ContentPart = { type: "text"; text: string } | { type: "image_url"; image_url: { url: string } };

export interface Message {
  role: Role;
  /** Text, or parts for multimodal user input. `null` on an assistant message that only calls tools. */
  content: string | ContentPart[] | null;
  tool_calls?: ToolCall[];
  /** On `tool` messages: the id of the call this answers. */
  tool_call_id?: string;
  /** On `tool` messages: the tool's name (kept for transcripts and trajectories). */
  name?: string;
  /** Model reasoning (thinking) text, when the provider exposes it. Never sent back as content. */
  reasoning?: string;
  /**
   * Opaque reasoning blocks a provider needs back on later turns, in its own shape: Anthropic
   * `thinking` / `redacted_thinking` blocks with their signatures, OpenRouter `reasoning_details`.
   * Stored in the `reasoning_details` column; only the transport that produced them reads them.
   */
  reasoning_details?: unknown[];
  /**
   * Responses API reasoning items (`{type: "reasoning", id, encrypted_content, summary}`) to replay
   * on the next request. Stored in the `codex_reasoning_items` column.
   */
  codex_reasoning_items?: unknown[];
  finish_reason?: FinishReason;
}

/** A JSON Schema object (draft 7 subset as providers accept it). */
export type JsonSchema = Record<string, unknown>;

export interface ToolSchema {
  type: "function";
  function: { name: string; description: string; parameters: JsonSchema };
}

export type ApiMode =
  | "chat_completions"
  | "codex_responses"
  | "anthropic_messages"
  | "bedrock_converse"
  | "local";

export type FinishReason = "stop" | "tool_calls" | "length" | "content_filter" | "error" | "aborted";

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  reasoningTokens?: number;
}

export interface ChatRequest {
  model: string;
  messages: Message[];
  tools?: readonly ToolSchema[];
  maxTokens?: number;
  temperature?: number;
  reasoningEffort?: string;
  /** Provider-specific fields merged into the request body as-is. */
  extraBody?: Record<string, unknown>;
}

/**
 * Events a transport yields while a response streams. A stream ends with exactly one `finish` event
 * carrying the assembled assistant message (text, reasoning and complete tool calls), unless it
 * throws a `ProviderError`.
 */
export type StreamEvent =
  | { type: "text_delta"; text: string }
  | { type: "reasoning_delta"; text: string }
  | { type: "tool_call_delta"; index: number; id?: string; name?: string; argumentsDelta?: string }
  | { type: "tool_call"; index: number; call: ToolCall }
  | { type: "usage"; usage: Usage }
  | { type: "finish"; reason: FinishReason; message: Message };

export interface Transport {
  readonly apiMode: ApiMode;
  /** Streams one model response. Throws `ProviderError` on HTTP or connection failure; honours `signal`. */
  stream(request: ChatRequest, signal?: AbortSignal): AsyncIterable<StreamEvent>;
}

/** What a `ProviderError` carries besides its message (all optional; see the fields). */
export interface ProviderErrorInit {
  status?: number | undefined;
  body?: string | undefined;
  transport?: boolean | undefined;
  partial?: boolean | undefined;
  retryAfterMs?: number | undefined;
  stalled?: boolean | undefined;
  baseUrl?: string | undefined;
  headers?: Readonly<Record<string, string>> | undefined;
  cause?: unknown;
}

/** A failure talking to a provider, with what the retry policy needs to decide. */
export class ProviderError extends Error {
  readonly status: number | undefined;
  readonly body: string | undefined;
  /** True when the connection dropped or timed out rather than the provider answering with an error. */
  readonly transport: boolean;
  /** True when part of the answer had already streamed before the failure. */
  readonly partial: boolean;
  readonly retryAfterMs: number | undefined;
  /** True when the stream went silent past the stall window and was cut (a timeout). */
  readonly stalled: boolean;
  /**
   * Where the request went. Every transport sets it; the classifier reads it to tell a local
   * server from a remote one and to name the endpoint to the user.
   */
  readonly baseUrl: string | undefined;
  /**
   * The error response's headers, names in lower case (Retry-After, rate-limit resets); undefined
   * when there was no HTTP answer.
   */
  readonly headers: Readonly<Record<string, string>> | undefined;

  constructor(message: string, opts: ProviderErrorInit = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = "ProviderError";
    this.status = opts.status;
    this.body = opts.body;
    this.transport = opts.transport ?? false;
    this.partial = opts.partial ?? false;
    this.retryAfterMs = opts.retryAfterMs;
    this.stalled = opts.stalled ?? false;
    this.baseUrl = opts.baseUrl;
    this.headers = opts.headers;
  }
}

/** Text content of a message, joining text parts; empty string when there is none. */
export function messageText(message: Pick<Message, "content">): string {
  const { content } = message;
  if (content == null) return "";
  if (typeof content === "string") return content;
  return content
    .filter((p): p is { type: "text"; text: string } => p.type === "text")
    .map((p) => p.text)
    .join("");
}
