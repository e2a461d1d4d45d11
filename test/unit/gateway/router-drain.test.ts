/**
 * Stopping and restarting with chats mid-turn: a turn still running when the drain bound runs out
 * is interrupted, its chat told and its conversation marked in sessions.json; after a "restart"
 * (a new router over the same home) the next message continues the same session with a note to
 * the model, once, and only while the mark is fresh. While a restart waits for running turns, new
 * requests are turned away and queued ones dropped with a notice; `/restart` asks the runner.
 */
import { mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ChatRequest, Message, StreamEvent, Transport } from "../../../src/ai/types.js";
import { defaultConfig, type HermesConfig } from "../../../src/config/defaults.js";
import {
  CONTINUE_NOTE,
  continuedInput,
  drainSettings,
  QUEUE_DROPPED_NOTICE,
  RESTART_INTERRUPTED_NOTICE,
  RESTARTING_NOTICE,
} from "../../../src/gateway/messaging/drain.js";
import { MessageRouter } from "../../../src/gateway/messaging/router.js";
import type {
  AdapterHandlers,
  OutboundTarget,
  PlatformAdapter,
} from "../../../src/gateway/platforms/types.js";
import { PairingStore, pairingRecords } from "../../../src/state/gateway/pairing.js";
import type { SqliteSessionStore } from "../../../src/state/sqlite-store.js";
import { openSessionStore } from "../../../src/state/sqlite-store.js";
import { openSessionFor, until } from "../../support/memory-gateway.js";
import { say } from "../../support/scripted-transport.js";

class MemoryAdapter implements PlatformAdapter {
  readonly platform = "telegram";
  capabilities = {
    maxMessageLength: 4000,
    edit: true,
    buttons: true,
    typing: true,
    media: false,
    maxMediaBytes: 0,
  };
  handlers!: AdapterHandlers;
  readonly sent: Array<{ chat: string; text: string }> = [];
  async connect(handlers: AdapterHandlers) {
    this.handlers = handlers;
  }
  async disconnect() {}
  async send(target: OutboundTarget, text: string) {
    this.sent.push({ chat: target.chatId, text });
    return { messageId: String(this.sent.length) };
  }
  async edit(_t: OutboundTarget, id: string, text: string) {
    const m = this.sent[Number(id) - 1];
    if (m) m.text = text;
  }
  async typing() {}
  async sendMedia(): Promise<{ messageId: string }> {
    throw new Error("no media here");
  }
  texts(chat?: string) {
    return this.sent.filter((m) => !chat || m.chat === chat).map((m) => m.text);
  }
  from(userId: string, text: string) {
    this.handlers.onMessage({
      source: { platform: "telegram", chatType: "dm", chatId: userId, userId, userName: `u${userId}` },
      text,
    });
  }
}

/** Replies the test writes; `hang()` is a reply that never comes unless the turn is interrupted. */
class Transport1 implements Transport {
  readonly apiMode = "chat_completions" as const;
  readonly requests: ChatRequest[] = [];
  private readonly queue: Array<Message | "hang" | Promise<Message>> = [];
  push(...items: Array<Message | "hang" | Promise<Message>>): this {
    this.queue.push(...items);
    return this;
  }
  async *stream(request: ChatRequest, signal?: AbortSignal): AsyncIterable<StreamEvent> {
    this.requests.push(structuredClone(request));
    const next = this.queue.shift();
    if (!next) throw new Error("no scripted reply left");
    const aborted = new Promise<never>((_, reject) =>
      signal?.addEventListener("abort", () =>
        reject(Object.assign(new Error("aborted"), { name: "AbortError" })),
      ),
    );
    yield { type: "text_delta", text: "working on it… " };
    const message = next === "hang" ? await aborted : await Promise.race([next, aborted]);
    yield { type: "text_delta", text: typeof message.content === "string" ? message.content : "" };
    yield { type: "finish", reason: "stop", message: { ...message, role: "assistant" } };
  }
}

const stores: SqliteSessionStore[] = [];
const routers: MessageRouter[] = [];
afterEach(async () => {
  for (const r of routers.splice(0)) await r.stop({ drainMs: 0 });
  for (const s of stores.splice(0)) s.close();
});

function home() {
  const root = mkdtempSync(join(tmpdir(), "hermes-drain-"));
  mkdirSync(join(root, "home"));
  mkdirSync(join(root, "work"));
  return { home: join(root, "home"), cwd: join(root, "work") };
}

