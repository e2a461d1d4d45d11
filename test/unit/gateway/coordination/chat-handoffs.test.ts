/**
 * A chat message forwarded to the instance running its chat is handled exactly once, whatever the
 * timing of its receipt: the sender and the receiver settle who has it in the shared handoff
 * ledger, never by a wall-clock wait alone. These tests force the late timings deterministically
 * by holding back receipts and deliveries between two relays over the in-memory hub.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ChatRelay } from "../../../../src/gateway/coordination/chat-relay.js";
import type { InboundMessage } from "../../../../src/gateway/platforms/types.js";
import type { CoordinationMessage, Coordinator } from "../../../../src/state/coordination.js";
import { coordinatorHub } from "../../../support/coordinator-hub.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const until = async (probe: () => boolean, what: string) => {
  const end = Date.now() + 5000;
  while (!probe()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
};
const home = () => mkdtempSync(join(tmpdir(), "hermes-handoff-"));
const message = (text: string): InboundMessage => ({
  source: { platform: "telegram", chatType: "dm", chatId: "1", userId: "7" },
  text,
});

/** A coordinator whose outgoing receipts and incoming chat input the test can hold back. */
function gated(
  base: Coordinator,
  gate: { receipt?: (send: () => void) => void; input?: (deliver: () => void) => void },
) {
  const wrapped: Coordinator = {
    ...base,
    async send(to, topic, payload) {
      if (topic === "chat.receipt" && gate.receipt) {
        gate.receipt(() => void base.send(to, topic, payload));
        return;
      }
      await base.send(to, topic, payload);
    },
    subscribe(handler) {
      return base.subscribe((m: CoordinationMessage) => {
        if (m.topic === "chat.input" && gate.input) gate.input(() => handler(m));
        else handler(m);
      });
    },
  };
  return wrapped;
}

function pair(gate: Parameters<typeof gated>[1], receiptWaitMs = 50) {
  const hub = coordinatorHub();
  const lines: string[] = [];
  const a = new ChatRelay(gated(hub.join("a"), gate), {
    home: home(),
    receiptWaitMs,
    log: (l) => lines.push(`a: ${l}`),
  });
  const b = new ChatRelay(hub.join("b"), { home: home(), receiptWaitMs, log: (l) => lines.push(`b: ${l}`) });
  const handled = { a: [] as string[], b: [] as string[] };
  a.attach(() => ({ onMessage: (m) => void handled.a.push(m.text ?? ""), onAction: () => undefined }));
  b.attach(() => ({ onMessage: (m) => void handled.b.push(m.text ?? ""), onAction: () => undefined }));
  return { hub, a, b, handled, lines };
}

describe("a forwarded chat message and a late receipt", () => {
  it("is handled once by the instance that took it, and the sender never runs it too, even once the chat is free", async () => {
    const receipts: Array<() => void> = [];
    const { hub, a, b, handled, lines } = pair({ receipt: (send) => receipts.push(send) });
    const releaseA = await a.admit("k", message("first"));
    expect(releaseA).not.toBeNull();
    expect(await b.admit("k", message("m1"))).toBeNull();
    await until(() => handled.a.includes("m1"), "a takes the forwarded message");
    // b's receipt wait (50 ms) runs out while a's receipt is held back.
    await until(() => lines.some((l) => l.includes("receipt was late")), "b settles with the ledger");
    releaseA?.();
    await until(() => hub.chatHolder("k") === undefined, "the chat released");
    await sleep(250);
    for (const send of receipts.splice(0)) send();
    await sleep(50);
    expect(handled.a).toEqual(["m1"]);
    expect(handled.b).toEqual([]);
    expect(lines.join("\n")).not.toMatch(/routing it again/);
    a.close();
    b.close();
  });

  it("read by the holder only after its sender took it back, is left to the sender, which passes it again", async () => {
    const held: Array<() => void> = [];
    let holdFirst = true;
    const { a, b, handled, lines } = pair({
      input: (deliver) => {
        if (!holdFirst) return deliver();
        holdFirst = false;
        held.push(deliver);
      },
    });
    const releaseA = await a.admit("k", message("first"));
    // Resolves once the holder took a copy: the first was taken back unconfirmed, the second taken.
    expect(await b.admit("k", message("m1"))).toBeNull();
    expect(lines.some((l) => l.includes("did not confirm") && l.includes("routing it again"))).toBe(true);
    await until(() => handled.a.includes("m1"), "a takes the second copy");
    for (const deliver of held.splice(0)) deliver();
    await until(() => lines.some((l) => l.includes("taken back by its sender")), "a reads the first late");
    await sleep(50);
    expect(handled.a).toEqual(["m1"]);
    expect(handled.b).toEqual([]);
    releaseA?.();
    a.close();
    b.close();
  });

  it("under any mix of delays each of 60 messages is handled exactly once", async () => {
    const jitter = (run: () => void) => void setTimeout(run, Math.floor(Math.random() * 8));
    const { a, b, handled } = pair({ receipt: jitter, input: jitter }, 4);
    const releaseA = await a.admit("k", message("first"));
    const texts = Array.from({ length: 60 }, (_, i) => `m${i}`);
    for (const text of texts) {
      const forwarded = await b.admit("k", message(text));
      expect(forwarded).toBeNull();
    }
    await until(() => handled.a.length + handled.b.length >= texts.length, "every message somewhere");
    await sleep(400);
    const all = [...handled.a, ...handled.b].sort();
    expect(all).toEqual([...texts].sort());
    releaseA?.();
    a.close();
    b.close();
  });

  it("a second copy of a message taken here is confirmed again and not handled twice", async () => {
    const hub = coordinatorHub();
    const a = new ChatRelay(hub.join("a"), { home: home() });
    const b = hub.join("b");
    const handled: string[] = [];
    a.attach(() => ({ onMessage: (m) => void handled.push(m.text ?? ""), onAction: () => undefined }));
    const payload = {
      key: "telegram:1",
      platform: "telegram",
      hops: 1,
      id: "h1",
      message: {
        source: { platform: "telegram", chatId: "1", userId: "7", chatType: "dm" as const },
        text: "once",
      },
    };
    await b.handoffs?.offer("h1", "a");
    await b.send("a", "chat.input", payload);
    await b.send("a", "chat.input", payload);
    // A copy never offered (a forged or foreign id) is not handled at all.
    await b.send("a", "chat.input", {
      ...payload,
      id: "never-offered",
      message: { ...payload.message, text: "forged" },
    });
    await until(() => hub.log.filter((m) => m.topic === "chat.receipt").length === 2, "two receipts");
    await sleep(50);
    expect(handled).toEqual(["once"]);
    expect(await b.handoffs?.withdraw("h1")).toBe(false);
    a.close();
  });
});
