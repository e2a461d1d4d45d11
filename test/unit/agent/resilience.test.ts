import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Type } from "@sinclair/typebox";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AIAgent } from "../../../src/agent/agent.js";
import type { AgentEvent } from "../../../src/agent/events.js";
import type { Message } from "../../../src/ai/types.js";
import { defaultConfig, type HermesConfig } from "../../../src/config/defaults.js";
import { ToolRegistry } from "../../../src/tools/registry.js";
import { defineTool } from "../../../src/tools/types.js";
import { type FakeLlm, hang, reply, stallMidStream, startFakeLlm } from "../../support/fake-llm.js";
import { callTools, ScriptedTransport, say } from "../../support/scripted-transport.js";

let llm: FakeLlm;
beforeAll(async () => {
  llm = await startFakeLlm();
});
afterAll(async () => {
  await llm.close();
});
beforeEach(() => {
  llm.requests.length = 0;
  llm.chatRequests.length = 0;
});

function home(): string {
  return mkdtempSync(join(tmpdir(), "hermes-resilience-"));
}

function collect(agent: AIAgent): AgentEvent[] {
  const events: AgentEvent[] = [];
  agent.on((e) => events.push(e));
  return events;
}

const warnings = (events: AgentEvent[]) => events.flatMap((e) => (e.type === "warning" ? [e.message] : []));

function configAt(url: string, provider = "custom"): HermesConfig {
  const config = defaultConfig();
  config.model = { ...config.model, provider, base_url: url, default: "test-model" };
  config.agent.api_max_retries = 0;
  return config;
}

describe("a stream that stalls", () => {
  it("mid-answer: is cut after agent.stream_stall_timeout and retried; the fragment is discarded", async () => {
    const config = configAt(llm.url);
    config.agent.stream_stall_timeout = 0.3;
    config.agent.api_max_retries = 1;
    const dir = home();
    const agent = new AIAgent({
      config,
      home: dir,
      cwd: dir,
      env: {},
      toolsets: [],
      systemPrompt: "t",
      retry: { baseMs: 1, capMs: 5 },
    });
    const events = collect(agent);
    llm.enqueue(stallMidStream(3, reply().text("The first part of a long answer, and then more.")));
    llm.enqueue(reply().text("The whole answer."));
    const result = await agent.run("explain").result;
    expect(result).toMatchObject({ reason: "completed", text: "The whole answer." });
    expect(llm.chatRequests).toHaveLength(2);
    const discarded = events.flatMap((e) => (e.type === "stream_discarded" ? [e] : []));
    expect(discarded).toHaveLength(1);
    expect(discarded[0]?.text.length).toBeGreaterThan(0);
    expect(discarded[0]?.reason).toMatch(/stalled: no data for 0.3 s mid-answer/);
    // A stalled fragment is never kept as the answer.
    expect(agent.messages.filter((m) => m.role === "assistant").map((m) => m.content)).toEqual([
      "The whole answer.",
    ]);
    await agent.close();
  });

  it("before the headers: a server that never answers is cut within the stall window", async () => {
    const config = configAt(llm.url);
    config.agent.stream_stall_timeout = 0.3;
    const dir = home();
    const agent = new AIAgent({ config, home: dir, cwd: dir, env: {}, toolsets: [], systemPrompt: "t" });
    const events = collect(agent);
    llm.enqueue(hang());
    const started = Date.now();
    const result = await agent.run("explain").result;
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result.reason).toBe("error");
    expect(result.error).toMatch(/sent no response headers within 0.3 s.*agent.stream_stall_timeout/);
    expect(events.some((e) => e.type === "error")).toBe(true);
    await agent.close();
  });
});

