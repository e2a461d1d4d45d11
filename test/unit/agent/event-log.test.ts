import { existsSync, mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { ChatSession } from "../../../src/agent/chat-session.js";
import { ToolRegistry } from "../../../src/tools/registry.js";
import { defineTool } from "../../../src/tools/types.js";
import { createLogger, type LogLevel } from "../../../src/util/log.js";
import { callTools, ScriptedTransport, say } from "../../support/scripted-transport.js";

function setup(level: LogLevel = "INFO") {
  const root = mkdtempSync(join(tmpdir(), "hermes-event-log-"));
  const cwd = join(root, "work");
  const home = join(root, "home");
  mkdirSync(cwd);
  mkdirSync(home);
  const dir = join(home, "logs");
  const logger = createLogger({ dir, level, redact: (t) => t.replaceAll("TOPSECRET99", "***") }, "cli");
  const read = (name: string) => (existsSync(join(dir, name)) ? readFileSync(join(dir, name), "utf8") : "");
  return { cwd, home, logger, read };
}

/** A tool that asks for approval of `command` and fails when refused. */
function guardedRegistry(): ToolRegistry {
  const registry = new ToolRegistry();
  registry.register(
    defineTool({
      name: "guarded",
      toolset: "test",
      description: "asks before acting",
      parameters: Type.Object({ command: Type.String() }),
      handler: async (args, ctx) => {
        const decision = await ctx.requestApproval({
          command: args.command,
          reason: "recursive delete",
          patternKey: "recursive delete",
        });
        if (decision === "deny") throw new Error("The user denied this command.");
        return { ran: args.command };
      },
    }),
  );
  return registry;
}

describe("agentEventLogger through ChatSession's logger option", () => {
  it("logs session start and end, tool calls, approvals and turn ends with the session id", async () => {
    const { cwd, home, logger, read } = setup();
    const answers = ["deny", "once"] as const;
    let asked = 0;
    const transport = new ScriptedTransport([
      callTools(["guarded", { command: "rm -rf build TOPSECRET99" }]),
      callTools(["guarded", { command: "rm -rf dist" }]),
      say("all done"),
    ]);
    const session = await ChatSession.open({
      transport,
      cwd,
      home,
      env: {},
      registry: guardedRegistry(),
      toolsets: ["guarded"],
      provider: "fake-provider",
      onApproval: async () => answers[asked++] ?? "deny",
      logger,
    });
    const result = await session.run("clean up").result;
    expect(result.reason).toBe("completed");
    await session.close();

    const id = session.id;
    const agentLog = read("agent.log");
    const events = agentLog
      .trim()
      .split("\n")
      .map((l) => l.split(" ").slice(1, 6).join(" "));
    expect(events).toEqual([
      `INFO ${id} agent: session start`,
      `WARNING ${id} agent: approval denied`,
      `INFO ${id} agent: tool call`,
      `INFO ${id} agent: approval granted`,
      `INFO ${id} agent: tool call`,
      `INFO ${id} agent: turn end`,
      `INFO ${id} agent: session end`,
    ]);
    expect(agentLog).toMatch(/agent: session start model=\S+ provider=fake-provider tools=1\n/);
    expect(agentLog).toMatch(
      /approval denied tool=guarded call=\S+ reason="recursive delete" decision=deny denial="denied by the user" waited_ms=\d+ command="rm -rf build \*\*\*"/,
    );
    expect(agentLog).toMatch(
      /tool call tool=guarded call=\S+ ms=\d+ ok=false error="Denied by the user: a dangerous command \(recursive delete\)\. It was not run\./,
    );
    expect(agentLog).toMatch(/approval granted .*decision=once/);
    expect(agentLog).toMatch(/tool call tool=guarded call=\S+ ms=\d+ ok=true\n/);
    expect(agentLog).toMatch(/turn end reason=completed iterations=3 input_tokens=30 output_tokens=15/);
    expect(agentLog).toMatch(/session end reason=user_exit model=\S+ messages=6/);
    expect(agentLog).not.toContain("TOPSECRET99");
    // Neither the user's words nor the answer are logged; arguments only at DEBUG.
    expect(agentLog).not.toContain("clean up");
    expect(agentLog).not.toContain("all done");
    expect(agentLog).not.toContain("tool start");
    expect(read("errors.log").trim().split("\n")).toHaveLength(1);
    expect(existsSync(join(home, "logs", "gateway.log"))).toBe(false);
  });

  it("logs provider errors to errors.log and argument previews at DEBUG", async () => {
    const { cwd, home, logger, read } = setup("DEBUG");
    const transport = new ScriptedTransport([
      callTools(["guarded", { command: "ls -la" }]),
      Object.assign(new Error("401 Unauthorized: invalid api key"), { status: 401 }),
    ]);
    const session = await ChatSession.open({
      transport,
      cwd,
      home,
      env: {},
      registry: guardedRegistry(),
      toolsets: ["guarded"],
      yolo: true,
      retry: { maxRetries: 0, baseMs: 1, capMs: 1 },
      logger,
    });
    const result = await session.run("list").result;
    expect(result.reason).toBe("error");
    await session.close();
    const agentLog = read("agent.log");
    expect(agentLog).toMatch(/DEBUG \S+ agent: tool start tool=guarded call=\S+ args="ls -la"/);
    expect(agentLog).toMatch(/DEBUG \S+ agent: model call iteration=1/);
    const errors = read("errors.log");
    expect(errors).toMatch(new RegExp(`ERROR ${session.id} agent: .*401`));
    expect(agentLog).toMatch(/turn end reason=error/);
  });
});
