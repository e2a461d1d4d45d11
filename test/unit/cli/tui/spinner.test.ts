import { describe, expect, it } from "vitest";
import { SPINNER_FRAMES, Spinner, type SpinnerClock } from "../../../../src/cli/tui/spinner.js";

function fakeClock() {
  let now = 1_000;
  const timers = new Set<() => void>();
  const clock: SpinnerClock = {
    now: () => now,
    every: (_ms, fn) => {
      timers.add(fn);
      return () => timers.delete(fn);
    },
  };
  return {
    clock,
    advance(ms: number) {
      now += ms;
      for (const fn of timers) fn();
    },
    get timers() {
      return timers.size;
    },
  };
}

describe("Spinner", () => {
  it("shows a frame, the label and whole elapsed seconds, and asks for redraws while running", () => {
    const c = fakeClock();
    let redraws = 0;
    const spinner = new Spinner(() => redraws++, c.clock, 100);
    expect(spinner.text()).toBeNull();
    spinner.start("thinking…");
    expect(spinner.text()).toEqual({ frame: SPINNER_FRAMES[0], label: "thinking…", elapsed: "0s" });
    c.advance(2_350);
    expect(spinner.text()).toEqual({
      frame: SPINNER_FRAMES[23 % SPINNER_FRAMES.length],
      label: "thinking…",
      elapsed: "2s",
    });
    expect(redraws).toBe(1);
  });

  it("keeps the elapsed time when the label changes, and stops its timer", () => {
    const c = fakeClock();
    const spinner = new Spinner(() => undefined, c.clock);
    spinner.start("thinking…");
    c.advance(3_000);
    spinner.setLabel("💻 terminal ls");
    expect(spinner.text()?.elapsed).toBe("3s");
    expect(c.timers).toBe(1);
    spinner.stop();
    expect(spinner.active).toBe(false);
    expect(spinner.text()).toBeNull();
    expect(c.timers).toBe(0);
    spinner.setLabel("again");
    expect(spinner.text()?.elapsed).toBe("0s");
  });
});
