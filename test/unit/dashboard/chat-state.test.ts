/**
 * The chat page's transcript reducer: server events in, items out. Pieces of text join into one
 * streaming answer that closes (becomes markdown) at a tool call or the end; tool lines collect
 * progress, output and results by call id; approvals are marked answered; a stored conversation
 * becomes the same items.
 */
import { describe, expect, it } from "vitest";
import { applyEvent, historyItems, type Item } from "../../../src/dashboard/web/pages/chat-state.js";

function run(events: Array<[string, Record<string, unknown>]>): Item[] {
  return events.reduce<Item[]>((items, [event, data]) => applyEvent(items, event, data), []);
}

const strip = (items: Item[]) => items.map(({ key: _key, ...rest }) => rest);

describe("the chat transcript reducer", () => {
  it("joins text pieces into one streaming answer and closes it at the end", () => {
    const streaming = run([
      ["text", { text: "Pelicans " }],
      ["text", { text: "fish." }],
    ]);
    expect(strip(streaming)).toEqual([
      { kind: "assistant", text: "Pelicans fish.", reasoning: "", streaming: true },
    ]);
    const done = applyEvent(streaming, "done", { reason: "completed" });
    expect(strip(done)).toEqual([
      { kind: "assistant", text: "Pelicans fish.", reasoning: "", streaming: false },
    ]);
  });

  it("ends the answer at a tool call and follows the tool by its call id", () => {
    const items = run([
      ["reasoning", { text: "think" }],
      ["text", { text: "Let me look." }],
      ["tool_start", { call_id: "c1", name: "terminal", preview: "ls" }],
      ["tool_output", { call_id: "c1", text: "a\n" }],
      ["tool_output", { call_id: "c1", text: "b\n" }],
      ["tool_progress", { call_id: "c1", message: "still going" }],
      ["tool_end", { call_id: "c1", name: "terminal", ok: true, duration_ms: 1200, result: "a\nb" }],
      ["text", { text: "Two files." }],
    ]);
    expect(items.map((i) => i.kind)).toEqual(["assistant", "tool", "assistant"]);
    expect(items[0]).toMatchObject({ text: "Let me look.", reasoning: "think", streaming: false });
    expect(items[1]).toMatchObject({
      status: "ok",
      output: "a\nb\n",
      progress: ["still going"],
      result: "a\nb",
      durationMs: 1200,
    });
    expect(items[2]).toMatchObject({ text: "Two files.", streaming: true });
  });

  it("marks an approval answered, a failed tool failed, and a tool left running failed at the end", () => {
    const items = run([
      ["tool_start", { call_id: "c1", name: "terminal", preview: "rm -rf x" }],
      [
        "approval",
        {
          id: "a1",
          command: "rm -rf x",
          reason: "recursive delete",
          choices: ["once", "deny"],
          protected_path: true,
          timeout_s: 60,
        },
      ],
      ["approval_resolved", { id: "a1", decision: "deny", by: "dashboard" }],
      ["tool_end", { call_id: "c1", ok: false, result: "denied" }],
      ["tool_start", { call_id: "c2", name: "terminal", preview: "sleep 300" }],
      ["done", { reason: "interrupted" }],
    ]);
    expect(items[1]).toMatchObject({
      kind: "approval",
      protectedPath: true,
      decision: "deny",
      by: "dashboard",
    });
    expect(items[0]).toMatchObject({ status: "failed" });
    expect(items[2]).toMatchObject({ status: "failed" });
    expect(items.at(-1)).toMatchObject({ kind: "notice", text: "Stopped." });
  });

  it("drops discarded text and shows errors and command replies as their own items", () => {
    const items = run([
      ["text", { text: "half an ans" }],
      ["discard", { reason: "connection dropped" }],
      ["error", { message: "Provider connection problem" }],
      ["command", { text: "**/new** starts over" }],
      ["tool_end", { call_id: "nobody", ok: true, result: "x" }],
      ["mystery", { anything: 1 }],
    ]);
    expect(items.map((i) => i.kind)).toEqual(["notice", "error", "command"]);
    expect(JSON.stringify(items)).not.toContain("half an ans");
  });

  it("turns a stored conversation into the same items, results matched to their calls", () => {
    const items = historyItems([
      { role: "system", content: "You are Hermes." },
      { role: "user", content: "list files" },
      {
        role: "assistant",
        content: "",
        tool_calls: [{ id: "c1", function: { name: "terminal", arguments: '{"command":"ls -la"}' } }],
      },
      { role: "tool", content: "a b", tool_call_id: "c1" },
      { role: "assistant", content: [{ type: "text", text: "Two files." }] },
    ]);
    expect(strip(items)).toEqual([
      { kind: "user", text: "list files" },
      {
        kind: "tool",
        callId: "c1",
        name: "terminal",
        preview: "ls -la",
        status: "ok",
        progress: [],
        output: "",
        result: "a b",
        durationMs: null,
      },
      { kind: "assistant", text: "Two files.", reasoning: "", streaming: false },
    ]);
  });
});
