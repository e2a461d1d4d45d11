/**
 * `delegate_task` with `acp_command`: the child is an external ACP agent (here the built
 * `hermes acp` itself) driven over the official SDK. Its answer is the child's result; its
 * permission requests go through the parent's approval policy (denied in a one-shot nobody can
 * answer, approved under --yolo); a hardline command line is never started.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { answerTitles } from "../support/acp-client.js";
import { fakeProviderConfig, HERMES_BIN, runHermes, tempHome } from "../support/cli.js";
import { reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";

const llm = useFakeLlm();

function toolResults(): string[] {
  const out: string[] = [];
  for (const request of llm.chatRequests) {
    const body = request.body as { messages: Array<{ role: string; content: unknown }> };
    for (const m of body.messages)
      if (m.role === "tool" && typeof m.content === "string") out.push(m.content);
  }
  return out;
}

const child = { acp_command: process.execPath, acp_args: [HERMES_BIN, "acp"] };

describe("delegate_task with acp_command (built CLI)", () => {
  it("runs the task in `hermes acp` and returns its answer; --yolo approves its permission request", {
    timeout: 60_000,
  }, async () => {
    answerTitles(llm);
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    mkdirSync(join(cwd, "build"));
    llm.enqueue(
      reply().toolCall("delegate_task", { goal: "clean the build directory", ...child }),
      reply().toolCall("terminal", { command: "rm -rf build" }),
      reply().text("The child removed build."),
      reply().text("Delegated and done."),
    );
    const result = await runHermes(["-z", "clean up via a subagent", "--yolo"], {
      home,
      cwd,
      timeoutMs: 45_000,
    });
    llm.respondWith(undefined);
    expect(result.stdout.trim()).toBe("Delegated and done.");
    expect(existsSync(join(cwd, "build"))).toBe(false);
    const delegated = toolResults().find((r) => r.includes("task_index"));
    expect(delegated).toContain('"status":"completed"');
    expect(delegated).toContain("The child removed build.");
  });

  it("routes the child's permission request through the parent's policy: a one-shot without --yolo denies it", {
    timeout: 60_000,
  }, async () => {
    answerTitles(llm);
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    mkdirSync(join(cwd, "build"));
    llm.enqueue(
      reply().toolCall("delegate_task", { goal: "clean the build directory", ...child }),
      reply().toolCall("terminal", { command: "rm -rf build" }),
      reply().text("I was not allowed to remove build."),
      reply().text("The subagent could not do it."),
    );
    const result = await runHermes(["-z", "clean up via a subagent"], { home, cwd, timeoutMs: 45_000 });
    llm.respondWith(undefined);
    expect(result.stdout.trim()).toBe("The subagent could not do it.");
    expect(existsSync(join(cwd, "build"))).toBe(true);
    // The child's model read a denial, and the parent's stderr said who refused what.
    expect(toolResults().some((r) => /denied|not approved/i.test(r) && !r.includes("task_index"))).toBe(true);
    expect(result.stderr).toContain("rm -rf build");
  });

  it("never starts a hardline command line as an ACP agent", { timeout: 30_000 }, async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    llm.enqueue(
      reply().toolCall("delegate_task", { goal: "anything", acp_command: "rm", acp_args: ["-rf", "/"] }),
      reply().text("Refused."),
    );
    const result = await runHermes(["-z", "go", "--yolo"], { home, cwd });
    expect(result.stdout.trim()).toBe("Refused.");
    const delegated = toolResults().find((r) => r.includes("task_index")) ?? "";
    expect(delegated).toContain("Refused to start");
    expect(delegated).toContain('"status":"failed"');
  });
});
