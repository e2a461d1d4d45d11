import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Type } from "@sinclair/typebox";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AIAgent } from "../../../src/agent/agent.js";
import { createResponsesTransport } from "../../../src/ai/transports/codex-responses.js";
import { ToolRegistry } from "../../../src/tools/registry.js";
import { defineTool } from "../../../src/tools/types.js";
import { type FakeLlm, reply, startFakeLlm } from "../../support/fake-llm.js";
import { fakeEncryptedContent } from "../../support/fake-llm-responses.js";

let llm: FakeLlm;

beforeEach(async () => {
  llm = await startFakeLlm();
});

afterEach(async () => {
  await llm.close();
});

type Item = Record<string, unknown>;

function inputOf(index: number): Item[] {
  const body = llm.chatRequests[index]?.body as { input?: Item[] } | undefined;
  return body?.input ?? [];
}

describe("AIAgent over the Responses transport", () => {
  it("replays the function call, its output and the encrypted reasoning on the next request", async () => {
    const registry = new ToolRegistry();
    registry.register(
      defineTool({
        name: "lookup",
        toolset: "test",
        description: "Looks up a word",
        parameters: Type.Object({ word: Type.String() }),
        handler: (args) => ({ word: args.word, meaning: "a greeting" }),
      }),
    );
    const cwd = mkdtempSync(join(tmpdir(), "hermes-responses-"));
    llm.enqueue(
      reply()
        .reasoning("I should look the word up.")
        .toolCall("lookup", { word: "hello" }, "call_lookup_1")
        .usage({ prompt: 200, completion: 40, cached: 0, reasoning: 25 }),
      reply().text("It means a greeting.").usage({ prompt: 260, completion: 8, cached: 200 }),
      reply().text("You're welcome."),
    );
    const agent = new AIAgent({
      transport: createResponsesTransport({ baseUrl: llm.url }),
      registry,
      toolsets: ["lookup"],
      cwd,
      home: join(cwd, ".hermes"),
      systemPrompt: "You are a test assistant.",
    });
    expect(await agent.chat("What does hello mean?")).toBe("It means a greeting.");
    expect(await agent.chat("Thanks")).toBe("You're welcome.");

    const first = llm.chatRequests[0]?.body as Item;
    expect(first["instructions"]).toContain("You are a test assistant.");
    expect(first["tools"]).toEqual([
      expect.objectContaining({ type: "function", name: "lookup", strict: false }),
    ]);

    const reasoningReplay = {
      type: "reasoning",
      summary: [{ type: "summary_text", text: "I should look the word up." }],
      encrypted_content: fakeEncryptedContent("I should look the word up."),
    };
    const second = inputOf(1);
    expect(second.map((i) => i["type"])).toEqual([
      "message",
      "reasoning",
      "function_call",
      "function_call_output",
    ]);
    expect(second[1]).toEqual(reasoningReplay);
    expect(second[2]).toEqual({
      type: "function_call",
      call_id: "call_lookup_1",
      name: "lookup",
      arguments: JSON.stringify({ word: "hello" }),
    });
    expect(second[3]).toMatchObject({ type: "function_call_output", call_id: "call_lookup_1" });
    expect(JSON.parse(String(second[3]?.["output"]))).toEqual({ word: "hello", meaning: "a greeting" });

    // The next user turn still carries the whole history, reasoning included, in order.
    const third = inputOf(2);
    expect(third.map((i) => i["type"])).toEqual([
      "message",
      "reasoning",
      "function_call",
      "function_call_output",
      "message",
      "message",
    ]);
    expect(third[4]).toEqual({
      type: "message",
      role: "assistant",
      content: [{ type: "output_text", text: "It means a greeting." }],
    });
    expect(third[5]).toMatchObject({ role: "user", content: [{ type: "input_text", text: "Thanks" }] });

    const assistant = agent.messages.find((m) => m.role === "assistant");
    expect(assistant?.codex_reasoning_items).toEqual([{ id: "rs_fake_0", ...reasoningReplay }]);
    expect(assistant?.reasoning).toBe("I should look the word up.");
    expect(agent.usage).toMatchObject({
      inputTokens: 460,
      outputTokens: 48,
      cacheReadTokens: 200,
      reasoningTokens: 25,
    });
    await agent.close();
  });
});
