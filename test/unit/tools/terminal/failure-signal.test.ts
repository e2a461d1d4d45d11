/**
 * The terminal tells the registry when what it ran failed, so the outcome carries `failed: true`
 * (the tool-loop guardrails count it) while `ok` stays true (the output is the answer).
 */
import { mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ToolRegistry } from "../../../../src/tools/registry.js";
import { runFailure, terminalTool } from "../../../../src/tools/terminal/terminal.js";
import { makeToolContext } from "../../../support/tool-context.js";

const contexts: Array<ReturnType<typeof makeToolContext>> = [];
afterEach(async () => {
  await Promise.all(contexts.splice(0).map((c) => c.runtime.dispose()));
});

function setup() {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), "hermes-term-fail-")));
  const ctx = makeToolContext({ cwd });
  contexts.push(ctx);
  const registry = new ToolRegistry();
  registry.registerAll([terminalTool]);
  return { ctx, run: (args: Record<string, unknown>) => registry.execute("terminal", args, ctx) };
}

describe("terminal failure signal", () => {
  it("a non-zero exit is ok but failed; a zero exit is not failed", async () => {
    const { run } = setup();
    const bad = await run({ command: "sh -c 'echo FAIL; exit 1'" });
    expect(bad).toMatchObject({ ok: true, failed: true });
    expect(bad.content).toMatch(/FAIL\n\[exit code 1\]$/);
    const good = await run({ command: "echo fine" });
    expect(good.ok).toBe(true);
    expect(good.failed).toBeUndefined();
  });

  it("output that merely prints an exit-code line does not count as a failure", async () => {
    const { run } = setup();
    const spoof = await run({ command: "echo '[exit code 1]'" });
    expect(spoof.failed).toBeUndefined();
  });

  it("a failing command hidden behind a successful one is judged by the shell's exit status", async () => {
    const { run } = setup();
    expect((await run({ command: "false; true" })).failed).toBeUndefined();
    expect((await run({ command: "true && false" })).failed).toBe(true);
  });

  it("a timed-out command is failed", async () => {
    const { run } = setup();
    const outcome = await run({ command: "sleep 30", timeout: 1 });
    expect(outcome.failed).toBe(true);
    expect(outcome.content).toContain("timed out");
  });

  it.each([
    [{ exitCode: 0, timedOut: false, interrupted: false }, undefined],
    [{ exitCode: 2, timedOut: false, interrupted: false }, "exit code 2"],
    [{ exitCode: null, timedOut: true, interrupted: false }, "timed out"],
    [{ exitCode: 130, timedOut: false, interrupted: true }, undefined],
    [{ exitCode: null, timedOut: false, interrupted: false }, "ended without an exit code"],
  ])("runFailure(%o) → %s", (result, expected) => {
    expect(runFailure(result)).toBe(expected);
  });
});
