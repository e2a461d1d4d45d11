import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../../src/agent/events.js";
import { ToolLoopGuard } from "../../../src/agent/guardrails.js";
import { type LoopDeps, runLoop } from "../../../src/agent/loop.js";
import { type Message, ProviderError } from "../../../src/ai/types.js";
import { defaultConfig } from "../../../src/config/defaults.js";
import { ToolRegistry } from "../../../src/tools/registry.js";
import { defineTool } from "../../../src/tools/types.js";
import { callTools, ScriptedTransport, say } from "../../support/scripted-transport.js";
import { makeToolContext } from "../../support/tool-context.js";

function setup(transport: ScriptedTransport, extra: Partial<LoopDeps> = {}) {
  const registry = new ToolRegistry();
  const log: string[] = [];
  let running = 0;
  let maxRunning = 0;
  registry.registerAll([
    defineTool({
      name: "echo",
      toolset: "test",
      description: "Echo text",
      parameters: Type.Object({ text: Type.String() }),
      parallelSafe: true,
      async handler(args) {
        running++;
        maxRunning = Math.max(maxRunning, running);
        await new Promise((r) => setImmediate(r));
        running--;
        log.push(`echo:${args.text}`);
        return `echo: ${args.text}`;
      },
    }),
    defineTool({
      name: "fail",
      toolset: "test",
      description: "Always fails",
      parameters: Type.Object({}),
      handler() {
        throw new Error("this tool always fails");
      },
    }),
    defineTool({
      name: "wait_abort",
      toolset: "test",
      description: "Waits until aborted",
      parameters: Type.Object({}),
      handler(_args, ctx) {
        return new Promise((_, reject) => {
          ctx.signal.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
        });
      },
    }),
  ]);
  const events: AgentEvent[] = [];
  const ctx = makeToolContext();
  const g = defaultConfig().tool_loop_guardrails;
  const deps: LoopDeps = {
    transport,
    model: "test-model",
    tools: registry.schemas(registry.names()),
    systemPrompt: "SYSTEM",
    maxIterations: 10,
    retry: { maxRetries: 2, baseMs: 1, capMs: 5 },
    traits: (name) => {
      const t = registry.get(name);
      return t ? { parallelSafe: t.parallelSafe ?? false, interactive: t.interactive ?? false } : undefined;
    },
    executeTool: (call, signal) => registry.execute(call.name, call.args, { ...ctx, signal }),
    guard: ToolLoopGuard.fromConfig(g),
    unknownToolMisses: { count: 0 },
    emit: (e) => events.push(e),
    ...extra,
  };
  return { deps, events, log, maxRunning: () => maxRunning };
}

const user = (text: string): Message => ({ role: "user", content: text });
const toolMessages = (messages: Message[]) => messages.filter((m) => m.role === "tool");

