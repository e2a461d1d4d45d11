import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../../../src/agent/events.js";
import { createStyle } from "../../../../src/cli/tui/style.js";
import type { ToolProgress } from "../../../../src/cli/tui/tool-line.js";
import { TurnView } from "../../../../src/cli/tui/turn-view.js";

function view(level: ToolProgress = "all") {
  const log: string[] = [];
  const v = new TurnView(
    {
      answer: (lines) => log.push(...lines.map((l) => `out: ${l}`)),
      info: (lines) => log.push(...lines.map((l) => `err: ${l}`)),
      status: (label) => log.push(`status: ${label}`),
    },
    { markdown: "plain", style: createStyle(false), width: () => undefined, toolProgress: () => level },
  );
  return { v, log };
}

const usage = { inputTokens: 0, outputTokens: 0 };
const tool = (id: string, name: string, ok = true): AgentEvent[] => [
  { type: "tool_start", callId: id, name, args: { command: `cmd ${id}` } },
  { type: "tool_end", callId: id, name, ok, result: "line1\nline2", durationMs: 1200 },
];

describe("TurnView", () => {
  it("shows each retry wait as a line and in the spinner", () => {
    const { v, log } = view();
    v.handle({
      type: "retry",
      message: "127.0.0.1:8080 had a server error (500); retrying in 1.3 s (attempt 2 of 2)",
      reason: "server_error",
      delayMs: 1_300,
      attempt: 2,
      attempts: 2,
      status: 500,
    });
    expect(log).toEqual([
      "err: ⏳ 127.0.0.1:8080 had a server error (500); retrying in 1.3 s (attempt 2 of 2)",
      "status: attempt 2 of 2 after a 1.3 s wait…",
    ]);
  });

  it("marks the text of a failed, retried attempt as not the answer", () => {
    const { v, log } = view();
    for (const e of [
      { type: "text_delta", text: "The first half" },
      { type: "stream_discarded", text: "The first half", reason: "stalled" },
      { type: "text_delta", text: "The whole answer." },
      { type: "done", reason: "completed", text: "The whole answer.", iterations: 1, usage },
    ] satisfies AgentEvent[])
      v.handle(e);
    v.finish();
    const out = log.filter((l) => !l.startsWith("status:"));
    expect(out.slice(0, 2)).toEqual([
      "out: The first half",
      "err: ⚠ [the text above was cut off and is not the answer; retrying]",
    ]);
    expect(out).toContain("out: The whole answer.");
  });

  it("streams answer lines, flushes before a tool line, and ends the spinner", () => {
    const { v, log } = view();
    const events: AgentEvent[] = [
      { type: "turn_start", iteration: 1 },
      { type: "text_delta", text: "Let me **check**.\nRunning" },
      ...tool("1", "terminal"),
      { type: "turn_start", iteration: 2 },
      { type: "text_delta", text: "All good." },
      { type: "done", reason: "completed", text: "All good.", iterations: 2, usage },
    ];
    for (const e of events) v.handle(e);
    expect(log).toEqual([
      "status: thinking…",
      "out: Let me check.",
      "status: writing…",
      "out: Running",
      "status: 💻 terminal cmd 1",
      "err: 💻 terminal cmd 1 1.2s",
      "status: thinking…",
      "status: thinking…",
      "status: writing…",
      "out: All good.",
      "status: null",
    ]);
    expect(v.answered).toBe(true);
  });

  it("shows a line per subagent as it starts and ends, and what the running ones do", () => {
    const { v, log } = view();
    const sub = (index: number, state: "start" | "progress" | "end", detail: string): AgentEvent => ({
      type: "subagent",
      callId: "c1",
      index,
      goal: `task ${index + 1}`,
      state,
      detail,
      ...(state === "end" ? { durationMs: 2500, iterations: 3 } : {}),
    });
    for (const e of [
      sub(0, "start", "starting"),
      sub(1, "start", "starting"),
      sub(0, "progress", "terminal"),
      sub(1, "progress", "read_file"),
      sub(0, "end", "completed"),
      sub(1, "end", "max_iterations"),
    ])
      v.handle(e);
    expect(log).toEqual([
      "err:   ↳ [1] task 1",
      "status: 🔀 1 subagent: starting",
      "err:   ↳ [2] task 2",
      "status: 🔀 2 subagents: starting, starting",
      "status: 🔀 2 subagents: terminal, starting",
      "status: 🔀 2 subagents: terminal, read_file",
      "err:   ↳ [1] ✓ completed in 2.5s: task 1",
      "status: 🔀 1 subagent: read_file",
      "err:   ↳ [2] ⚠ max_iterations in 2.5s: task 2",
      "status: thinking…",
    ]);
  });

  it("indents calls made by a script under the call that ran it", () => {
    const { v, log } = view();
    v.handle({ type: "tool_start", callId: "x", name: "execute_code", args: { code: "..." } });
    v.handle({
      type: "tool_start",
      callId: "x.1",
      name: "read_file",
      args: { path: "a.txt" },
      parentCallId: "x",
    });
    v.handle({
      type: "tool_end",
      callId: "x.1",
      name: "read_file",
      parentCallId: "x",
      ok: true,
      result: "",
      durationMs: 3,
    });
    expect(log.filter((l) => l.startsWith("err:"))[0]).toMatch(/^err: {3}↳ .*read_file a\.txt/);
    expect(log.at(-1)).not.toBe("status: thinking…");
  });

  it("says when a turn was interrupted and keeps what streamed", () => {
    const { v, log } = view();
    v.handle({ type: "text_delta", text: "partial answ" });
    v.handle({ type: "done", reason: "interrupted", text: "partial answ", iterations: 1, usage });
    expect(log).toContain("out: partial answ");
    expect(log).toContain("err: ⏹ Interrupted.");
  });

  it.each<[ToolProgress, number]>([
    ["off", 0],
    ["new", 2],
    ["all", 3],
  ])("tool progress %s shows %i of three lines (two terminal, one read)", (level, count) => {
    const { v, log } = view(level);
    for (const e of [...tool("1", "terminal"), ...tool("2", "terminal"), ...tool("3", "read_file")])
      v.handle(e);
    expect(log.filter((l) => l.startsWith("err:"))).toHaveLength(count);
  });

  it("always shows a failed call, and verbose adds arguments and the result", () => {
    const failed = view("new");
    for (const e of [...tool("1", "terminal"), ...tool("2", "terminal", false)]) failed.v.handle(e);
    expect(failed.log.filter((l) => l.startsWith("err:"))).toEqual([
      "err: 💻 terminal cmd 1 1.2s",
      "err: 💻 terminal cmd 2 1.2s ✗",
    ]);
    const verbose = view("verbose");
    for (const e of tool("1", "terminal")) verbose.v.handle(e);
    expect(verbose.log.filter((l) => l.startsWith("err:"))).toEqual([
      'err:   → terminal {"command":"cmd 1"}',
      "err: 💻 terminal cmd 1 1.2s",
      "err:     line1",
      "err:     line2",
    ]);
  });

  it("prints warnings and errors on the info stream", () => {
    const { v, log } = view();
    v.handle({ type: "warning", message: "careful" });
    v.handle({ type: "error", message: "HTTP 500" });
    expect(log).toEqual(["err: ⚠ careful", "err: error: HTTP 500"]);
  });
});
