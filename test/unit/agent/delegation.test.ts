import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { AIAgent } from "../../../src/agent/agent.js";
import { CHILD_BLOCKED_TOOLS, childToolNames } from "../../../src/agent/delegation.js";
import type { AgentEvent } from "../../../src/agent/events.js";
import { sessionRecorder } from "../../../src/agent/session-recorder.js";
import type { ChatRequest, Message } from "../../../src/ai/types.js";
import { defaultConfig } from "../../../src/config/defaults.js";
import { openSessionStore } from "../../../src/state/sqlite-store.js";
import { createBuiltinRegistry } from "../../../src/tools/builtin.js";
import { callTools, ScriptedTransport, say } from "../../support/scripted-transport.js";

const isChild = (r: ChatRequest) => String(r.messages[0]?.content ?? "").startsWith("You are a subagent");
const lastUser = (r: ChatRequest) =>
  String([...r.messages].reverse().find((m) => m.role === "user")?.content ?? "");
const toolNames = (r: ChatRequest) => (r.tools ?? []).map((t) => t.function.name);

/** A transport answering parent and children by what each request holds (children run concurrently). */
function router(route: (r: ChatRequest) => Message | Error): ScriptedTransport {
  return new ScriptedTransport(Array.from({ length: 40 }, () => route));
}

function setup() {
  const dir = mkdtempSync(join(tmpdir(), "hermes-delegate-"));
  const config = defaultConfig();
  config.agent.api_max_retries = 0;
  return { dir, config };
}

