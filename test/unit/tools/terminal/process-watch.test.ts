import { describe, expect, it } from "vitest";
import {
  ProcessWatch,
  validatePatterns,
  WATCH_COOLDOWN_MS,
  type WatchSettings,
} from "../../../../src/tools/terminal/process-watch.js";
import type { AgentNotice } from "../../../../src/tools/types.js";

/** A watch on a fake clock: timers run when the test advances time; deferred work runs on `settle`. */
function harness(settings: Partial<WatchSettings>) {
  let now = 1_000_000;
  const timers: Array<{ at: number; fn: () => void; cancelled: boolean }> = [];
  const deferred: Array<() => void> = [];
  const notices: AgentNotice[] = [];
  const watch = new ProcessWatch(
    { id: "proc_1", command: "npm run serve", startedAt: now },
    { notifyOnComplete: false, patterns: [], ...settings },
    {
      notify: (n) => notices.push(n),
      now: () => now,
      schedule: (fn, ms) => {
        const t = { at: now + ms, fn, cancelled: false };
        timers.push(t);
        return () => {
          t.cancelled = true;
        };
      },
      defer: (fn) => deferred.push(fn),
    },
  );
  return {
    watch,
    notices,
    shown: () => notices.filter((n) => !n.retract),
    advance(ms: number) {
      now += ms;
      for (const t of timers.filter((x) => !x.cancelled && x.at <= now)) {
        t.cancelled = true;
        t.fn();
      }
    },
    settle() {
      for (const fn of deferred.splice(0)) fn();
    },
    exit(exitCode: number | null, extra: Partial<Parameters<ProcessWatch["exited"]>[0]> = {}) {
      watch.exited({ exitCode, signal: null, endedAt: now + 3000, output: "", ...extra });
    },
  };
}

describe("watch_patterns", () => {
  it("wakes the agent for a matching line, with escape sequences stripped", () => {
    const h = harness({ patterns: ["listening on"] });
    h.watch.output("booting\n\x1b[32mlistening on\x1b[0m :8080\r\n");
    expect(h.shown()).toHaveLength(1);
    expect(h.shown()[0]).toMatchObject({ source: "process", id: "proc_1", wake: true });
    expect(h.shown()[0]?.text).toContain("listening on :8080");
    expect(h.shown()[0]?.text).not.toContain("\x1b");
  });

  it("matches lines split across chunks, and not across lines", () => {
    const h = harness({ patterns: ["ERROR: disk"] });
    h.watch.output("ERR");
    h.watch.output("OR: disk full\nERROR:");
    h.watch.output(" nothing\n");
    expect(h.shown()).toHaveLength(1);
    expect(h.shown()[0]?.text).toContain("ERROR: disk full");
  });

  it("treats regex-looking patterns as plain text: invalid or catastrophic ones cannot hurt", () => {
    const h = harness({ patterns: ["(a+)+$", "[unclosed", "*"] });
    const started = Date.now();
    h.watch.output(`${"a".repeat(50_000)}!\n`);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(h.shown()).toHaveLength(0);
    h.watch.output("saw [unclosed bracket\n");
    expect(h.shown()).toHaveLength(1);
  });

  it("sends at most one notice per cooldown window and reports the rest when it ends", () => {
    const h = harness({ patterns: ["tick"] });
    for (let i = 0; i < 10_000; i++) h.watch.output(`tick ${i}\n`);
    expect(h.shown()).toHaveLength(1);
    h.advance(WATCH_COOLDOWN_MS);
    expect(h.shown()).toHaveLength(2);
    expect(h.shown()[1]?.text).toContain("9999 lines");
    expect(h.shown()[1]?.text).toContain("tick 9999");
  });

  it("stops watching after three busy windows in a row, then reports once at exit", () => {
    const h = harness({ patterns: ["x"] });
    h.watch.output("x first\n");
    for (let window = 0; window < 3; window++) {
      h.watch.output("x again\nx again\n");
      h.advance(WATCH_COOLDOWN_MS);
    }
    const texts = h.shown().map((n) => n.text);
    expect(texts.at(-1)).toContain("Watching it stopped");
    const before = h.shown().length;
    for (let i = 0; i < 1000; i++) h.watch.output("x more\n");
    h.advance(WATCH_COOLDOWN_MS * 10);
    expect(h.shown()).toHaveLength(before);
    h.exit(0, { output: "x more\nbye\n" });
    h.settle();
    expect(h.shown()).toHaveLength(before + 1);
    expect(h.shown().at(-1)?.text).toMatch(/exited with code 0 after \d+ s/);
    expect(h.shown().at(-1)?.text).toContain("1000 more lines matched");
  });

  it("a quiet window resets the strikes", () => {
    const h = harness({ patterns: ["x"] });
    for (let round = 0; round < 5; round++) {
      h.watch.output("x\nx\n");
      h.advance(WATCH_COOLDOWN_MS); // reports the second x: one strike
      h.advance(WATCH_COOLDOWN_MS); // nothing came: strikes back to 0
    }
    expect(h.shown().some((n) => n.text.includes("Watching it stopped"))).toBe(false);
  });

  it("rejects patterns that cannot work, with what to do", () => {
    expect(() => validatePatterns([""])).toThrow(/empty entry/);
    expect(() => validatePatterns(["a".repeat(201)])).toThrow(/at most 200/);
    expect(() => validatePatterns(Array.from({ length: 21 }, (_, i) => `p${i}`))).toThrow(/at most 20/);
    expect(() => validatePatterns(["two\nlines"])).toThrow(/spans lines/);
    expect(validatePatterns(["a", "a", "b"])).toEqual(["a", "b"]);
  });
});

