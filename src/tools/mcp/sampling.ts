/**
 * `sampling/createMessage`: an MCP server asks the agent's model for a completion. Answered only
 * when the server's `sampling` settings allow it (a server whose sampling is off is never told the
 * client can sample, so it cannot ask), within its limits: a rolling-minute request budget
 * (`max_rpm`), a cap on the answer's tokens (`max_tokens_cap`), a deadline (`timeout`), and the
 * model from `sampling.model`, else a hint the server gave that `allowed_models` lists, else the
 * session's own. The model sees only what the server sent: no Hermes context, no tools.
 *
 * Pure apart from the injected {@link McpSampler} and clock.
 */
import type { ContentPart, Message } from "../../ai/types.js";
import type { McpSamplingConfig } from "./config-options.js";

/** What the agent's model is asked: the server's conversation, already in Hermes's shape. */
export interface McpSamplingRequest {
  server: string;
  messages: Message[];
  maxTokens: number;
  /** The model to use; absent: the session's model. */
  model?: string;
  temperature?: number;
  stopSequences?: string[];
  signal: AbortSignal;
}

export interface McpSamplingAnswer {
  text: string;
  /** The model that answered. */
  model: string;
  /** True when the answer stopped at the token cap. */
  truncated?: boolean;
}

/** Answers a sampling request with a model; rejects with a readable error. Supplied by the surface. */
export type McpSampler = (request: McpSamplingRequest) => Promise<McpSamplingAnswer>;

/** A request refused before any model call: the message goes back to the server as the error. */
export class McpSamplingRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "McpSamplingRefused";
  }
}

/** Requests per rolling minute. */
export class RateWindow {
  private stamps: number[] = [];

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts a request if the budget allows it now; false when it is spent. */
  take(): boolean {
    const t = this.now();
    this.stamps = this.stamps.filter((s) => t - s < 60_000);
    if (this.stamps.length >= this.perMinute) return false;
    this.stamps.push(t);
    return true;
  }
}

/** The parts of a `sampling/createMessage` request read here (the SDK validated its shape). */
export interface CreateMessageParams {
  messages: Array<{ role: "user" | "assistant"; content: unknown }>;
  systemPrompt?: string;
  maxTokens: number;
  temperature?: number;
  stopSequences?: string[];
  modelPreferences?: { hints?: Array<{ name?: string }> };
  tools?: unknown;
}

export interface CreateMessageResult {
  role: "assistant";
  content: { type: "text"; text: string };
  model: string;
  stopReason: "endTurn" | "maxTokens";
}

/**
 * The handler for one server: checks the budget, builds the model request, and answers in the
 * MCP shape. Throws {@link McpSamplingRefused} for a request it will not run, or the sampler's error.
 */
export function samplingHandler(
  server: string,
  settings: McpSamplingConfig,
  sampler: McpSampler,
  now: () => number = Date.now,
): (params: CreateMessageParams, signal?: AbortSignal) => Promise<CreateMessageResult> {
  const window = new RateWindow(settings.maxRpm, now);
  return async (params, signal) => {
    if (!settings.enabled) {
      throw new McpSamplingRefused(
        `sampling is turned off for MCP server "${server}" (mcp_servers.${server}.sampling.enabled)`,
      );
    }
    if (Array.isArray(params.tools) && params.tools.length > 0) {
      throw new McpSamplingRefused("Hermes does not offer tools to sampling requests; ask without tools");
    }
    if (!window.take()) {
      throw new McpSamplingRefused(
        `sampling rate limit reached for MCP server "${server}": at most ${settings.maxRpm} requests a minute (mcp_servers.${server}.sampling.max_rpm)`,
      );
    }
    const messages = toMessages(params);
    const model = pickModel(settings, params);
    const deadline = AbortSignal.timeout(settings.timeoutMs);
    const combined = signal ? AbortSignal.any([signal, deadline]) : deadline;
    const asked =
      Number.isFinite(params.maxTokens) && params.maxTokens > 0 ? params.maxTokens : settings.maxTokensCap;
    let answer: McpSamplingAnswer;
    try {
      answer = await sampler({
        server,
        messages,
        maxTokens: Math.min(asked, settings.maxTokensCap),
        ...(model ? { model } : {}),
        ...(params.temperature !== undefined ? { temperature: params.temperature } : {}),
        ...(params.stopSequences?.length ? { stopSequences: params.stopSequences } : {}),
        signal: combined,
      });
    } catch (error) {
      if (deadline.aborted && !signal?.aborted) {
        throw new McpSamplingRefused(
          `the model did not answer within ${settings.timeoutMs / 1000} s (mcp_servers.${server}.sampling.timeout)`,
        );
      }
      throw error;
    }
    return {
      role: "assistant",
      content: { type: "text", text: answer.text },
      model: answer.model,
      stopReason: answer.truncated ? "maxTokens" : "endTurn",
    };
  };
}

/** `sampling.model`, else the first hint `allowed_models` lists; undefined: the session's model. */
export function pickModel(
  settings: McpSamplingConfig,
  params: Pick<CreateMessageParams, "modelPreferences">,
): string | undefined {
  if (settings.model) return settings.model;
  for (const hint of params.modelPreferences?.hints ?? []) {
    if (hint.name && settings.allowedModels.includes(hint.name)) return hint.name;
  }
  return undefined;
}

/** The server's messages as Hermes messages; text and images, other content refused. */
export function toMessages(params: Pick<CreateMessageParams, "messages" | "systemPrompt">): Message[] {
  const out: Message[] = [];
  if (params.systemPrompt?.trim()) out.push({ role: "system", content: params.systemPrompt });
  for (const [index, message] of params.messages.entries()) {
    const blocks = Array.isArray(message.content) ? message.content : [message.content];
    const parts: ContentPart[] = blocks.map((block) => toPart(block, index));
    const onlyText = parts.every((p) => p.type === "text");
    if (message.role === "assistant" && !onlyText) {
      throw new McpSamplingRefused(`message ${index}: an assistant message may only hold text`);
    }
    out.push({
      role: message.role,
      content: onlyText ? parts.map((p) => (p as { text: string }).text).join("\n") : parts,
    });
  }
  if (!out.some((m) => m.role === "user")) throw new McpSamplingRefused("the request holds no user message");
  return out;
}

function toPart(block: unknown, index: number): ContentPart {
  const b = (block ?? {}) as { type?: unknown; text?: unknown; data?: unknown; mimeType?: unknown };
  if (b.type === "text" && typeof b.text === "string") return { type: "text", text: b.text };
  if (b.type === "image" && typeof b.data === "string" && typeof b.mimeType === "string") {
    return { type: "image_url", image_url: { url: `data:${b.mimeType};base64,${b.data}` } };
  }
  throw new McpSamplingRefused(
    `message ${index}: content of type ${JSON.stringify(b.type ?? "unknown")} is not supported (text and image are)`,
  );
}