describe("OpenRouter provider routing", () => {
  it("sends provider_routing as OpenRouter's provider object, and only to OpenRouter", async () => {
    const routing = {
      sort: "price",
      only: ["anthropic", "google"],
      ignore: [],
      order: "",
      data_collection: "deny",
    };
    const config = configAt(llm.url, "openrouter");
    config["provider_routing"] = routing;
    const dir = home();
    llm.enqueue(reply().text("routed"));
    const agent = new AIAgent({
      config,
      home: dir,
      cwd: dir,
      env: { OPENROUTER_API_KEY: "sk-or-test-000000000000" },
      toolsets: [],
      systemPrompt: "t",
    });
    expect(await agent.chat("hi")).toBe("routed");
    expect((llm.chatRequests[0]?.body as Record<string, unknown> | undefined)?.["provider"]).toEqual({
      sort: "price",
      only: ["anthropic", "google"],
      data_collection: "deny",
    });
    await agent.close();

    const plain = configAt(llm.url, "custom");
    plain["provider_routing"] = routing;
    llm.enqueue(reply().text("plain"));
    const other = new AIAgent({
      config: plain,
      home: dir,
      cwd: dir,
      env: {},
      toolsets: [],
      systemPrompt: "t",
    });
    expect(await other.chat("hi")).toBe("plain");
    expect((llm.chatRequests[1]?.body as Record<string, unknown> | undefined)?.["provider"]).toBeUndefined();
    await other.close();
  });
});

describe("prompt caching through OpenRouter", () => {
  type Wire = { role: string; content: unknown };
  const marked = (m: Wire) =>
    Array.isArray(m.content) &&
    (m.content as Array<{ cache_control?: unknown }>).some((p) => p.cache_control);

  it("marks the system prompt and the last three messages of Claude requests, with the configured TTL", async () => {
    const config = configAt(llm.url, "openrouter");
    config.model.default = "anthropic/claude-sonnet-4";
    config.prompt_caching.cache_ttl = "1h";
    const dir = home();
    const history: Message[] = [];
    for (let i = 0; i < 4; i++) {
      history.push({ role: "user", content: `q${i}` }, { role: "assistant", content: `a${i}` });
    }
    llm.enqueue(reply().text("cached"));
    const agent = new AIAgent({
      config,
      home: dir,
      cwd: dir,
      env: { OPENROUTER_API_KEY: "sk-or-test-000000000000" },
      toolsets: [],
      systemPrompt: "stable system prompt",
      messages: history,
    });
    await agent.chat("q4");
    const messages = (llm.chatRequests[0]!.body as { messages: Wire[] }).messages;
    const flags = messages.map(marked);
    expect(flags[0]).toBe(true);
    expect(flags.slice(1)).toEqual([false, false, false, false, false, false, true, true, true]);
    expect(JSON.stringify(messages[0])).toContain('"cache_control":{"type":"ephemeral","ttl":"1h"}');
    await agent.close();

    // Other models on OpenRouter get plain string content.
    config.model.default = "openai/gpt-4o";
    llm.enqueue(reply().text("plain"));
    const other = new AIAgent({
      config,
      home: dir,
      cwd: dir,
      env: { OPENROUTER_API_KEY: "sk-or-test-000000000000" },
      toolsets: [],
      systemPrompt: "t",
    });
    await other.chat("hi");
    const plain = (llm.chatRequests[1]!.body as { messages: Wire[] }).messages;
    expect(plain.some(marked)).toBe(false);
    await other.close();
  });
});

describe("bad unicode", () => {
  it("replaces lone surrogates before the request leaves, keeping the rest of the text", async () => {
    const transport = new ScriptedTransport([say("ok")]);
    const agent = new AIAgent({ transport, env: {}, toolsets: [], systemPrompt: "sys \ud83d" });
    await agent.chat("half an emoji: \ud83d and a whole one: 😀");
    const sent = transport.requests[0]?.messages ?? [];
    expect(sent[0]?.content).toBe("sys \ufffd");
    expect(sent.at(-1)?.content).toBe("half an emoji: \ufffd and a whole one: 😀");
    await agent.close();
  });
});

function scriptTool(): ToolRegistry {
  const registry = new ToolRegistry();
  registry.register(
    defineTool({
      name: "execute_code",
      toolset: "code_execution",
      description: "Runs a script.",
      parameters: Type.Object({ code: Type.String() }),
      handler: async () => ({ status: "success", output: "done" }),
    }),
  );
  return registry;
}

