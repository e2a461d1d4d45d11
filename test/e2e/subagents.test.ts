/**
 * Isolated subagents through the built CLI against the fake LLM (local backend): each child has its
 * own shell (a `cd` in one moves neither its siblings nor the parent), children of a batch run in
 * parallel, roles and the depth limit hold, a child past `child_timeout_seconds` is stopped with its
 * processes, and subagent sessions are listed under their parent.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { type RecordedRequest, reply, type ScriptedReply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";

const llm = useFakeLlm();

type ChatBody = {
  model: string;
  messages: Array<{ role: string; content: string | null }>;
  tools?: Array<{ function: { name: string } }>;
};

const body = (r: RecordedRequest) => r.body as ChatBody;
const isChild = (r: RecordedRequest) =>
  String(body(r).messages[0]?.content ?? "").startsWith("You are a subagent");
/** The child's goal: the first line of its first user message. */
const goalOf = (r: RecordedRequest) =>
  String(body(r).messages.find((m) => m.role === "user")?.content ?? "").split("\n")[0] ?? "";
const toolResults = (r: RecordedRequest) =>
  body(r)
    .messages.filter((m) => m.role === "tool")
    .map((m) => String(m.content));
const toolNames = (r: RecordedRequest) => (body(r).tools ?? []).map((t) => t.function.name);
/** A terminal result's output: its text without the trailing status lines. */
const output = (result: string) =>
  result
    .split("\n")
    .filter((l) => !l.startsWith("["))
    .join("\n");

/** Answers each agent by who asks (parent or which child) and how far it got (tool results so far). */
function route(script: (who: string, step: number, request: RecordedRequest) => ScriptedReply | undefined) {
  llm.respondWith((request) => {
    const who = isChild(request) ? goalOf(request) : "parent";
    return script(who, toolResults(request).length, request);
  });
}

