/**
 * The stall watchdog (src/ai/transports/stall.ts) on fake timers and a fake clock: progress moves
 * the deadline without re-arming a timer, a pause holds it, and `stop` leaves nothing pending.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { StallError, StallWatchdog } from "../../../src/ai/transports/stall.js";

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
});
afterEach(() => {
  vi.useRealTimers();
});

function watchdog(ms = 1000) {
  const stalls: StallError[] = [];
  const dog = new StallWatchdog(ms, (error) => stalls.push(error));
  return { dog, stalls };
}

describe("StallWatchdog", () => {
  it("fires once the window passes without progress, and rejects a race with the StallError", async () => {
    const { dog, stalls } = watchdog();
    const raced = dog.race(new Promise<never>(() => undefined));
    dog.start();
    vi.advanceTimersByTime(999);
    expect(stalls).toHaveLength(0);
    vi.advanceTimersByTime(1);
    expect(stalls).toHaveLength(1);
    expect(dog.fired).toBe(true);
    await expect(raced).rejects.toBeInstanceOf(StallError);
  });

  it("progress starts the window over, however often it comes, with one timer pending", () => {
    const { dog, stalls } = watchdog();
    dog.start();
    for (let i = 0; i < 50; i++) {
      vi.advanceTimersByTime(300);
      dog.touch();
    }
    expect(stalls).toHaveLength(0);
    expect(vi.getTimerCount()).toBe(1);
    // A full window after the last progress, not before.
    vi.advanceTimersByTime(999);
    expect(stalls).toHaveLength(0);
    vi.advanceTimersByTime(1);
    expect(stalls).toHaveLength(1);
  });

  it("a paused clock never fires; started again, it gives a full window", () => {
    const { dog, stalls } = watchdog();
    dog.start();
    vi.advanceTimersByTime(900);
    dog.pause();
    dog.touch(); // ignored while paused
    vi.advanceTimersByTime(5000);
    expect(stalls).toHaveLength(0);
    dog.start();
    vi.advanceTimersByTime(999);
    expect(stalls).toHaveLength(0);
    vi.advanceTimersByTime(1);
    expect(stalls).toHaveLength(1);
  });

  it("stop leaves no timer behind and nothing fires later", () => {
    const { dog, stalls } = watchdog();
    dog.start();
    vi.advanceTimersByTime(500);
    dog.pause();
    expect(vi.getTimerCount()).toBe(1);
    dog.stop();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(10_000);
    expect(stalls).toHaveLength(0);
    expect(dog.fired).toBe(false);
  });

  it("a window of 0 never arms a timer and races nothing", async () => {
    const { dog, stalls } = watchdog(0);
    dog.start();
    dog.touch();
    expect(vi.getTimerCount()).toBe(0);
    await expect(dog.race(Promise.resolve(7))).resolves.toBe(7);
    vi.advanceTimersByTime(100_000);
    expect(stalls).toHaveLength(0);
  });
});
