import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createChatCompletionsTransport } from "../../../src/ai/transports/chat-completions.js";
import { ProviderError } from "../../../src/ai/types.js";
import { type FakeLlm, hang, reply, startFakeLlm } from "../../support/fake-llm.js";

let llm: FakeLlm;

beforeEach(async () => {
  llm = await startFakeLlm({ models: ["m-a", "m-b"] });
});

afterEach(async () => {
  await llm.close();
});

describe("fake LLM server", () => {
  it("answers 500 with a clear message when no reply is scripted", async () => {
    const transport = createChatCompletionsTransport({ baseUrl: llm.url });
    let error: unknown;
    try {
      for await (const _ of transport.stream({ model: "m", messages: [] })) {
      }
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).body).toContain("fake-llm: no scripted reply left");
  });

  it("lists models and records every request", async () => {
    const res = await fetch(`${llm.url}/models`, { headers: { "x-probe": "1" } });
    expect(await res.json()).toMatchObject({ data: [{ id: "m-a" }, { id: "m-b" }] });
    expect(llm.requests[0]).toMatchObject({ method: "GET", path: "/v1/models", headers: { "x-probe": "1" } });
    expect(llm.chatRequests).toHaveLength(0);
  });

  it("consumes replies in order and serves non-streaming JSON", async () => {
    llm.enqueue(
      reply().text("one"),
      reply().toolCall("t", { a: 1 }, "call_x").usage({ prompt: 3, completion: 1 }),
    );
    const post = () =>
      fetch(`${llm.url}/chat/completions`, {
        method: "POST",
        body: JSON.stringify({ model: "m", messages: [] }),
      }).then((r) => r.json());
    expect(await post()).toMatchObject({ choices: [{ message: { content: "one" }, finish_reason: "stop" }] });
    expect(await post()).toMatchObject({
      choices: [
        { message: { tool_calls: [{ id: "call_x", function: { name: "t", arguments: '{"a":1}' } }] } },
      ],
      usage: { prompt_tokens: 3, completion_tokens: 1 },
    });
    expect(llm.pending).toBe(0);
  });

  it("closes while a request hangs", async () => {
    llm.enqueue(hang());
    const pending = fetch(`${llm.url}/chat/completions`, { method: "POST", body: "{}" }).catch(
      (e: unknown) => e,
    );
    await llm.waitForRequests(1);
    await llm.close();
    expect(await pending).toBeInstanceOf(Error);
  });
});
