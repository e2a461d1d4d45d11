import { describe, expect, it } from "vitest";
import { previewArgs as previewFromRender } from "../../../../src/cli/render.js";
import { createStyle } from "../../../../src/cli/tui/style.js";
import {
  formatDuration,
  formatToolLine,
  nextToolProgress,
  parseToolProgress,
  previewArgs,
  resultExcerpt,
} from "../../../../src/cli/tui/tool-line.js";

const plain = createStyle(false);
const color = createStyle(true);

describe("formatToolLine", () => {
  it.each<[string, Parameters<typeof formatToolLine>[0], string]>([
    [
      "terminal",
      { name: "terminal", args: { command: "ls  -la\n/tmp" }, ok: true, durationMs: 420 },
      "💻 terminal ls -la /tmp 0.4s",
    ],
    [
      "failed read",
      { name: "read_file", args: { path: "a.txt" }, ok: false, durationMs: 5 },
      "📖 read_file a.txt 0.0s ✗",
    ],
    ["unknown tool", { name: "mystery", args: {}, ok: true, durationMs: 61_000 }, "🔧 mystery  1m 01s"],
    [
      "todo count",
      { name: "todo", args: { todos: [1, 2, 3] }, ok: true, durationMs: 10 },
      "📋 todo 3 items 0.0s",
    ],
    ["no args known", { name: "terminal", args: undefined, ok: true, durationMs: 1000 }, "💻 terminal  1.0s"],
  ])("%s", (_n, call, expected) => {
    expect(formatToolLine(call, plain)).toBe(expected);
  });

  it("marks failures in red and the name in bold when colour is on", () => {
    const line = formatToolLine(
      { name: "terminal", args: { command: "x" }, ok: false, durationMs: 1 },
      color,
    );
    expect(line).toContain("\x1b[1mterminal\x1b[22m");
    expect(line).toContain("\x1b[31m ✗\x1b[39m");
  });

  it("shortens the preview to fit the width", () => {
    const line = formatToolLine(
      { name: "terminal", args: { command: "x".repeat(200) }, ok: true, durationMs: 1 },
      plain,
      { width: 40 },
    );
    expect(line.length).toBeLessThanOrEqual(40);
    expect(line).toContain("…");
  });

  it("is what the one-shot renderer re-exports", () => {
    expect(previewFromRender).toBe(previewArgs);
  });
});

describe("tool progress levels", () => {
  it("cycles off → new → all → verbose → off", () => {
    expect(["off", "new", "all", "verbose"].map((l) => nextToolProgress(l as never))).toEqual([
      "new",
      "all",
      "verbose",
      "off",
    ]);
  });

  it.each<[unknown, string]>([
    ["verbose", "verbose"],
    [" NEW ", "new"],
    [false, "off"],
    [true, "all"],
    ["loud", "all"],
    [undefined, "all"],
  ])("parses %j as %s", (value, level) => {
    expect(parseToolProgress(value)).toBe(level);
  });
});

describe("verbose details", () => {
  it("shows the first lines of a result and counts the rest", () => {
    const result = Array.from({ length: 12 }, (_, i) => `line ${i}`).join("\n");
    const lines = resultExcerpt(result, 3);
    expect(lines).toEqual(["    line 0", "    line 1", "    line 2", "    … 9 more lines"]);
  });

  it("formats durations", () => {
    expect(formatDuration(0)).toBe("0.0s");
    expect(formatDuration(59_949)).toBe("59.9s");
    expect(formatDuration(125_000)).toBe("2m 05s");
  });
});