function gateway(
  where: { home: string; cwd: string },
  options: {
    agent?: Record<string, unknown>;
    now?: () => Date;
    restart?: () => void;
    busy?: string;
  } = {},
) {
  const base = defaultConfig();
  const config = {
    ...base,
    agent: { ...base.agent, ...(options.agent ?? {}) },
    display: { ...base.display, busy_input_mode: options.busy ?? base.display.busy_input_mode },
  } as HermesConfig;
  const store = openSessionStore(join(where.home, "state.db"));
  stores.push(store);
  const transport = new Transport1();
  const adapter = new MemoryAdapter();
  const router = new MessageRouter({
    home: where.home,
    config,
    env: { TELEGRAM_ALLOWED_USERS: "100,200" },
    adapters: new Map([["telegram", adapter]]),
    pairing: pairingRecords(new PairingStore({ home: where.home })),
    ...(options.now ? { now: options.now } : {}),
    ...(options.restart ? { restart: options.restart } : {}),
    openSession: (request) =>
      openSessionFor(request, {
        transport,
        config,
        home: where.home,
        cwd: where.cwd,
        store,
        toolsets: ["todo"],
      }),
  });
  routers.push(router);
  void adapter.connect(router.handlersFor(adapter));
  return { router, adapter, transport, store };
}

const index = (h: string) => JSON.parse(readFileSync(join(h, "sessions", "sessions.json"), "utf8"));
const KEY = "agent:main:telegram:dm:100";
const lastUser = (t: Transport1) =>
  String(
    t.requests
      .at(-1)
      ?.messages.filter((m) => m.role === "user")
      .at(-1)?.content,
  );

describe("stopping with a turn running", () => {
  it("interrupts it after the drain bound, tells the chat, marks it; the next gateway continues it once", async () => {
    const where = home();
    const first = gateway(where, { agent: { restart_drain_timeout: 0.2 } });
    first.transport.push("hang");
    first.adapter.from("100", "refactor the parser");
    await until(() => first.transport.requests.length === 1, "the turn to start");
    const before = Date.now();
    await first.router.stop();
    expect(Date.now() - before).toBeGreaterThanOrEqual(150);
    expect(first.adapter.texts("100")).toContain(RESTART_INTERRUPTED_NOTICE);
    // The half-streamed answer is not left standing as if it were the answer.
    expect(first.adapter.texts("100").join("\n")).not.toMatch(/working on it/);
    const entry = index(where.home)[KEY];
    expect(entry).toMatchObject({ resume_pending: true, resume_reason: "restart_interrupted" });
    const sessionId = entry.session_id;

    const second = gateway(where);
    second.transport.push(say("Continuing the parser refactor."), say("Sure."));
    second.adapter.from("100", "go on");
    await until(() => second.adapter.texts("100").includes("Continuing the parser refactor."), "the answer");
    expect(lastUser(second.transport)).toBe(`${CONTINUE_NOTE}\n\ngo on`);
    // The same session goes on: the cut-off request is in its history.
    expect(index(where.home)[KEY].session_id).toBe(sessionId);
    expect(JSON.stringify(second.transport.requests[0]?.messages)).toContain("refactor the parser");
    expect(index(where.home)[KEY].resume_pending).toBeUndefined();
    // Once only.
    second.adapter.from("100", "thanks");
    await until(() => second.adapter.texts("100").includes("Sure."), "the second answer");
    expect(lastUser(second.transport)).toBe("thanks");
  });

  it("a turn that finishes within the bound is answered normally and nothing is marked", async () => {
    const where = home();
    const g = gateway(where, { agent: { restart_drain_timeout: 10 } });
    let release!: (m: Message) => void;
    g.transport.push(new Promise<Message>((resolve) => (release = resolve)));
    g.adapter.from("100", "quick one");
    await until(() => g.transport.requests.length === 1, "the turn to start");
    const stopping = g.router.stop();
    release(say("Done in time."));
    await stopping;
    expect(g.adapter.texts("100").join("\n")).toContain("Done in time.");
    expect(g.adapter.texts("100")).not.toContain(RESTART_INTERRUPTED_NOTICE);
    expect(index(where.home)[KEY].resume_pending).toBeUndefined();
  });

  it("the default bound (0, upstream's) interrupts at once; idle chats are neither told nor marked", async () => {
    const where = home();
    const g = gateway(where);
    g.transport.push(say("hi 200"), "hang");
    g.adapter.from("200", "hello");
    await until(() => g.adapter.texts("200").join().includes("hi 200"), "200's answer");
    g.adapter.from("100", "long job");
    await until(() => g.transport.requests.length === 2, "100's turn");
    await g.router.stop();
    expect(g.adapter.texts("100")).toContain(RESTART_INTERRUPTED_NOTICE);
    expect(g.adapter.texts("200")).not.toContain(RESTART_INTERRUPTED_NOTICE);
    expect(index(where.home)["agent:main:telegram:dm:200"].resume_pending).toBeUndefined();
  });

  it("a stale mark (older than gateway_auto_continue_freshness) is dropped, not acted on", async () => {
    const where = home();
    const first = gateway(where);
    first.transport.push("hang");
    first.adapter.from("100", "long job");
    await until(() => first.transport.requests.length === 1, "the turn");
    await first.router.stop();
    const later = new Date(Date.now() + 2 * 3600_000);
    const second = gateway(where, { now: () => later, agent: { gateway_auto_continue_freshness: 3600 } });
    second.transport.push(say("Hello."));
    second.adapter.from("100", "hello");
    await until(() => second.adapter.texts("100").includes("Hello."), "the answer");
    expect(lastUser(second.transport)).toBe("hello");
    expect(index(where.home)[KEY].resume_pending).toBeUndefined();
  });
});

