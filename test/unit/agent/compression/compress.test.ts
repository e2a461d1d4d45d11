import { describe, expect, it } from "vitest";
import {
  buildSummaryPrompt,
  compressMessages,
  estimateMessageTokens,
  estimateTokens,
  fixToolPairs,
  isSummaryMessage,
  isThrashing,
  planCompression,
  pruneToolResults,
  SUMMARY_MARKER,
  shouldCompress,
} from "../../../../src/agent/compression/index.js";
import { type Message, messageText } from "../../../../src/ai/types.js";

const sys: Message = { role: "system", content: "You are Hermes." };
const u = (text: string): Message => ({ role: "user", content: text });
const a = (text: string): Message => ({ role: "assistant", content: text });
let n = 0;
function call(name: string, args: Record<string, unknown>, result: string): Message[] {
  const id = `c${++n}`;
  return [
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id, type: "function", function: { name, arguments: JSON.stringify(args) } }],
    },
    { role: "tool", tool_call_id: id, name, content: result },
  ];
}

/** A seeded pseudo-random conversation: user turns, tool calls (some parallel), answers. */
function conversation(seed: number, turns: number): Message[] {
  let s = seed;
  const rnd = () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
  const out: Message[] = [sys];
  for (let t = 0; t < turns; t++) {
    out.push(u(`request ${t} ${"x".repeat(Math.floor(rnd() * 400))}`));
    const calls = Math.floor(rnd() * 4);
    for (let c = 0; c < calls; c++) {
      if (rnd() < 0.3) {
        const ids = [`p${++n}`, `p${++n}`];
        out.push({
          role: "assistant",
          content: null,
          tool_calls: ids.map((id) => ({
            id,
            type: "function" as const,
            function: { name: "read_file", arguments: '{"path":"a.ts"}' },
          })),
        });
        for (const id of ids)
          out.push({ role: "tool", tool_call_id: id, content: "y".repeat(Math.floor(rnd() * 3000)) });
      } else out.push(...call("terminal", { command: "ls" }, "z".repeat(Math.floor(rnd() * 3000))));
    }
    out.push(a(`answer ${t} ${"w".repeat(Math.floor(rnd() * 600))}`));
  }
  return out;
}

function checkInvariants(original: Message[], result: Message[], headLen: number) {
  // Head verbatim.
  expect(result.slice(0, headLen)).toEqual(original.slice(0, headLen));
  // Every tool result follows its call; every call has a result.
  const seen = new Set<string>();
  const answered = new Set<string>();
  for (const m of result) {
    for (const c of m.tool_calls ?? []) seen.add(c.id);
    if (m.role === "tool") {
      expect(seen.has(m.tool_call_id ?? "")).toBe(true);
      answered.add(m.tool_call_id ?? "");
    }
  }
  for (const id of seen) expect(answered.has(id)).toBe(true);
  // Alternation: no two user or two plain assistant messages in a row.
  for (let i = 1; i < result.length; i++) {
    const prev = result[i - 1] as Message;
    const cur = result[i] as Message;
    if (cur.role === "user") expect(prev.role).not.toBe("user");
    if (cur.role === "assistant") expect(prev.role).not.toBe("assistant");
  }
  // The last user message's text is still there, in a user message.
  const lastUser = [...original].reverse().find((m) => m.role === "user") as Message;
  expect(result.some((m) => m.role === "user" && messageText(m).includes(messageText(lastUser)))).toBe(true);
}

describe("tokens", () => {
  it("counts text and tool-call arguments at about four characters a token", () => {
    expect(estimateMessageTokens(u("a".repeat(400)))).toBe(104);
    const [callMsg] = call("read_file", { path: "x".repeat(400) }, "");
    expect(estimateMessageTokens(callMsg as Message)).toBeGreaterThan(100);
    expect(estimateTokens([u("abcd"), a("abcd")])).toBe(10);
  });
  it("triggers at the threshold of the context window", () => {
    expect(shouldCompress({ promptTokens: 64_000, contextLength: 128_000, threshold: 0.5 })).toBe(true);
    expect(shouldCompress({ promptTokens: 63_999, contextLength: 128_000, threshold: 0.5 })).toBe(false);
    expect(shouldCompress({ promptTokens: 10, contextLength: 0 })).toBe(false);
  });
});

