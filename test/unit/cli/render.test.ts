import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../../src/agent/events.js";
import { createRenderer, type OutputMode } from "../../../src/cli/render.js";

async function render(mode: OutputMode, events: AgentEvent[], opts: { tty?: boolean } = {}) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  if (opts.tty) Object.assign(stdout, { isTTY: true });
  let out = "";
  let err = "";
  stdout.on("data", (c: Buffer) => {
    out += c.toString();
  });
  stderr.on("data", (c: Buffer) => {
    err += c.toString();
  });
  const renderer = await createRenderer({ mode, verbose: false, stdout, stderr, color: false });
  for (const event of events) renderer.handle(event);
  return { out: () => out, err: () => err };
}

const usage = { inputTokens: 1, outputTokens: 1 };
const dropped: AgentEvent[] = [
  { type: "turn_start", iteration: 1 },
  { type: "text_delta", text: "The first half of an ans" },
  { type: "stream_discarded", text: "The first half of an ans", reason: "stalled" },
  { type: "text_delta", text: "The whole answer." },
  { type: "turn_end", iteration: 1, finishReason: "stop" },
  { type: "done", reason: "completed", text: "The whole answer.", iterations: 1, usage },
];

describe("Renderer: text of a failed attempt never stands as the answer", () => {
  it("-q: a dropped and retried stream leaves only the complete answer on stdout", async () => {
    const r = await render("quiet", dropped);
    expect(r.out()).toBe("The whole answer.\n");
  });

  it("normal mode with stdout piped holds text per attempt the same way", async () => {
    expect((await render("normal", dropped)).out()).toBe("The whole answer.\n");
  });

  it("on a terminal the text streams live and an abandoned attempt is marked", async () => {
    const r = await render("normal", dropped, { tty: true });
    expect(r.out()).toBe("The first half of an ans\nThe whole answer.\n");
    expect(r.err()).toMatch(/cut off and is not the answer; retrying/);
  });

  it("-q: a turn that fails after a fragment prints no fragment on stdout, the error on stderr", async () => {
    const r = await render("quiet", [
      { type: "turn_start", iteration: 1 },
      { type: "text_delta", text: "partial" },
      { type: "stream_discarded", text: "partial", reason: "stalled" },
      { type: "error", message: "Provider connection problem: stalled" },
      { type: "turn_end", iteration: 1, finishReason: "error" },
      { type: "done", reason: "error", text: "", iterations: 1, usage },
    ]);
    expect(r.out()).toBe("");
    expect(r.err()).toMatch(/error: Provider connection problem/);
  });

  it("-z prints the final answer of a completed turn and nothing for a failed one", async () => {
    expect((await render("oneshot", dropped)).out()).toBe("The whole answer.\n");
    const failed = await render("oneshot", [
      { type: "text_delta", text: "Let me look." },
      { type: "turn_end", iteration: 1, finishReason: "tool_calls" },
      { type: "error", message: "stalled" },
      { type: "done", reason: "error", text: "Let me look.", iterations: 2, usage },
    ]);
    expect(failed.out()).toBe("");
    expect(failed.err()).toMatch(/stalled/);
  });

  it("-q: text from a completed call before a tool line is shown in order", async () => {
    const r = await render("quiet", [
      { type: "text_delta", text: "Checking." },
      { type: "turn_end", iteration: 1, finishReason: "tool_calls" },
      { type: "text_delta", text: "Done." },
      { type: "turn_end", iteration: 2, finishReason: "stop" },
      { type: "done", reason: "completed", text: "Done.", iterations: 2, usage },
    ]);
    expect(r.out()).toBe("Checking.Done.\n");
  });
});

describe("Renderer: every retry wait is shown, on stderr only", () => {
  const waited: AgentEvent[] = [
    { type: "turn_start", iteration: 1 },
    {
      type: "retry",
      message: "rate limited by openrouter (429); retrying in 1.6 s (attempt 2 of 4)",
      reason: "rate_limit",
      delayMs: 1_600,
      attempt: 2,
      attempts: 4,
      status: 429,
      provider: "openrouter",
    },
    { type: "text_delta", text: "Answer." },
    { type: "turn_end", iteration: 1, finishReason: "stop" },
    { type: "done", reason: "completed", text: "Answer.", iterations: 1, usage },
  ];

  it.each(["normal", "quiet", "oneshot"] as const)("%s mode", async (mode) => {
    const r = await render(mode, waited);
    expect(r.out()).toBe("Answer.\n");
    expect(r.err()).toContain("rate limited by openrouter (429); retrying in 1.6 s (attempt 2 of 4)");
  });
});
