/**
 * Background subagents, their limit and their notices; `/agents` and `/background` through the
 * command layer; the children's model from `delegation.*`.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AIAgent } from "../../../src/agent/agent.js";
import { ApprovalPolicy } from "../../../src/agent/approval-policy.js";
import { type DelegationHost, runDelegation } from "../../../src/agent/delegation.js";
import { childModel } from "../../../src/agent/subagents/child-model.js";
import { subagentRegistry } from "../../../src/agent/subagents/registry.js";
import type { ChatRequest, Message, StreamEvent, Transport } from "../../../src/ai/types.js";
import { defaultConfig, type HermesConfig } from "../../../src/config/defaults.js";
import { createBuiltinRegistry } from "../../../src/tools/builtin.js";
import { delegateTaskTool } from "../../../src/tools/delegate.js";
import { createToolRuntime } from "../../../src/tools/runtime.js";
import type { AgentNotice, ToolRuntime } from "../../../src/tools/types.js";
import { registry as commands, fakeContext, fakeSession } from "../../support/command-context.js";
import { makeToolContext } from "../../support/tool-context.js";

/** Answers every request with the text `answer` resolves to; aborting the turn rejects it. */
class GatedTransport implements Transport {
  readonly apiMode = "chat_completions" as const;
  readonly requests: ChatRequest[] = [];
  constructor(private readonly answer: (request: ChatRequest) => Promise<string>) {}
  async *stream(request: ChatRequest, signal?: AbortSignal): AsyncIterable<StreamEvent> {
    this.requests.push(request);
    const aborted = new Promise<never>((_, reject) => {
      const fail = () => reject(Object.assign(new Error("aborted"), { name: "AbortError" }));
      if (signal?.aborted) fail();
      signal?.addEventListener("abort", fail, { once: true });
    });
    const text = await Promise.race([this.answer(request), aborted]);
    yield { type: "usage", usage: { inputTokens: 10, outputTokens: 5 } };
    const message: Message = { role: "assistant", content: text };
    yield { type: "finish", reason: "stop", message };
  }
}