describe("pruneToolResults", () => {
  it("replaces old long outputs with one-line summaries per tool type, keeping the tail", () => {
    const file = Array.from({ length: 240 }, (_, i) => `line ${i}`).join("\n");
    const history = [
      u("go"),
      ...call("read_file", { path: "src/x.ts" }, JSON.stringify({ content: file })),
      ...call(
        "terminal",
        { command: "npm test" },
        JSON.stringify({ output: "o".repeat(3300), exit_code: 0 }),
      ),
      ...call("terminal", { command: "ls" }, "short"),
      ...call("web_search", { query: "hermes agent" }, "r".repeat(500)),
      ...call("read_file", { path: "kept.ts" }, "k".repeat(500)),
    ];
    const { messages, pruned, savedTokens } = pruneToolResults(history, { keepLast: 2 });
    expect(pruned).toBe(3);
    expect(savedTokens).toBeGreaterThan(0);
    expect(messages[2]?.content).toBe("[read_file output pruned: 240 lines of src/x.ts]");
    expect(messages[4]?.content).toMatch(/^\[terminal output pruned: exit 0, 3\.\d KB from `npm test`\]$/);
    expect(messages[6]?.content).toBe("short");
    expect(messages[8]?.content).toBe("[web_search output pruned: 500 B for hermes agent]");
    expect(messages[10]?.content).toBe("k".repeat(500));
    expect(history[2]?.content).not.toMatch(/pruned/); // input untouched
    // Idempotent.
    expect(pruneToolResults(messages, { keepLast: 2 }).pruned).toBe(0);
  });
});

describe("planCompression", () => {
  it("never splits a call from its results and keeps the last user message in the tail", () => {
    const history = [
      sys,
      u("first"),
      ...call("read_file", { path: "a" }, "1".repeat(2000)),
      a("ok"),
      u("second"),
      ...call("terminal", {}, "2".repeat(2000)),
      ...call("terminal", {}, "3".repeat(400)),
      a("done"),
    ];
    const plan = planCompression(history, { protectFirstN: 2, tailTokenBudget: 250 });
    // Head ends after the call's result, not between.
    expect(plan.head.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool"]);
    expect(plan.tail[0]?.role).not.toBe("tool");
    expect(plan.tail).toContainEqual(u("second"));
    expect([...plan.head, ...plan.middle, ...plan.tail]).toEqual(history);
  });
  it("carries a far-back last user message instead of blowing the tail budget", () => {
    const history = [sys, u("old"), a("ok"), u("the task")];
    for (let i = 0; i < 30; i++) history.push(...call("terminal", {}, "z".repeat(2000)));
    const plan = planCompression(history, { protectFirstN: 2, tailTokenBudget: 1000 });
    expect(plan.lastUserInMiddle).toEqual(u("the task"));
    expect(plan.tail[0]?.role).toBe("assistant");
  });
});

describe("buildSummaryPrompt", () => {
  it("asks for the structured template with the active task verbatim", () => {
    const prompt = buildSummaryPrompt(
      [u("fix the bug"), ...call("terminal", { command: "make" }, "Error: E42 boom")],
      undefined,
      undefined,
      "fix the bug in parser.ts",
    );
    for (const section of [
      "## Active task",
      "## Done",
      "## In progress",
      "## Blocked",
      "## Key decisions",
      "## Pending user asks",
      "## Relevant files",
      "## Critical context",
    ])
      expect(prompt).toContain(section);
    expect(prompt).toContain("fix the bug in parser.ts");
    expect(prompt).toContain("Error: E42 boom");
    expect(prompt).toContain("called terminal");
    expect(prompt).not.toContain("UPDATE");
  });
  it("asks to update a previous summary and honours a focus topic", () => {
    const prompt = buildSummaryPrompt([u("more")], "## Done\n- parsed", "database migrations");
    expect(prompt).toContain("UPDATE");
    expect(prompt).toContain("## Done\n- parsed");
    expect(prompt).toContain('"database migrations"');
  });
});

describe("fixToolPairs", () => {
  it("drops orphaned results and stubs missing ones", () => {
    const out = fixToolPairs([
      u("q"),
      { role: "tool", tool_call_id: "gone", content: "orphan" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "k", type: "function", function: { name: "terminal", arguments: "{}" } }],
      },
      u("next"),
    ]);
    expect(out.map((m) => m.role)).toEqual(["user", "assistant", "tool", "user"]);
    expect(out[2]?.tool_call_id).toBe("k");
  });
});

