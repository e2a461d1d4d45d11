import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";
import { isRunning } from "../unit/tools/terminal/helpers.js";

let llm: FakeLlm;
beforeAll(async () => {
  llm = await startFakeLlm();
});
afterAll(async () => {
  await llm.close();
});

type ChatBody = { messages: Array<{ role: string; content: string | null }> };

describe("stopping terminal commands through the built CLI", () => {
  it("a tool timeout stops the whole command line; the model is told; & jobs die with hermes", async () => {
    const { home, cwd } = tempHome(
      fakeProviderConfig(llm.url, "terminal:\n  daemon_term_grace_seconds: 0.5\n"),
    );
    llm.enqueue(
      reply().toolCall("terminal", { command: "sleep 100 >/dev/null 2>&1 & echo $! > bg.pid" }),
      reply().toolCall("terminal", { command: "sleep 30; touch X", timeout: 1 }),
      reply().text("It timed out."),
    );
    const result = await runHermes(["-z", "run it"], { home, cwd });
    expect(result.stdout).toBe("It timed out.\n");
    const messages = (llm.chatRequests[2]!.body as ChatBody).messages;
    const told = String(messages.filter((m) => m.role === "tool")[1]?.content);
    expect(told).toContain("timed out after 1s");
    expect(told).toContain("the rest of the command line did not run");
    expect(told).toContain("sleep 30");
    expect(existsSync(join(cwd, "X"))).toBe(false);
    // hermes has exited: the & job of the earlier call went with it.
    expect(isRunning(Number(readFileSync(join(cwd, "bg.pid"), "utf8")))).toBe(false);
  });
});
