/**
 * What a one-shot loads lazily still happens when it is needed: the scheduled curator run a
 * one-shot starts after its answer (the curator command's module is loaded only for a due run),
 * and tool lines in normal mode (the tool-line formatter is loaded only there).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";

const llm = useFakeLlm();

/** Resolves once `check` holds, polling the file system (the detached run has no other signal). */
async function eventually(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out waiting for the condition");
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe("one-shot start path", () => {
  it("starts the due scheduled curator run after the answer, which records its run", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    llm.enqueue(reply().text("the answer"));
    const result = await runHermes(["-z", "say it"], { home, cwd });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("the answer\n");
    const state = join(home, "skills", ".curator_state");
    await eventually(() => existsSync(state) && JSON.parse(readFileSync(state, "utf8")).last_run_at !== null);
  });

  it("shows tool lines on stderr in normal mode and none with -z", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    llm.enqueue(reply().toolCall("terminal", { command: "echo lean" }), reply().text("ran it"));
    const normal = await runHermes(["run the echo please"], { home, cwd });
    expect(normal.code).toBe(0);
    expect(normal.stderr).toMatch(/terminal.*echo lean/);
    llm.enqueue(reply().toolCall("terminal", { command: "echo lean" }), reply().text("ran it"));
    const oneshot = await runHermes(["-z", "run the echo please"], { home, cwd });
    expect(oneshot.code).toBe(0);
    expect(oneshot.stdout).toBe("ran it\n");
    expect(oneshot.stderr).not.toMatch(/echo lean/);
  });
});
