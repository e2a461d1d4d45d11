import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AIAgent } from "../../../src/agent/agent.js";
import type { AgentEvent } from "../../../src/agent/events.js";
import type { Message } from "../../../src/ai/types.js";
import { ProviderError } from "../../../src/ai/types.js";
import { defaultConfig } from "../../../src/config/defaults.js";
import { ScriptedTransport, say } from "../../support/scripted-transport.js";

/** A long earlier conversation: ten exchanges of about 300 tokens each. */
function earlier(): Message[] {
  const out: Message[] = [];
  for (let i = 0; i < 10; i++) {
    out.push({ role: "user", content: `Question ${i}: ${"details ".repeat(150)}` });
    out.push({ role: "assistant", content: `Answer ${i}: ${"findings ".repeat(150)}` });
  }
  return out;
}

function agent(transport: ScriptedTransport, contextLength = 4000) {
  const config = defaultConfig();
  config.model.context_length = contextLength;
  config.agent.api_max_retries = 0;
  const home = mkdtempSync(join(tmpdir(), "hermes-compress-"));
  const events: AgentEvent[] = [];
  const a = new AIAgent({ transport, config, home, cwd: home, toolsets: [], messages: earlier(), env: {} });
  a.on((e) => events.push(e));
  return { a, events };
}

const overflow = () =>
  new ProviderError("Provider HTTP 400", {
    status: 400,
    body: JSON.stringify({
      error: {
        message: "This model's maximum context length is 4096 tokens.",
        code: "context_length_exceeded",
      },
    }),
  });

describe("compression in the agent", () => {
  it("a context-overflow error compresses the middle with a summary and retries", async () => {
    const transport = new ScriptedTransport([
      overflow(),
      say("## Active task\nThe user asked question 9.\n## Done\nAnswered questions 0-8."),
      say("Here is the answer."),
    ]);
    const { a, events } = agent(transport);
    const result = await a.run("And finally?").result;
    expect(result.reason).toBe("completed");
    expect(result.text).toBe("Here is the answer.");
    // The retried request is smaller and carries the summary; the newest user message is intact.
    const retried = transport.requests[2]?.messages ?? [];
    expect(retried.length).toBeLessThan(transport.requests[0]?.messages.length ?? 0);
    expect(JSON.stringify(retried)).toContain("Answered questions 0-8.");
    expect(retried.at(-1)).toMatchObject({ role: "user", content: "And finally?" });
    expect(events.some((e) => e.type === "warning" && /Context compressed/.test(e.message))).toBe(true);
  });

  it("a failing summary keeps every turn and tells the user", async () => {
    const transport = new ScriptedTransport([
      overflow(),
      new Error("summary model down"),
      new Error("summary model down again"),
    ]);
    const { a, events } = agent(transport);
    const before = a.messages.length;
    const result = await a.run("And finally?").result;
    expect(result.reason).toBe("error");
    // Nothing was dropped: the earlier turns and the new question are all still there.
    expect(a.messages.length).toBe(before + 1);
    expect(events.some((e) => e.type === "warning" && /kept|unchanged|not/i.test(e.message))).toBe(true);
  });

  it("/compress compresses on demand with a focus topic", async () => {
    const transport = new ScriptedTransport([say("## Active task\nFocus on question 3.")]);
    const { a } = agent(transport);
    const report = await a.compress({ focus: "question 3" });
    expect(report.status).toBe("compressed");
    expect(report.tokensAfter).toBeLessThan(report.tokensBefore);
    expect(JSON.stringify(transport.requests[0]?.messages)).toContain("question 3");
  });
});

describe("compression and the session store", () => {
  it("continues in a child session with parent_session_id; the parent keeps every message", async () => {
    const { ChatSession } = await import("../../../src/agent/chat-session.js");
    const { openSessionStore } = await import("../../../src/state/sqlite-store.js");
    const home = mkdtempSync(join(tmpdir(), "hermes-compress-store-"));
    const store = openSessionStore(join(home, "state.db"));
    const config = defaultConfig();
    config.model.context_length = 4000;
    config.agent.api_max_retries = 0;
    const transport = new ScriptedTransport([
      ...Array.from({ length: 10 }, (_, i) => say(`Answer ${i}: ${"findings ".repeat(150)}`)),
      overflow(),
      say("## Active task\nQuestion 10.\n## Done\nAnswered 0-9."),
      say("Final answer."),
    ]);
    const session = await ChatSession.open({
      transport,
      config,
      home,
      cwd: home,
      env: {},
      toolsets: [],
      store,
    });
    for (let i = 0; i < 10; i++) await session.run(`Question ${i}: ${"details ".repeat(150)}`).result;
    const parentId = session.id;
    const result = await session.run("Question 10?").result;
    expect(result.text).toBe("Final answer.");
    const childId = session.id;
    expect(childId).not.toBe(parentId);
    const parent = store.engine.getSession(parentId);
    const child = store.engine.getSession(childId);
    expect(parent?.endReason).toBe("compression");
    expect(child?.parentSessionId).toBe(parentId);
    expect(child?.systemPrompt).toBe(parent?.systemPrompt);
    // The parent holds the whole uncompressed conversation; the child the summary onwards.
    expect(store.engine.conversation(parentId).length).toBeGreaterThanOrEqual(21);
    const childMessages = store.engine.conversation(childId);
    expect(JSON.stringify(childMessages)).toContain("Answered 0-9.");
    expect(childMessages.at(-1)).toMatchObject({ role: "assistant", content: "Final answer." });
    await session.close();
    store.close();
  });
});