describe("delegate_task", () => {
  it("runs a batch in children with fresh contexts and returns only their summaries", async () => {
    const { dir, config } = setup();
    const store = openSessionStore(join(dir, "state.db"));
    writeFileSync(join(dir, "notes.txt"), "SECRET-MARKER: only the child reads this\n");
    const transport = router((r) => {
      if (isChild(r)) {
        // Each child reads a file first, then reports.
        if (!r.messages.some((m) => m.role === "tool"))
          return callTools(["read_file", { path: "notes.txt" }]);
        return say(`REPORT: finished "${lastUser(r).split("\n")[0]}"`);
      }
      if (!r.messages.some((m) => m.role === "tool"))
        return callTools([
          "delegate_task",
          { tasks: [{ goal: "count the files", context: "in src/" }, { goal: "read the config" }] },
        ]);
      return say("Both done.");
    });
    const parent = new AIAgent({
      transport,
      config,
      home: dir,
      cwd: dir,
      env: {},
      toolsets: ["file", "terminal", "memory", "clarify", "delegation", "code_execution", "todo"],
      sessionStore: store,
    });
    const events: AgentEvent[] = [];
    parent.on((e) => events.push(e));
    parent.on(sessionRecorder({ store, source: "cli", cwd: dir }));
    expect(await parent.chat("Please split this up")).toBe("Both done.");

    // The parent's context holds one tool result with both summaries, nothing of the children's turns.
    const toolMessage = parent.messages.find((m) => m.role === "tool");
    const result = JSON.parse(String(toolMessage?.content)) as {
      results: Array<{ task_index: number; status: string; summary: string }>;
    };
    expect(result.results.map((r) => [r.task_index, r.status, r.summary])).toEqual([
      [0, "completed", 'REPORT: finished "count the files"'],
      [1, "completed", 'REPORT: finished "read the config"'],
    ]);

    // The child's tool result stayed in the child.
    expect(JSON.stringify(parent.messages)).not.toContain("SECRET-MARKER");
    const childRequests = transport.requests.filter(
      (r) => isChild(r) && !r.messages.some((m) => m.role === "tool"),
    );
    expect(childRequests).toHaveLength(2);
    for (const request of childRequests) {
      // A fresh conversation: system prompt and the task, none of the parent's messages.
      expect(request.messages.map((m) => m.role)).toEqual(["system", "user"]);
      for (const blocked of CHILD_BLOCKED_TOOLS) expect(toolNames(request)).not.toContain(blocked);
      expect(toolNames(request)).toContain("read_file");
    }
    expect(childRequests.some((r) => lastUser(r).includes("Context:\nin src/"))).toBe(true);

    const sub = events.filter((e): e is Extract<AgentEvent, { type: "subagent" }> => e.type === "subagent");
    expect(sub.filter((e) => e.state === "start")).toHaveLength(2);
    expect(sub.filter((e) => e.state === "end").map((e) => e.detail)).toEqual(["completed", "completed"]);

    // Children are recorded as sessions whose parent is the delegating session.
    await parent.close();
    store.close();
    const db = new Database(join(dir, "state.db"), { readonly: true });
    const rows = db.prepare("SELECT source, parent_session_id FROM sessions").all() as Array<{
      source: string;
      parent_session_id: string | null;
    }>;
    db.close();
    expect(rows).toEqual([
      { source: "cli", parent_session_id: null },
      { source: "subagent", parent_session_id: parent.sessionId },
      { source: "subagent", parent_session_id: parent.sessionId },
    ]);
  });

  it("runs at most max_concurrent_children at once", async () => {
    const { dir, config } = setup();
    config.delegation.max_concurrent_children = 2;
    let running = 0;
    let peak = 0;
    const transport = new ScriptedTransport(
      Array.from({ length: 20 }, () => (r: ChatRequest) => {
        if (isChild(r)) return say("ok");
        if (!r.messages.some((m) => m.role === "tool"))
          return callTools(["delegate_task", { tasks: [1, 2, 3, 4, 5].map((n) => ({ goal: `task ${n}` })) }]);
        return say("done");
      }),
    );
    const stream = transport.stream.bind(transport);
    transport.stream = async function* (request, signal) {
      const child = isChild(request);
      if (child) peak = Math.max(peak, ++running);
      try {
        await new Promise((resolve) => setTimeout(resolve, 20));
        yield* stream(request, signal);
      } finally {
        if (child) running--;
      }
    };
    const parent = new AIAgent({ transport, config, home: dir, cwd: dir, env: {}, toolsets: ["delegation"] });
    expect(await parent.chat("go")).toBe("done");
    expect(transport.requests.filter(isChild)).toHaveLength(5);
    expect(peak).toBe(2);
    await parent.close();
  });

  /** A parent whose child runs `command` once, then reports what the tool said. */
  function childRuns(command: string) {
    const { dir, config } = setup();
    const childResults: string[] = [];
    const transport = router((r) => {
      if (isChild(r)) {
        const tool = r.messages.find((m) => m.role === "tool");
        if (tool) {
          childResults.push(String(tool.content));
          return say("REPORT: tried");
        }
        return callTools(["terminal", { command }]);
      }
      if (!r.messages.some((m) => m.role === "tool"))
        return callTools(["delegate_task", { goal: "clean up" }]);
      return say("parent done");
    });
    return { dir, config, transport, childResults };
  }

  it("asks about a child's dangerous command through the parent's prompt, and a no is final", async () => {
    const victim = mkdtempSync(join(tmpdir(), "hermes-victim-"));
    const { dir, config, transport, childResults } = childRuns(`rm -rf ${victim}`);
    const asked: string[] = [];
    const parent = new AIAgent({
      transport,
      config,
      home: dir,
      cwd: dir,
      env: { PATH: process.env.PATH },
      toolsets: ["terminal", "delegation"],
      onApproval: async (request) => {
        asked.push(request.command);
        return "deny";
      },
    });
    expect(await parent.chat("go")).toBe("parent done");
    expect(asked).toEqual([`rm -rf ${victim}`]);
    expect(existsSync(victim)).toBe(true);
    expect(childResults[0]).toContain("Denied by the user");
    await parent.close();
  });

  it("denies a child's dangerous command in a non-interactive run, and --yolo of the parent approves it", async () => {
    const victim = mkdtempSync(join(tmpdir(), "hermes-victim-"));
    const denied = childRuns(`rm -rf ${victim}`);
    const quiet = new AIAgent({
      transport: denied.transport,
      config: denied.config,
      home: denied.dir,
      cwd: denied.dir,
      env: { PATH: process.env.PATH },
      toolsets: ["terminal", "delegation"],
    });
    await quiet.chat("go");
    expect(existsSync(victim)).toBe(true);
    expect(denied.childResults[0]).toContain("non-interactive");
    await quiet.close();

    const approved = childRuns(`rm -rf ${victim}`);
    const yolo = new AIAgent({
      transport: approved.transport,
      config: approved.config,
      home: approved.dir,
      cwd: approved.dir,
      env: { PATH: process.env.PATH },
      toolsets: ["terminal", "delegation"],
      yolo: true,
    });
    await yolo.chat("go");
    expect(existsSync(victim)).toBe(false);
    await yolo.close();
  });

  it("subagent_auto_approve runs a child's dangerous command without asking", async () => {
    const victim = mkdtempSync(join(tmpdir(), "hermes-victim-"));
    const { dir, config, transport } = childRuns(`rm -rf ${victim}`);
    config.delegation.subagent_auto_approve = true;
    let asked = 0;
    const parent = new AIAgent({
      transport,
      config,
      home: dir,
      cwd: dir,
      env: { PATH: process.env.PATH },
      toolsets: ["terminal", "delegation"],
      onApproval: async () => {
        asked++;
        return "deny";
      },
    });
    await parent.chat("go");
    expect(asked).toBe(0);
    expect(existsSync(victim)).toBe(false);
    await parent.close();
  });

  it("interrupting the parent cancels running children", async () => {
    const { dir, config } = setup();
    let childStarted!: () => void;
    const started = new Promise<void>((resolve) => {
      childStarted = resolve;
    });
    const transport = new ScriptedTransport(
      Array.from(
        { length: 5 },
        () => (r: ChatRequest) =>
          isChild(r) ? say("never") : callTools(["delegate_task", { goal: "a long job" }]),
      ),
    );
    const stream = transport.stream.bind(transport);
    transport.stream = async function* (request, signal) {
      if (isChild(request)) {
        childStarted();
        await new Promise<void>((_resolve, reject) => {
          signal?.addEventListener("abort", () =>
            reject(Object.assign(new Error("aborted"), { name: "AbortError" })),
          );
        });
      }
      yield* stream(request, signal);
    };
    const parent = new AIAgent({ transport, config, home: dir, cwd: dir, env: {}, toolsets: ["delegation"] });
    const events: AgentEvent[] = [];
    parent.on((e) => events.push(e));
    const run = parent.run("go");
    await started;
    parent.interrupt();
    const result = await run.result;
    expect(result.reason).toBe("interrupted");
    const end = events.find((e) => e.type === "subagent" && e.state === "end");
    expect(end && "detail" in end ? end.detail : undefined).toBe("interrupted");
    await parent.close();
  });
});

