/**
 * One commit per model call when the reply's tool calls change nothing outside the session: the
 * reply is stored with its results after they ran, still before the next model call. A reply with
 * any call that acts keeps the old order (the call on disk before its tool runs).
 */
import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { ChatSession } from "../../../src/agent/chat-session.js";
import { INTERRUPTED_TOOL_RESULT } from "../../../src/ai/history-repair.js";
import type { ChatRequest, Message } from "../../../src/ai/types.js";
import { openRecordingStore } from "../../../src/state/recording-store.js";
import { openSqliteStore } from "../../../src/state/sqlite-store.js";
import type { SessionStore } from "../../../src/state/types.js";
import { createBuiltinRegistry } from "../../../src/tools/builtin.js";
import { memoryTool } from "../../../src/tools/memory.js";
import { ToolRegistry } from "../../../src/tools/registry.js";
import { defineTool } from "../../../src/tools/types.js";
import { callTools, ScriptedTransport, say } from "../../support/scripted-transport.js";
import { type SessionEnv, useSessionEnvs } from "../../support/session-env.js";

const setup = useSessionEnvs("hermes-read-only-commits-");

const WRITES = [
  "createSession",
  "startSession",
  "updateSession",
  "appendMessage",
  "appendMessages",
  "recordUsage",
] as const;

/** Counts every write call (each one a transaction, so a commit) made to `store`. */
function spyWrites(store: SessionStore): string[] {
  const seen: string[] = [];
  const target = store as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const name of WRITES) {
    const original = target[name]!.bind(store);
    target[name] = (...args: unknown[]) => {
      seen.push(name);
      return original(...args);
    };
  }
  return seen;
}

/** What is stored (read through another connection): `role[:call id]` per message. */
function shape(env: SessionEnv, id: string): string[] {
  const reader = openSqliteStore(env.store.path, { readonly: true });
  try {
    return reader.conversation(id).map((m) => `${m.role}${m.tool_call_id ? `:${m.tool_call_id}` : ""}`);
  } finally {
    reader.close();
  }
}

interface Probe {
  registry: ToolRegistry;
  seen: string[][];
  sessionId: { value: string };
}

/** `look` changes nothing (sideEffectFree); `act` has side effects; both record what is on disk. */
function probes(env: SessionEnv, hooks: { onLook?: (signal: AbortSignal) => Promise<void> } = {}): Probe {
  const seen: string[][] = [];
  const sessionId = { value: "" };
  const registry = new ToolRegistry();
  registry.register(
    defineTool({
      name: "look",
      toolset: "probe",
      description: "Reads something.",
      parameters: Type.Object({ n: Type.Number() }),
      parallelSafe: true,
      sideEffectFree: true,
      handler: async ({ n }, ctx) => {
        seen.push(shape(env, sessionId.value));
        await hooks.onLook?.(ctx.signal);
        return { looked: n };
      },
    }),
  );
  registry.register(
    defineTool({
      name: "act",
      toolset: "probe",
      description: "Changes something.",
      parameters: Type.Object({ n: Type.Number() }),
      handler: async ({ n }) => {
        seen.push(shape(env, sessionId.value));
        return { acted: n };
      },
    }),
  );
  registry.register(
    defineTool({
      name: "judge",
      toolset: "probe",
      description: "Decides per call, and may fail to.",
      parameters: Type.Object({ mode: Type.String() }),
      sideEffectFreeCall: ({ mode }) => {
        if (mode === "throw") throw new Error("cannot tell");
        return mode === "read";
      },
      handler: async ({ mode }) => {
        seen.push(shape(env, sessionId.value));
        return { mode };
      },
    }),
  );
  return { registry, seen, sessionId };
}

async function open(env: SessionEnv, transport: ScriptedTransport, probe: Probe, store?: SessionStore) {
  const session = await ChatSession.open({
    transport,
    cwd: env.cwd,
    home: env.home,
    env: {},
    // Tool names stand for themselves as toolsets.
    toolsets: ["look", "act", "judge"],
    registry: probe.registry,
    store: store ?? env.store,
  });
  probe.sessionId.value = session.id;
  return session;
}