describe("execute_code iterations", () => {
  it("a model call that only ran execute_code does not count against the budget", async () => {
    const transport = new ScriptedTransport([
      callTools(["execute_code", { code: "1" }]),
      callTools(["execute_code", { code: "2" }]),
      callTools(["execute_code", { code: "3" }]),
      say("finished"),
    ]);
    const agent = new AIAgent({
      transport,
      registry: scriptTool(),
      toolsets: ["code_execution"],
      env: {},
      maxTurns: 2,
      systemPrompt: "t",
    });
    const events = collect(agent);
    const result = await agent.run("go").result;
    expect(result.reason).toBe("completed");
    expect(result.text).toBe("finished");
    expect(warnings(events).some((w) => /budget/i.test(w))).toBe(false);
    await agent.close();
  });
});

/** Ten earlier exchanges of about 300 tokens each. */
function earlier(): Message[] {
  const out: Message[] = [];
  for (let i = 0; i < 10; i++) {
    out.push({ role: "user", content: `Question ${i}: ${"details ".repeat(150)}` });
    out.push({ role: "assistant", content: `Answer ${i}: ${"findings ".repeat(150)}` });
  }
  return out;
}

describe("compression in the middle of a turn", () => {
  it("compresses between tool calls once the context passes the threshold", async () => {
    const config = defaultConfig();
    config.model.context_length = 20_000;
    config.agent.api_max_retries = 0;
    const transport = new ScriptedTransport([
      callTools(["execute_code", { code: "big" }]),
      say("## Active task\nFinish the job.\n## Done\nAnswered questions 0-9."),
      say("all done"),
    ]);
    // The first call reports a prompt past half the window.
    transport.usage = { inputTokens: 12_000, outputTokens: 10 };
    const dir = home();
    const agent = new AIAgent({
      transport,
      config,
      home: dir,
      cwd: dir,
      env: {},
      registry: scriptTool(),
      toolsets: ["code_execution"],
      messages: earlier(),
      systemPrompt: "t",
    });
    const events = collect(agent);
    const result = await agent.run("Finish the job").result;
    expect(result.text).toBe("all done");
    const kinds = events.map((e) => e.type);
    // The compression came after the tool result and before the next model call.
    const compression = kinds.indexOf("compression");
    expect(compression).toBeGreaterThan(kinds.indexOf("tool_end"));
    expect(compression).toBeLessThan(kinds.lastIndexOf("turn_start"));
    const last = transport.requests.at(-1)?.messages ?? [];
    expect(JSON.stringify(last)).toContain("Answered questions 0-9.");
    // The turn's own messages survive: the user's request, the call and its result.
    expect(JSON.stringify(last)).toContain("Finish the job");
    expect(last.some((m) => m.role === "tool")).toBe(true);
    await agent.close();
  });

  it("an overflow on a request smaller than the assumed window learns a smaller window", async () => {
    const config = configAt(llm.url);
    const dir = home();
    llm.enqueue(
      {
        spec: {
          kind: "http_error",
          status: 400,
          body: JSON.stringify({
            error: {
              message: "This model's maximum context length is 16384 tokens.",
              code: "context_length_exceeded",
            },
          }),
          headers: {},
        },
        delayMs: 0,
      },
      reply().text("## Active task\nQuestion 10.\n## Done\nAnswered 0-9."),
      reply().text("answer"),
    );
    const agent = new AIAgent({
      config,
      home: dir,
      cwd: dir,
      env: {},
      toolsets: [],
      messages: earlier(),
      systemPrompt: "t",
    });
    const events = collect(agent);
    expect(await agent.chat("Question 10?")).toBe("answer");
    expect(warnings(events).some((w) => /planning with 16384 tokens/.test(w))).toBe(true);
    const { readFileSync } = await import("node:fs");
    expect(readFileSync(join(dir, "context_length_cache.yaml"), "utf8")).toContain("16384");
    await agent.close();
  });
});
