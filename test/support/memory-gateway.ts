/**
 * The pieces the router's bench (router-harness.ts) and the several-instance bench
 * (gateway-instances.ts) share: an in-memory platform the test plays the user on, a model whose
 * replies the test scripts (each may wait on a gate), the session a router opens over both, and
 * `until`, which polls for a condition.
 */
import { ChatSession, type ChatSessionOptions } from "../../src/agent/chat-session.js";
import {
  type ChatRequest,
  type Message,
  ProviderError,
  type StreamEvent,
  type Transport,
} from "../../src/ai/types.js";
import type { HermesConfig } from "../../src/config/defaults.js";
import type { OpenConversation } from "../../src/gateway/messaging/router.js";
import type {
  AdapterHandlers,
  InboundAction,
  InboundMessage,
  MessageSource,
  OutboundMedia,
  OutboundTarget,
  PlatformAdapter,
  PlatformCapabilities,
  SendOptions,
} from "../../src/gateway/platforms/types.js";
import type { SessionStore } from "../../src/state/types.js";

/** An in-memory platform: records what the gateway sends and lets the test play the user. */
export class MemoryAdapter implements PlatformAdapter {
  readonly platform = "telegram";
  capabilities: PlatformCapabilities;
  handlers!: AdapterHandlers;
  /** Set by a test that checks the processing hook (Signal's reactions). */
  processing?: PlatformAdapter["processing"];
  private nextId = 1;
  private readonly userNames: boolean;
  readonly messages = new Map<string, { target: OutboundTarget; text: string; options?: SendOptions }>();
  readonly log: Array<{
    op: "send" | "edit" | "media" | "typing";
    id?: string;
    text?: string;
    media?: OutboundMedia;
    options?: SendOptions;
  }> = [];

  /** `userNames`: a user's messages carry the name `user<id>` (default on). */
  constructor(options: { maxMessageLength?: number; userNames?: boolean } = {}) {
    this.capabilities = {
      maxMessageLength: options.maxMessageLength ?? 300,
      edit: true,
      buttons: true,
      typing: true,
      media: true,
      maxMediaBytes: 1_000_000,
    };
    this.userNames = options.userNames ?? true;
  }

  async connect(handlers: AdapterHandlers) {
    this.handlers = handlers;
  }
  async disconnect() {}
  async send(target: OutboundTarget, text: string, options?: SendOptions) {
    const id = String(this.nextId++);
    this.messages.set(id, { target, text, ...(options ? { options } : {}) });
    this.log.push({ op: "send", id, text, ...(options ? { options } : {}) });
    return { messageId: id };
  }
  async edit(_target: OutboundTarget, id: string, text: string) {
    const message = this.messages.get(id);
    if (message) message.text = text;
    this.log.push({ op: "edit", id, text });
  }
  async typing() {
    this.log.push({ op: "typing" });
  }
  async sendMedia(_target: OutboundTarget, media: OutboundMedia) {
    this.log.push({ op: "media", media });
    return { messageId: String(this.nextId++) };
  }
  /** Every message text as it reads now, in send order. */
  texts(): string[] {
    return [...this.messages.values()].map((m) => m.text);
  }
  from(userId: string, text: string, over: Partial<MessageSource> = {}): void {
    const message: InboundMessage = {
      source: {
        platform: "telegram",
        chatType: "dm",
        chatId: userId,
        userId,
        ...(this.userNames ? { userName: `user${userId}` } : {}),
        ...over,
      },
      text,
    };
    this.handlers.onMessage(message);
  }
  press(userId: string, data: string, acknowledge?: InboundAction["acknowledge"]): void {
    this.handlers.onAction({
      source: { platform: "telegram", chatType: "dm", chatId: userId, userId },
      data,
      ...(acknowledge ? { acknowledge } : {}),
    });
  }
}

/** Model calls running at the same time now, and the most there were. */
export interface Overlap {
  now: number;
  max: number;
}

/**
 * A transport whose replies the test writes; a reply may wait on a gate. `halfFirst` (default):
 * half the reply's text streams before the gate, the rest after it. `overlap` counts the calls
 * running at once.
 */
export class GatedTransport implements Transport {
  readonly apiMode = "chat_completions" as const;
  readonly requests: ChatRequest[] = [];
  private readonly queue: Array<{ message: Message; gate?: Promise<void>; drop?: boolean }> = [];
  constructor(private readonly options: { overlap?: Overlap; halfFirst?: boolean } = {}) {}
  /** `drop`: the connection breaks after the gate opens, with half the text streamed. */
  push(message: Message, gate?: Promise<void>, drop = false): this {
    this.queue.push({ message, ...(gate ? { gate } : {}), ...(drop ? { drop } : {}) });
    return this;
  }
  async *stream(request: ChatRequest, signal?: AbortSignal): AsyncIterable<StreamEvent> {
    this.requests.push(structuredClone(request));
    const next = this.queue.shift();
    if (!next) throw new Error("no scripted reply left");
    const overlap = this.options.overlap;
    if (overlap) {
      overlap.now++;
      overlap.max = Math.max(overlap.max, overlap.now);
    }
    try {
      const text = typeof next.message.content === "string" ? next.message.content : "";
      const early = this.options.halfFirst === false ? 0 : Math.ceil(text.length / 2);
      if (early > 0) yield { type: "text_delta", text: text.slice(0, early) };
      if (next.gate) {
        await Promise.race([
          next.gate,
          new Promise<never>((_, reject) =>
            signal?.addEventListener("abort", () =>
              reject(Object.assign(new Error("aborted"), { name: "AbortError" })),
            ),
          ),
        ]);
      }
      if (next.drop) throw new ProviderError("socket hang up", { transport: true, partial: true });
      if (text.length > early) yield { type: "text_delta", text: text.slice(early) };
      yield { type: "usage", usage: { inputTokens: 10, outputTokens: 5 } };
      yield {
        type: "finish",
        reason: next.message.tool_calls?.length ? "tool_calls" : "stop",
        message: { ...next.message, role: "assistant" },
      };
    } finally {
      if (overlap) overlap.now--;
    }
  }
}

/**
 * The session a test router opens for a conversation: the router's request (platform, user,
 * approvals, tool state, a resumed session) over the bench's model, home and store, with short
 * retry waits.
 */
export function sessionFor(
  request: OpenConversation,
  bench: {
    transport: Transport;
    config: HermesConfig;
    home: string;
    cwd: string;
    store: SessionStore;
    toolsets: string[];
  },
): ChatSessionOptions {
  return {
    transport: bench.transport,
    config: bench.config,
    home: bench.home,
    cwd: bench.cwd,
    env: { PATH: process.env["PATH"] },
    toolsets: bench.toolsets,
    store: bench.store,
    source: request.platform,
    userId: request.source.userId,
    platform: request.platform,
    onApproval: request.onApproval,
    toolState: request.toolState,
    ...(request.resume ? { resume: request.resume } : {}),
    retry: { baseMs: 1, capMs: 5 },
  };
}

/** Opens the session `sessionFor` describes. */
export const openSessionFor = (request: OpenConversation, bench: Parameters<typeof sessionFor>[1]) =>
  ChatSession.open(sessionFor(request, bench));

/** Polls `probe` every 10 ms until it answers something truthy; rejects naming `what` after `ms`. */
export async function until<T>(probe: () => T | undefined | false, what: string, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
