import { describe, expect, it } from "vitest";
import { controlHandlers } from "../../../../src/gateway/control/server.js";
import { GatewayControlState } from "../../../../src/gateway/control/state.js";
import { ChatApprovals } from "../../../../src/gateway/messaging/approvals.js";
import type { MessageRouter } from "../../../../src/gateway/messaging/router.js";
import type { PlatformAdapter } from "../../../../src/gateway/platforms/types.js";
import { JSON_RPC_ERRORS } from "../../../../src/util/json-rpc-socket.js";

const signal = new AbortController().signal;

type Handlers = ReturnType<typeof controlHandlers>;
/** As the socket calls a handler: a synchronous throw becomes a rejection. */
const rpc = async (
  handlers: Handlers,
  name: keyof Handlers,
  params: Record<string, unknown>,
  s: AbortSignal,
) => handlers[name](params, s);

/** The handlers over a state, a recording `deliver` and real approvals. */
function setup(connected: string[] = ["telegram"], env: Record<string, string> = {}) {
  const state = new GatewayControlState();
  const approvals = new ChatApprovals(60_000, state);
  const delivered: Array<{ platform: string; target: Record<string, string>; text: string }> = [];
  const router = {
    approvals,
    deliver: async (platform: string, target: Record<string, string>, text: string) => {
      delivered.push({ platform, target, text });
    },
  } as unknown as MessageRouter;
  const handlers = controlHandlers({
    home: "/nonexistent-home",
    config: {} as never,
    env,
    state,
    services: ["telegram", "cron (every 60 s)"],
    router: () => router,
    connected: () => connected,
  });
  return { state, approvals, delivered, handlers };
}

const adapter = {
  platform: "telegram",
  capabilities: {
    maxMessageLength: 4000,
    edit: false,
    buttons: false,
    typing: false,
    media: false,
    maxMediaBytes: 0,
  },
  send: async () => ({ messageId: "1" }),
} as unknown as PlatformAdapter;

describe("the control socket's methods", () => {
  it("status reports platforms, turns and approvals", async () => {
    const { state, handlers, approvals } = setup();
    state.platformUp("telegram");
    state.platformFailed("discord", "401 Unauthorized");
    state.message("in", { platform: "telegram", chatId: "42" }, "hi", { sessionKey: "k", sessionId: "s1" });
    state.turn("k", { platform: "telegram", chatId: "42" }, true);
    void approvals.ask(
      "k",
      { command: "rm -rf x", reason: "recursive delete", patternKey: "rm" },
      {
        adapter,
        target: { chatId: "42" },
        userId: "u",
      },
    );
    const status = (await rpc(handlers, "status", {}, signal)) as Record<string, unknown>;
    expect(status).toMatchObject({
      pid: process.pid,
      platforms: [
        { name: "telegram", state: "connected" },
        { name: "discord", state: "failed", error: "401 Unauthorized" },
      ],
      running_turns: [{ session_key: "k", session_id: "s1", platform: "telegram", chat_id: "42" }],
      pending_approvals: 1,
    });
    state.turn("k", { platform: "telegram", chatId: "42" }, false);
    expect(
      ((await rpc(handlers, "status", {}, signal)) as { running_turns: unknown[] }).running_turns,
    ).toEqual([]);
    approvals.denyAll();
  });

  it("messages.send reads platform:chat[:thread] and a bare platform, and refuses what is not connected", async () => {
    const { handlers, delivered } = setup(["telegram"], { TELEGRAM_HOME_CHANNEL: "777" });
    await rpc(handlers, "messages.send", { target: "telegram:-100123:9", message: "one" }, signal);
    await rpc(handlers, "messages.send", { target: "telegram", message: "two" }, signal);
    expect(delivered).toEqual([
      { platform: "telegram", target: { chatId: "-100123", threadId: "9" }, text: "one" },
      { platform: "telegram", target: {}, text: "two" },
    ]);
    expect(await rpc(handlers, "messages.send", { target: "telegram", message: "x" }, signal)).toMatchObject({
      chat_id: "777",
    });
    await expect(
      rpc(handlers, "messages.send", { target: "slack:C1", message: "x" }, signal),
    ).rejects.toMatchObject({
      code: JSON_RPC_ERRORS.application,
      message: expect.stringMatching(/slack is not connected to this gateway \(connected: telegram\)/),
    });
    for (const params of [
      {},
      { target: "telegram:1" },
      { target: "telegram:1", message: "  " },
      { target: 5, message: "x" },
    ])
      await expect(rpc(handlers, "messages.send", params, signal)).rejects.toMatchObject({
        code: JSON_RPC_ERRORS.invalidParams,
      });
    await expect(
      rpc(handlers, "messages.send", { target: "telegram:#general", message: "x" }, signal),
    ).rejects.toThrow(/no known telegram channel is named "#general"/);
  });

  it("approvals.respond takes only the chat's answers, and only for a pending id", async () => {
    const { handlers, approvals } = setup();
    const pending = approvals.ask(
      "k",
      { command: "rm -rf x", reason: "recursive delete", patternKey: "rm" },
      {
        adapter,
        target: { chatId: "42" },
        userId: "u",
      },
    );
    const { approvals: listed } = (await rpc(handlers, "approvals.list", {}, signal)) as {
      approvals: Array<{ id: string }>;
    };
    const id = listed[0]?.id ?? "";
    for (const decision of ["yes", "allow-once", "", "__proto__", "constructor"])
      await expect(rpc(handlers, "approvals.respond", { id, decision }, signal)).rejects.toMatchObject({
        code: JSON_RPC_ERRORS.invalidParams,
      });
    await expect(rpc(handlers, "approvals.respond", { decision: "once" }, signal)).rejects.toMatchObject({
      code: JSON_RPC_ERRORS.invalidParams,
    });
    expect(await rpc(handlers, "approvals.respond", { id, decision: "session" }, signal)).toEqual({
      id,
      decision: "session",
      resolved: true,
    });
    expect(await pending).toBe("session");
    await expect(rpc(handlers, "approvals.respond", { id, decision: "deny" }, signal)).rejects.toThrow(
      /No pending approval/,
    );
  });

  it("events.poll and events.wait validate their numbers and follow the log", async () => {
    const { handlers, state } = setup();
    await expect(rpc(handlers, "events.poll", { after_cursor: -1 }, signal)).rejects.toMatchObject({
      code: JSON_RPC_ERRORS.invalidParams,
    });
    await expect(rpc(handlers, "events.wait", { timeout_ms: "soon" }, signal)).rejects.toMatchObject({
      code: JSON_RPC_ERRORS.invalidParams,
    });
    const waiting = rpc(handlers, "events.wait", { after_cursor: 0, timeout_ms: 10_000 }, signal) as Promise<{
      event: { type: string } | null;
      next_cursor: number;
    }>;
    state.platformUp("telegram");
    expect(await waiting).toMatchObject({ event: { type: "platform_up" }, next_cursor: 1 });
    expect(await rpc(handlers, "events.wait", { after_cursor: 1, timeout_ms: 0 }, signal)).toEqual({
      event: null,
      next_cursor: 1,
      dropped: 0,
    });
  });
});
