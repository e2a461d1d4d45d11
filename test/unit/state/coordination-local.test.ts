import { describe, expect, it } from "vitest";
import { localCoordinator } from "../../../src/state/coordination.js";

describe("the one-process coordinator", () => {
  it("claims chats, leases and cron slots once each, and takes nothing new while draining", async () => {
    const c = localCoordinator({ host: "box" });
    expect(c.shared).toBe(false);
    const chat = await c.claimChat("telegram:1");
    expect(await c.claimChat("telegram:1")).toEqual({ heldBy: c.instanceId });
    const lease = await c.tryLease("telegram");
    expect(await c.tryLease("telegram")).toBeNull();
    const slot = await c.claimCronSlot("job", "2026-11-27T00:00:00.000Z");
    expect(slot).toMatchObject({ attempt: 1 });
    expect(await c.claimCronSlot("job", "2026-11-27T00:00:00.000Z")).toBeNull();
    expect(await c.reclaimCronSlots()).toEqual([]);
    expect((await c.instances())[0]).toMatchObject({
      host: "box",
      holds: ["telegram"],
      chats: 1,
      draining: false,
    });
    await lease!.release();
    if ("claimed" in chat) await chat.claimed.release();
    await c.drain();
    expect(await c.tryLease("telegram")).toBeNull();
    await expect(c.waitLease("telegram")).rejects.toThrow(/draining/);
    expect(await c.claimCronSlot("job", "2026-11-27T01:00:00.000Z")).toBeNull();
    expect("claimed" in (await c.claimChat("telegram:1"))).toBe(true);
    expect((await c.instances())[0]).toMatchObject({ holds: [], chats: 1, draining: true });
  });
});