describe("the delegate_task description", () => {
  it("states this configuration's limits", () => {
    const config = defaultConfig();
    config.delegation.max_concurrent_children = 5;
    config.delegation.max_iterations = 12;
    const registry = createBuiltinRegistry();
    const [schema] = registry.schemas(["delegate_task"], {
      env: {},
      config: config as unknown as Record<string, unknown>,
    });
    expect(schema?.function.description).toContain("5 at a time");
    expect(schema?.function.description).toContain("12 model calls");
  });
});

describe("child tool lists", () => {
  const parent = [
    "read_file",
    "write_file",
    "terminal",
    "memory",
    "clarify",
    "delegate_task",
    "execute_code",
    "todo",
  ];

  it("drops the blocked tools, narrows to requested toolsets, and keeps delegation only with room", () => {
    expect(childToolNames(parent, {}, { canSpawn: false })).toEqual([
      "read_file",
      "write_file",
      "terminal",
      "todo",
    ]);
    expect(childToolNames(parent, { toolsets: ["file"] }, { canSpawn: false })).toEqual([
      "read_file",
      "write_file",
    ]);
    expect(childToolNames(parent, {}, { canSpawn: true })).toContain("delegate_task");
    expect(childToolNames(parent, { role: "leaf" }, { canSpawn: true })).not.toContain("delegate_task");
  });

  it("a subagent at the depth limit is not offered delegate_task", async () => {
    const { dir, config } = setup();
    const transport = new ScriptedTransport([say("hi")]);
    const child = new AIAgent({
      transport,
      config,
      home: dir,
      cwd: dir,
      env: {},
      toolsets: ["delegation", "file"],
      delegationDepth: 1,
    });
    await child.chat("x");
    const names = toolNames(transport.requests[0] as ChatRequest);
    expect(names).toContain("read_file");
    expect(names).not.toContain("delegate_task");
    await child.close();
  });
});
