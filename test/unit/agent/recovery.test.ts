import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../../src/agent/events.js";
import { type LoopDeps, runLoop } from "../../../src/agent/loop.js";
import {
  fallbackChain,
  loweredMaxTokens,
  type ModelRecovery,
  type ModelRoute,
  withoutReplayedReasoning,
} from "../../../src/agent/recovery.js";
import type { ClassifiedError } from "../../../src/ai/error-classifier.js";
import { type Message, ProviderError, type Transport } from "../../../src/ai/types.js";
import { ScriptedTransport, say } from "../../support/scripted-transport.js";

const http = (status: number, message: string, retryAfterMs?: number) =>
  new ProviderError(message, {
    status,
    body: JSON.stringify({ error: { message } }),
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  });
const timedOut = () =>
  new ProviderError("The request to https://api.example.com/v1 timed out before the server answered.", {
    transport: true,
  });

function deps(transport: Transport, extra: Partial<LoopDeps> = {}) {
  const events: AgentEvent[] = [];
  const d: LoopDeps = {
    transport,
    model: "primary-model",
    tools: [],
    systemPrompt: "system",
    maxIterations: 5,
    retry: { maxRetries: 2, baseMs: 1, capMs: 5 },
    traits: () => undefined,
    executeTool: async () => ({ content: "", ok: true }),
    unknownToolMisses: { count: 0 },
    emit: (e) => events.push(e),
    ...extra,
  };
  const warnings = () =>
    events
      .filter((e): e is Extract<AgentEvent, { type: "warning" }> => e.type === "warning")
      .map((e) => e.message);
  return { deps: d, events, warnings };
}

/** A recovery double that records which actions the loop asked for. */
function recoveryDouble(options: {
  rotations?: Transport[];
  rebuilds?: Transport[];
  fallbacks?: Array<ModelRoute | Error>;
}): ModelRecovery & { calls: string[]; failures: ClassifiedError[] } {
  const rotations = [...(options.rotations ?? [])];
  const rebuilds = [...(options.rebuilds ?? [])];
  const calls: string[] = [];
  const failures: ClassifiedError[] = [];
  return {
    primaryLabel: "primary (primary-model)",
    calls,
    failures,
    async rotateCredential(failure) {
      calls.push("rotate");
      failures.push(failure);
      return rotations.shift();
    },
    async rebuildTransport() {
      calls.push("rebuild");
      return rebuilds.shift();
    },
    async fallback(index) {
      calls.push(`fallback:${index}`);
      return options.fallbacks?.[index];
    },
    async succeeded() {
      calls.push("success");
    },
  };
}

const user = (text: string): Message => ({ role: "user", content: text });

describe("withoutReplayedReasoning / loweredMaxTokens / fallbackChain", () => {
  it("drops replayed reasoning from copies only", () => {
    const stored: Message[] = [
      user("hi"),
      {
        role: "assistant",
        content: "a",
        reasoning_details: [{ sig: "x" }],
        codex_reasoning_items: [{ id: 1 }],
      },
    ];
    const sent = withoutReplayedReasoning(stored);
    expect(sent[1]).toEqual({ role: "assistant", content: "a" });
    expect(stored[1]?.reasoning_details).toEqual([{ sig: "x" }]);
    expect(sent[0]).toBe(stored[0]);
  });

  it("lowers max_tokens a little under what fits", () => {
    expect(loweredMaxTokens(4096)).toBe(4032);
    expect(loweredMaxTokens(100)).toBe(95);
    expect(loweredMaxTokens(1)).toBe(1);
  });

  it("reads fallback_providers, then the legacy fallback_model, skipping malformed entries", () => {
    expect(
      fallbackChain({
        fallback_providers: [
          { provider: "openrouter", model: "a/b" },
          { provider: "custom", model: "m", base_url: "http://x/v1", api_key: "k" },
          { provider: "nomodel" },
          "junk",
        ],
        fallback_model: { provider: "nous", model: "hermes" },
      }),
    ).toEqual([
      { provider: "openrouter", model: "a/b" },
      { provider: "custom", model: "m", baseUrl: "http://x/v1", apiKey: "k" },
      { provider: "nous", model: "hermes" },
    ]);
    expect(fallbackChain({ fallback_model: { provider: "nous", model: "hermes" } })).toHaveLength(1);
    expect(fallbackChain({})).toEqual([]);
  });
});

