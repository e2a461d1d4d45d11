/**
 * The loop's contract with its injected parts (agent/loop-deps.ts): whatever a part throws, the
 * turn ends with a result, every `tool_start` gets its `tool_end`, and the history it leaves is one
 * the strictest provider accepts (history repair finds nothing to do).
 */
import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../../src/agent/events.js";
import { type LoopDeps, runLoop } from "../../../src/agent/loop.js";
import { repairChanged, repairHistory } from "../../../src/ai/history-repair.js";
import { type Message, ProviderError, type ToolSchema } from "../../../src/ai/types.js";
import { callTools, ScriptedTransport, say } from "../../support/scripted-transport.js";

const tool = (name: string): ToolSchema => ({
  type: "function",
  function: { name, description: name, parameters: { type: "object", properties: {} } },
});
const user = (text: string): Message => ({ role: "user", content: text });

function setup(transport: ScriptedTransport, extra: Partial<LoopDeps> = {}) {
  const events: AgentEvent[] = [];
  const deps: LoopDeps = {
    transport,
    model: "test-model",
    tools: [tool("read"), tool("write")],
    systemPrompt: "SYSTEM",
    maxIterations: 10,
    retry: { maxRetries: 1, baseMs: 1, capMs: 2 },
    traits: (name) => ({ parallelSafe: name === "read", interactive: false }),
    executeTool: async (call) => ({ content: `${call.name} ok`, ok: true }),
    unknownToolMisses: { count: 0 },
    emit: (e) => events.push(e),
    ...extra,
  };
  const warnings = () => events.flatMap((e) => (e.type === "warning" ? [e.message] : []));
  return { deps, events, warnings };
}

/** Every tool_start has exactly one tool_end for the same call, and none ends before it starts. */
function expectBalanced(events: AgentEvent[]): void {
  const open = new Set<string>();
  let starts = 0;
  for (const e of events) {
    if (e.type === "tool_start") {
      expect(open.has(e.callId)).toBe(false);
      open.add(e.callId);
      starts++;
    } else if (e.type === "tool_end") {
      expect(open.delete(e.callId)).toBe(true);
    }
  }
  expect(open.size).toBe(0);
  expect(starts).toBeGreaterThan(0);
}

/** The history needs no repair: every call answered, in place, once. */
function expectResumable(messages: Message[]): void {
  const report = repairHistory(messages);
  expect(repairChanged(report)).toBe(false);
}

const boom = (what: string) => () => {
  throw new Error(`${what} exploded`);
};

describe("a tool whose executeTool throws", () => {
  it("gets an error result that says it may or may not have happened, and the turn goes on", async () => {
    const transport = new ScriptedTransport([
      callTools(["read", {}], ["write", { path: "a" }], ["read", {}]),
      say("I will check before writing again."),
    ]);
    let calls = 0;
    const { deps, events } = setup(transport, {
      executeTool: async (call) => {
        calls++;
        if (call.name === "write") throw new TypeError("Cannot read properties of undefined (reading 'cwd')");
        return { content: "contents", ok: true };
      },
    });
    const messages = [user("go")];
    const result = await runLoop(messages, deps, new AbortController().signal);

    expect(result).toMatchObject({ reason: "completed", text: "I will check before writing again." });
    expect(calls).toBe(3);
    const results = messages.filter((m) => m.role === "tool");
    expect(results.map((m) => m.name)).toEqual(["read", "write", "read"]);
    expect(String(results[1]?.content)).toContain("write failed inside Hermes and returned no result");
    expect(String(results[1]?.content)).toContain("may or may not have taken effect");
    expect(results[0]?.content).toBe("contents");
    // The model saw the failure in its next request.
    expect(JSON.stringify(transport.requests[1]?.messages)).toContain("failed inside Hermes");
    const ends = events.filter((e) => e.type === "tool_end");
    expect(ends.find((e) => e.name === "write")).toMatchObject({ ok: false });
    expectBalanced(events);
    expectResumable(messages);
  });

  it("is handled the same when it throws synchronously instead of rejecting", async () => {
    const transport = new ScriptedTransport([callTools(["read", {}], ["read", {}]), say("done")]);
    const { deps, events } = setup(transport, {
      executeTool: boom("the tool context"),
    });
    const messages = [user("go")];
    const result = await runLoop(messages, deps, new AbortController().signal);
    expect(result.reason).toBe("completed");
    expect(messages.filter((m) => m.role === "tool")).toHaveLength(2);
    expect(events.filter((e) => e.type === "tool_end").every((e) => e.type === "tool_end" && !e.ok)).toBe(
      true,
    );
    expectBalanced(events);
    expectResumable(messages);
  });

  it("after the user interrupted, says so instead of blaming Hermes", async () => {
    const controller = new AbortController();
    const transport = new ScriptedTransport([callTools(["write", {}]), say("never")]);
    const { deps, events } = setup(transport, {
      executeTool: async () => {
        controller.abort();
        throw new Error("socket closed");
      },
    });
    const messages = [user("go")];
    const result = await runLoop(messages, deps, controller.signal);
    expect(result.reason).toBe("interrupted");
    expect(String(messages.at(-1)?.content)).toContain("write was interrupted by the user");
    expectBalanced(events);
    expectResumable(messages);
  });
});

