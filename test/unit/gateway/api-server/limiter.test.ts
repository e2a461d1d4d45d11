import { describe, expect, it } from "vitest";
import {
  AcquireAbortedError,
  QueueFullError,
  RunLimiter,
} from "../../../../src/gateway/api-server/limiter.js";

describe("RunLimiter", () => {
  it("grants up to the limit, queues in order, and refuses past the queue", async () => {
    const limiter = new RunLimiter(1, 2);
    const first = await limiter.acquire();
    const order: string[] = [];
    const second = limiter.acquire().then((release) => {
      order.push("second");
      return release;
    });
    const third = limiter.acquire().then((release) => {
      order.push("third");
      return release;
    });
    await expect(limiter.acquire()).rejects.toBeInstanceOf(QueueFullError);
    expect([limiter.running, limiter.queued]).toEqual([1, 2]);
    first();
    first(); // releasing twice frees one slot only
    (await second)();
    (await third)();
    expect(order).toEqual(["second", "third"]);
    await limiter.idle();
    expect([limiter.running, limiter.queued]).toEqual([0, 0]);
  });

  it("drops a waiter whose signal aborts, without taking a slot", async () => {
    const limiter = new RunLimiter(1, 1);
    const held = await limiter.acquire();
    const controller = new AbortController();
    const waiting = limiter.acquire(controller.signal);
    controller.abort();
    await expect(waiting).rejects.toBeInstanceOf(AcquireAbortedError);
    expect(limiter.queued).toBe(0);
    held();
    expect(limiter.running).toBe(0);
    await expect(limiter.acquire(controller.signal)).rejects.toBeInstanceOf(AcquireAbortedError);
  });
});
