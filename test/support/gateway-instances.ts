/**
 * Two or three messaging gateways in one process, as separate instances over one shared state
 * (one home, one state.db) and an in-memory coordinator hub: each has its own router, chat relay,
 * platform adapter (an in-memory Telegram stand-in) and scripted model, so a test sees on which
 * instance a turn ran and what each instance's adapter sent.
 */
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ChatSession } from "../../src/agent/chat-session.js";
import type { ChatRequest, Message, StreamEvent, Transport } from "../../src/ai/types.js";
import { defaultConfig, type HermesConfig } from "../../src/config/defaults.js";
import { ChatRelay } from "../../src/gateway/coordination/chat-relay.js";
import { MessageRouter } from "../../src/gateway/messaging/router.js";
import type {
  AdapterHandlers,
  InboundAction,
  MessageSource,
  OutboundMedia,
  OutboundTarget,
  PlatformAdapter,
  SendOptions,
} from "../../src/gateway/platforms/types.js";
import type { Coordinator } from "../../src/state/coordination.js";
import { PairingStore, pairingRecords } from "../../src/state/gateway/pairing.js";
import {
  type ChatSessionIndex,
  chatSessionIndex,
  SessionIndex,
} from "../../src/state/gateway/session-index.js";
import { openSessionStore, type SqliteSessionStore } from "../../src/state/sqlite-store.js";
import type { SessionStore } from "../../src/state/types.js";
import { createBuiltinRegistry } from "../../src/tools/builtin.js";
import { type CoordinatorHub, coordinatorHub } from "./coordinator-hub.js";

/** An in-memory platform adapter: records sends, lets the test play the user. */
export class MemoryAdapter implements PlatformAdapter {
  readonly platform = "telegram";
  capabilities = {
    maxMessageLength: 4000,
    edit: true,
    buttons: true,
    typing: true,
    media: true,
    maxMediaBytes: 1e6,
  };
  handlers!: AdapterHandlers;
  private nextId = 1;
  readonly messages = new Map<string, { target: OutboundTarget; text: string; options?: SendOptions }>();
  async connect(handlers: AdapterHandlers) {
    this.handlers = handlers;
  }
  async disconnect() {}
  async send(target: OutboundTarget, text: string, options?: SendOptions) {
    const id = `${this.nextId++}`;
    this.messages.set(id, { target, text, ...(options ? { options } : {}) });
    return { messageId: id };
  }
  async edit(_target: OutboundTarget, id: string, text: string) {
    const message = this.messages.get(id);
    if (message) message.text = text;
  }
  async typing() {}
  async sendMedia(_target: OutboundTarget, _media: OutboundMedia) {
    return { messageId: `${this.nextId++}` };
  }
  texts(): string[] {
    return [...this.messages.values()].map((m) => m.text);
  }
  from(userId: string, text: string, over: Partial<MessageSource> = {}): void {
    this.handlers.onMessage({
      source: { platform: "telegram", chatType: "dm", chatId: userId, userId, ...over },
      text,
    });
  }
  press(userId: string, data: string, acknowledge?: InboundAction["acknowledge"]): void {
    this.handlers.onAction({
      source: { platform: "telegram", chatType: "dm", chatId: userId, userId },
      data,
      ...(acknowledge ? { acknowledge } : {}),
    });
  }
}

/** A model whose replies the test scripts; a reply may wait on a gate. Counts overlapping calls. */
export class ScriptedModel implements Transport {
  readonly apiMode = "chat_completions" as const;
  readonly requests: ChatRequest[] = [];
  private readonly queue: Array<{ message: Message; gate?: Promise<void> }> = [];
  constructor(private readonly overlap: { now: number; max: number }) {}
  push(message: Message, gate?: Promise<void>): this {
    this.queue.push({ message, ...(gate ? { gate } : {}) });
    return this;
  }
  async *stream(request: ChatRequest, signal?: AbortSignal): AsyncIterable<StreamEvent> {
    this.requests.push(structuredClone(request));
    const next = this.queue.shift();
    if (!next) throw new Error("no scripted reply left");
    this.overlap.now++;
    this.overlap.max = Math.max(this.overlap.max, this.overlap.now);
    try {
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
      const text = typeof next.message.content === "string" ? next.message.content : "";
      if (text) yield { type: "text_delta", text };
      yield { type: "usage", usage: { inputTokens: 10, outputTokens: 5 } };
      yield {
        type: "finish",
        reason: next.message.tool_calls?.length ? "tool_calls" : "stop",
        message: { ...next.message, role: "assistant" },
      };
    } finally {
      this.overlap.now--;
    }
  }
}