describe("compressMessages", () => {
  const summarize = async () => '## Active task\n"q"\n## Done\n- things';

  it.each([1, 2, 3, 4, 5, 6, 7, 8])("keeps the structural invariants (seed %i)", async (seed) => {
    const history = conversation(seed, 12);
    const result = await compressMessages(history, { summarize, contextLength: 20_000, targetRatio: 0.2 });
    expect(result.status).toBe("compressed");
    expect(result.savedRatio).toBeGreaterThan(0);
    const headLen = planCompression(history, { protectFirstN: 3, tailTokenBudget: 4000 }).head.length;
    checkInvariants(history, result.messages, headLen);
    expect(result.messages.filter((m) => messageText(m).includes(SUMMARY_MARKER))).toHaveLength(1);
  });

  it("updates the previous summary on a second pass", async () => {
    const prompts: string[] = [];
    const first = await compressMessages(conversation(11, 12), {
      summarize: async (p) => {
        prompts.push(p);
        return "FIRST SUMMARY";
      },
      contextLength: 20_000,
      targetRatio: 0.2,
    });
    const grown = [...first.messages, ...conversation(12, 10).slice(1)];
    const second = await compressMessages(grown, {
      summarize: async (p) => {
        prompts.push(p);
        return "SECOND SUMMARY";
      },
      contextLength: 20_000,
      targetRatio: 0.2,
    });
    expect(second.status).toBe("compressed");
    expect(prompts[1]).toContain("UPDATE");
    expect(prompts[1]).toContain("FIRST SUMMARY");
    expect(prompts[1]).not.toContain(SUMMARY_MARKER);
    const summaries = second.messages.filter(isSummaryMessage);
    expect(summaries).toHaveLength(1);
    expect(messageText(summaries[0] as Message)).toContain("SECOND SUMMARY");
  });

  it("stops after two passes that each saved under 10%, unless forced", async () => {
    const history = conversation(3, 12);
    let calls = 0;
    const counting = async () => {
      calls++;
      return "s";
    };
    const skipped = await compressMessages(history, {
      summarize: counting,
      contextLength: 20_000,
      targetRatio: 0.2,
      previousPasses: [0.5, 0.05, 0.08],
    });
    expect(skipped.status).toBe("skipped_thrashing");
    expect(skipped.messages).toEqual(history);
    expect(skipped.error).toMatch(/10%/);
    expect(calls).toBe(0);
    expect(isThrashing([0.05, 0.5])).toBe(false);
    const forced = await compressMessages(history, {
      summarize: counting,
      contextLength: 20_000,
      targetRatio: 0.2,
      previousPasses: [0.05, 0.08],
      force: true,
    });
    expect(forced.status).toBe("compressed");
  });

  it("keeps every message when the summariser fails twice, and tells the user", async () => {
    const history = conversation(4, 12);
    const snapshot = structuredClone(history);
    let calls = 0;
    const result = await compressMessages(history, {
      summarize: async () => {
        calls++;
        throw new Error("502 bad gateway");
      },
      contextLength: 20_000,
      targetRatio: 0.2,
    });
    expect(calls).toBe(2);
    expect(result.status).toBe("failed");
    expect(result.messages).toEqual(snapshot);
    expect(history).toEqual(snapshot);
    expect(result.error).toContain("502 bad gateway");
    expect(result.error).toContain("no messages were removed");
  });

  it("retries once and succeeds; an empty summary counts as a failure", async () => {
    let calls = 0;
    const result = await compressMessages(conversation(5, 12), {
      summarize: async () => (++calls === 1 ? "" : "ok summary"),
      contextLength: 20_000,
      targetRatio: 0.2,
    });
    expect(result.status).toBe("compressed");
    expect(calls).toBe(2);
  });

  it("passes the focus topic into the prompt", async () => {
    let seen = "";
    await compressMessages(conversation(6, 12), {
      summarize: async (p) => {
        seen = p;
        return "s";
      },
      focus: "the auth refactor",
      contextLength: 20_000,
      targetRatio: 0.2,
    });
    expect(seen).toContain("the auth refactor");
  });

  it("merges the summary into the first tail message when both neighbours are user-side", async () => {
    // Head ends with a user message and the tail starts with a user message.
    const history = [sys, u("u1"), a("a1"), u("u2"), a("x".repeat(4000)), u("u3 last")];
    const result = await compressMessages(history, {
      summarize,
      contextLength: 1000,
      targetRatio: 0.05,
      protectFirstN: 3,
    });
    expect(result.status).toBe("compressed");
    checkInvariants(history, result.messages, 4);
    expect(result.messages[4]?.role).toBe("assistant");
    expect(messageText(result.messages[4] as Message)).toContain(SUMMARY_MARKER);
  });

  it("reports nothing to compress on a short conversation", async () => {
    const history = [sys, u("hi"), a("hello")];
    const result = await compressMessages(history, { summarize, contextLength: 128_000, targetRatio: 0.2 });
    expect(result.status).toBe("nothing_to_compress");
    expect(result.messages).toEqual(history);
  });

  it("keeps a far-back last user request verbatim in the summary message", async () => {
    const history: Message[] = [sys, u("old"), a("ok"), u("do the long task")];
    for (let i = 0; i < 30; i++) history.push(...call("terminal", {}, "z".repeat(2000)));
    const result = await compressMessages(history, { summarize, contextLength: 5000, targetRatio: 0.2 });
    expect(result.status).toBe("compressed");
    checkInvariants(history, result.messages, 3);
  });
});