describe("a reply whose calls change nothing outside the session", () => {
  it("is stored with its results in one commit per model call, before the next model call", async () => {
    const env = setup();
    const probe = probes(env);
    const first = callTools(["look", { n: 1 }]);
    const second = callTools(["look", { n: 2 }]);
    const transport = new ScriptedTransport([first, second, say("done")]);
    const session = await open(env, transport, probe);
    const writes = spyWrites(env.store);
    await session.run("look twice").result;

    // The user's message (with the session's row), then one commit per model call.
    expect(writes).toEqual(["startSession", "appendMessages", "appendMessages", "appendMessage"]);
    const id1 = first.tool_calls?.[0]?.id;
    const id2 = second.tool_calls?.[0]?.id;
    // While `look` ran its call was not on disk yet; the previous call and result were.
    expect(probe.seen).toEqual([["user"], ["user", "assistant", `tool:${id1}`]]);
    // The second model call was sent the first call and its result, and both are stored.
    const sent = (transport.requests[1] as ChatRequest).messages.slice(1);
    expect(sent.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    expect(shape(env, session.id)).toEqual([
      "user",
      "assistant",
      `tool:${id1}`,
      "assistant",
      `tool:${id2}`,
      "assistant",
    ]);
    // Every model call is counted once, the held ones included.
    expect((await env.store.getSession(session.id))?.apiCallCount).toBe(3);
    await session.close();
  });

  it("parallel calls: the reply and all its results in one commit", async () => {
    const env = setup();
    const probe = probes(env);
    const call = callTools(["look", { n: 1 }], ["look", { n: 2 }], ["look", { n: 3 }]);
    const session = await open(env, new ScriptedTransport([call, say("seen")]), probe);
    const writes = spyWrites(env.store);
    await session.run("look three times").result;
    expect(writes).toEqual(["startSession", "appendMessages", "appendMessage"]);
    const ids = (call.tool_calls ?? []).map((c) => `tool:${c.id}`);
    expect(shape(env, session.id)).toEqual(["user", "assistant", ...ids, "assistant"]);
    await session.close();
  });
});

describe("a reply with any call that acts keeps the call on disk before it runs", () => {
  it("a side-effecting tool: two commits, the call stored before the tool runs", async () => {
    const env = setup();
    const probe = probes(env);
    const call = callTools(["act", { n: 1 }]);
    const session = await open(env, new ScriptedTransport([call, say("acted")]), probe);
    const writes = spyWrites(env.store);
    await session.run("act once").result;
    expect(writes).toEqual(["startSession", "appendMessage", "appendMessage", "appendMessage"]);
    expect(probe.seen).toEqual([["user", "assistant"]]);
    await session.close();
  });

  it("a read next to an act in one reply: the reply is stored before either runs", async () => {
    const env = setup();
    const probe = probes(env);
    const call = callTools(["look", { n: 1 }], ["act", { n: 2 }]);
    const session = await open(env, new ScriptedTransport([call, say("both")]), probe);
    await session.run("look and act").result;
    expect(probe.seen[0]).toEqual(["user", "assistant"]);
    expect(probe.seen[1]?.slice(0, 2)).toEqual(["user", "assistant"]);
    await session.close();
  });

  it("a per-call judgement: a read commits once, a write or a judgement that throws stores first", async () => {
    const env = setup();
    const probe = probes(env);
    const read = callTools(["judge", { mode: "read" }]);
    const write = callTools(["judge", { mode: "write" }]);
    const broken = callTools(["judge", { mode: "throw" }]);
    const session = await open(env, new ScriptedTransport([read, write, broken, say("ok")]), probe);
    await session.run("judge three times").result;
    expect(probe.seen.map((s) => s.length)).toEqual([1, 4, 6]);
    expect(probe.seen[1]?.at(-1)).toBe("assistant");
    expect(probe.seen[2]?.at(-1)).toBe("assistant");
    await session.close();
  });

  it("built-in tools: only reads (and the session's own todo list) are free of side effects", () => {
    const tools = createBuiltinRegistry().list();
    const free = tools.filter((t) => t.sideEffectFree === true).map((t) => t.name);
    expect(free.sort()).toEqual(
      [
        "ha_get_state",
        "ha_list_entities",
        "ha_list_services",
        "read_file",
        "search_files",
        "session_search",
        "skill_view",
        "skills_list",
        "todo",
        "vision_analyze",
        "web_extract",
        "web_search",
      ].sort(),
    );
    const acting = tools.filter((t) => !t.sideEffectFree && !t.sideEffectFreeCall).map((t) => t.name);
    for (const name of [
      "terminal",
      "process",
      "write_file",
      "patch",
      "execute_code",
      "delegate_task",
      "clarify",
    ])
      expect(acting).toContain(name);
    expect(acting.filter((n) => n.startsWith("browser_"))).not.toEqual([]);
    expect(tools.filter((t) => t.sideEffectFreeCall).map((t) => t.name)).toEqual(["memory"]);
  });

  it("memory: only a plain read is free of side effects", () => {
    const free = (args: Record<string, unknown>) =>
      memoryTool.sideEffectFreeCall?.(
        args as Parameters<NonNullable<typeof memoryTool.sideEffectFreeCall>>[0],
      );
    expect(free({ action: "read" })).toBe(true);
    expect(free({ action: "add", content: "x" })).toBe(false);
    expect(free({ action: "read", operations: [{ action: "add", content: "x" }] })).toBe(false);
    expect(free({ operations: [{ action: "add", content: "x" }] })).toBe(false);
    expect(memoryTool.sideEffectFree).toBeUndefined();
  });
});

describe("an interrupt while a side-effect-free call runs", () => {
  it("stores the reply with an interrupted result, as the loop reports it, and resumes cleanly", async () => {
    const env = setup();
    let session: Awaited<ReturnType<typeof open>> | undefined;
    const probe = probes(env, {
      onLook: (signal) =>
        new Promise<void>((resolve) => {
          signal.addEventListener("abort", () => resolve(), { once: true });
          session?.interrupt();
        }),
    });
    const call = callTools(["look", { n: 1 }]);
    const transport = new ScriptedTransport([call, say("carrying on")]);
    session = await open(env, transport, probe);
    const result = await session.run("look").result;
    expect(result.reason).toBe("interrupted");
    expect(probe.seen).toEqual([["user"]]);
    // What is stored is what the agent holds in memory, with nothing left unanswered.
    const stored = env.db.conversation(session.id);
    const inMemory = session.agent.messages.filter((m: Message) => m.role !== "system");
    expect(stored).toEqual(inMemory);
    expect(stored.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    expect(stored[2]?.tool_call_id).toBe(call.tool_calls?.[0]?.id);
    await session.close();

    const warnings: string[] = [];
    const resumed = await ChatSession.open({
      transport,
      cwd: env.cwd,
      home: env.home,
      env: {},
      // Tool names stand for themselves as toolsets.
      toolsets: ["look", "act", "judge"],
      registry: probe.registry,
      store: env.store,
      continueLast: true,
      onWarning: (m) => warnings.push(m),
    });
    expect(warnings).toEqual([]);
    await resumed.run("go on").result;
    expect((transport.requests.at(-1) as ChatRequest).messages.slice(1).map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "user",
    ]);
    expect(env.db.conversation(resumed.id).some((m) => m.content === INTERRUPTED_TOOL_RESULT)).toBe(false);
    await resumed.close();
  });
});

describe("several conversations sharing group commits (the gateway, the API server)", () => {
  it("each keeps its order: reads committed with their results, an act's call on disk before it runs", async () => {
    const env = setup();
    // A recording store collecting writes of concurrent sessions into group commits.
    const shared = openRecordingStore(env.home, {
      notify: () => undefined,
      open: { durability: "normal" },
      collectWindowMs: 60_000,
    });
    try {
      const run = async () => {
        const probe = probes(env);
        const look = callTools(["look", { n: 1 }]);
        const act = callTools(["act", { n: 2 }]);
        const transport = new ScriptedTransport([look, act, say("done")]);
        const session = await open(env, transport, probe, shared);
        await session.run("look, then act").result;
        return { session, probe, look, act };
      };
      const both = await Promise.all([run(), run()]);
      expect(shared.collectedWrites).toBe(0);
      for (const { session, probe, look, act } of both) {
        const lookId = `tool:${look.tool_calls?.[0]?.id}`;
        expect(probe.seen).toEqual([["user"], ["user", "assistant", lookId, "assistant"]]);
        expect(shape(env, session.id)).toEqual([
          "user",
          "assistant",
          lookId,
          "assistant",
          `tool:${act.tool_calls?.[0]?.id}`,
          "assistant",
        ]);
        await session.close();
      }
    } finally {
      await shared.close();
    }
  });
});
