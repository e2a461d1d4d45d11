import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { ChatSession } from "../../../src/agent/chat-session.js";
import { INTERRUPTED_MARKER, INTERRUPTED_TOOL_RESULT } from "../../../src/ai/history-repair.js";
import type { ChatRequest, Message } from "../../../src/ai/types.js";
import type { SessionStore, SyncSessionStore } from "../../../src/state/types.js";
import { ToolRegistry } from "../../../src/tools/registry.js";
import { defineTool } from "../../../src/tools/types.js";
import { callTools, ScriptedTransport, say } from "../../support/scripted-transport.js";
import { useSessionEnvs } from "../../support/session-env.js";

const setup = useSessionEnvs("hermes-crash-resume-");

function open(
  transport: ScriptedTransport,
  env: { store: SessionStore; cwd: string; home: string },
  extra: Partial<Parameters<typeof ChatSession.open>[0]> = {},
) {
  return ChatSession.open({
    transport,
    cwd: env.cwd,
    home: env.home,
    env: {},
    toolsets: ["todo"],
    store: env.store,
    ...extra,
  });
}

const lastRequest = (t: ScriptedTransport): Message[] => (t.requests.at(-1) as ChatRequest).messages;

describe("an answer interrupted while it streams (Ctrl+C, /stop, a gateway interrupt)", () => {
  it("is stored with the text so far, marked, and the next request sends it back marked", async () => {
    const env = setup();
    const transport = new ScriptedTransport([
      say("Step one: back up the database. Step two: run the migration. Step three: ..."),
      say("Picking up from step one."),
    ]);
    const session = await open(transport, env);
    // The user presses Ctrl+C as soon as the first words appear.
    const off = session.agent.on((event) => {
      if (event.type === "text_delta") session.interrupt();
    });
    const result = await session.run("how do I migrate?").result;
    off();
    expect(result.reason).toBe("interrupted");

    const stored = env.db.getMessages(session.id);
    const partial = stored.at(-1);
    expect(partial).toMatchObject({ role: "assistant", finishReason: "aborted" });
    expect(partial?.content).toBe(`Step one\n\n${INTERRUPTED_MARKER}`);

    await session.run("go on").result;
    const sent = lastRequest(transport).slice(1);
    expect(sent).toEqual([
      { role: "user", content: "how do I migrate?" },
      { role: "assistant", content: `Step one\n\n${INTERRUPTED_MARKER}`, finish_reason: "aborted" },
      { role: "user", content: "go on" },
    ]);
    await session.close();

    // Resumed later, the same marked answer goes out once, not marked twice.
    const later = new ScriptedTransport([say("ok")]);
    const resumed = await open(later, env, { continueLast: true });
    await resumed.run("and then?").result;
    const replay = JSON.stringify(lastRequest(later));
    expect(replay.split(INTERRUPTED_MARKER)).toHaveLength(2);
    await resumed.close();
  });
});

describe("resuming a session that was killed during a tool call", () => {
  /** The store as a `kill -9` during the second of two parallel calls leaves it. */
  function crashedSession(env: { db: SyncSessionStore }): string {
    const id = "20260101_120000_abcdef";
    env.db.createSession({ id, source: "cli", systemPrompt: "PROMPT" });
    env.db.appendMessages(id, [
      { role: "user", content: "check both servers" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "call_a",
            type: "function",
            function: { name: "terminal", arguments: '{"command":"ping a"}' },
          },
          {
            id: "call_b",
            type: "function",
            function: { name: "terminal", arguments: '{"command":"ping b"}' },
          },
        ],
      },
      { role: "tool", tool_call_id: "call_a", name: "terminal", content: "a is up" },
    ]);
    return id;
  }

  it("answers the unfinished call once, on disk, tells the user, and the next request is valid", async () => {
    const env = setup();
    const id = crashedSession(env);
    const warnings: string[] = [];
    const transport = new ScriptedTransport([say("a is up; b never answered, so I will check it again.")]);
    const session = await open(transport, env, {
      continueLast: true,
      onWarning: (m) => warnings.push(m),
    });
    expect(session.id).toBe(id);
    expect(warnings).toEqual([
      "This session was interrupted before: 1 tool call never returned (the model is told it was interrupted).",
    ]);
    // Written once: the transcript shows the stand-in right after the real result.
    expect(env.db.conversation(id).slice(2)).toEqual([
      { role: "tool", tool_call_id: "call_a", name: "terminal", content: "a is up" },
      { role: "tool", tool_call_id: "call_b", name: "terminal", content: INTERRUPTED_TOOL_RESULT },
    ]);
    await session.run("what happened?").result;
    const sent = lastRequest(transport).slice(1);
    expect(sent.map((m) => m.role)).toEqual(["user", "assistant", "tool", "tool", "user"]);
    expect(sent[3]?.content).toContain("may or may not have taken effect");
    await session.close();

    // A second resume finds nothing to repair and says nothing.
    const again: string[] = [];
    const second = await open(new ScriptedTransport([]), env, {
      resume: id,
      onWarning: (m) => again.push(m),
    });
    expect(again).toEqual([]);
    expect(env.db.conversation(id).filter((m) => m.role === "tool")).toHaveLength(2);
    await second.close();
  });
});

describe("each message is on disk before the next step runs", () => {
  it("the call is stored before its tool runs, and each result before the next tool starts", async () => {
    const env = setup();
    const seen: string[][] = [];
    let sessionId = "";
    const registry = new ToolRegistry();
    registry.register(
      defineTool({
        name: "probe",
        toolset: "probe",
        description: "Records what is stored when it runs.",
        parameters: Type.Object({ n: Type.Number() }),
        // Not parallel-safe: the two calls run one after the other.
        handler: async ({ n }) => {
          seen.push(
            env.db
              .conversation(sessionId)
              .map((m) => `${m.role}${m.tool_call_id ? `:${m.tool_call_id}` : ""}`),
          );
          return { n };
        },
      }),
    );
    const call = callTools(["probe", { n: 1 }], ["probe", { n: 2 }]);
    const [first, second] = call.tool_calls ?? [];
    const transport = new ScriptedTransport([call, say("both ran")]);
    const session = await open(transport, env, { registry, toolsets: ["probe"] });
    sessionId = session.id;
    await session.run("probe twice").result;
    expect(seen).toEqual([
      ["user", "assistant"],
      ["user", "assistant", `tool:${first?.id}`],
    ]);
    expect(second).toBeDefined();
    await session.close();
  });
});
