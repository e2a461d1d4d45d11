import { expect, it } from "vitest";
import type { Message } from "../../../../src/ai/types.js";
import { SessionStoreError } from "../../../../src/state/types.js";
import { contract } from "./backends.js";

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (error) {
    if (error instanceof SessionStoreError) return error.code;
    throw error;
  }
  return "resolved";
}

const call = (id: string) => ({
  id,
  type: "function" as const,
  function: { name: "read_file", arguments: '{"p":1}' },
});

contract("session store contract: messages, usage and undo", (h) => {
  it("appends messages with ids in order and timestamps that never go back", async () => {
    const { store, clock } = h();
    const s = await store.createSession({ source: "cli" });
    const first = await store.appendMessage(s.id, { role: "user", content: "hi" });
    clock.t -= 100; // the wall clock steps back
    const [second, third] = await store.appendMessages(s.id, [
      { role: "assistant", content: "hello", tool_calls: [call("a"), call("b")] },
      { role: "tool", content: "ok", tool_call_id: "a", name: "read_file" },
    ]);
    expect(first).toBeLessThan(second!);
    expect(second).toBeLessThan(third!);
    const messages = await store.getMessages(s.id);
    expect(messages.map((m) => m.id)).toEqual([first, second, third]);
    expect(new Set(messages.map((m) => m.timestamp))).toEqual(new Set([clock.t + 100]));
    const explicit = await store.appendMessage(
      s.id,
      { role: "user", content: "dated" },
      { timestamp: clock.t + 500, tokenCount: 7 },
    );
    expect((await store.getMessages(s.id)).at(-1)).toMatchObject({
      id: explicit,
      timestamp: clock.t + 500,
      tokenCount: 7,
    });
    expect(await store.getSession(s.id)).toMatchObject({ messageCount: 4, toolCallCount: 2 });
    expect(await store.appendMessages(s.id, [])).toEqual([]);
  });

  it("stores every message shape and gives back exactly what was written", async () => {
    const { store } = h();
    const s = await store.createSession({ source: "cli" });
    const messages: Message[] = [
      { role: "system", content: "sys" },
      {
        role: "user",
        content: [
          { type: "text", text: "look" },
          { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
        ],
      },
      {
        role: "assistant",
        content: null,
        tool_calls: [call("c1")],
        reasoning: "thinking",
        reasoning_details: [{ type: "thinking", signature: "sig" }],
        finish_reason: "tool_calls",
      },
      { role: "tool", content: "result", tool_call_id: "c1", name: "read_file" },
      {
        role: "assistant",
        content: "nul\u0000inside and 'quotes' $1 \\ ünïcødé 🦊",
        codex_reasoning_items: [{ id: "r1" }],
      },
      { role: "user", content: '["looks", "like", "json"]' },
    ];
    await store.appendMessages(s.id, messages);
    expect(await store.conversation(s.id)).toEqual(messages);
    const stored = await store.getMessages(s.id);
    expect(stored[3]).toMatchObject({ role: "tool", toolCallId: "c1", toolName: "read_file", active: true });
  });

  it("rejects a malformed message or an unknown session and writes nothing", async () => {
    const { store } = h();
    const s = await store.createSession({ source: "cli" });
    await store.appendMessage(s.id, { role: "user", content: "kept" });
    for (const bad of [
      { role: "wizard", content: "x" },
      { role: "user", content: { nested: true } },
      { role: "assistant", content: "x", tool_calls: "not an array" },
      null,
    ]) {
      expect(await code(store.appendMessage(s.id, bad as never))).toBe("invalid");
      expect(await code(store.appendMessages(s.id, [{ role: "user", content: "ok" }, bad as never]))).toBe(
        "invalid",
      );
    }
    expect(await code(store.appendMessage("ghost", { role: "user", content: "x" }))).toBe("not_found");
    expect(await code(store.getMessages("ghost"))).toBe("not_found");
    expect(await code(store.conversation("ghost"))).toBe("not_found");
    expect((await store.getMessages(s.id)).map((m) => m.content)).toEqual(["kept"]);
    expect((await store.getSession(s.id))?.messageCount).toBe(1);
  });

  it("starts a session with its first message and usage in one step", async () => {
    const { store } = h();
    const id = await store.startSession(
      { id: "s1", source: "api-server", title: "t" },
      { role: "user", content: "first" },
      { usage: { inputTokens: 10, outputTokens: 2, costUsd: 0.5, costStatus: "estimated" } },
    );
    expect(id).toBeGreaterThan(0);
    expect(await store.getSession("s1")).toMatchObject({
      messageCount: 1,
      inputTokens: 10,
      outputTokens: 2,
      apiCallCount: 1,
      estimatedCostUsd: 0.5,
      costStatus: "estimated",
    });
    expect(
      await code(store.startSession({ id: "s2", source: "cli", title: "t" }, { role: "user", content: "x" })),
    ).toBe("title_taken");
    expect(await store.getSession("s2")).toBeNull();
  });

  it("appends a reply and its results with the call's usage in one step, or nothing", async () => {
    const { store } = h();
    const s = await store.createSession({ source: "cli" });
    const usage = { inputTokens: 9, outputTokens: 3 };
    const ids = await store.appendMessages(
      s.id,
      [
        { role: "assistant", content: null, tool_calls: [call("r")] },
        { role: "tool", content: "ok", tool_call_id: "r", name: "read_file" },
      ],
      { usage },
    );
    expect(ids).toHaveLength(2);
    expect(await store.getSession(s.id)).toMatchObject({ messageCount: 2, inputTokens: 9, apiCallCount: 1 });
    const bad = { role: "nobody", content: "x" } as unknown as Message;
    expect(await code(store.appendMessages(s.id, [{ role: "user", content: "y" }, bad], { usage }))).not.toBe(
      "resolved",
    );
    expect(await store.getSession(s.id)).toMatchObject({ messageCount: 2, inputTokens: 9, apiCallCount: 1 });
  });

  it("adds usage and cost deltas, the worst cost status winning", async () => {
    const { store } = h();
    const s = await store.createSession({ source: "cli" });
    await store.recordUsage(s.id, {
      inputTokens: 100,
      outputTokens: 20,
      cacheReadTokens: 5,
      cacheWriteTokens: 1,
      reasoningTokens: 3,
    });
    expect(await store.getSession(s.id)).toMatchObject({
      inputTokens: 100,
      apiCallCount: 1,
      estimatedCostUsd: null,
      costStatus: null,
    });
    await store.recordUsage(s.id, {
      inputTokens: 1.6,
      outputTokens: 0,
      costUsd: 0.25,
      costStatus: "actual",
      costSource: "provider",
      pricingVersion: "v1",
    });
    await store.recordUsage(s.id, {
      inputTokens: 0,
      outputTokens: 0,
      costUsd: Number.NaN,
      costStatus: "included",
      apiCalls: 3,
    });
    expect(await store.getSession(s.id)).toMatchObject({
      inputTokens: 102,
      apiCallCount: 5,
      estimatedCostUsd: 0.25,
      costStatus: "actual",
      costSource: "provider",
      pricingVersion: "v1",
    });
    await store.appendMessage(
      s.id,
      { role: "assistant", content: "x" },
      { usage: { inputTokens: 0, outputTokens: 5, costUsd: 0.5, costStatus: "unknown" } },
    );
    await store.recordUsage(s.id, { inputTokens: 0, outputTokens: 0, costStatus: "estimated" });
    expect(await store.getSession(s.id)).toMatchObject({
      outputTokens: 25,
      estimatedCostUsd: 0.75,
      costStatus: "unknown",
      apiCallCount: 7,
    });
    expect(await code(store.recordUsage("ghost", { inputTokens: 1, outputTokens: 0 }))).toBe("not_found");
  });

  it("undoes turns: hidden from the conversation, kept on disk, counters follow", async () => {
    const { store } = h();
    const s = await store.createSession({ source: "cli" });
    await store.appendMessages(s.id, [
      { role: "user", content: "q1" },
      { role: "assistant", content: "a1" },
      { role: "user", content: [{ type: "text", text: "q2" }] },
      { role: "assistant", content: "a2", tool_calls: [call("x")] },
      { role: "tool", content: "r", tool_call_id: "x" },
    ]);
    expect(await store.undoTurns(s.id, 1)).toEqual({ removed: 3, userText: "q2" });
    expect((await store.conversation(s.id)).map((m) => m.content)).toEqual(["q1", "a1"]);
    expect((await store.getMessages(s.id, { includeInactive: true })).map((m) => m.active)).toEqual([
      true,
      true,
      false,
      false,
      false,
    ]);
    expect(await store.getSession(s.id)).toMatchObject({ messageCount: 2, toolCallCount: 0 });
    await store.appendMessage(s.id, { role: "user", content: "q3" });
    expect(await store.undoTurns(s.id, 5)).toEqual({ removed: 3, userText: "q1" });
    expect(await store.undoTurns(s.id, 1)).toEqual({ removed: 0, userText: null });
    expect(await code(store.undoTurns(s.id, 0))).toBe("invalid");
    expect(await code(store.undoTurns(s.id, Number.NaN))).toBe("invalid");
    expect(await code(store.undoTurns("ghost", 1))).toBe("not_found");
  });

  it("gives the active messages around one message", async () => {
    const { store } = h();
    const s = await store.createSession({ source: "cli" });
    const ids = await store.appendMessages(
      s.id,
      Array.from(
        { length: 9 },
        (_, i) => ({ role: i % 2 ? "assistant" : "user", content: `m${i}` }) as Message,
      ),
    );
    const around = await store.around(s.id, ids[4]!, 2);
    expect(around.map((m) => m.content)).toEqual(["m2", "m3", "m4", "m5", "m6"]);
    expect((await store.around(s.id, ids[0]!, 1)).map((m) => m.content)).toEqual(["m0", "m1"]);
    expect((await store.around(s.id, ids[8]!)).map((m) => m.content)).toEqual([
      "m3",
      "m4",
      "m5",
      "m6",
      "m7",
      "m8",
    ]);
    expect(await code(store.around(s.id, 999_999))).toBe("not_found");
    const other = await store.createSession({ source: "cli" });
    expect(await code(store.around(other.id, ids[0]!))).toBe("not_found");
    expect(await code(store.around("ghost", ids[0]!))).toBe("not_found");
  });

  it("never stores a known secret", async () => {
    const { store } = h();
    const key = `sk-ant-api03-${"Q".repeat(40)}`;
    const s = await store.createSession({ source: "cli", systemPrompt: `key ${key}`, title: `t ${key}` });
    await store.appendMessage(s.id, { role: "user", content: `my key is ${key}` });
    await store.updateSession(s.id, { systemPrompt: `again ${key}` });
    const text = JSON.stringify([await store.getSession(s.id), await store.getMessages(s.id)]);
    expect(text).not.toContain(key);
    expect(text).toContain("my key is");
  });
});
