/**
 * src/cli/jit-tuning.ts: a chat raises V8's tier-up threshold once, only on a V8 whose default it
 * knows and unless HERMES_V8_DEFAULTS=1, and leaves bin/hermes the function that puts it back.
 * (Each test file runs in its own worker, so the flag it sets stays there.)
 */
import { describe, expect, it } from "vitest";
import { tuneJitForChat } from "../../../src/cli/jit-tuning.js";

const RESTORE = Symbol.for("hermes.restoreV8Flags");
const restoreFn = () => (globalThis as Record<symbol, unknown>)[RESTORE];

describe("tuneJitForChat", () => {
  it("leaves an unknown V8, and a user who asked for the defaults, as they are", () => {
    expect(tuneJitForChat({}, "99.1.0")).toBe(false);
    expect(tuneJitForChat({ HERMES_V8_DEFAULTS: "1" }, "11.3.244.8-node.38")).toBe(false);
    expect(restoreFn()).toBeUndefined();
  });

  it("tunes a known V8 once and registers the restore bin/hermes calls before writing a code cache", () => {
    expect(tuneJitForChat({}, "11.3.244.8-node.38")).toBe(true);
    const restore = restoreFn();
    expect(typeof restore).toBe("function");
    // Once per process: a second chat in it changes nothing.
    expect(tuneJitForChat({}, "11.3.244.8-node.38")).toBe(false);
    expect(() => (restore as () => void)()).not.toThrow();
  });
});