describe("isolated subagents", () => {
  it("each child has its own shell, three 2 s children take about 2 s, and the parent's cwd stays", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url, "delegation:\n  model: child-model\n"));
    mkdirSync(join(cwd, "dir-a"));
    route((who, step) => {
      if (who === "parent") {
        if (step === 0)
          return reply().toolCall("delegate_task", {
            tasks: [{ goal: "child A" }, { goal: "child B" }, { goal: "child C" }],
          });
        if (step === 1) return reply().toolCall("terminal", { command: "pwd" });
        return reply().text("All three reported.");
      }
      if (who === "child A") {
        if (step === 0) return reply().toolCall("terminal", { command: "cd dir-a && sleep 2" });
        if (step === 1) return reply().toolCall("terminal", { command: "pwd" });
        return reply().text("A done");
      }
      // B and C start at the same time as A and look where their shell is after A's cd.
      if (step === 0) return reply().toolCall("terminal", { command: "sleep 2; pwd" });
      return reply().text(`${who} done`);
    });
    const result = await runHermes(["-z", "split it three ways"], { home, cwd, timeoutMs: 30_000 });
    llm.respondWith(undefined);
    expect(result.stderr).toBe("");
    expect(result.stdout).toBe("All three reported.\n");

    const last = (who: string) =>
      llm.chatRequests.filter((r) => (isChild(r) ? goalOf(r) : "parent") === who).at(-1) as RecordedRequest;
    // A's cd moved A's own shell only.
    expect(output(toolResults(last("child A"))[1] ?? "")).toContain(join(cwd, "dir-a"));
    for (const sibling of ["child B", "child C"]) {
      const pwd = output(toolResults(last(sibling))[0] ?? "");
      expect(pwd.trim().split("\n").at(-1)).toBe(cwd);
    }
    const parentResults = toolResults(last("parent"));
    expect(output(parentResults[1] ?? "").trim()).toBe(cwd);

    // Truly parallel: three children sleeping 2 s each finish in about 2 s, not 6.
    const delegation = JSON.parse(parentResults[0] ?? "{}") as {
      results: Array<{ status: string; summary: string }>;
      total_duration_seconds: number;
    };
    expect(delegation.results.map((r) => [r.status, r.summary])).toEqual([
      ["completed", "A done"],
      ["completed", "child B done"],
      ["completed", "child C done"],
    ]);
    expect(delegation.total_duration_seconds).toBeGreaterThanOrEqual(2);
    expect(delegation.total_duration_seconds).toBeLessThan(5);

    // delegation.model: children ask for their own model; the parent keeps its own.
    expect(new Set(llm.chatRequests.filter(isChild).map((r) => body(r).model))).toEqual(
      new Set(["child-model"]),
    );
    expect(new Set(llm.chatRequests.filter((r) => !isChild(r)).map((r) => body(r).model))).toEqual(
      new Set(["fake-model"]),
    );

    // Subagent sessions stay under their parent in `sessions list`; --all lists them.
    const listed = await runHermes(["sessions", "list", "--json"], { home, cwd });
    const top = JSON.parse(listed.stdout) as Array<{ id: string; source: string }>;
    expect(top.map((s) => s.source)).toEqual(["cli"]);
    const table = await runHermes(["sessions", "list"], { home, cwd });
    expect(table.stdout).toContain("└ 3 subagents");
    const all = JSON.parse(
      (await runHermes(["sessions", "list", "--all", "--json"], { home, cwd })).stdout,
    ) as Array<{
      source: string;
      parentSessionId: string | null;
    }>;
    expect(all.filter((s) => s.source === "subagent")).toHaveLength(3);
    expect(new Set(all.filter((s) => s.source === "subagent").map((s) => s.parentSessionId))).toEqual(
      new Set([top[0]?.id]),
    );
  });

  it("a leaf cannot delegate, and an orchestrator's child at max_spawn_depth cannot go deeper", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url, "delegation:\n  max_spawn_depth: 2\n"));
    route((who, step) => {
      if (who === "parent") {
        if (step === 0)
          return reply().toolCall("delegate_task", {
            tasks: [
              { goal: "leaf task", role: "leaf" },
              { goal: "orchestrator task", role: "orchestrator" },
            ],
          });
        return reply().text("Done.");
      }
      if (who === "orchestrator task") {
        if (step === 0) return reply().toolCall("delegate_task", { goal: "grandchild task" });
        return reply().text("orchestrated");
      }
      // The leaf and the grandchild (at the depth limit) try to delegate anyway.
      if (step === 0) return reply().toolCall("delegate_task", { goal: "one level too deep" });
      return reply().text(`${who} refused`);
    });
    const result = await runHermes(["-z", "go"], { home, cwd, timeoutMs: 30_000 });
    llm.respondWith(undefined);
    expect(result.stdout).toBe("Done.\n");
    const firstOf = (who: string) =>
      llm.chatRequests.find((r) => isChild(r) && goalOf(r) === who) as RecordedRequest;
    const lastOf = (who: string) =>
      llm.chatRequests.filter((r) => isChild(r) && goalOf(r) === who).at(-1) as RecordedRequest;
    expect(toolNames(firstOf("leaf task"))).not.toContain("delegate_task");
    expect(toolNames(firstOf("orchestrator task"))).toContain("delegate_task");
    expect(toolNames(firstOf("grandchild task"))).not.toContain("delegate_task");
    for (const who of ["leaf task", "grandchild task"]) {
      expect(toolResults(lastOf(who))[0]).toMatch(/error/i);
      expect(toolResults(lastOf(who))[0]).toContain("delegate_task");
    }
    // Nobody went one level too deep.
    expect(llm.chatRequests.some((r) => isChild(r) && goalOf(r) === "one level too deep")).toBe(false);
    expect(toolResults(lastOf("orchestrator task"))[0]).toContain("grandchild task refused");
  });

  it("a child hanging past child_timeout_seconds is stopped and its processes are gone", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url, "delegation:\n  child_timeout_seconds: 2\n"));
    writeFileSync(join(cwd, "README"), "x\n");
    route((who, step) => {
      if (who === "parent") {
        if (step === 0) return reply().toolCall("delegate_task", { goal: "hang around" });
        // Looked for while hermes still runs: only the child's release can have ended them.
        if (step === 1)
          return reply().toolCall("terminal", { command: "pgrep -f 'sleep 31[78]' || echo none-left" });
        return reply().text("Checked.");
      }
      if (step === 0) return reply().toolCall("terminal", { command: "sleep 317", background: true });
      if (step === 1) return reply().toolCall("terminal", { command: "ps -eo args | grep 'slee[p] 317'" });
      if (step === 2) return reply().toolCall("terminal", { command: "sleep 318 & sleep 318" });
      return reply().text("never reached");
    });
    const started = Date.now();
    const result = await runHermes(["-z", "try it"], { home, cwd, timeoutMs: 30_000 });
    llm.respondWith(undefined);
    expect(result.stdout).toBe("Checked.\n");
    expect(Date.now() - started).toBeLessThan(15_000);
    const parent = llm.chatRequests.filter((r) => !isChild(r)).at(-1) as RecordedRequest;
    const [delegated, check] = toolResults(parent);
    const child = (JSON.parse(delegated ?? "{}") as { results: Array<{ status: string; error?: string }> })
      .results[0];
    // It was running before the timeout, and gone (with the hanging command) after it.
    const childLast = llm.chatRequests.filter(isChild).at(-1) as RecordedRequest;
    expect(toolResults(childLast)[1]).toContain("sleep 317");
    expect(child?.status).toBe("timeout");
    expect(child?.error).toContain("child_timeout_seconds");
    expect(output(check ?? "").trim()).toBe("none-left");
  });
});