describe("recovery in the loop, branch by branch", () => {
  it("1. strips replayed reasoning from the request (not the history) and retries at once", async () => {
    const t = new ScriptedTransport([http(400, "Invalid signature in thinking block"), say("ok")]);
    const { deps: d, warnings } = deps(t);
    const history: Message[] = [
      user("one"),
      { role: "assistant", content: "r", reasoning_details: [{ signature: "bad" }] },
      user("two"),
    ];
    const result = await runLoop(history, d, new AbortController().signal);
    expect(result.reason).toBe("completed");
    expect(t.requests[0]?.messages[2]).toHaveProperty("reasoning_details");
    expect(t.requests[1]?.messages[2]).not.toHaveProperty("reasoning_details");
    expect(history[1]?.reasoning_details).toEqual([{ signature: "bad" }]);
    expect(warnings().some((w) => w.includes("without the earlier reasoning"))).toBe(true);
  });

  it("1. strips only once: a second signature error ends the turn", async () => {
    const t = new ScriptedTransport([
      http(400, "Invalid signature in thinking block"),
      http(400, "Invalid signature in thinking block"),
    ]);
    const { deps: d } = deps(t);
    const result = await runLoop([user("x")], d, new AbortController().signal);
    expect(result.reason).toBe("error");
    expect(t.requests).toHaveLength(2);
  });

  it("2. rotates to the pool's next key on a 401 and retries immediately", async () => {
    const first = new ScriptedTransport([http(401, "invalid api key")]);
    const second = new ScriptedTransport([say("answer"), say("next turn")]);
    const recovery = recoveryDouble({ rotations: [second] });
    const { deps: d, warnings } = deps(first, { recovery });
    const history = [user("x")];
    const result = await runLoop(history, d, new AbortController().signal);
    expect(result.text).toBe("answer");
    expect(recovery.calls).toEqual(["rotate", "success"]);
    expect(recovery.failures[0]?.reason).toBe("auth");
    expect(warnings().some((w) => w.includes("next credential"))).toBe(true);
  });

  it("2. without a second key (rotation declines) a 401 ends the turn without retries", async () => {
    const t = new ScriptedTransport([http(401, "invalid api key")]);
    const recovery = recoveryDouble({});
    const { deps: d } = deps(t, { recovery });
    const result = await runLoop([user("x")], d, new AbortController().signal);
    expect(result.reason).toBe("error");
    expect(recovery.calls).toEqual(["rotate"]);
    expect(t.requests).toHaveLength(1);
  });

  it("3. lowers max_tokens to what the provider says fits, once", async () => {
    const t = new ScriptedTransport([
      http(400, "max_tokens: 9000 > 4096, which is the maximum allowed number of output tokens"),
      say("fits"),
    ]);
    const { deps: d } = deps(t, { maxTokens: 9000 });
    const result = await runLoop([user("x")], d, new AbortController().signal);
    expect(result.text).toBe("fits");
    expect(t.requests.map((r) => r.maxTokens)).toEqual([9000, loweredMaxTokens(4096)]);
  });

  it("4. rebuilds the client once after a connection failure on a retry, then goes on retrying", async () => {
    // Timeouts climb the whole ladder (a dropped connection is retried only once).
    const first = new ScriptedTransport([timedOut(), timedOut()]);
    const fresh = new ScriptedTransport([timedOut(), say("back")]);
    const recovery = recoveryDouble({ rebuilds: [fresh] });
    const { deps: d } = deps(first, { recovery, retry: { maxRetries: 3, baseMs: 1, capMs: 5 } });
    const result = await runLoop([user("x")], d, new AbortController().signal);
    expect(result.text).toBe("back");
    expect(recovery.calls).toEqual(["rebuild", "success"]);
    expect(first.requests).toHaveLength(2);
    expect(fresh.requests).toHaveLength(2);
  });

  it("5. falls back at once on billing, for the rest of the turn only", async () => {
    const primary = new ScriptedTransport([http(402, "insufficient credits"), say("primary again")]);
    const backup = new ScriptedTransport([say("from fallback")]);
    const recovery = recoveryDouble({
      fallbacks: [{ transport: backup, model: "backup-model", label: "backup (backup-model)" }],
    });
    const { deps: d, warnings } = deps(primary, { recovery });
    const first = await runLoop([user("x")], d, new AbortController().signal);
    expect(first.text).toBe("from fallback");
    expect(primary.requests).toHaveLength(1);
    expect(backup.requests).toHaveLength(1);
    expect(backup.requests[0]?.model).toBe("backup-model");
    // The system prompt is unchanged on the fallback.
    expect(backup.requests[0]?.messages[0]).toEqual(primary.requests[0]?.messages[0]);
    const warning = warnings().find((w) => w.includes("fallback")) ?? "";
    expect(warning).toContain("primary (primary-model)");
    expect(warning).toContain("backup (backup-model)");
    expect(warning).toMatch(/billing|credit/i);
    // The next turn starts on the primary again.
    const second = await runLoop([user("y")], d, new AbortController().signal);
    expect(second.text).toBe("primary again");
    expect(primary.requests).toHaveLength(2);
  });

  it("5. a fallback lasts for every model call of the turn (tool round-trips included)", async () => {
    const primary = new ScriptedTransport([http(404, "model not found: primary-model")]);
    const backup = new ScriptedTransport([
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "echo", arguments: "{}" } }],
      },
      say("done"),
    ]);
    const recovery = recoveryDouble({
      fallbacks: [{ transport: backup, model: "backup-model", label: "backup (backup-model)" }],
    });
    const { deps: d } = deps(primary, {
      recovery,
      tools: [{ type: "function", function: { name: "echo", description: "", parameters: {} } }],
      traits: () => ({ parallelSafe: true, interactive: false }),
    });
    const result = await runLoop([user("x")], d, new AbortController().signal);
    expect(result.text).toBe("done");
    expect(primary.requests).toHaveLength(1);
    expect(backup.requests).toHaveLength(2);
    expect(recovery.calls).toEqual(["fallback:0"]);
  });

  it("5. a bare 500 is retried once, then the fallback answers", async () => {
    const primary = new ScriptedTransport([http(500, "boom"), http(500, "boom")]);
    const backup = new ScriptedTransport([say("rescued")]);
    const recovery = recoveryDouble({
      fallbacks: [{ transport: backup, model: "m2", label: "good (m2)" }],
    });
    const { deps: d, events } = deps(primary, { recovery, retry: { maxRetries: 3, baseMs: 1, capMs: 5 } });
    const result = await runLoop([user("x")], d, new AbortController().signal);
    expect(result.text).toBe("rescued");
    expect(primary.requests).toHaveLength(2);
    expect(events.filter((e) => e.type === "retry")).toHaveLength(1);
  });

  it("5. retryable errors fall back only once retries are exhausted; unusable fallbacks are skipped", async () => {
    const primary = new ScriptedTransport([
      http(503, "overloaded"),
      http(503, "overloaded"),
      http(503, "overloaded"),
    ]);
    const backup = new ScriptedTransport([say("rescued")]);
    const recovery = recoveryDouble({
      fallbacks: [
        new Error("fallback nokey (m) is not usable: no key"),
        { transport: backup, model: "m2", label: "good (m2)" },
      ],
    });
    const { deps: d, warnings } = deps(primary, { recovery });
    const result = await runLoop([user("x")], d, new AbortController().signal);
    expect(result.text).toBe("rescued");
    expect(primary.requests).toHaveLength(3);
    expect(recovery.calls).toEqual(["fallback:0", "fallback:1"]);
    expect(warnings().some((w) => w.startsWith("Skipping fallback nokey"))).toBe(true);
  });

  it("5. without any fallback the billing error ends the turn with advice", async () => {
    const t = new ScriptedTransport([http(402, "insufficient credits")]);
    const { deps: d, events } = deps(t, { recovery: recoveryDouble({}) });
    const result = await runLoop([user("x")], d, new AbortController().signal);
    expect(result.reason).toBe("error");
    const error = events.find((e) => e.type === "error");
    expect(error && "message" in error ? error.message : "").toMatch(/credits/);
  });

  it("rotation comes before fallback when both are flagged (402 with a second key)", async () => {
    const first = new ScriptedTransport([http(402, "insufficient credits")]);
    const second = new ScriptedTransport([say("second key")]);
    const recovery = recoveryDouble({
      rotations: [second],
      fallbacks: [{ transport: new ScriptedTransport(), model: "x", label: "x" }],
    });
    const { deps: d } = deps(first, { recovery });
    const result = await runLoop([user("x")], d, new AbortController().signal);
    expect(result.text).toBe("second key");
    expect(recovery.calls).toEqual(["rotate", "success"]);
  });

  it("a 402 whose pool has no second key falls back", async () => {
    const primary = new ScriptedTransport([http(402, "insufficient credits")]);
    const backup = new ScriptedTransport([say("fallback answer")]);
    const recovery = recoveryDouble({
      fallbacks: [{ transport: backup, model: "b", label: "b (b)" }],
    });
    const { deps: d } = deps(primary, { recovery });
    expect((await runLoop([user("x")], d, new AbortController().signal)).text).toBe("fallback answer");
    expect(recovery.calls).toEqual(["rotate", "fallback:0"]);
  });

  it("keeps replayed reasoning out for the rest of the turn once it was stripped", async () => {
    const t = new ScriptedTransport([
      http(400, "Invalid signature in thinking block"),
      {
        role: "assistant",
        content: null,
        reasoning_details: [{ signature: "new" }],
        tool_calls: [{ id: "c1", type: "function", function: { name: "echo", arguments: "{}" } }],
      },
      say("done"),
    ]);
    const { deps: d } = deps(t, {
      tools: [{ type: "function", function: { name: "echo", description: "", parameters: {} } }],
      traits: () => ({ parallelSafe: true, interactive: false }),
    });
    const history: Message[] = [
      user("one"),
      { role: "assistant", content: "r", reasoning_details: [1] },
      user("x"),
    ];
    expect((await runLoop(history, d, new AbortController().signal)).text).toBe("done");
    const last = t.requests[2]?.messages ?? [];
    expect(last.some((m) => m.reasoning_details !== undefined)).toBe(false);
    expect(history.filter((m) => m.reasoning_details !== undefined)).toHaveLength(2);
  });

  it("leaves compression to its hook and does nothing when the hook is absent", async () => {
    const overflow = () => http(400, "This model's maximum context length is 8192 tokens");
    const t = new ScriptedTransport([overflow(), say("compressed")]);
    let asked = 0;
    const { deps: d } = deps(t, {
      compress: async () => {
        asked++;
        return true;
      },
    });
    expect((await runLoop([user("x")], d, new AbortController().signal)).text).toBe("compressed");
    expect(asked).toBe(1);
    const t2 = new ScriptedTransport([overflow()]);
    const { deps: d2 } = deps(t2);
    expect((await runLoop([user("x")], d2, new AbortController().signal)).reason).toBe("error");
  });
});
