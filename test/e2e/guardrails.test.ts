/**
 * Tool-loop guardrails through the built CLI: a model re-running a failing test command is warned,
 * then halted when hard stop is on; a pass in between is progress and halts nothing.
 */
import { describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";

const llm = useFakeLlm();

type ChatBody = { messages: Array<{ role: string; content: string | null }> };
const toolResults = (): string[] => {
  const last = llm.chatRequests[llm.chatRequests.length - 1]!.body as ChatBody;
  return last.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
};

/** An `npm test` that fails the way a real one does: output, then a non-zero exit. */
const FAILING_TEST = { command: "sh -c 'echo FAIL: 1 test failed; exit 1'" };
/** Fails until a file `fixed` exists, like a test suite that passes once the bug is fixed. */
const FLAKY_TEST = { command: "sh -c 'if test -f fixed; then echo PASS; else echo FAIL; exit 1; fi'" };

const guardrails = (hardStop: boolean) =>
  [
    "tool_loop_guardrails:",
    "  warnings_enabled: true",
    `  hard_stop_enabled: ${hardStop}`,
    "  warn_after: {exact_failure: 2, same_tool_failure: 2, idempotent_no_progress: 2}",
    "  hard_stop_after: {exact_failure: 3, same_tool_failure: 3, idempotent_no_progress: 3}",
    "",
  ].join("\n");

describe("tool-loop guardrails see failing commands", () => {
  it("warns the model after warn_after failing runs, and only warns with hard stop off", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url, guardrails(false)));
    llm.enqueue(
      reply().toolCall("terminal", FAILING_TEST),
      reply().toolCall("terminal", FAILING_TEST),
      reply().toolCall("terminal", FAILING_TEST),
      reply().toolCall("terminal", FAILING_TEST),
      reply().text("The tests keep failing."),
    );
    const result = await runHermes(["-z", "run the tests"], { home, cwd });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("The tests keep failing.\n");
    const results = toolResults();
    expect(results).toHaveLength(4);
    expect(results[0]).toContain("[exit code 1]");
    expect(results[0]).not.toContain("[guardrail]");
    expect(results[1]).toContain("[guardrail]");
    expect(results[1]).toContain("terminal has failed 2 times with these exact arguments");
    expect(results[3]).toContain("failed 4 times");
  });

  it("halts the turn at hard_stop_after with hard stop on: exit 1 and a message", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url, guardrails(true)));
    llm.enqueue(
      reply().toolCall("terminal", FAILING_TEST),
      reply().toolCall("terminal", FAILING_TEST),
      reply().toolCall("terminal", FAILING_TEST),
      // Asked for a summary after the stop, without tools.
      reply().text("I stopped: the tests fail every time."),
    );
    const result = await runHermes(["-z", "run the tests"], { home, cwd });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("Stopped by tool-loop guardrail (exact failure)");
    expect(result.stdout).toBe("I stopped: the tests fail every time.\n");
    // Three commands ran, then one last model call without tools for the summary.
    expect(llm.chatRequests).toHaveLength(4);
    expect(llm.pending).toBe(0);
    expect(toolResults()[2]).toContain("No more tool calls are possible");
  });

  it("halts nothing when the command succeeds in between", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url, guardrails(true)));
    llm.enqueue(
      reply().toolCall("terminal", FLAKY_TEST),
      reply().toolCall("terminal", FLAKY_TEST),
      reply().toolCall("terminal", { command: "touch fixed" }),
      reply().toolCall("terminal", FLAKY_TEST),
      reply().toolCall("terminal", { command: "rm fixed" }),
      reply().toolCall("terminal", FLAKY_TEST),
      reply().toolCall("terminal", FLAKY_TEST),
      reply().text("Passed once, failing again."),
    );
    const result = await runHermes(["-z", "run the tests"], { home, cwd });
    expect(result.stderr).not.toContain("Stopped by tool-loop guardrail");
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("Passed once, failing again.\n");
    const results = toolResults();
    expect(results[3]).toContain("PASS");
    expect(results[3]).not.toContain("[guardrail]");
    // After the pass the count starts again: the second failure warns, nothing stops.
    expect(results[5]).not.toContain("[guardrail]");
    expect(results[6]).toContain("failed 2 times");
  });

  it("a threshold of 0 is a config error at start-up: exit 2, the key named, no model request", async () => {
    const { home, cwd } = tempHome(
      fakeProviderConfig(llm.url, "tool_loop_guardrails:\n  hard_stop_after:\n    same_tool_failure: 0\n"),
    );
    const result = await runHermes(["-z", "run the tests"], { home, cwd });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      "tool_loop_guardrails.hard_stop_after.same_tool_failure must be a whole number of at least 1, got 0",
    );
    expect(llm.chatRequests).toHaveLength(0);
  });
});
