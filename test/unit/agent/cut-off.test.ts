import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../../src/agent/events.js";
import { type LoopDeps, runLoop } from "../../../src/agent/loop.js";
import { INTERRUPTED_MARKER } from "../../../src/ai/history-repair.js";
import { type ChatRequest, type Message, ProviderError, type StreamEvent } from "../../../src/ai/types.js";
import { ToolRegistry } from "../../../src/tools/registry.js";
import { defineTool } from "../../../src/tools/types.js";
import { callTools, ScriptedTransport, say } from "../../support/scripted-transport.js";
import { makeToolContext } from "../../support/tool-context.js";

/** A loop whose only tools record what they were asked to do. */
function setup(transport: { stream: LoopDeps["transport"]["stream"]; apiMode?: "chat_completions" }) {
  const registry = new ToolRegistry();
  const ran: Array<{ name: string; args: Record<string, unknown> }> = [];
  for (const name of ["write_file", "terminal"]) {
    registry.register(
      defineTool({
        name,
        toolset: "test",
        description: name,
        parameters: Type.Object({}, { additionalProperties: true }),
        handler(args) {
          ran.push({ name, args });
          return "done";
        },
      }),
    );
  }
  const events: AgentEvent[] = [];
  const ctx = makeToolContext();
  const deps: LoopDeps = {
    transport: { apiMode: "chat_completions", stream: transport.stream.bind(transport) },
    model: "test-model",
    tools: registry.schemas(registry.names()),
    systemPrompt: "SYSTEM",
    maxIterations: 10,
    retry: { maxRetries: 2, baseMs: 1, capMs: 5 },
    traits: () => ({ parallelSafe: false, interactive: false }),
    executeTool: (call, signal) => registry.execute(call.name, call.args, { ...ctx, signal }),
    unknownToolMisses: { count: 0 },
    emit: (e) => events.push(e),
  };
  return { deps, events, ran };
}

const user = (text: string): Message => ({ role: "user", content: text });
const warnings = (events: AgentEvent[]) => events.flatMap((e) => (e.type === "warning" ? [e.message] : []));
const toolText = (request: ChatRequest | undefined) =>
  (request?.messages ?? []).filter((m) => m.role === "tool").map((m) => String(m.content));

describe("tool calls cut off by the output limit or mid-arguments are not run", () => {
  it("finish length: the cut-off write_file never runs, the model is told, the loop continues", async () => {
    const cut = {
      ...callTools(["write_file", '{"path": "a.txt", "content": "abc']),
      finish_reason: "length" as const,
    };
    const transport = new ScriptedTransport([cut, say("I will write it in parts.")]);
    const { deps, events, ran } = setup(transport);
    const messages = [user("write a big file")];
    const result = await runLoop(messages, deps, new AbortController().signal);

    expect(ran).toEqual([]);
    expect(result).toMatchObject({ reason: "completed", text: "I will write it in parts." });
    const told = toolText(transport.requests[1]);
    expect(told).toHaveLength(1);
    expect(told[0]).toMatch(/Not run: your response hit the output token limit/);
    expect(told[0]).toMatch(/Nothing was executed or written/);
    expect(told[0]).toMatch(/write a large file in parts/);
    expect(warnings(events).some((w) => /output token limit.*1 tool call was not run/.test(w))).toBe(true);
    // The stored call is valid JSON (strict providers reject anything else on replay).
    const stored = messages.find((m) => m.tool_calls)?.tool_calls?.[0]?.function.arguments ?? "";
    expect(JSON.parse(stored)).toEqual({ path: "a.txt", content: "abc" });
  });

  it("finish length: even calls whose JSON looks whole are not run, each gets its own answer", async () => {
    const cut = {
      ...callTools(["terminal", { command: "rm -rf build" }], ["terminal", '{"command": "make && make inst']),
      finish_reason: "length" as const,
    };
    const transport = new ScriptedTransport([cut, say("ok")]);
    const { deps, ran } = setup(transport);
    await runLoop([user("go")], deps, new AbortController().signal);
    expect(ran).toEqual([]);
    const told = toolText(transport.requests[1]);
    expect(told).toHaveLength(2);
    for (const text of told) expect(text).toMatch(/Not run/);
  });

  it("an unterminated string with a normal finish is cut off; a finished sibling call runs", async () => {
    const transport = new ScriptedTransport([
      callTools(["terminal", { command: "ls" }], ["terminal", '{"command": "git clone ht']),
      say("retrying"),
    ]);
    const { deps, ran, events } = setup(transport);
    await runLoop([user("go")], deps, new AbortController().signal);
    expect(ran).toEqual([{ name: "terminal", args: { command: "ls" } }]);
    const told = toolText(transport.requests[1]);
    expect(told[0]).toBe("done");
    expect(told[1]).toMatch(/end in the middle of a value .*unterminated string or bracket/);
    expect(warnings(events).some((w) => /cut off mid-arguments/.test(w))).toBe(true);
  });

  it("an unclosed brace alone (the model stopped before `}`) also counts as cut off", async () => {
    const transport = new ScriptedTransport([callTools(["terminal", '{"command": "ls"']), say("ok")]);
    const { deps, ran } = setup(transport);
    await runLoop([user("go")], deps, new AbortController().signal);
    expect(ran).toEqual([]);
  });

  it.each([
    ["trailing comma", '{"command": "ls",}'],
    ["code fence", '```json\n{"command": "ls"}\n```'],
    ["raw newline inside the string", '{"command": "echo a\necho b"}'],
    ["excess closer", '{"command": "ls"}}'],
  ])("harmless repair (%s) still runs", async (_name, raw) => {
    const transport = new ScriptedTransport([callTools(["terminal", raw]), say("ok")]);
    const { deps, ran } = setup(transport);
    await runLoop([user("go")], deps, new AbortController().signal);
    expect(ran).toHaveLength(1);
  });
});

