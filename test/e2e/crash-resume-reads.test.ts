/**
 * The built `hermes` killed while a tool call runs, for a call that changes nothing outside the
 * session (an MCP tool its server annotates `readOnlyHint`) and for one that may act (the same
 * tool without the annotation). The first is stored with its result in one commit, so a `kill -9`
 * leaves no trace of it (the read is redone); the second is on disk before it runs. SIGTERM during
 * the read stores the call with an interrupted result. Each resumes with `hermes -c` against an
 * Anthropic-wire fake that rejects unpaired tool blocks.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { INTERRUPTED_TOOL_RESULT } from "../../src/ai/history-repair.js";
import { openSqliteStore } from "../../src/state/sqlite-store.js";
import { runHermes, spawnHermes, tempHome } from "../support/cli.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";
import { TEST_SERVER } from "../support/mcp-servers.js";
import { isRunning, waitFor } from "../unit/tools/terminal/helpers.js";

let llm: FakeLlm;
beforeAll(async () => {
  llm = await startFakeLlm({ strictToolPairs: true });
});
afterAll(async () => {
  await llm.close();
});
beforeEach(() => {
  llm.chatRequests.length = 0;
});

function home(): { home: string; cwd: string } {
  return tempHome(
    `model:\n  provider: custom\n  base_url: ${llm.url}\n  default: claude-fake\n  api_mode: anthropic_messages\n` +
      "agent:\n  api_max_retries: 0\n" +
      `mcp_servers:\n  probe:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(TEST_SERVER)}]\n`,
  );
}

function stored(h: { home: string }) {
  const store = openSqliteStore(join(h.home, "state.db"), { readonly: true });
  try {
    return store.listSessions().map((s) => ({ session: s, messages: store.conversation(s.id) }));
  } finally {
    store.close();
  }
}

/** Starts hermes on a reply calling `tool`, and sends `signal` once the tool has started. */
async function stopDuringTool(h: { home: string; cwd: string }, tool: string, signal: NodeJS.Signals) {
  const mark = join(h.cwd, `${tool}.started`);
  llm.enqueue(reply().text("Looking it up.").toolCall(tool, { ms: 60_000, mark }, "toolu_slow"));
  const run = spawnHermes(["-q", "look it up"], h);
  let sent = false;
  try {
    await waitFor(() => existsSync(mark) || run.child.exitCode !== null, 20_000, "the tool to start");
    expect(run.child.exitCode, `hermes ended first: ${JSON.stringify(run.output())}`).toBeNull();
    const pid = await waitFor(() => run.hermesPid(), 5_000, "the hermes pid");
    process.kill(pid, signal);
    sent = true;
    await waitFor(() => !isRunning(pid), 10_000, "hermes to end");
  } finally {
    if (!sent) run.child.kill("SIGKILL");
    run.child.stdin.end();
  }
  return run.exited;
}

describe("killed while a tool call runs, then hermes -c", () => {
  it("kill -9 during a read-only call: nothing of it is stored, and the resume is clean", async () => {
    const h = home();
    await stopDuringTool(h, "mcp_probe_slow_read", "SIGKILL");
    const [crashed] = stored(h);
    // The reply waits for its result: no dangling call is left behind.
    expect(crashed?.messages).toEqual([{ role: "user", content: "look it up" }]);

    llm.enqueue(reply().text("Here is what I found."));
    const resumed = await runHermes(["-c", "-q", "and?"], h);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain("Here is what I found.");
    expect(resumed.stderr).not.toContain("never returned");
    const after = stored(h);
    expect(after[0]?.messages.filter((m) => m.role === "tool")).toEqual([]);
  }, 60_000);

  it("kill -9 during a call that may act: the call was on disk before it ran", async () => {
    const h = home();
    await stopDuringTool(h, "mcp_probe_slow_write", "SIGKILL");
    const [crashed] = stored(h);
    expect(crashed?.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(crashed?.messages[1]?.tool_calls?.[0]?.id).toBe("toolu_slow");

    llm.enqueue(reply().text("It may not have finished; checking."));
    const resumed = await runHermes(["-c", "-q", "did it?"], h);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain("1 tool call never returned");
  }, 60_000);

  it("SIGTERM during a read-only call: the call is stored, answered as interrupted", async () => {
    const h = home();
    const ended = await stopDuringTool(h, "mcp_probe_slow_read", "SIGTERM");
    expect(ended.code).toBe(143);
    const [stopped] = stored(h);
    expect(stopped?.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    expect(stopped?.messages[2]).toEqual({
      role: "tool",
      tool_call_id: "toolu_slow",
      name: "mcp_probe_slow_read",
      content: INTERRUPTED_TOOL_RESULT,
    });
    // The model call is counted with the reply.
    expect(stopped?.session.apiCallCount).toBe(1);

    llm.enqueue(reply().text("The lookup was cut short; trying again."));
    const resumed = await runHermes(["-c", "-q", "well?"], h);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain("The lookup was cut short; trying again.");
    expect(resumed.stderr).not.toContain("never returned");
  }, 60_000);
});
