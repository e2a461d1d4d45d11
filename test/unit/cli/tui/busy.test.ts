import { describe, expect, it } from "vitest";
import { PendingInputs, parseBusyInputMode } from "../../../../src/cli/tui/busy.js";

describe("busy input policy", () => {
  it.each<[unknown, string]>([
    ["queue", "queue"],
    ["STEER", "steer"],
    ["interrupt", "interrupt"],
    ["", "interrupt"],
    [null, "interrupt"],
    ["later", "interrupt"],
  ])("display.busy_input_mode %j → %s", (value, mode) => {
    expect(parseBusyInputMode(value)).toBe(mode);
  });

  it("interrupt: the text goes next, merged with other interrupting text, before queued text", () => {
    const pending = new PendingInputs();
    pending.enqueue("queued first");
    expect(pending.route("interrupt", "stop, do X").action).toBe("interrupt");
    pending.route("interrupt", "and Y");
    expect(pending.size).toBe(3);
    expect(pending.list()).toEqual(["stop, do X\n\nand Y", "queued first"]);
    expect(pending.next()).toBe("stop, do X\n\nand Y");
    expect(pending.next()).toBe("queued first");
    expect(pending.next()).toBeNull();
  });

  it("queue: runs one at a time in order and says how many wait", () => {
    const pending = new PendingInputs();
    expect(pending.route("queue", "a").notice).toContain("1 waiting");
    expect(pending.route("queue", "b").notice).toContain("2 waiting");
    expect([pending.next(), pending.next(), pending.next()]).toEqual(["a", "b", null]);
  });

  it("steer: nothing is kept (the caller hands the text to the turn)", () => {
    const pending = new PendingInputs();
    const decision = pending.route("steer", "use tabs");
    expect(decision).toEqual({ action: "steer", notice: "↪ Steering the running turn: use tabs" });
    expect(pending.size).toBe(0);
  });

  it("clear drops everything and counts it", () => {
    const pending = new PendingInputs();
    pending.route("queue", "a");
    pending.route("interrupt", "b");
    expect(pending.clear()).toBe(2);
    expect(pending.next()).toBeNull();
  });
});