describe("runLoop", () => {
  it("runs tools, feeds results back and ends on a text answer", async () => {
    const transport = new ScriptedTransport([callTools(["echo", { text: "hi" }]), say("done")]);
    const { deps, events } = setup(transport);
    const messages = [user("go")];
    const result = await runLoop(messages, deps, new AbortController().signal);
    expect(result).toMatchObject({ reason: "completed", text: "done", iterations: 2 });
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(toolMessages(messages)[0]?.content).toBe("echo: hi");
    expect(transport.requests[0]?.messages[0]).toEqual({ role: "system", content: "SYSTEM" });
    expect(events.filter((e) => e.type === "message")).toHaveLength(3);
  });

  it("runs read-only calls in parallel and keeps results in call order", async () => {
    const transport = new ScriptedTransport([
      callTools(["echo", { text: "a" }], ["echo", { text: "b" }], ["echo", { text: "c" }]),
      say("ok"),
    ]);
    const { deps, maxRunning } = setup(transport);
    const messages = [user("go")];
    await runLoop(messages, deps, new AbortController().signal);
    expect(toolMessages(messages).map((m) => m.content)).toEqual(["echo: a", "echo: b", "echo: c"]);
    expect(maxRunning()).toBe(3);
  });

  it("repairs a misspelt tool name and broken argument JSON", async () => {
    const transport = new ScriptedTransport([callTools(["Echo", '{"text": "x",}']), say("ok")]);
    const { deps } = setup(transport);
    const messages = [user("go")];
    await runLoop(messages, deps, new AbortController().signal);
    expect(toolMessages(messages)[0]?.content).toBe("echo: x");
    // The stored call carries the repaired name and valid JSON, so the next request is well-formed.
    expect(messages[1]?.tool_calls?.[0]?.function).toEqual({ name: "echo", arguments: '{"text":"x"}' });
  });

  it("answers an unknown tool with an error, and lists valid tools after three misses", async () => {
    const transport = new ScriptedTransport([
      callTools(["launch_rocket", {}]),
      callTools(["launch_rocket", {}]),
      callTools(["launch_rocket", {}]),
      say("giving up"),
    ]);
    const { deps } = setup(transport);
    const messages = [user("go")];
    const result = await runLoop(messages, deps, new AbortController().signal);
    const results = toolMessages(messages).map((m) => String(m.content));
    expect(results[0]).toContain('Unknown tool \\"launch_rocket\\"');
    expect(results[0]).not.toContain("echo, fail");
    expect(results[2]).toContain("Use only these tools: echo, fail, wait_abort");
    expect(result.reason).toBe("completed");
  });

  it("turns a throwing tool and invalid arguments into error results", async () => {
    const transport = new ScriptedTransport([callTools(["fail", {}], ["echo", { wrong: 1 }]), say("ok")]);
    const { deps } = setup(transport);
    const messages = [user("go")];
    await runLoop(messages, deps, new AbortController().signal);
    const [failed, invalid] = toolMessages(messages).map((m) => JSON.parse(String(m.content)));
    expect(failed.error).toBe("this tool always fails");
    expect(invalid.error).toContain("`text` is required");
  });

  it("executes tool calls the model wrote as <tool_call> text", async () => {
    const transport = new ScriptedTransport([
      say('Let me check.\n<tool_call>{"name": "echo", "arguments": {"text": "from text"}}</tool_call>'),
      say("ok"),
    ]);
    const { deps } = setup(transport);
    const messages = [user("go")];
    await runLoop(messages, deps, new AbortController().signal);
    expect(toolMessages(messages)[0]?.content).toBe("echo: from text");
    expect(messages[1]?.tool_calls?.[0]?.function.name).toBe("echo");
  });

  it("grants one grace call at the budget, then forces a summary without tools", async () => {
    const transport = new ScriptedTransport([
      callTools(["echo", { text: "1" }]),
      callTools(["echo", { text: "2" }]),
      callTools(["echo", { text: "3" }]),
      say("summary of work"),
    ]);
    const { deps } = setup(transport, { maxIterations: 2 });
    const messages = [user("go")];
    const result = await runLoop(messages, deps, new AbortController().signal);
    expect(result).toMatchObject({ reason: "max_turns", text: "summary of work", iterations: 4 });
    expect(transport.requests[2]?.tools).toBeDefined();
    expect(transport.requests[3]?.tools).toBeUndefined();
    expect(messages[messages.length - 1]?.role).toBe("assistant");
    const graceNote = toolMessages(messages)[1]?.content;
    expect(graceNote).toContain("iteration limit");
  });

  it("stops at the hard-stop threshold when enabled, ending with an answer", async () => {
    const transport = new ScriptedTransport([
      ...Array.from({ length: 5 }, () => callTools(["fail", {}])),
      say("I could not do it"),
    ]);
    const g = defaultConfig().tool_loop_guardrails;
    const { deps, events } = setup(transport, {
      guard: new ToolLoopGuard({
        warningsEnabled: true,
        hardStopEnabled: true,
        warnAfter: g.warn_after,
        hardStopAfter: g.hard_stop_after,
      }),
    });
    const messages = [user("go")];
    const result = await runLoop(messages, deps, new AbortController().signal);
    expect(result.reason).toBe("guardrail");
    expect(result.text).toBe("I could not do it");
    expect(toolMessages(messages)[1]?.content).toContain("[guardrail]");
    expect(events.some((e) => e.type === "warning" && e.message.includes("exact failure"))).toBe(true);
  });

  it("guardrail counts start again with each user turn", async () => {
    const transport = new ScriptedTransport([
      callTools(["fail", {}]),
      callTools(["fail", {}]),
      say("turn one failed"),
      callTools(["fail", {}]),
      callTools(["fail", {}]),
      say("turn two failed"),
    ]);
    const g = defaultConfig().tool_loop_guardrails;
    const { deps } = setup(transport, {
      guard: new ToolLoopGuard({
        warningsEnabled: true,
        hardStopEnabled: true,
        warnAfter: g.warn_after,
        hardStopAfter: { ...g.hard_stop_after, exact_failure: 3, same_tool_failure: 3 },
      }),
    });
    const messages = [user("first")];
    expect((await runLoop(messages, deps, new AbortController().signal)).reason).toBe("completed");
    messages.push(user("second"));
    const second = await runLoop(messages, deps, new AbortController().signal);
    expect(second.reason).toBe("completed");
    expect(second.text).toBe("turn two failed");
  });

  it("appends steering text to the next tool result", async () => {
    const transport = new ScriptedTransport([callTools(["echo", { text: "a" }]), say("ok")]);
    let steer: string | undefined = "use the other directory";
    const { deps } = setup(transport, {
      takeSteering: () => {
        const s = steer;
        steer = undefined;
        return s;
      },
    });
    const messages = [user("go")];
    await runLoop(messages, deps, new AbortController().signal);
    expect(toolMessages(messages)[0]?.content).toContain(
      "[User steering, sent while you worked] use the other directory",
    );
  });

  it("interrupts a running tool and answers every pending call", async () => {
    const transport = new ScriptedTransport([callTools(["wait_abort", {}])]);
    const controller = new AbortController();
    const { deps, events } = setup(transport, {
      emit: (e) => {
        events.push(e);
        if (e.type === "tool_start") setImmediate(() => controller.abort());
      },
    });
    const messages = [user("go")];
    const result = await runLoop(messages, deps, controller.signal);
    expect(result.reason).toBe("interrupted");
    expect(toolMessages(messages)).toHaveLength(1);
    expect(String(toolMessages(messages)[0]?.content)).toContain("interrupted");
  });

  it("retries a 500 and a rate limit, then succeeds, announcing each wait", async () => {
    const transport = new ScriptedTransport([
      new ProviderError("server exploded", { status: 500 }),
      new ProviderError("slow down", { status: 429 }),
      say("finally"),
    ]);
    const { deps, events } = setup(transport);
    const result = await runLoop([user("go")], deps, new AbortController().signal);
    expect(result).toMatchObject({ reason: "completed", text: "finally" });
    const retries = events.filter((e) => e.type === "retry");
    expect(retries.map((e) => [e.reason, e.attempt, e.attempts])).toEqual([
      ["server_error", 2, 2],
      ["rate_limit", 3, 3],
    ]);
  });

  it("retries an unexplained failure once: a second one ends the call", async () => {
    const transport = new ScriptedTransport([
      new ProviderError("server exploded", { status: 500 }),
      new ProviderError("bad gateway", { status: 502 }),
      say("never reached"),
    ]);
    const { deps, events } = setup(transport);
    const result = await runLoop([user("go")], deps, new AbortController().signal);
    expect(result.reason).toBe("error");
    expect(transport.requests).toHaveLength(2);
    expect(events.filter((e) => e.type === "retry")).toHaveLength(1);
  });

  it("ends with a clear error when retries are exhausted or the error is not retryable", async () => {
    const transport = new ScriptedTransport([new ProviderError("invalid api key", { status: 401 })]);
    const { deps, events } = setup(transport);
    const messages = [user("go")];
    const result = await runLoop(messages, deps, new AbortController().signal);
    expect(result.reason).toBe("error");
    expect(result.error).toBe("Provider HTTP 401: invalid api key");
    expect(events.some((e) => e.type === "error")).toBe(true);
    expect(messages).toHaveLength(1);
  });
});
