import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeProviderConfig, HERMES_BIN, runHermes, tempHome } from "../support/cli.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";
import { isRunning, waitFor } from "../unit/tools/terminal/helpers.js";

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

/** Live processes whose working directory is `dir` (Linux /proc): anything that could still write there. */
function processesIn(dir: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readlinkSync(`/proc/${entry}/cwd`) === dir && isRunning(Number(entry))) found.push(Number(entry));
    } catch {
      // gone already, or not ours to read
    }
  }
  return found;
}

describe.skipIf(process.platform !== "linux")("signals to hermes end the commands it runs", () => {
  for (const [signal, code] of [
    ["SIGTERM", 143],
    ["SIGHUP", 129],
  ] as const) {
    it(`${signal} during a tool call: hermes exits ${code}, the command line dies, the rest never runs`, async () => {
      const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
      // Only the tool call: hermes dies before it would ask again.
      llm.enqueue(reply().toolCall("terminal", { command: "touch started; sleep 30; touch X" }));
      const child = spawn(process.execPath, [HERMES_BIN, "-z", "run it"], {
        cwd,
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, HERMES_HOME: home, NO_COLOR: "1" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
      const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
        child.on("exit", (exitCode, exitSignal) => resolve({ code: exitCode, signal: exitSignal })),
      );
      await waitFor(() => existsSync(join(cwd, "started")), 15_000, "the command to start");
      // The shell and its sleep live in the work directory: they are what must die with hermes.
      expect(processesIn(cwd).length).toBeGreaterThan(0);
      child.kill(signal);
      expect(await exited).toEqual({ code, signal: null });
      await waitFor(() => processesIn(cwd).length === 0, 5_000, "the command's processes to end");
      expect(existsSync(join(cwd, "X"))).toBe(false);
      expect(stdout).toBe("");
    });
  }
});