function gate(): { promise: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

const firstUser = (r: ChatRequest) => String(r.messages.find((m) => m.role === "user")?.content ?? "");

function setup(delegation: Record<string, unknown> = {}) {
  const dir = mkdtempSync(join(tmpdir(), "hermes-subagents-"));
  const config = defaultConfig();
  config.agent.api_max_retries = 0;
  Object.assign(config.delegation, delegation);
  return { dir, config, runtime: createToolRuntime() };
}

function host(config: HermesConfig, dir: string, runtime: ToolRuntime, transport: Transport): DelegationHost {
  return {
    config,
    home: dir,
    cwd: dir,
    taskId: "parent-task",
    sessionId: "parent-session",
    depth: 0,
    env: {},
    runtime,
    registry: createBuiltinRegistry(),
    resolved: undefined,
    transport,
    model: "fake-model",
    sessionStore: undefined,
    enabledTools: ["read_file", "terminal", "delegate_task"],
    emit: () => undefined,
    signal: new AbortController().signal,
    approvals: new ApprovalPolicy({ yolo: false, allowlist: [] }),
    spawn: (options) => new AIAgent(options),
  };
}

function waitFor<T>(list: T[], count: number): Promise<void> {
  return new Promise((resolve) => {
    const poll = () => (list.length >= count ? resolve() : setTimeout(poll, 10));
    poll();
  });
}

describe("background subagents", () => {
  it("return an id at once; the report arrives later as a delegation notice that wakes the parent", async () => {
    const { dir, config, runtime } = setup();
    const release = gate();
    const transport = new GatedTransport(async (r) => {
      await release.promise;
      return `REPORT for ${firstUser(r)}`;
    });
    const notices: AgentNotice[] = [];
    const ctx = makeToolContext({
      cwd: dir,
      config: config as unknown as Record<string, unknown>,
      runtime,
      callId: "call_1",
      notify: (n) => notices.push(n),
      delegate: (request) => runDelegation(host(config, dir, runtime, transport), request),
    });
    const started = (await delegateTaskTool.handler({ goal: "index the docs", background: true }, ctx)) as {
      started: Array<{ id: string; status: string; goal: string }>;
    };
    expect(started.started).toEqual([
      { task_index: 0, id: "sa1", goal: "index the docs", status: "started" },
    ]);
    // Still running: nothing delivered yet, and /agents would list it.
    expect(notices).toEqual([]);
    expect(
      subagentRegistry(runtime)
        .list()
        .map((e) => [e.id, e.kind, e.status]),
    ).toEqual([["sa1", "async", "running"]]);

    release.open();
    await waitFor(notices, 1);
    expect(notices[0]).toMatchObject({ source: "delegation", id: "sa1", wake: true });
    expect(notices[0]?.text).toMatch(
      /^\[Background subagent sa1 ended: completed after [\d.]+ s, 1 model call\]/,
    );
    expect(notices[0]?.text).toContain("Goal: index the docs");
    expect(notices[0]?.text).toContain("REPORT for index the docs");
    expect(subagentRegistry(runtime).get("sa1")?.status).toBe("completed");
    await runtime.dispose();
  });

  it("refuses more than max_async_children, and /agents stop ends one with an interrupted notice", async () => {
    const { dir, config, runtime } = setup({ max_async_children: 1 });
    const never = new Promise<string>(() => undefined);
    const transport = new GatedTransport(() => never);
    const notices: AgentNotice[] = [];
    const ctx = makeToolContext({
      cwd: dir,
      config: config as unknown as Record<string, unknown>,
      runtime,
      notify: (n) => notices.push(n),
      delegate: (request) => runDelegation(host(config, dir, runtime, transport), request),
    });
    await delegateTaskTool.handler({ goal: "hang forever", background: true }, ctx);
    // A second one, and a batch that would overshoot, are refused with what to do instead.
    await expect(delegateTaskTool.handler({ goal: "one more", background: true }, ctx)).rejects.toThrow(
      /1 background subagent already running and delegation\.max_async_children is 1.*\/agents stop/,
    );
    await expect(
      delegateTaskTool.handler({ tasks: [{ goal: "a" }, { goal: "b" }], background: true }, ctx),
    ).rejects.toThrow(/max_async_children/);
    expect(subagentRegistry(runtime).runningBackground()).toBe(1);

    // /agents lists it with its progress; /agents stop ends it.
    const { ctx: command, printed } = fakeContext({ session: fakeSession({ toolRuntime: runtime }) });
    await commands.get("agents")?.run("", command);
    expect(printed.join("\n")).toMatch(
      /Running \(1\):\n {2}sa1 {2}background subagent · \d+s · thinking \(1\/50\) {2}hang forever/,
    );
    await commands.get("agents")?.run("stop sa9", command);
    expect(printed.at(-1)).toBe("No subagent sa9. Running: sa1.");
    await commands.get("agents")?.run("stop sa1", command);
    expect(printed.at(-1)).toContain("Stopping sa1");
    await waitFor(notices, 1);
    expect(notices[0]?.text).toMatch(/^\[Background subagent sa1 ended: interrupted/);
    expect(subagentRegistry(runtime).runningBackground()).toBe(0);
    // Room again.
    await delegateTaskTool.handler({ goal: "after", background: true }, ctx);
    expect(subagentRegistry(runtime).runningBackground()).toBe(1);
    await runtime.dispose();
  });

  it("is refused where nothing can deliver the report", async () => {
    const { dir, config, runtime } = setup();
    const transport = new GatedTransport(async () => "x");
    const ctx = makeToolContext({
      cwd: dir,
      runtime,
      delegate: (request) => runDelegation(host(config, dir, runtime, transport), request),
    });
    expect(await delegateTaskTool.handler({ goal: "g", background: true }, ctx)).toEqual({
      error: expect.stringContaining("Background delegation is not available here"),
    });
  });
});

describe("/background", () => {
  it("starts a separate agent with its own session and posts its answer when done", async () => {
    const { dir, config } = setup();
    const release = gate();
    const transport = new GatedTransport(async (r) => {
      if (String(r.messages[0]?.content).startsWith("You are working in the background")) {
        await release.promise;
        return "The answer is 42.";
      }
      return "main";
    });
    const agent = new AIAgent({
      transport,
      config,
      home: dir,
      cwd: dir,
      env: {},
      toolsets: ["file", "clarify"],
    });
    const session = fakeSession({ toolRuntime: (agent as unknown as { runtime: ToolRuntime }).runtime });
    Object.assign(session, { agent });
    const { ctx, printed } = fakeContext({ session, running: true });
    await commands.get("bg")?.run("work out the answer", ctx);
    expect(printed.at(-1)).toMatch(/^⏳ Background task sa1 started/);
    release.open();
    await waitFor(printed, 4);
    expect(printed.slice(1)).toEqual([
      expect.stringMatching(/^✓ Background task sa1 finished/),
      "The answer is 42.",
      expect.stringContaining("prompt: work out the answer"),
    ]);
    // The background agent does not ask the user: clarify is not offered to it.
    const bgRequest = transport.requests.find((r) => String(r.messages[0]?.content).includes("background"));
    const tools = (bgRequest?.tools ?? []).map((t) => t.function.name);
    expect(tools).toContain("read_file");
    expect(tools).not.toContain("clarify");
    await Promise.resolve()
      .then(() => commands.get("background")?.run("", ctx))
      .catch((e: Error) => printed.push(e.message));
    expect(printed.at(-1)).toMatch(/^Usage: \/background <prompt>/);
    await agent.close();
  });
});

describe("the children's model (delegation.*)", () => {
  const parent = {
    provider: "custom",
    model: "parent-model",
    baseUrl: "http://127.0.0.1:9/v1",
    apiKey: "k",
    apiMode: "chat_completions" as const,
  };

  it("keeps the parent's provider with delegation.model, resolves delegation.provider/base_url on their own", () => {
    const config = defaultConfig();
    expect(
      childModel({ config, env: {}, parent, parentModel: "parent-model", home: "/nonexistent-home" })
        .resolved,
    ).toEqual(parent);
    config.delegation.model = "small-model";
    config.delegation.reasoning_effort = "low";
    const same = childModel({
      config,
      env: {},
      parent,
      parentModel: "parent-model",
      home: "/nonexistent-home",
    });
    expect(same.resolved).toEqual({ ...parent, model: "small-model" });
    expect(same.config.agent.reasoning_effort).toBe("low");
    config.delegation.base_url = "http://127.0.0.1:8/v1";
    const other = childModel({
      config,
      env: {},
      parent,
      parentModel: "parent-model",
      home: "/nonexistent-home",
    });
    expect(other.resolved).toMatchObject({
      provider: "custom",
      model: "small-model",
      baseUrl: "http://127.0.0.1:8/v1",
    });
  });

  it("an unusable delegation.provider is a clear error, and the child fails with it", async () => {
    const { dir, config, runtime } = setup({ provider: "no-such-provider" });
    expect(() =>
      childModel({ config, env: {}, parent, parentModel: "m", home: "/nonexistent-home" }),
    ).toThrow(/Unknown provider "no-such-provider"/);
    const transport = new GatedTransport(async () => "unused");
    const [result] = await runDelegation(host(config, dir, runtime, transport), {
      tasks: [{ goal: "g" }],
      callId: "c",
    });
    expect(result?.status).toBe("failed");
    expect(result?.error).toMatch(/delegation\.\*.*Unknown provider/s);
    expect(transport.requests).toEqual([]);
  });
});
