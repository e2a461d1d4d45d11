/**
 * `AIAgent`'s event contract when something inside breaks: `done` is the last event, every
 * `tool_start` has its `tool_end`, and the session recorded in state.db resumes without repair.
 */
import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { AIAgent } from "../../../src/agent/agent.js";
import { ChatSession } from "../../../src/agent/chat-session.js";
import type { AgentEvent } from "../../../src/agent/events.js";
import { repairChanged, repairHistory } from "../../../src/ai/history-repair.js";
import type { ChatRequest, StreamEvent, Transport } from "../../../src/ai/types.js";
import { defaultConfig } from "../../../src/config/defaults.js";
import { ToolRegistry } from "../../../src/tools/registry.js";
import { defineTool, type ToolContext, type ToolOutcome } from "../../../src/tools/types.js";
import { callTools, ScriptedTransport, say } from "../../support/scripted-transport.js";
import { useSessionEnvs } from "../../support/session-env.js";

const setup = useSessionEnvs("hermes-agent-contract-");

/** A registry that breaks outside any tool handler for `deploy` (where the registry cannot catch it). */
class BrokenRegistry extends ToolRegistry {
  override async execute(
    name: string,
    args: Record<string, unknown>,
    ctx: ToolContext,
    ...rest: unknown[]
  ): Promise<ToolOutcome> {
    if (name === "deploy") throw new Error("registry state corrupted");
    return super.execute(name, args, ctx, ...(rest as []));
  }
}

function opsRegistry(): ToolRegistry {
  const registry = new BrokenRegistry();
  for (const name of ["status", "deploy"]) {
    registry.register(
      defineTool({
        name,
        toolset: "ops",
        description: name,
        parameters: Type.Object({}),
        handler: async () => `${name} done`,
      }),
    );
  }
  return registry;
}

async function collect(run: AsyncIterable<AgentEvent>): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for await (const event of run) events.push(event);
  return events;
}

function expectBalanced(events: AgentEvent[]): void {
  const starts = events.flatMap((e) => (e.type === "tool_start" ? [e.callId] : []));
  const ends = events.flatMap((e) => (e.type === "tool_end" ? [e.callId] : []));
  expect(starts.length).toBeGreaterThan(0);
  expect([...ends].sort()).toEqual([...starts].sort());
}

describe("a tool call that breaks inside Hermes", () => {
  it("ends with done, stores a result for every call, and the session resumes with nothing to repair", async () => {
    const env = setup();
    const transport = new ScriptedTransport([
      callTools(["status", {}], ["deploy", {}]),
      say("The deploy returned nothing; I will check whether it happened."),
    ]);
    const base = {
      transport,
      cwd: env.cwd,
      home: env.home,
      env: {},
      store: env.store,
      registry: opsRegistry(),
      toolsets: ["status", "deploy"],
    };
    const session = await ChatSession.open(base);
    const run = session.run("ship it");
    const events = await collect(run);
    const result = await run.result;

    expect(result.reason).toBe("completed");
    expect(events.at(-1)).toMatchObject({ type: "done", reason: "completed" });
    expect(events.filter((e) => e.type === "done")).toHaveLength(1);
    expectBalanced(events);
    const deployEnd = events.find((e) => e.type === "tool_end" && e.name === "deploy");
    expect(deployEnd).toMatchObject({ ok: false });
    expect(deployEnd?.type === "tool_end" && deployEnd.result).toContain("may or may not have taken effect");

    const stored = env.db.conversation(session.id);
    expect(repairChanged(repairHistory(stored))).toBe(false);
    expect(stored.map((m) => m.role)).toEqual(["user", "assistant", "tool", "tool", "assistant"]);
    const id = session.id;
    await session.close();

    // Resumed: no repair note, and the next request carries every call with its result.
    const warnings: string[] = [];
    const later = new ScriptedTransport([say("It did not happen.")]);
    const resumed = await ChatSession.open({
      ...base,
      transport: later,
      continueLast: true,
      onWarning: (m) => warnings.push(m),
    });
    expect(resumed.id).toBe(id);
    expect((await resumed.run("did it deploy?").result).reason).toBe("completed");
    expect(warnings).toEqual([]);
    const sent = (later.requests.at(-1) as ChatRequest).messages.slice(1);
    expect(sent.map((m) => m.role)).toEqual(["user", "assistant", "tool", "tool", "assistant", "user"]);
    await resumed.close();
  });
});

describe("errors nothing expected", () => {
  /** An error object that throws on every look at it: what a broken SDK could hand back. */
  const hostile = new Proxy(
    {},
    {
      get() {
        throw new Error("hostile get");
      },
      getPrototypeOf() {
        throw new Error("hostile prototype");
      },
      has() {
        throw new Error("hostile has");
      },
      ownKeys() {
        throw new Error("hostile keys");
      },
    },
  );

  it("an unreadable error from the transport ends the turn with an error, then done; the next turn works", async () => {
    let calls = 0;
    const transport: Transport = {
      apiMode: "chat_completions",
      async *stream(): AsyncIterable<StreamEvent> {
        calls++;
        if (calls === 1) throw hostile;
        yield { type: "text_delta", text: "fine" };
        yield { type: "finish", reason: "stop", message: { role: "assistant", content: "fine" } };
      },
    };
    const agent = new AIAgent({ transport, toolsets: [], retry: { maxRetries: 0 } });
    const run = agent.run("hello");
    const events = await collect(run);
    const result = await run.result;

    expect(result.reason).toBe("error");
    const types = events.map((e) => e.type);
    expect(types.slice(-3)).toEqual(["error", "turn_end", "done"]);
    expect(types.filter((t) => t === "done")).toHaveLength(1);

    expect(await agent.chat("try again")).toBe("fine");
    expect(repairChanged(repairHistory(agent.messages))).toBe(false);
    await agent.close();
  });

  it("a failure in the agent itself is reported as unexpected, done still comes last, and the agent goes on", async () => {
    const config = defaultConfig();
    const compression = config.compression;
    let broken = false;
    Object.defineProperty(config, "compression", {
      get() {
        if (broken) throw new Error("config.compression was replaced by something unreadable");
        return compression;
      },
    });
    const transport = new ScriptedTransport([say("one"), say("three")]);
    const agent = new AIAgent({ transport, config, toolsets: [] });
    expect(await agent.chat("first")).toBe("one");

    broken = true;
    const run = agent.run("second");
    const events = await collect(run);
    const result = await run.result;
    expect(result).toMatchObject({ reason: "error", text: "" });
    expect(result.error).toBe(
      "The turn failed unexpectedly: config.compression was replaced by something unreadable",
    );
    expect(events.map((e) => e.type).slice(-2)).toEqual(["error", "done"]);
    expect(agent.running).toBe(false);

    broken = false;
    expect(await agent.chat("third")).toBe("three");
    expect(repairChanged(repairHistory(agent.messages))).toBe(false);
    await agent.close();
  });
});
