/**
 * A forwarded chat message whose receipt came late is sent again with the same id; the instance
 * that already took it confirms it again and does not run it twice (under load a receipt can
 * take longer than the sender waits, and a second run would answer the user twice).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ChatRelay } from "../../../../src/gateway/coordination/chat-relay.js";
import type { InboundMessage } from "../../../../src/gateway/platforms/types.js";
import type { CoordinationMessage, Coordinator } from "../../../../src/state/coordination.js";

function fakeCoordinator() {
  let handler: ((m: CoordinationMessage) => void) | undefined;
  const sent: Array<{ to: string; topic: string; payload: unknown }> = [];
  const coordinator = {
    instanceId: "b",
    shared: true,
    subscribe: (h: (m: CoordinationMessage) => void) => {
      handler = h;
      return () => undefined;
    },
    send: async (to: string, topic: string, payload: unknown) => {
      sent.push({ to, topic, payload });
    },
  } as unknown as Coordinator;
  return { coordinator, sent, deliver: (m: CoordinationMessage) => handler?.(m) };
}

const input = (id: string, text: string): CoordinationMessage => ({
  topic: "chat.input",
  from: "a",
  payload: {
    key: "agent:main:telegram:dm:7",
    platform: "telegram",
    hops: 1,
    id,
    message: { source: { platform: "telegram", chatId: "7", userId: "7", chatType: "dm" }, text },
  },
});

describe("a forwarded message sent again after a late receipt", () => {
  it("is confirmed each time and handled once; another message is still handled", async () => {
    const { coordinator, sent, deliver } = fakeCoordinator();
    const relay = new ChatRelay(coordinator, { home: mkdtempSync(join(tmpdir(), "hermes-relay-")) });
    const handled: InboundMessage[] = [];
    relay.attach(() => ({
      onMessage: (m: InboundMessage) => void handled.push(m),
      onAction: () => undefined,
    }));
    deliver(input("0123456789abcdef", "hello"));
    deliver(input("0123456789abcdef", "hello"));
    deliver(input("fedcba9876543210", "hello again"));
    await new Promise((r) => setTimeout(r, 100));
    expect(handled.map((m) => m.text)).toEqual(["hello", "hello again"]);
    const receipts = sent
      .filter((s) => s.topic === "chat.receipt")
      .map((s) => (s.payload as { id: string }).id);
    expect(receipts).toEqual(["0123456789abcdef", "0123456789abcdef", "fedcba9876543210"]);
    relay.close();
  });
});
