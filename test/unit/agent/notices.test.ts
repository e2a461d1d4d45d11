import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { AIAgent } from "../../../src/agent/agent.js";
import { NOTICES_HEADER, NoticeQueue } from "../../../src/agent/notices.js";
import { messageText } from "../../../src/ai/types.js";
import { ToolRegistry } from "../../../src/tools/registry.js";
import { type AgentNotice, defineTool } from "../../../src/tools/types.js";
import { callTools, ScriptedTransport, say } from "../../support/scripted-transport.js";
import { makeToolContext } from "../../support/tool-context.js";

const notice = (id: string, text: string, wake = true): AgentNotice => ({
  source: "process",
  id,
  text,
  wake,
});

describe("NoticeQueue", () => {
  it("collapses notices per producer, keeping the latest and counting the others", () => {
    const q = new NoticeQueue();
    q.push(notice("proc_a", "matched once"));
    q.push(notice("proc_b", "exited 0"));
    q.push(notice("proc_a", "exited 1"));
    const block = q.take() ?? "";
    expect(block.split("\n")[0]).toBe(NOTICES_HEADER);
    expect(block).not.toContain("matched once");
    expect(block).toContain("- process proc_a (latest of 2 notices about it): exited 1");
    // The order follows the latest news.
    expect(block.indexOf("proc_b")).toBeLessThan(block.indexOf("proc_a"));
    expect(q.take()).toBeUndefined();
  });

  it("withdraws a waiting notice on retract, and ignores empty ones", () => {
    const q = new NoticeQueue();
    q.push(notice("proc_a", "exited 0"));
    q.push({ source: "process", id: "proc_a", text: "", retract: true });
    q.push(notice("proc_b", "   "));
    expect(q.size).toBe(0);
    expect(q.wakePending).toBe(false);
    expect(q.take()).toBeUndefined();
  });

  it("calls wake listeners for wake notices only, and a throwing listener loses nothing", () => {
    const q = new NoticeQueue();
    const woke: string[] = [];
    q.onWake(() => {
      throw new Error("surface broke");
    });
    const off = q.onWake((n) => woke.push(n.id));
    q.push(notice("quiet", "fyi", false));
    q.push(notice("loud", "ended"));
    expect(woke).toEqual(["loud"]);
    expect(q.peekWake()?.id).toBe("loud");
    off();
    q.push(notice("later", "ended"));
    expect(woke).toEqual(["loud"]);
    expect(q.take()).toContain("fyi");
  });

  it("bounds the queue: a flood of producers keeps the newest and says how many were dropped", () => {
    const q = new NoticeQueue(3);
    for (let i = 0; i < 10_000; i++) q.push(notice(`proc_${i}`, `exited ${i}`));
    const block = q.take() ?? "";
    expect(block.split("\n")).toHaveLength(1 + 3 + 1);
    expect(block).toContain("proc_9999");
    expect(block).toContain("9997 older notices were dropped");
  });

  it("cuts a huge notice", () => {
    const q = new NoticeQueue();
    q.push(notice("proc_a", "x".repeat(100_000)));
    expect((q.take() ?? "").length).toBeLessThan(5000);
  });
});

/** A tool that queues a notice through ctx.notify when called. */
function notifierRegistry(text: string): ToolRegistry {
  const registry = new ToolRegistry();
  registry.register(
    defineTool({
      name: "later",
      toolset: "test",
      description: "queues a notice",
      parameters: Type.Object({}),
      handler: (_args, ctx) => {
        if (!ctx.notify) throw new Error("no notify in the tool context");
        ctx.notify({ source: "process", id: "proc_t", text, wake: true });
        return "queued";
      },
    }),
  );
  return registry;
}

describe("AIAgent notices", () => {
  it("gives queued notices to the model at the start of its next turn, labelled, before the user's words", async () => {
    const transport = new ScriptedTransport([callTools(["later", {}]), say("ok"), say("noted")]);
    const agent = new AIAgent({
      transport,
      cwd: makeToolContext().cwd,
      registry: notifierRegistry("Background process proc_t exited with code 0."),
      toolsets: ["later"],
    });
    await agent.chat("start it");
    await agent.chat("what now?");
    const lastUser = transport.requests[2]?.messages.filter((m) => m.role === "user").at(-1);
    const text = messageText(lastUser ?? { content: "" });
    expect(text.startsWith(NOTICES_HEADER)).toBe(true);
    expect(text).toContain("proc_t: Background process proc_t exited with code 0.");
    expect(text.endsWith("what now?")).toBe(true);
    // Stored as sent: the notice is in the history, so a resume keeps it.
    expect(agent.messages.filter((m) => m.role === "user").at(-1)?.content).toBe(text);
    await agent.close();
  });

  it("wake() runs a turn whose message is the notices alone; nothing queued, no turn", async () => {
    const transport = new ScriptedTransport([callTools(["later", {}]), say("ok"), say("I saw it end")]);
    const agent = new AIAgent({
      transport,
      cwd: makeToolContext().cwd,
      registry: notifierRegistry("ended"),
      toolsets: ["later"],
    });
    expect(agent.wake()).toBeUndefined();
    await agent.chat("start");
    const run = agent.wake();
    expect(run).toBeDefined();
    expect((await run?.result)?.text).toBe("I saw it end");
    const sent = transport.requests[2]?.messages.at(-1);
    expect(sent?.role).toBe("user");
    expect(messageText(sent ?? { content: "" })).toBe(`${NOTICES_HEADER}\n- process proc_t: ended`);
    expect(agent.wake()).toBeUndefined();
    await agent.close();
  });

  it("redacts secrets in notices like tool results", async () => {
    const secret = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD";
    const transport = new ScriptedTransport([callTools(["later", {}]), say("ok"), say("fine")]);
    const agent = new AIAgent({
      transport,
      cwd: makeToolContext().cwd,
      registry: notifierRegistry(`OPENAI_API_KEY=${secret}`),
      toolsets: ["later"],
    });
    await agent.chat("start");
    await agent.wake()?.result;
    const all = JSON.stringify(transport.requests.at(-1)?.messages);
    expect(all).not.toContain(secret);
    await agent.close();
  });

  it("keeps notices queued when the turn cannot start (no provider), and delivers them on the next", async () => {
    const queue = new NoticeQueue();
    queue.push(notice("proc_x", "exited 3"));
    const broken = new AIAgent({
      cwd: makeToolContext().cwd,
      notices: queue,
      toolsets: [],
      provider: "nope",
    });
    const failed = await broken.run("hi").result;
    expect(failed.reason).toBe("error");
    expect(queue.size).toBe(1);
    await broken.close();
    const transport = new ScriptedTransport([say("got it")]);
    const agent = new AIAgent({ transport, cwd: makeToolContext().cwd, notices: queue, toolsets: [] });
    await agent.chat("hi again");
    expect(messageText(transport.requests[0]?.messages.at(-1) ?? { content: "" })).toContain("exited 3");
    await agent.close();
  });
});