describe("a model call whose stream fails part-way", () => {
  /** First attempt streams a fragment then stalls; the second answers in full. */
  function stallThenAnswer(final: string) {
    let attempt = 0;
    const requests: ChatRequest[] = [];
    return {
      requests,
      async *stream(request: ChatRequest): AsyncIterable<StreamEvent> {
        requests.push(request);
        attempt++;
        if (attempt === 1) {
          yield { type: "text_delta", text: "The first half of an ans" };
          throw new ProviderError("The stream stalled: no data for 0.1 s mid-answer.", {
            transport: true,
            partial: true,
            stalled: true,
          });
        }
        yield { type: "text_delta", text: final };
        yield { type: "finish", reason: "stop", message: { role: "assistant", content: final } };
      },
    };
  }

  it("is retried; the fragment is discarded, not kept as the answer", async () => {
    const transport = stallThenAnswer("The whole answer.");
    const { deps, events } = setup(transport);
    const messages = [user("explain")];
    const result = await runLoop(messages, deps, new AbortController().signal);
    expect(result).toMatchObject({ reason: "completed", text: "The whole answer." });
    expect(transport.requests).toHaveLength(2);
    const discarded = events.filter((e) => e.type === "stream_discarded");
    expect(discarded).toEqual([
      expect.objectContaining({ text: "The first half of an ans", reason: expect.stringMatching(/stalled/) }),
    ]);
    // Only the complete answer is in the conversation.
    expect(messages.filter((m) => m.role === "assistant").map((m) => m.content)).toEqual([
      "The whole answer.",
    ]);
  });

  it("when every attempt stalls the turn fails: the partial answer is kept only marked as cut off", async () => {
    const stalls = {
      async *stream(): AsyncIterable<StreamEvent> {
        yield { type: "text_delta", text: "partial" };
        throw new ProviderError("stalled", { transport: true, partial: true, stalled: true });
      },
    };
    const { deps, events } = setup(stalls);
    const messages = [user("explain")];
    const result = await runLoop(messages, deps, new AbortController().signal);
    expect(result.reason).toBe("error");
    expect(result.text).toBe("");
    // The last attempt's text is in the conversation only with the interrupted marker, so the
    // next request shows the model where it broke off; it is never the turn's answer.
    expect(messages.filter((m) => m.role === "assistant")).toEqual([
      { role: "assistant", content: `partial\n\n${INTERRUPTED_MARKER}`, finish_reason: "error" },
    ]);
    expect(events.filter((e) => e.type === "stream_discarded")).toHaveLength(3);
  });
});