export interface Instance {
  id: string;
  coordinator: Coordinator;
  relay: ChatRelay;
  router: MessageRouter;
  adapter: MemoryAdapter;
  model: ScriptedModel;
}

export interface Instances {
  hub: CoordinatorHub;
  home: string;
  cwd: string;
  store: SqliteSessionStore;
  /** Model calls of one chat that ran at the same time, at most (across every instance). */
  overlap: { now: number; max: number };
  list: Instance[];
  stop(): Promise<void>;
}

export function startInstances(
  ids: readonly string[],
  options: {
    config?: Record<string, unknown>;
    leaseTtlMs?: number;
    /** Real coordinators (PostgreSQL) instead of the hub's, one per id. */
    coordinators?: readonly Coordinator[];
    /** One chat → session index object for every instance (default one each over the same file). */
    sharedIndex?: boolean;
    /** The session store each instance writes through, one per id (default the shared state.db). */
    stores?: readonly SessionStore[];
    /** The chat → session index each instance writes through, one per id (PostgreSQL's, say). */
    indexes?: readonly ChatSessionIndex[];
  } = {},
): Instances {
  const root = mkdtempSync(join(tmpdir(), "hermes-instances-"));
  const home = join(root, "home");
  const cwd = join(root, "work");
  mkdirSync(home);
  mkdirSync(cwd);
  const store = openSessionStore(join(home, "state.db"));
  const hub = coordinatorHub({ leaseTtlMs: options.leaseTtlMs ?? 300 });
  const config = { ...defaultConfig(), ...(options.config ?? {}) } as HermesConfig;
  const overlap = { now: 0, max: 0 };
  // One chat → session index for all when asked, as PostgreSQL's is shared.
  const index = options.sharedIndex ? chatSessionIndex(new SessionIndex(home)) : undefined;
  const list = ids.map((id, i): Instance => {
    const coordinator = options.coordinators?.[i] ?? hub.join(id);
    const relay = new ChatRelay(coordinator, { home, receiptWaitMs: 400 });
    const adapter = new MemoryAdapter();
    const model = new ScriptedModel(overlap);
    const own = options.stores?.[i] ?? store;
    const router = new MessageRouter({
      home,
      config,
      env: { TELEGRAM_ALLOWED_USERS: "100,200" },
      adapters: new Map([["telegram", adapter]]),
      pairing: pairingRecords(new PairingStore({ home })),
      relay,
      index: relay.fenceIndex(options.indexes?.[i] ?? index ?? chatSessionIndex(new SessionIndex(home))),
      openSession: (request) =>
        ChatSession.open({
          transport: model,
          config,
          home,
          cwd,
          env: { PATH: process.env["PATH"] },
          toolsets: ["terminal", "todo"],
          store: own,
          source: request.platform,
          userId: request.source.userId,
          platform: request.platform,
          onApproval: request.onApproval,
          toolState: request.toolState,
          ...(request.resume ? { resume: request.resume } : {}),
          retry: { baseMs: 1, capMs: 5 },
          // Fenced as the runner does: writes, tool runs and prompts only while the chat is held.
          ...relay.fenceSession(request.key, {
            store: own,
            registry: createBuiltinRegistry(),
            onApproval: request.onApproval,
          }),
        }),
    });
    void adapter.connect(router.handlersFor(adapter));
    relay.attach((platform) => (platform === "telegram" ? router.handlersFor(adapter) : undefined), router);
    return { id, coordinator, relay, router, adapter, model };
  });
  return {
    hub,
    home,
    cwd,
    store,
    overlap,
    list,
    async stop() {
      for (const instance of list) {
        instance.relay.close();
        await instance.router.stop({ drainMs: 0 });
      }
      store.close();
    },
  };
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

export { coordinatorHub };
