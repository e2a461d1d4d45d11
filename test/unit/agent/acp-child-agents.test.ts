/**
 * An external ACP agent as a `delegate_task` child (a real process speaking the official SDK,
 * test/support/fake-acp-agent.mjs): `/agents` lists it with its state while it runs, `/agents stop`
 * cancels it like any child, subagent hooks fire for it, and its permission requests never get
 * past the parent's approval policy.
 */
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { AIAgent } from "../../../src/agent/agent.js";
import { ApprovalPolicy } from "../../../src/agent/approval-policy.js";
import { delegationLimits } from "../../../src/agent/delegation.js";
import { HookBus } from "../../../src/agent/hooks.js";
import { runChild } from "../../../src/agent/subagents/child-run.js";
import type { DelegationHost } from "../../../src/agent/subagents/host.js";
import { subagentRegistry } from "../../../src/agent/subagents/registry.js";
import { defaultConfig } from "../../../src/config/defaults.js";
import { createBuiltinRegistry } from "../../../src/tools/builtin.js";
import { createToolRuntime } from "../../../src/tools/runtime.js";
import type { ToolRuntime } from "../../../src/tools/types.js";
import { registry as commands, fakeContext, fakeSession } from "../../support/command-context.js";
import { ScriptedTransport } from "../../support/scripted-transport.js";

const AGENT = resolve(import.meta.dirname, "../../support/fake-acp-agent.mjs");

function host(options: {
  runtime: ToolRuntime;
  approvals: ApprovalPolicy;
  env: Record<string, string>;
  signal?: AbortSignal;
  hooks?: HookBus;
}): DelegationHost {
  const dir = mkdtempSync(join(tmpdir(), "hermes-acp-child-"));
  const config = defaultConfig();
  return {
    config,
    home: dir,
    cwd: dir,
    taskId: "parent-task",
    sessionId: "parent-session",
    depth: 0,
    env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", ...options.env },
    runtime: options.runtime,
    registry: createBuiltinRegistry(),
    resolved: undefined,
    transport: new ScriptedTransport([]),
    model: "fake-model",
    sessionStore: undefined,
    enabledTools: ["terminal", "delegate_task"],
    emit: () => undefined,
    signal: options.signal ?? new AbortController().signal,
    approvals: options.approvals,
    ...(options.hooks
      ? {
          hooks: options.hooks,
          hookInfo: () => ({
            session_id: "parent-session",
            task_id: "t",
            platform: "cli",
            cwd: dir,
            model: "m",
          }),
        }
      : {}),
    spawn: (o) => new AIAgent(o),
  };
}

const logOf = (file: string): Array<Record<string, unknown>> =>
  existsSync(file)
    ? readFileSync(file, "utf8")
        .trim()
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>)
    : [];

async function until(check: () => boolean, what: string, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const task = { goal: "clean the build directory", acp: { command: process.execPath, args: [AGENT] } };

describe("an ACP child in /agents", () => {
  it("is listed with its state while it runs, /agents stop cancels it, and its permission ask is refused", {
    timeout: 30_000,
  }, async () => {
    const runtime = createToolRuntime();
    const log = join(mkdtempSync(join(tmpdir(), "hermes-acp-log-")), "log.jsonl");
    // Nobody can approve (no prompt, no yolo): the agent must be told no.
    const approvals = new ApprovalPolicy({ yolo: false, allowlist: [] });
    const h = host({ runtime, approvals, env: { FAKE_ACP_MODE: "hang", FAKE_ACP_LOG: log } });
    const running = runChild(h, { kind: "child", callId: "c1", index: 0, task }, delegationLimits(h.config));

    await until(() => logOf(log).some((e) => e["waiting"]), "the agent to wait");
    expect(logOf(log).find((e) => e["permission"])?.["permission"]).toEqual({
      outcome: "selected",
      optionId: "no",
    });
    await until(() => subagentRegistry(runtime).get("sa1")?.detail === "answering", "its answer to stream");
    const [entry] = subagentRegistry(runtime).list();
    expect(entry).toMatchObject({
      id: "sa1",
      kind: "child",
      status: "running",
      detail: "answering",
      depth: 1,
    });
    expect(entry?.acp).toContain("fake-acp-agent.mjs");

    const { ctx, printed } = fakeContext({ session: fakeSession({ toolRuntime: runtime }) });
    await commands.get("agents")?.run("", ctx);
    expect(printed.join("\n")).toMatch(
      /Running \(1\):\n {2}sa1 {2}ACP agent .*· \d+s · answering {2}clean the build/,
    );
    await commands.get("agents")?.run("stop sa1", ctx);
    expect(printed.at(-1)).toContain("Stopping sa1");

    const result = await running;
    expect(result.status).toBe("interrupted");
    expect(result.summary).toBe("working on it");
    expect(logOf(log).some((e) => e["cancel"] === "fake-1")).toBe(true);
    expect(subagentRegistry(runtime).get("sa1")).toMatchObject({ status: "interrupted" });
    printed.length = 0;
    await commands.get("agents")?.run("", ctx);
    expect(printed.join("\n")).toMatch(/Ended:\n {2}sa1 {2}ACP agent .*· interrupted after/);
    await runtime.dispose();
  });

  it("the parent's interrupt cancels it too; hooks see it start and stop; yolo approves its ask once", {
    timeout: 30_000,
  }, async () => {
    const runtime = createToolRuntime();
    const log = join(mkdtempSync(join(tmpdir(), "hermes-acp-log-")), "log.jsonl");
    const bus = new HookBus();
    const seen: string[] = [];
    bus.register("subagent_start", (p) => void seen.push(`start ${p.goal}`), { source: "t" });
    bus.register("subagent_stop", (p) => void seen.push(`stop ${p.status}`), { source: "t" });
    const stop = new AbortController();
    const h = host({
      runtime,
      approvals: new ApprovalPolicy({ yolo: true, allowlist: [] }),
      env: { FAKE_ACP_MODE: "hang", FAKE_ACP_LOG: log },
      signal: stop.signal,
      hooks: bus,
    });
    const running = runChild(h, { kind: "child", callId: "c1", index: 0, task }, delegationLimits(h.config));
    await until(() => logOf(log).some((e) => e["waiting"]), "the agent to wait");
    expect(logOf(log).find((e) => e["permission"])?.["permission"]).toEqual({
      outcome: "selected",
      optionId: "yes",
    });
    stop.abort();
    expect((await running).status).toBe("interrupted");
    expect(seen).toEqual(["start clean the build directory", "stop interrupted"]);
    await runtime.dispose();
  });
});
