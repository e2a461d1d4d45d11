/** A running command's output under the spinner row: shown while it runs, gone when it ends. */
import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../../../src/agent/events.js";
import { createStyle } from "../../../../src/cli/tui/style.js";
import type { ToolProgress } from "../../../../src/cli/tui/tool-line.js";
import { TurnView } from "../../../../src/cli/tui/turn-view.js";

function view(level: ToolProgress = "all") {
  const shown: Array<readonly string[]> = [];
  const info: string[] = [];
  const v = new TurnView(
    {
      answer: () => undefined,
      info: (lines) => info.push(...lines),
      status: () => undefined,
      output: (lines) => shown.push(lines),
    },
    { markdown: "plain", style: createStyle(false), width: () => 80, toolProgress: () => level },
  );
  return { v, shown, info };
}

const start = (id: string): AgentEvent => ({
  type: "tool_start",
  callId: id,
  name: "terminal",
  args: { command: "npm test" },
});
const out = (id: string, text: string): AgentEvent => ({
  type: "tool_output",
  callId: id,
  name: "terminal",
  text,
});
const end = (id: string): AgentEvent => ({
  type: "tool_end",
  callId: id,
  name: "terminal",
  ok: true,
  result: "{}",
  durationMs: 10,
});

describe("TurnView: live command output", () => {
  it("shows the last four lines while the command runs and takes them away when it ends", () => {
    const { v, shown, info } = view();
    v.handle(start("a"));
    v.handle(out("a", "1\n2\n3\n"));
    v.handle(out("a", "4\n5\n"));
    expect(shown.at(-1)).toEqual(["2", "3", "4", "5"]);
    v.handle(end("a"));
    expect(shown.at(-1)).toEqual([]);
    // The output never becomes scrollback: only the tool line is printed.
    expect(info.join("\n")).not.toMatch(/^[1-5]$/m);
    expect(info.join("\n")).toMatch(/terminal/);
  });

  it("a second call's output replaces the first's; the first ending does not clear the second", () => {
    const { v, shown } = view();
    v.handle(start("a"));
    v.handle(start("b"));
    v.handle(out("a", "from a\n"));
    v.handle(out("b", "from b\n"));
    expect(shown.at(-1)).toEqual(["from b"]);
    v.handle(end("a"));
    expect(shown.at(-1)).toEqual(["from b"]);
    v.handle(end("b"));
    expect(shown.at(-1)).toEqual([]);
  });

  it("shows nothing with /verbose off, and clears what is shown when the turn is cut short", () => {
    const off = view("off");
    off.v.handle(start("a"));
    off.v.handle(out("a", "x\n"));
    expect(off.shown).toEqual([]);
    const cut = view();
    cut.v.handle(start("a"));
    cut.v.handle(out("a", "x\n"));
    cut.v.finish();
    expect(cut.shown.at(-1)).toEqual([]);
  });
});