describe("a restart waiting for running turns", () => {
  it("turns new requests away, drops queued ones with a notice, and lets the running turn finish", async () => {
    const where = home();
    const g = gateway(where, { busy: "queue" });
    let release!: (m: Message) => void;
    g.transport.push(new Promise<Message>((resolve) => (release = resolve)));
    g.adapter.from("100", "first");
    await until(() => g.transport.requests.length === 1, "the turn");
    g.adapter.from("100", "queued while busy");
    await until(() => g.adapter.texts("100").some((t) => t.includes("Queued")), "the queued notice");
    const quiet = g.router.quiesce(10_000);
    g.adapter.from("200", "new request");
    await until(() => g.adapter.texts("200").includes(RESTARTING_NOTICE), "the restarting notice");
    release(say("First done."));
    expect(await quiet).toBe(true);
    expect(g.adapter.texts("100").join("\n")).toContain("First done.");
    expect(g.adapter.texts("100")).toContain(QUEUE_DROPPED_NOTICE);
    // Nothing reached the model but the one running turn.
    expect(g.transport.requests).toHaveLength(1);
  });

  it("reports false when turns outlast the bound", async () => {
    const g = gateway(home());
    g.transport.push("hang");
    g.adapter.from("100", "long");
    await until(() => g.transport.requests.length === 1, "the turn");
    expect(await g.router.quiesce(100)).toBe(false);
  });

  it("/restart asks the runner (admins only, as upstream) and says how long turns may take", async () => {
    let asked = 0;
    const g = gateway(home(), { restart: () => asked++, agent: { restart_after_turn_timeout: 120 } });
    g.adapter.from("100", "/restart");
    await until(() => asked === 1, "the restart request");
    expect(g.adapter.texts("100").join("\n")).toMatch(/Restarting the gateway.*up to 2 min/);
  });

  it("/restart where the gateway cannot restart itself says what to run instead", async () => {
    const g = gateway(home());
    g.adapter.from("100", "/restart");
    await until(
      () => g.adapter.texts("100").some((t) => t.includes("hermes gateway restart")),
      "the refusal",
    );
  });
});

describe("drain settings and the continue note", () => {
  it("reads upstream's keys, keeps 0 as 0, and falls back on nonsense", () => {
    const base = defaultConfig();
    expect(drainSettings(base)).toEqual({ drainMs: 0, afterTurnMs: 1_800_000, freshnessMs: 3_600_000 });
    const odd = { agent: { ...base.agent, restart_drain_timeout: "five", restart_after_turn_timeout: 0 } };
    expect(drainSettings(odd as unknown as HermesConfig)).toMatchObject({ drainMs: 0, afterTurnMs: 0 });
    const neg = {
      agent: { ...base.agent, restart_drain_timeout: -3, gateway_auto_continue_freshness: null },
    };
    expect(drainSettings(neg as unknown as HermesConfig)).toMatchObject({
      drainMs: 0,
      freshnessMs: 3_600_000,
    });
  });

  it("adds the note only for a fresh restart mark; 0 freshness means always", () => {
    const now = new Date("2026-01-01T12:00:00Z");
    const mark = { reason: "restart_interrupted", at: new Date("2026-01-01T11:30:00Z") };
    expect(continuedInput("go", mark, now, 3600_000)).toBe(`${CONTINUE_NOTE}\n\ngo`);
    expect(continuedInput("go", mark, now, 600_000)).toBe("go");
    expect(continuedInput("go", mark, now, 0)).toBe(`${CONTINUE_NOTE}\n\ngo`);
    expect(continuedInput("go", undefined, now, 0)).toBe("go");
    expect(continuedInput("go", { ...mark, reason: "other" }, now, 0)).toBe("go");
    // A mark from the future (a clock set back) is not trusted.
    expect(continuedInput("go", { ...mark, at: new Date("2026-01-01T13:00:00Z") }, now, 3600_000)).toBe("go");
  });
});
