import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { AIAgent } from "../../../src/agent/agent.js";
import { defaultConfig } from "../../../src/config/defaults.js";
import { ToolRegistry } from "../../../src/tools/registry.js";
import { defineTool } from "../../../src/tools/types.js";
import { callTools, ScriptedTransport, say } from "../../support/scripted-transport.js";
import { makeToolContext } from "../../support/tool-context.js";

describe("AIAgent", () => {
  it("keeps the system prompt byte-stable across turns and the ephemeral prompt out of the transcript", async () => {
    const transport = new ScriptedTransport([callTools(["todo", {}]), say("one"), say("two")]);
    const cwd = makeToolContext().cwd;
    const agent = new AIAgent({
      transport,
      cwd,
      toolsets: ["todo"],
      ephemeralSystemPrompt: "EPHEMERAL NOTE",
    });
    expect(await agent.chat("first")).toBe("one");
    expect(await agent.chat("second")).toBe("two");
    const systems = transport.requests.map((r) => r.messages[0]?.content);
    expect(new Set(systems).size).toBe(1);
    expect(String(systems[0])).toContain("EPHEMERAL NOTE");
    expect(agent.messages.some((m) => String(m.content).includes("EPHEMERAL"))).toBe(false);
    expect(agent.messages.map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
      "user",
      "assistant",
    ]);
    expect(transport.requests[0]?.tools?.map((t) => t.function.name)).toEqual(["todo"]);
    await agent.close();
  });

  it("streams events for a run and reports usage", async () => {
    const transport = new ScriptedTransport([say("hello there")]);
    const agent = new AIAgent({ transport, toolsets: [] });
    const run = agent.run("hi");
    const types: string[] = [];
    let text = "";
    for await (const event of run) {
      types.push(event.type);
      if (event.type === "text_delta") text += event.text;
    }
    const result = await run.result;
    expect(text).toBe("hello there");
    expect(result).toMatchObject({ reason: "completed", text: "hello there", iterations: 1 });
    expect(types.slice(0, 2)).toEqual(["session_start", "message"]);
    expect(types.at(-1)).toBe("done");
    expect(agent.usage.inputTokens).toBe(10);
    expect(() => agent.run("again").result).not.toThrow();
    await agent.close();
  });

  it("refuses a second turn while one is running", async () => {
    const transport = new ScriptedTransport([say("a"), say("b")]);
    const agent = new AIAgent({ transport, toolsets: [] });
    const first = agent.run("one");
    expect(() => agent.run("two")).toThrow(/already running/);
    await first.result;
    await agent.close();
  });

  it("delivers steering and interrupts a running tool", async () => {
    let release!: () => void;
    const started = new Promise<void>((resolve) => (release = resolve));
    const registry = new ToolRegistry();
    registry.register(
      defineTool({
        name: "slow",
        toolset: "test",
        description: "waits for the abort",
        parameters: Type.Object({}),
        handler: (_args, ctx) =>
          new Promise((_resolve, reject) => {
            release();
            ctx.signal.addEventListener("abort", () => reject(new Error("stopped")), { once: true });
          }),
      }),
    );
    const transport = new ScriptedTransport([callTools(["slow", {}])]);
    const agent = new AIAgent({ transport, registry, toolsets: ["slow"] });
    const run = agent.run("go");
    await started;
    agent.steer("please hurry");
    agent.interrupt();
    const result = await run.result;
    expect(result.reason).toBe("interrupted");
    const toolResult = agent.messages.find((m) => m.role === "tool");
    expect(String(toolResult?.content)).toContain("interrupted");
    expect(String(toolResult?.content)).toContain("please hurry");
    await agent.close();
  });

  it("asks the approval callback for dangerous commands and remembers session approvals", async () => {
    const asked: string[] = [];
    const cwd = makeToolContext().cwd;
    const transport = new ScriptedTransport([
      callTools(["terminal", { command: "mkdir -p a && rm -rf a && echo gone-1" }]),
      callTools(["terminal", { command: "mkdir -p b && rm -rf b && echo gone-2" }]),
      say("done"),
    ]);
    const agent = new AIAgent({
      transport,
      cwd,
      toolsets: ["terminal"],
      onApproval: async (request) => {
        asked.push(request.command);
        return "session";
      },
    });
    await agent.chat("clean");
    expect(asked).toHaveLength(1);
    const results = agent.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
    expect(results[0]).toContain("gone-1");
    expect(results[1]).toContain("gone-2");
    await agent.close();
  });

  it("saves ShareGPT trajectories when enabled", async () => {
    const cwd = makeToolContext().cwd;
    const transport = new ScriptedTransport([
      {
        role: "assistant",
        content: null,
        reasoning: "thinking",
        tool_calls: callTools(["todo", {}]).tool_calls ?? [],
      },
      say("final"),
    ]);
    const agent = new AIAgent({ transport, cwd, toolsets: ["todo"], saveTrajectories: true });
    await agent.chat("plan it");
    const file = join(cwd, "trajectory_samples.jsonl");
    expect(existsSync(file)).toBe(true);
    const entry = JSON.parse(readFileSync(file, "utf8").trim());
    expect(entry.completed).toBe(true);
    expect(entry.model).toBe("default");
    const froms = entry.conversations.map((c: { from: string }) => c.from);
    expect(froms).toEqual(["system", "human", "gpt", "tool", "gpt"]);
    expect(entry.conversations[0].value).toContain("<tools>");
    expect(entry.conversations[2].value).toMatch(
      /^<think>\nthinking\n<\/think>\n<tool_call>\n\{"name": "todo"/,
    );
    expect(entry.conversations[3].value).toMatch(/^<tool_response>\n/);
    await agent.close();
  });

  it("reports a missing provider as an error result instead of throwing from run()", async () => {
    const agent = new AIAgent({ config: defaultConfig(), env: {}, toolsets: [] });
    const result = await agent.run("hi").result;
    expect(result.reason).toBe("error");
    expect(result.error).toMatch(/provider/i);
    await expect(agent.chat("hi")).rejects.toThrow(/provider/i);
    await agent.close();
  });
});
