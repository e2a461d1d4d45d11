import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ChatSession } from "../../../src/agent/chat-session.js";
import { defaultConfig } from "../../../src/config/defaults.js";

const DEFAULT_CONFIG = defaultConfig();

import { MessageRouter } from "../../../src/gateway/messaging/router.js";
import { pairingRecords } from "../../../src/state/gateway/pairing.js";
import { routers, setup, stopRoutersAfterEach, until } from "../../support/router-harness.js";
import { callTools, say } from "../../support/scripted-transport.js";

stopRoutersAfterEach();

describe("MessageRouter: busy chats, /stop and sessions across resets and restarts", () => {
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
});
