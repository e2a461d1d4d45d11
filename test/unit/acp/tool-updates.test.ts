import { describe, expect, it } from "vitest";
import {
  editDiffs,
  endContent,
  endStatus,
  fenced,
  outputContent,
  resultFailed,
  startContent,
  tail,
  toolKind,
  toolLocations,
  toolTitle,
} from "../../../src/acp/tool-updates.js";

describe("tool calls as an editor sees them", () => {
  it.each([
    ["read_file", "read"],
    ["write_file", "edit"],
    ["patch", "edit"],
    ["search_files", "search"],
    ["terminal", "execute"],
    ["web_search", "fetch"],
    ["mcp_github_create_issue", "other"],
    ["__proto__", "other"],
  ])("%s is of kind %s", (name, kind) => {
    expect(toolKind(name)).toBe(kind);
  });

  it("titles a call with the CLI's preview, and survives arguments of the wrong type", () => {
    expect(toolTitle("terminal", { command: "ls   -la" })).toBe("terminal: ls -la");
    expect(toolTitle("todo", {})).toBe("todo");
    expect(toolTitle("terminal", { command: { nested: true } })).toContain("terminal");
  });

  it("locates the files with a line when one is given", () => {
    expect(toolLocations({ offset: 10 }, ["/w/a.ts"])).toEqual([{ path: "/w/a.ts", line: 10 }]);
    expect(toolLocations({ offset: "10" }, ["/w/a.ts"])).toEqual([{ path: "/w/a.ts" }]);
  });

  it("shows the command line of a terminal call, and nothing extra for reads", () => {
    expect(JSON.stringify(startContent("terminal", { command: "make" }))).toContain("$ make");
    expect(startContent("read_file", { path: "a" })).toEqual([]);
  });

  it("fences text that itself holds backticks", () => {
    const text = "a ``` b ```` c";
    const out = fenced(text);
    expect(out.startsWith("`````\n")).toBe(true);
    expect(out.endsWith("\n`````")).toBe(true);
  });

  it("keeps the end of long output and says how much came before", () => {
    const out = tail("x".repeat(6000) + "END", 100);
    expect(out.endsWith("END")).toBe(true);
    expect(out).toContain("5903 earlier characters not shown");
    const [block] = outputContent({ command: "yes" }, "y\n".repeat(10_000));
    const shown = block?.type === "content" && block.content.type === "text" ? block.content.text : "";
    expect(shown.length).toBeLessThan(5200);
    expect(shown).toContain("$ yes");
  });
});

describe("diffs of edits", () => {
  it("shows created, changed and emptied files, and skips unchanged ones", () => {
    expect(
      editDiffs([
        { path: "/w/new", before: null, after: "a\n" },
        { path: "/w/same", before: "x", after: "x" },
        { path: "/w/changed", before: "a", after: "b" },
        { path: "/w/deleted", before: "gone", after: null },
      ]),
    ).toEqual([
      { type: "diff", path: "/w/new", oldText: null, newText: "a\n" },
      { type: "diff", path: "/w/changed", oldText: "a", newText: "b" },
      { type: "diff", path: "/w/deleted", oldText: "gone", newText: "" },
    ]);
  });

  it("falls back to the result when nothing changed (a failed edit)", () => {
    const content = endContent("patch", {}, '{"error":"old_string not found"}', [
      { path: "/w/a", before: "x", after: "x" },
    ]);
    expect(JSON.stringify(content)).toContain("old_string not found");
  });
});

describe("failure status", () => {
  it.each([
    [true, "plain text that mentions an error", false],
    [true, '{"output":"boom","exit_code":1}', true],
    [true, '{"output":"fine","exit_code":0}', false],
    [true, '{"success":false}', true],
    [true, '{"error":"not found"}', true],
    [true, '{"error":"warned","content":"still here"}', false],
    [true, "[1,2]", false],
    [false, "anything", true],
  ])("ok=%s %s → failed=%s", (ok, result, failed) => {
    expect(resultFailed(ok, result)).toBe(failed);
    expect(endStatus(ok, result)).toBe(failed ? "failed" : "completed");
  });

  it("shows a terminal result's output with its exit code", () => {
    expect(
      JSON.stringify(endContent("terminal", { command: "false" }, '{"output":"no","exit_code":2}', [])),
    ).toContain("[exit code 2]");
  });
});
