import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ChatSession } from "../../../src/agent/chat-session.js";
import { NOTICES_HEADER } from "../../../src/agent/notices.js";
import {
  type ChatRequest,
  type Message,
  ProviderError,
  type StreamEvent,
  type Transport,
} from "../../../src/ai/types.js";
import { defaultConfig, type HermesConfig } from "../../../src/config/defaults.js";

const DEFAULT_CONFIG = defaultConfig();

import { MessageRouter, type OpenConversation } from "../../../src/gateway/messaging/router.js";
import type {
  AdapterHandlers,
  InboundMessage,
  MessageSource,
  OutboundMedia,
  OutboundTarget,
  PlatformAdapter,
  SendOptions,
} from "../../../src/gateway/platforms/types.js";
import { PairingStore, pairingRecords } from "../../../src/state/gateway/pairing.js";
import type { SqliteSessionStore } from "../../../src/state/sqlite-store.js";
import { openSessionStore } from "../../../src/state/sqlite-store.js";
import { callTools, say } from "../../support/scripted-transport.js";

/** An in-memory platform: records what the gateway sends and lets the test play the user. */
class MemoryAdapter implements PlatformAdapter {
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
class GatedTransport implements Transport {
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

const stores: SqliteSessionStore[] = [];
const routers: MessageRouter[] = [];
afterEach(async () => {
  for (const r of routers.splice(0)) await r.stop();
  for (const s of stores.splice(0)) s.close();
});

async function until<T>(probe: () => T | undefined | false, what: string, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function setup(
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

describe("MessageRouter", () => {
  it("answers an allowed user and records the chat's session in sessions.json with its origin", async () => {
    const t = setup();
    t.transport.push(say("Hello there!"));
    t.adapter.from("100", "hi");
    await until(() => t.adapter.texts().includes("Hello there!"), "the answer").catch((e) => {
      throw new Error(`${e.message}\n${t.logs.join("\n")}\n${JSON.stringify(t.adapter.log)}`);
    });
    const index = JSON.parse(readFileSync(join(t.home, "sessions", "sessions.json"), "utf8"));
    const entry = index["agent:main:telegram:dm:100"];
    expect(t.opened).toHaveLength(1);
    expect(entry.origin).toMatchObject({ platform: "telegram", chat_id: "100", user_id: "100" });
    expect(t.store.engine.getSession(entry.session_id)?.source).toBe("telegram");
    expect(t.adapter.log.some((e) => e.op === "typing")).toBe(true);
    expect(t.opened[0]?.toolState["cron.origin"]).toEqual({ platform: "telegram", chat_id: "100" });
  });

  it("keeps one agent per chat across messages, so the second turn sees the first", async () => {
    const t = setup();
    t.transport.push(say("first answer")).push(say("second answer"));
    t.adapter.from("100", "one");
    await until(() => t.adapter.texts().includes("first answer"), "first");
    t.adapter.from("100", "two");
    await until(() => t.adapter.texts().includes("second answer"), "second");
    expect(t.opened).toHaveLength(1);
    const second = t.transport.requests[1]?.messages.map((m) => m.content);
    expect(second).toContain("one");
    expect(second).toContain("first answer");
  });

  it("sends a stranger a pairing code instead of an answer, and answers once the owner approves", async () => {
    const t = setup();
    t.adapter.from("555", "hello?");
    const codeMessage = await until(
      () => t.adapter.texts().find((m) => m.includes("hermes pairing approve")),
      "code",
    );
    const code = /hermes pairing approve telegram ([A-Z0-9]{8})/.exec(codeMessage)?.[1] ?? "";
    expect(code).toHaveLength(8);
    expect(t.transport.requests).toHaveLength(0);
    expect((await t.pairing.approve("telegram", code)).status).toBe("approved");
    t.transport.push(say("Nice to meet you."));
    t.adapter.from("555", "hello again");
    await until(() => t.adapter.texts().includes("Nice to meet you."), "answer after pairing");
  });

  it("ignores strangers in groups without a word", async () => {
    const t = setup();
    t.adapter.from("777", "hey bot", { chatType: "group", chatId: "-1001" });
    await new Promise((r) => setTimeout(r, 100));
    await t.router.stop();
    expect(t.adapter.log.filter((e) => e.op === "send")).toHaveLength(0);
  });

  it("reports started, then succeeded or failed, to an adapter with a processing hook; never for strangers", async () => {
    const t = setup();
    const states: string[] = [];
    t.adapter.processing = async (message, state) => {
      states.push(`${message.source.userId}:${message.text}:${state}`);
    };
    t.transport.push(say("Fine."));
    t.adapter.from("100", "how are you?");
    await until(() => states.includes("100:how are you?:succeeded"), "the success state");
    t.adapter.from("555", "let me in");
    t.transport.push(say(""));
    t.adapter.from("100", "fail now");
    await until(() => states.some((s) => s.startsWith("100:fail now:")), "the second turn's outcome");
    expect(states[0]).toBe("100:how are you?:started");
    expect(states.indexOf("100:fail now:started")).toBeLessThan(
      states.findIndex((s) => /fail now:(succeeded|failed)/.test(s)),
    );
    expect(states.some((s) => s.startsWith("555:"))).toBe(false);
  });

  it("cuts a long answer into messages within the platform limit and keeps code blocks whole", async () => {
    const t = setup();
    const code = Array.from({ length: 30 }, (_, i) => `line ${i} of the program`).join("\n");
    const answer = `Here it is:\n\n\`\`\`python\n${code}\n\`\`\`\n\nDone.`;
    t.transport.push(say(answer));
    t.adapter.from("100", "write it");
    await until(() => t.adapter.texts().some((m) => m.endsWith("Done.")), "last chunk");
    const texts = t.adapter.texts();
    expect(texts.length).toBeGreaterThan(2);
    for (const text of texts) {
      expect(text.length).toBeLessThanOrEqual(300);
      expect((text.match(/```/g) ?? []).length % 2).toBe(0);
    }
    expect(texts.join("\n")).toContain("line 29 of the program");
  });

  it("delivers nothing for [SILENT] and sends MEDIA: files as attachments", async () => {
    const t = setup();
    const file = join(t.cwd, "chart.png");
    writeFileSync(file, "png");
    t.transport
      .push(say("[SILENT]"))
      .push(say(`Here is the chart.\nMEDIA: ${file}\nMEDIA: /nope/missing.pdf`));
    t.adapter.from("100", "anything new?");
    await until(() => t.transport.requests.length === 1, "first turn");
    t.adapter.from("100", "draw it");
    await until(() => t.adapter.log.some((e) => e.op === "media"), "attachment");
    const media = t.adapter.log.find((e) => e.op === "media")?.media;
    expect(media).toEqual({ kind: "photo", path: file });
    const texts = t.adapter.texts();
    expect(texts.some((m) => m.includes("SILENT"))).toBe(false);
    expect(texts.find((m) => m.startsWith("Here is the chart."))).toContain(
      "/nope/missing.pdf: no such file",
    );
  });

  it("asks before a dangerous command; a button press approves and the command runs", async () => {
    const t = setup();
    const victim = join(t.cwd, "victim");
    mkdirSync(victim);
    t.transport.push(callTools(["terminal", { command: `rm -rf ${victim}` }])).push(say("Deleted."));
    t.adapter.from("100", "delete it");
    const ask = await until(
      () => [...t.adapter.messages.entries()].find(([, m]) => m.options?.buttons),
      "approval message",
    ).catch((e) => {
      throw new Error(
        `${e.message}\n${t.logs.join("\n")}\n${JSON.stringify(t.adapter.log)}\n${JSON.stringify(t.transport.requests.at(-1)?.messages.at(-1))}`,
      );
    });
    expect(existsSync(victim)).toBe(true);
    const approve = ask[1].options?.buttons?.[0]?.[0]?.data ?? "";
    let acknowledged = false;
    t.adapter.handlers.onAction({
      source: { platform: "telegram", chatType: "dm", chatId: "100", userId: "100" },
      data: approve,
      messageId: ask[0],
      acknowledge: async () => {
        acknowledged = true;
      },
    });
    await until(() => t.adapter.texts().includes("Deleted."), "answer");
    expect(existsSync(victim)).toBe(false);
    expect(acknowledged).toBe(true);
    expect(t.adapter.messages.get(ask[0])?.text).toMatch(/Approved once/);
  });

  it("a 'no' reply denies the command and it never runs", async () => {
    const t = setup();
    const victim = join(t.cwd, "keep");
    mkdirSync(victim);
    t.transport
      .push(callTools(["terminal", { command: `rm -rf ${victim}` }]))
      .push(say("Understood, left it."));
    t.adapter.from("100", "delete it");
    await until(() => [...t.adapter.messages.values()].find((m) => m.options?.buttons), "approval message");
    t.adapter.from("100", "no");
    await until(() => t.adapter.texts().includes("Understood, left it."), "answer");
    expect(existsSync(victim)).toBe(true);
    const toolResult = t.transport.requests[1]?.messages.find((m) => m.role === "tool");
    expect(String(toolResult?.content)).toMatch(/denied|not approved|refused/i);
  });

  it("an unanswered approval is denied after approvals.timeout", async () => {
    const t = setup({ config: { approvals: { mode: "manual", timeout: 0.3, cron_mode: "deny" } } });
    const victim = join(t.cwd, "stays");
    mkdirSync(victim);
    t.transport
      .push(callTools(["terminal", { command: `rm -rf ${victim}` }]))
      .push(say("Timed out, left it."));
    t.adapter.from("100", "delete it");
    await until(() => t.adapter.texts().includes("Timed out, left it."), "answer");
    expect(existsSync(victim)).toBe(true);
    expect(t.adapter.texts().some((m) => m.includes("Denied (no answer in time)"))).toBe(true);
  });

  it("interrupt mode: a message during a turn stops it and is answered next", async () => {
    const t = setup();
    let release!: () => void;
    t.transport.push(say("a long first answer that never finishes"), new Promise<void>((r) => (release = r)));
    t.transport.push(say("answer to the second"));
    t.adapter.from("100", "first");
    await until(() => t.transport.requests.length === 1, "first request");
    t.adapter.from("100", "actually, second");
    await until(() => t.adapter.texts().includes("answer to the second"), "second answer");
    release();
    expect(t.adapter.texts().some((m) => m.includes("Interrupting"))).toBe(true);
    expect(t.adapter.texts().some((m) => m === "a long first answer that never finishes")).toBe(false);
    const last = t.transport.requests[1]?.messages.filter((m) => m.role === "user").map((m) => m.content);
    expect(last?.at(-1)).toBe("actually, second");
  });

  it("queue mode: a message during a turn waits and both are answered in order", async () => {
    const t = setup({ config: { display: { ...DEFAULT_CONFIG.display, busy_input_mode: "queue" } } });
    let release!: () => void;
    t.transport.push(say("answer one"), new Promise<void>((r) => (release = r))).push(say("answer two"));
    t.adapter.from("100", "one");
    await until(() => t.transport.requests.length === 1, "first request");
    t.adapter.from("100", "two");
    await until(() => t.adapter.texts().some((m) => m.startsWith("📥 Queued")), "queued ack");
    release();
    await until(() => t.adapter.texts().includes("answer two"), "second answer");
    const texts = t.adapter.texts();
    expect(texts.indexOf("answer one")).toBeLessThan(texts.indexOf("answer two"));
  });

  it("/stop ends a running turn without delivering it; /status and /new answer even while busy", async () => {
    const t = setup();
    let release!: () => void;
    t.transport.push(say("should never be delivered"), new Promise<void>((r) => (release = r)));
    t.adapter.from("100", "work on it");
    await until(() => t.transport.requests.length === 1, "request");
    t.adapter.from("100", "/status");
    await until(() => t.adapter.texts().find((m) => m.includes("**Turn:** running")), "status");
    t.adapter.from("100", "/stop");
    await until(() => t.adapter.texts().includes("⏹ Stopped."), "stopped");
    release();
    await new Promise((r) => setTimeout(r, 50));
    expect(t.adapter.texts().includes("should never be delivered")).toBe(false);
    const before = JSON.parse(readFileSync(join(t.home, "sessions", "sessions.json"), "utf8"))[
      "agent:main:telegram:dm:100"
    ].session_id;
    t.adapter.from("100", "/new");
    await until(() => t.adapter.texts().includes("✨ New conversation started."), "new");
    const after = JSON.parse(readFileSync(join(t.home, "sessions", "sessions.json"), "utf8"))[
      "agent:main:telegram:dm:100"
    ].session_id;
    expect(after).not.toBe(before);
  });

  it("/stop during a terminal command ends its whole command line: the rest never runs", async () => {
    const t = setup();
    t.transport.push(callTools(["terminal", { command: "touch started; sleep 30; touch X" }]));
    t.adapter.from("100", "run the slow thing");
    await until(() => existsSync(join(t.cwd, "started")), "the command to start");
    t.adapter.from("100", "/stop");
    await until(() => t.adapter.texts().includes("⏹ Stopped."), "stopped");
    // The next turn runs in the same chat: by then a surviving `touch X` would have run.
    t.transport.push(callTools(["terminal", { command: "pwd" }])).push(say("fine"));
    t.adapter.from("100", "still there?");
    await until(() => t.adapter.texts().includes("fine"), "the next turn");
    expect(existsSync(join(t.cwd, "X"))).toBe(false);
    // The stopped turn asked the model nothing more, and the model was told what was stopped.
    expect(t.transport.requests).toHaveLength(3);
    const told = t.transport.requests[1]?.messages.find((m) => m.role === "tool")?.content;
    expect(told).toMatch(/interrupted by the user.*the rest of the command line did not run/s);
  });

  it("starts a fresh session after the idle reset window and says so", async () => {
    let now = new Date("2026-11-20T10:00:00");
    const t = setup({
      now: () => now,
      config: { session_reset: { mode: "idle", idle_minutes: 60 } },
    });
    t.transport.push(say("first")).push(say("second")).push(say("third"));
    t.adapter.from("100", "a");
    await until(() => t.adapter.texts().includes("first"), "first");
    const index = () =>
      JSON.parse(readFileSync(join(t.home, "sessions", "sessions.json"), "utf8"))[
        "agent:main:telegram:dm:100"
      ].session_id;
    const firstId = index();
    now = new Date("2026-11-20T10:30:00");
    t.adapter.from("100", "b");
    await until(() => t.adapter.texts().includes("second"), "second");
    expect(index()).toBe(firstId);
    now = new Date("2026-11-20T12:00:00");
    t.adapter.from("100", "c");
    await until(() => t.adapter.texts().includes("third"), "third");
    expect(index()).not.toBe(firstId);
    expect(t.adapter.texts().some((m) => m.includes("idle for more than 1 h"))).toBe(true);
  });

  it("continues the chat's stored session after a gateway restart", async () => {
    const t = setup();
    t.transport.push(say("remembered: blue"));
    t.adapter.from("100", "my colour is blue");
    await until(() => t.adapter.texts().includes("remembered: blue"), "first");
    await t.router.stop();
    const second = new MessageRouter({
      home: t.home,
      config: DEFAULT_CONFIG,
      env: { TELEGRAM_ALLOWED_USERS: "100" },
      adapters: new Map([["telegram", t.adapter]]),
      pairing: pairingRecords(t.pairing),
      openSession: (request) =>
        ChatSession.open({
          transport: t.transport,
          home: t.home,
          cwd: t.cwd,
          env: {},
          toolsets: [],
          store: t.store,
          source: request.platform,
          ...(request.resume ? { resume: request.resume } : {}),
        }),
    });
    routers.push(second);
    await t.adapter.connect(second.handlersFor(t.adapter));
    t.transport.push(say("it is blue"));
    t.adapter.from("100", "what is my colour?");
    await until(() => t.adapter.texts().includes("it is blue"), "second");
    const contents = t.transport.requests[1]?.messages.map((m) => m.content);
    expect(contents).toContain("my colour is blue");
  });

  it("closes the least recently used idle agent beyond the cache size and resumes it on the next message", async () => {
    const t = setup({ env: { TELEGRAM_ALLOWED_USERS: "100,200" }, maxCachedAgents: 1 });
    t.transport.push(say("hi 100")).push(say("hi 200")).push(say("back, 100"));
    t.adapter.from("100", "one");
    await until(() => t.adapter.texts().includes("hi 100"), "first");
    t.adapter.from("200", "two");
    await until(() => t.adapter.texts().includes("hi 200"), "second");
    t.adapter.from("100", "three");
    await until(() => t.adapter.texts().includes("back, 100"), "third");
    expect(t.opened.map((o) => o.resume !== undefined)).toEqual([false, false, true]);
    const contents = t.transport.requests[2]?.messages.map((m) => m.content);
    expect(contents).toContain("one");
  });

  it("streams by editing one message, then shows tool progress and the final answer", async () => {
    const t = setup({ config: { streaming: { enabled: true, edit_interval: 0.01, buffer_threshold: 4 } } });
    t.transport.push(callTools(["todo", { todos: [{ id: "1", content: "x", status: "pending" }] }]));
    let release!: () => void;
    t.transport.push(
      say("The final answer is forty-two, as computed."),
      new Promise<void>((r) => (release = r)),
    );
    t.adapter.from("100", "compute");
    const growing = await until(
      () => [...t.adapter.messages.values()].find((m) => m.text.endsWith("▉")),
      "a growing message",
    );
    expect(growing.text).toMatch(/^The final answ/);
    release();
    await until(
      () => t.adapter.texts().includes("The final answer is forty-two, as computed."),
      "final streamed text",
    );
    const streamed = t.adapter.log.filter((e) => e.op === "send" || e.op === "edit");
    expect(streamed.some((e) => e.op === "edit")).toBe(true);
    expect(t.adapter.texts().some((m) => m.startsWith("📋 todo"))).toBe(true);
    expect(t.adapter.texts().every((m) => !m.endsWith("▉"))).toBe(true);
  });

  it("a stream that drops mid-answer: the shown fragment is withdrawn and replaced by the retried answer", async () => {
    const t = setup({ config: { streaming: { enabled: true, edit_interval: 0.01, buffer_threshold: 4 } } });
    let drop!: () => void;
    t.transport.push(say("Fragment that will break off here."), new Promise<void>((r) => (drop = r)), true);
    t.transport.push(say("The whole retried answer."));
    t.adapter.from("100", "hello");
    const growing = await until(
      () => [...t.adapter.messages.values()].find((m) => m.text.startsWith("Fragment")),
      "the fragment on screen",
    );
    drop();
    await until(() => t.adapter.texts().includes("The whole retried answer."), "the retried answer");
    expect(t.adapter.texts().join("\n")).not.toContain("Fragment");
    // The message that showed the fragment is the one that now holds the answer.
    expect(growing.text).toBe("The whole retried answer.");
    expect(t.adapter.log.some((e) => e.op === "edit" && e.text?.startsWith("↻"))).toBe(true);
    // The wait before the retry was shown with the progress lines.
    expect(t.adapter.texts().some((m) => /^⏳ .*retrying in/s.test(m))).toBe(true);
  });

  it("in a group, the answer replies to the message it answers", async () => {
    const t = setup();
    t.transport.push(say("Answer in the group."));
    t.adapter.handlers.onMessage({
      source: { platform: "telegram", chatType: "group", chatId: "-1005", userId: "100", userName: "owner" },
      text: "question for the bot",
      messageId: "77",
    });
    await until(() => t.adapter.texts().includes("Answer in the group."), "answer");
    const sent = [...t.adapter.messages.values()].find((m) => m.text === "Answer in the group.");
    expect(sent?.target).toEqual({ chatId: "-1005", replyTo: "77" });
  });

  it("transcribes a voice note with the configured speech-to-text and gives the agent both", async () => {
    const stt = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ text: "turn on the porch light" }));
      });
    });
    await new Promise<void>((r) => stt.listen(0, "127.0.0.1", r));
    const port = (stt.address() as AddressInfo).port;
    try {
      const t = setup({
        config: { stt: { provider: "openai", openai: { base_url: `http://127.0.0.1:${port}/v1` } } },
      });
      const note = join(t.cwd, "note.ogg");
      writeFileSync(note, "OggS fake voice");
      t.transport.push(say("Porch light is on."));
      t.adapter.handlers.onMessage({
        source: { platform: "telegram", chatType: "dm", chatId: "100", userId: "100" },
        text: "",
        media: [{ kind: "voice", path: note }],
      });
      await until(() => t.adapter.texts().includes("Porch light is on."), "answer");
      const input = t.transport.requests[0]?.messages.at(-1)?.content;
      expect(input).toContain(`saved at ${note}`);
      expect(input).toContain("[Transcript: turn on the porch light]");
    } finally {
      stt.close();
    }
  });

  it("answers an unknown /word in a DM without the model, and keeps quiet about one in a group nobody addressed", async () => {
    const t = setup();
    t.adapter.from("100", "/wether");
    await until(() => t.adapter.texts().find((m) => m.startsWith("Unknown command /wether")), "suggestion");
    t.adapter.handlers.onMessage({
      source: { platform: "telegram", chatType: "group", chatId: "-1002", userId: "100", userName: "u" },
      text: "/weather@otherbot tomorrow",
      mentioned: false,
    });
    t.adapter.from("100", "/status", { chatType: "group", chatId: "-1002" });
    await until(() => t.adapter.texts().find((m) => m.includes("**Turn:** idle")), "status in the group");
    expect(t.adapter.texts().filter((m) => m.startsWith("Unknown command"))).toHaveLength(1);
    expect(t.transport.requests).toHaveLength(0);
  });

  it("/resume with no argument asks, and the next message picks the session", async () => {
    const t = setup();
    t.transport.push(say("noted the plan")).push(say("back again"));
    t.adapter.from("100", "remember the launch plan");
    await until(() => t.adapter.texts().includes("noted the plan"), "first answer");
    t.adapter.from("100", "/new");
    await until(() => t.adapter.texts().includes("✨ New conversation started."), "new");
    t.adapter.from("100", "/resume");
    const list = await until(() => t.adapter.texts().find((m) => m.includes("Reply with a number")), "list");
    const number = /(\d+)\. [^\n]*remember the launch plan/.exec(list)?.[1];
    expect(number, list).toBeDefined();
    t.adapter.from("100", number ?? "");
    await until(() => t.adapter.texts().find((m) => m.includes("Resumed")), "resumed");
    t.adapter.from("100", "and now?");
    await until(() => t.adapter.texts().includes("back again"), "answer in the resumed session");
    const sent = JSON.stringify(t.transport.requests.at(-1)?.messages);
    expect(sent).toContain("remember the launch plan");
    expect(sent).not.toContain('"content":"1"');
  });

  it("/sethome saves the home channel, and deliver() sends there without the agent", async () => {
    const t = setup();
    t.adapter.from("100", "/sethome", { chatType: "group", chatId: "-1009", threadId: "7" });
    await until(() => t.adapter.texts().some((m) => m.startsWith("🏠")), "sethome reply");
    expect(readFileSync(join(t.home, ".env"), "utf8")).toMatch(/TELEGRAM_HOME_CHANNEL=-1009:7/);
    await t.router.deliver("telegram", {}, "Cron says hi");
    const last = [...t.adapter.messages.values()].at(-1);
    expect(last).toMatchObject({ text: "Cron says hi", target: { chatId: "-1009", threadId: "7" } });
    await expect(t.router.deliver("discord", {}, "x")).rejects.toThrow(/not connected/);
    expect(t.transport.requests).toHaveLength(0);
  });
});

describe("MessageRouter: background work reporting back", () => {
  const lastUser = (request: ChatRequest | undefined) =>
    String(request?.messages.filter((m) => m.role === "user").at(-1)?.content ?? "");

  it("runs a turn in the chat when a background process with notify_on_complete ends", async () => {
    const t = setup();
    t.transport
      .push(
        callTools([
          "terminal",
          { command: "sleep 0.3; echo gw-done", background: true, notify_on_complete: true },
        ]),
      )
      .push(say("Started it."))
      .push(say("It finished: gw-done."));
    t.adapter.from("100", "run the job");
    await until(() => t.adapter.texts().includes("Started it."), "the first answer");
    // Nobody writes again: the process ending starts the turn.
    await until(() => t.adapter.texts().includes("It finished: gw-done."), "the woken turn");
    const woken = lastUser(t.transport.requests[2]);
    expect(woken.startsWith(NOTICES_HEADER)).toBe(true);
    expect(woken).toContain("gw-done");
    expect(woken).not.toContain("run the job");
  });

  it("delivers a notice that arrives during a turn right after that turn", async () => {
    const t = setup();
    let open!: () => void;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    t.transport
      .push(
        callTools(["terminal", { command: "echo quick-exit", background: true, notify_on_complete: true }]),
      )
      .push(say("Still thinking about it."), gate)
      .push(say("Noted the exit."));
    t.adapter.from("100", "go");
    await until(() => t.transport.requests.length >= 2, "the second model call");
    // The process ends (and its notice waits) while the turn is still running.
    await until(() => t.chats[0]?.pendingWake(), "the exit notice");
    expect(t.chats[0]?.running).toBe(true);
    open();
    await until(() => t.adapter.texts().includes("Noted the exit."), "the follow-up turn");
    expect(t.transport.requests).toHaveLength(3);
    expect(lastUser(t.transport.requests[2])).toContain("quick-exit");
  });
});

describe("display.runtime_footer on replies", () => {
  it("ends the final answer with the footer when enabled; a silent answer stays silent", async () => {
    const t = setup({
      config: {
        display: { ...DEFAULT_CONFIG.display, runtime_footer: { enabled: true, fields: ["model", "cwd"] } },
      },
    });
    t.transport.push(say("Here you go.")).push(say("[SILENT]")).push(say("Third."));
    t.adapter.from("100", "hi");
    const answer = await until(
      () => t.adapter.texts().find((text) => text.startsWith("Here you go.")),
      "the answer",
    );
    expect(answer).toMatch(/^Here you go\.\n\n\S+ · \/.+\/work$/);
    t.adapter.from("100", "nothing to say");
    await until(() => t.transport.requests.length === 2, "the second turn");
    t.adapter.from("100", "and now?");
    await until(() => t.adapter.texts().some((text) => text.startsWith("Third.")), "the third answer");
    // The silent turn sent nothing: no footer on its own, no silence token.
    const texts = t.adapter.texts();
    expect(texts.filter((text) => !text.startsWith("Here you go.") && !text.startsWith("Third."))).toEqual(
      [],
    );
  });

  it("is off by default", async () => {
    const t = setup();
    t.transport.push(say("Plain answer."));
    t.adapter.from("100", "hi");
    await until(() => t.adapter.texts().includes("Plain answer."), "the answer");
    expect(t.adapter.texts()).toEqual(["Plain answer."]);
  });
});
