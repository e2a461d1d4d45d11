/**
 * The message router's test bench (test/unit/gateway/router*.test.ts): an in-memory platform the
 * test plays the user on, a transport whose replies the test scripts and may hold on a gate, and
 * `setup`, a router over both with a real session store in a temporary home.
 */
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { ChatSession } from "../../src/agent/chat-session.js";
import {
  type ChatRequest,
  type Message,
  ProviderError,
  type StreamEvent,
  type Transport,
} from "../../src/ai/types.js";
import { defaultConfig, type HermesConfig } from "../../src/config/defaults.js";

const DEFAULT_CONFIG = defaultConfig();

import { MessageRouter, type OpenConversation } from "../../src/gateway/messaging/router.js";
import type {
  AdapterHandlers,
  InboundMessage,
  MessageSource,
  OutboundMedia,
  OutboundTarget,
  PlatformAdapter,
  SendOptions,
} from "../../src/gateway/platforms/types.js";
import { PairingStore, pairingRecords } from "../../src/state/gateway/pairing.js";
import type { SqliteSessionStore } from "../../src/state/sqlite-store.js";
import { openSessionStore } from "../../src/state/sqlite-store.js";

/** An in-memory platform: records what the gateway sends and lets the test play the user. */
export class MemoryAdapter implements PlatformAdapter {
  readonly platform = "telegram";
  capabilities = {
    maxMessageLength: 300,
    edit: true,
    buttons: true,
    typing: true,
    media: true,
    maxMediaBytes: 1_000_000,
  };
  handlers!: AdapterHandlers;
  /** Set by a test that checks the processing hook (Signal's reactions). */
  processing?: PlatformAdapter["processing"];
  private nextId = 1;
  readonly messages = new Map<string, { target: OutboundTarget; text: string; options?: SendOptions }>();
  readonly log: Array<{
    op: "send" | "edit" | "media" | "typing";
    id?: string;
    text?: string;
    media?: OutboundMedia;
    options?: SendOptions;
  }> = [];

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
        userName: `user${userId}`,
        ...over,
      },
      text,
    };
    this.handlers.onMessage(message);
  }
}

/** A transport whose replies the test writes; a reply may wait on a gate. */
export class GatedTransport implements Transport {
  readonly apiMode = "chat_completions" as const;
  readonly requests: ChatRequest[] = [];
  private readonly queue: Array<{ message: Message; gate?: Promise<void>; drop?: boolean }> = [];
  /** `drop`: the connection breaks after the gate opens, with half the text streamed. */
  push(message: Message, gate?: Promise<void>, drop = false): this {
    this.queue.push({ message, ...(gate ? { gate } : {}), ...(drop ? { drop } : {}) });
    return this;
  }
  async *stream(request: ChatRequest, signal?: AbortSignal): AsyncIterable<StreamEvent> {
    this.requests.push(structuredClone(request));
    const next = this.queue.shift();
    if (!next) throw new Error("no scripted reply left");
    const text = typeof next.message.content === "string" ? next.message.content : "";
    const half = Math.ceil(text.length / 2);
    if (text) yield { type: "text_delta", text: text.slice(0, half) };
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
    if (text.length > half) yield { type: "text_delta", text: text.slice(half) };
    yield { type: "usage", usage: { inputTokens: 10, outputTokens: 5 } };
    yield {
      type: "finish",
      reason: next.message.tool_calls?.length ? "tool_calls" : "stop",
      message: { ...next.message, role: "assistant" },
    };
  }
}

export const stores: SqliteSessionStore[] = [];
export const routers: MessageRouter[] = [];

/** Stops the routers and closes the stores `setup` made, after each test of the calling file. */
export function stopRoutersAfterEach(): void {
  afterEach(async () => {
    for (const r of routers.splice(0)) await r.stop();
    for (const s of stores.splice(0)) s.close();
  });
}

export async function until<T>(probe: () => T | undefined | false, what: string, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export function setup(
  options: {
    env?: Record<string, string>;
    config?: Record<string, unknown>;
    now?: () => Date;
    maxCachedAgents?: number;
  } = {},
) {
  const root = mkdtempSync(join(tmpdir(), "hermes-router-"));
  const home = join(root, "home");
  const cwd = join(root, "work");
  mkdirSync(home);
  mkdirSync(cwd);
  const store = openSessionStore(join(home, "state.db"));
  stores.push(store);
  const transport = new GatedTransport();
  const adapter = new MemoryAdapter();
  const config = { ...DEFAULT_CONFIG, ...(options.config ?? {}) } as HermesConfig;
  const env: Record<string, string | undefined> = { TELEGRAM_ALLOWED_USERS: "100", ...(options.env ?? {}) };
  const pairing = new PairingStore({ home });
  const opened: OpenConversation[] = [];
  const chats: ChatSession[] = [];
  const logs: string[] = [];
  const router = new MessageRouter({
    home,
    config,
    env,
    adapters: new Map([["telegram", adapter]]),
    pairing: pairingRecords(pairing),
    log: (line) => logs.push(line),
    ...(options.now ? { now: options.now } : {}),
    ...(options.maxCachedAgents ? { maxCachedAgents: options.maxCachedAgents } : {}),
    openSession: (request) => {
      opened.push(request);
      const chat = ChatSession.open({
        transport,
        config,
        home,
        cwd,
        env: { PATH: process.env["PATH"] },
        toolsets: ["terminal", "todo"],
        store,
        source: request.platform,
        userId: request.source.userId,
        platform: request.platform,
        onApproval: request.onApproval,
        toolState: request.toolState,
        ...(request.resume ? { resume: request.resume } : {}),
        retry: { baseMs: 1, capMs: 5 },
      });
      void chat.then((c) => chats.push(c));
      return chat;
    },
  });
  routers.push(router);
  void adapter.connect(router.handlersFor(adapter));
  return { home, cwd, store, transport, adapter, router, env, pairing, opened, chats, logs };
}