describe("helpers that throw", () => {
  it("a throwing traits lookup: one warning, and the calls run one at a time", async () => {
    const transport = new ScriptedTransport([callTools(["read", {}], ["read", {}]), say("done")]);
    let running = 0;
    let most = 0;
    const { deps, events, warnings } = setup(transport, {
      traits: boom("traits"),
      executeTool: async () => {
        running++;
        most = Math.max(most, running);
        await new Promise((r) => setImmediate(r));
        running--;
        return { content: "ok", ok: true };
      },
    });
    const messages = [user("go")];
    expect((await runLoop(messages, deps, new AbortController().signal)).reason).toBe("completed");
    expect(most).toBe(1);
    expect(warnings()).toEqual(["Reading the tool's traits failed (traits exploded); read runs on its own."]);
    expectBalanced(events);
    expectResumable(messages);
  });

  it("a throwing guard: results stand without a verdict, one warning per turn", async () => {
    const transport = new ScriptedTransport([
      callTools(["read", {}]),
      callTools(["read", {}], ["write", {}]),
      say("done"),
    ]);
    const { deps, events, warnings } = setup(transport, {
      guard: { startTurn: boom("startTurn"), record: boom("record") },
    });
    const messages = [user("go")];
    const result = await runLoop(messages, deps, new AbortController().signal);
    expect(result).toMatchObject({ reason: "completed", text: "done", iterations: 3 });
    expect(messages.filter((m) => m.role === "tool").map((m) => m.content)).toEqual([
      "read ok",
      "read ok",
      "write ok",
    ]);
    expect(warnings()).toEqual([
      "The tool-loop guardrail failed (startTurn exploded); its counts go on from the last turn.",
    ]);
    expectBalanced(events);
    expectResumable(messages);
  });

  it("a rejecting checkpoint: a warning, and the turn goes on with the history as it is", async () => {
    const transport = new ScriptedTransport([callTools(["read", {}]), callTools(["read", {}]), say("done")]);
    let checks = 0;
    const { deps, events, warnings } = setup(transport, {
      checkpoint: async () => {
        checks++;
        throw new Error("summariser offline");
      },
    });
    const messages = [user("go")];
    const result = await runLoop(messages, deps, new AbortController().signal);
    expect(result).toMatchObject({ reason: "completed", text: "done", iterations: 3 });
    expect(checks).toBe(2);
    expect(warnings()).toEqual([
      "The mid-turn context check failed (summariser offline); the turn goes on uncompressed.",
    ]);
    expectBalanced(events);
    expectResumable(messages);
  });

  it("a rejecting compress on a context overflow: a warning, then the overflow is reported, not a crash", async () => {
    const overflow = new ProviderError("This model's maximum context length is 8192 tokens", {
      status: 400,
      body: JSON.stringify({ error: { message: "This model's maximum context length is 8192 tokens" } }),
    });
    const transport = new ScriptedTransport([callTools(["read", {}]), overflow]);
    const { deps, events, warnings } = setup(transport, {
      compress: async () => {
        throw new Error("state.db is locked");
      },
    });
    const messages = [user("go")];
    const result = await runLoop(messages, deps, new AbortController().signal);
    expect(result.reason).toBe("error");
    expect(warnings()).toContain(
      "Compressing the conversation failed (state.db is locked); the request is not shrunk.",
    );
    expect(events.filter((e) => e.type === "error")).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: "turn_end", finishReason: "error" });
    expectBalanced(events);
    expectResumable(messages);
  });

  it("a throwing /steer source and a throwing event consumer do not stop the turn", async () => {
    const transport = new ScriptedTransport([callTools(["read", {}]), say("done")]);
    const seen: string[] = [];
    const { deps } = setup(transport, {
      takeSteering: boom("steering"),
      emit: (e) => {
        seen.push(e.type);
        if (e.type === "tool_start" || e.type === "warning") throw new Error("renderer crashed");
      },
    });
    const messages = [user("go")];
    const result = await runLoop(messages, deps, new AbortController().signal);
    expect(result).toMatchObject({ reason: "completed", text: "done" });
    expect(seen).toContain("tool_end");
    expect(seen.filter((t) => t === "warning")).toHaveLength(1);
    expectResumable(messages);
  });

  it("recovery hooks that throw count as 'not possible' instead of looping or crashing", async () => {
    const transport = new ScriptedTransport([
      new ProviderError("Insufficient credits", {
        status: 402,
        body: '{"error":{"message":"Insufficient credits"}}',
      }),
    ]);
    let asked = 0;
    const { deps, events, warnings } = setup(transport, {
      recovery: {
        primaryLabel: "primary",
        fallback: async () => {
          asked++;
          throw new Error("fallback_providers entry 1 is malformed");
        },
        rotateCredential: boom("auth.json"),
        rebuildTransport: boom("client"),
      },
    });
    const result = await runLoop([user("go")], deps, new AbortController().signal);
    expect(result.reason).toBe("error");
    expect(asked).toBe(1);
    expect(warnings()).toContain(
      "Resolving a fallback provider failed (fallback_providers entry 1 is malformed); no fallback is used.",
    );
    expect(events.filter((e) => e.type === "error")).toHaveLength(1);
  });
});
