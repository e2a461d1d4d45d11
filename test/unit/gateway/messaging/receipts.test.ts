/**
 * When the router is done with a message from a shared feed (`InboundMessage.receipt`): after its
 * turn's answer is stored and before that answer is sent; for a queued message, only with the turn
 * that reads it; at once for one refused. A message handed on again after its taker died mid-turn
 * takes the stored unfinished turn back, so it shows once in the history; one whose turn was
 * already answered is not run again.
 */
import { afterEach, describe, expect, it } from "vitest";
import { defaultConfig } from "../../../../src/config/defaults.js";
import { nextBatch, resumeRedelivered } from "../../../../src/gateway/messaging/receipts.js";
import type { DeliveryReceipt, InboundMessage } from "../../../../src/gateway/platforms/types.js";
import { type Instance, type Instances, startInstances, until } from "../../../support/gateway-instances.js";
import { say } from "../../../support/scripted-transport.js";

const gate = () => {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
};

/** A receipt that records when `done` was called, against the adapter's sends so far. */
function receipt(instance: Instance, redelivered?: DeliveryReceipt["redelivered"]) {
  const seen: { at?: number; sentBefore?: string[] } = {};
  const r: DeliveryReceipt = {
    ...(redelivered ? { redelivered } : {}),
    async done() {
      if (seen.at !== undefined) return;
      seen.at = Date.now();
      seen.sentBefore = instance.adapter.texts();
    },
  };
  return { receipt: r, seen };
}

const message = (userId: string, text: string, r?: DeliveryReceipt): InboundMessage => ({
  source: { platform: "telegram", chatType: "dm", chatId: userId, userId },
  text,
  ...(r ? { receipt: r } : {}),
});

let running: Instances | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

function one(mode = "queue"): Instance {
  running = startInstances(["a"], {
    config: { display: { ...defaultConfig().display, busy_input_mode: mode } },
  });
  return running.list[0]!;
}

describe("feed receipts in the router", () => {
  it("a message is done once its answer is stored, before the answer is sent; a queued one with its own turn", async () => {
    const a = one("queue");
    const first = gate();
    a.model.push(say("answer one"), first.promise).push(say("answer two"));
    const r1 = receipt(a);
    const r2 = receipt(a);
    a.adapter.handlers.onMessage(message("100", "one", r1.receipt));
    await until(() => a.model.requests.length === 1, "the first turn in flight");
    a.adapter.handlers.onMessage(message("100", "two", r2.receipt));
    await until(() => a.adapter.texts().some((t) => t.startsWith("📥 Queued")), "the queued notice");
    await new Promise((r) => setTimeout(r, 50));
    // The turn is in flight: neither is done; the queued one's handling returned but it waits.
    expect(r1.seen.at).toBeUndefined();
    expect(r2.seen.at).toBeUndefined();
    first.open();
    await until(() => a.adapter.texts().includes("answer two"), "the second answer");
    await until(() => r2.seen.at !== undefined, "the second done");
    expect(r1.seen.sentBefore).not.toContain("answer one");
    expect(r2.seen.sentBefore).toContain("answer one");
    expect(r2.seen.sentBefore).not.toContain("answer two");
  });

  it("a refused message and a command are done at once", async () => {
    const a = one();
    const stranger = receipt(a);
    const command = receipt(a);
    a.adapter.handlers.onMessage(message("999", "let me in", stranger.receipt));
    a.adapter.handlers.onMessage(message("100", "/help", command.receipt));
    await until(() => stranger.seen.at !== undefined && command.seen.at !== undefined, "both done");
    expect(a.model.requests).toHaveLength(0);
  });

  it("a message handed on again takes the unfinished stored turn back and shows once", async () => {
    const a = one();
    const stalled = gate();
    a.model.push(say("never"), stalled.promise).push(say("answer at last"));
    a.adapter.handlers.onMessage(message("100", "please answer"));
    await until(() => a.model.requests.length === 1, "the turn in flight");
    // As if the instance died here: the turn is cut off with the user's message stored.
    const conv = await a.router.cached("agent:main:telegram:dm:100");
    conv!.chat.interrupt();
    await until(() => !conv!.chat.running, "the turn stopped");
    const users = () => conv!.chat.agent.messages.filter((m) => m.role === "user").length;
    expect(users()).toBe(1);

    const again = receipt(a, { takenAt: new Date(), attempts: 2 });
    const redelivered = message("100", "please answer", again.receipt);
    expect(await resumeRedelivered(conv!.chat, [redelivered])).toBe("run");
    expect(users()).toBe(0);
    a.adapter.handlers.onMessage(redelivered);
    await until(() => a.adapter.texts().includes("answer at last"), "the answer");
    // The relay may have reopened the chat (its stored session changed): read it again.
    const chat = (await a.router.cached("agent:main:telegram:dm:100"))!.chat;
    expect(chat.agent.messages.filter((m) => m.role === "user").map((m) => m.content)).toEqual([
      "please answer",
    ]);
    expect(a.model.requests).toHaveLength(2);
    // Handed on once more (its taker died after the answer was stored): not run again.
    const third = message("100", "please answer", receipt(a, { takenAt: new Date(), attempts: 3 }).receipt);
    expect(await resumeRedelivered(chat, [third])).toBe("answered");
    // Another message is never taken for it, and a first delivery is left alone.
    expect(await resumeRedelivered(chat, [message("100", "something else", again.receipt)])).toBe("run");
    expect(await resumeRedelivered(chat, [message("100", "please answer")])).toBe("run");
    expect(chat.agent.messages.filter((m) => m.role === "user")).toHaveLength(1);
  });

  it("messages handed on again at the head of the queue run on their own turn before newer ones", () => {
    const again = (text: string) =>
      message("100", text, {
        redelivered: { takenAt: new Date(), attempts: 2 },
        done: async () => undefined,
      });
    const queue = [again("g1"), again("g2"), message("100", "h"), again("late"), message("100", "i")];
    expect(nextBatch(queue).map((m) => m.text)).toEqual(["g1", "g2"]);
    // Fresh at the head: everything queued is read together, as on one instance.
    expect(nextBatch(queue).map((m) => m.text)).toEqual(["h", "late", "i"]);
    expect(queue).toEqual([]);
    const fresh = [message("100", "x"), message("100", "y")];
    expect(nextBatch(fresh).map((m) => m.text)).toEqual(["x", "y"]);
  });
});
