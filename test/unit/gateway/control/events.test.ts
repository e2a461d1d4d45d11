import { describe, expect, it } from "vitest";
import { GatewayEventLog } from "../../../../src/gateway/control/events.js";

const clock = () => new Date("2026-01-02T03:04:05Z");

describe("the gateway event log", () => {
  it("hands out growing cursors and polls after one, per conversation or all", () => {
    const log = new GatewayEventLog(10, clock);
    log.push("platform_up", { platform: "telegram" });
    log.push("message", { session_key: "a", content: "hi" });
    log.push("message", { session_key: "b", content: "yo" });
    const all = log.poll(0, { limit: 20 });
    expect(all.events.map((e) => e.cursor)).toEqual([1, 2, 3]);
    expect(all.events[0]).toEqual({
      cursor: 1,
      type: "platform_up",
      at: "2026-01-02T03:04:05.000Z",
      platform: "telegram",
    });
    expect(all.next_cursor).toBe(3);
    expect(log.poll(1, { limit: 1 }).events.map((e) => e.cursor)).toEqual([2]);
    expect(log.poll(1, { limit: 1 }).next_cursor).toBe(2);
    const onlyB = log.poll(0, { sessionKey: "b", limit: 20 });
    expect(onlyB.events.map((e) => e.content)).toEqual(["yo"]);
    expect(log.poll(3, { limit: 20 })).toEqual({ events: [], next_cursor: 3, dropped: 0 });
  });

  it("keeps only the newest events and tells a slow reader how many it missed", () => {
    const log = new GatewayEventLog(3, clock);
    for (let i = 0; i < 5; i++) log.push("message", { content: String(i) });
    const page = log.poll(0, { limit: 20 });
    expect(page.events.map((e) => e.content)).toEqual(["2", "3", "4"]);
    expect(page.dropped).toBe(2);
    expect(log.poll(2, { limit: 20 }).dropped).toBe(0);
  });

  it("reads a cursor from an earlier gateway run as the start of this one", () => {
    const log = new GatewayEventLog(10, clock);
    log.push("message", { content: "new run" });
    expect(log.poll(5000, { limit: 20 }).events.map((e) => e.content)).toEqual(["new run"]);
    expect(log.poll(-3, { limit: 20 }).events).toHaveLength(1);
  });

  it("cuts long message text", () => {
    const log = new GatewayEventLog(10, clock);
    const event = log.push("message", { content: "x".repeat(5000) });
    expect((event.content as string).length).toBe(2001);
    expect(event["truncated"]).toBe(true);
  });

  it("wakes a waiter with the first matching event, and only a matching one", async () => {
    const log = new GatewayEventLog(10, clock);
    const forB = log.wait(0, { sessionKey: "b", timeoutMs: 10_000 });
    log.push("message", { session_key: "a", content: "not yours" });
    log.push("message", { session_key: "b", content: "yours" });
    expect((await forB)?.content).toBe("yours");
    // Already there: answered at once.
    expect((await log.wait(0, { timeoutMs: 10_000 }))?.cursor).toBe(1);
  });

  it("gives null on timeout, on abort and on close", async () => {
    const log = new GatewayEventLog(10, clock);
    expect(await log.wait(0, { timeoutMs: 10 })).toBeNull();
    const controller = new AbortController();
    const aborted = log.wait(0, { timeoutMs: 10_000, signal: controller.signal });
    controller.abort();
    expect(await aborted).toBeNull();
    const closed = log.wait(0, { timeoutMs: 10_000 });
    log.close();
    expect(await closed).toBeNull();
  });
});