describe("notify_on_complete", () => {
  it("reports the exit code and the output tail, without escape sequences", () => {
    const h = harness({ notifyOnComplete: true });
    h.exit(2, { output: "\x1b[31mFAIL\x1b[0m test_a\r\n2 failed\r\n" });
    expect(h.shown()).toHaveLength(0); // deferred: a process wait may still claim it
    h.settle();
    expect(h.shown()).toHaveLength(1);
    const text = h.shown()[0]?.text ?? "";
    expect(text).toContain("Background process proc_1 (npm run serve) exited with code 2 after 3 s.");
    expect(text).toContain("FAIL test_a\n2 failed");
    expect(text).not.toMatch(/\x1b|\r/);
  });

  it("says when something outside Hermes killed it", () => {
    const h = harness({ notifyOnComplete: true });
    h.exit(143, { signal: "SIGTERM" });
    h.settle();
    expect(h.shown()[0]?.text).toMatch(/was killed by SIGTERM \(exit code 143\).*Hermes did not stop it/);
  });

  it("stays silent when the process tool killed it or Hermes shuts down", () => {
    for (const stoppedBy of ["tool", "shutdown"] as const) {
      const h = harness({ notifyOnComplete: true, patterns: ["x"] });
      h.exit(143, { signal: "SIGTERM", stoppedBy });
      h.settle();
      expect(h.shown()).toHaveLength(0);
    }
  });

  it("stays silent when the model already read the exit (process wait), and withdraws a queued notice", () => {
    const h = harness({ notifyOnComplete: true });
    h.exit(0);
    h.watch.seen();
    h.settle();
    expect(h.shown()).toHaveLength(0);
    expect(h.notices).toEqual([{ source: "process", id: "proc_1", text: "", retract: true }]);
  });

  it("without notify_on_complete, an exit is reported only when matches are still unreported", () => {
    const quiet = harness({ patterns: ["x"] });
    quiet.watch.output("x\n");
    quiet.exit(0);
    quiet.settle();
    expect(quiet.shown()).toHaveLength(1);
    const busy = harness({ patterns: ["x"] });
    busy.watch.output("x\nx last\n");
    busy.exit(0);
    busy.settle();
    expect(busy.shown()).toHaveLength(2);
    expect(busy.shown()[1]?.text).toContain("x last");
  });
});
