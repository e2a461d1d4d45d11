import { describe, expect, it } from "vitest";
import { resolveToolsets, TOOLSETS } from "../../../src/tools/toolsets.js";

describe("resolveToolsets", () => {
  it("expands includes in order without duplicates", () => {
    expect(resolveToolsets(["debugging"]).tools).toEqual([
      "terminal",
      "process",
      "web_search",
      "web_extract",
      "read_file",
      "write_file",
      "patch",
      "search_files",
    ]);
  });

  it("survives cycles in custom toolsets and reports unknown names", () => {
    const custom = { a: { tools: ["x"], includes: ["b"] }, b: { tools: ["y"], includes: ["a"] } };
    expect(resolveToolsets(["a", "nope"], { custom })).toEqual({ tools: ["x", "y"], unknown: ["nope"] });
  });

  it("resolves `all` to every toolset's tools, honours disabled toolsets, and accepts tool names", () => {
    const all = resolveToolsets(["all"]).tools;
    for (const spec of Object.values(TOOLSETS)) for (const t of spec.tools) expect(all).toContain(t);
    expect(resolveToolsets(["file", "terminal"], { disabled: ["terminal"] }).tools).not.toContain("terminal");
    expect(resolveToolsets(["todo_x"], { knownTools: new Set(["todo_x"]) }).tools).toEqual(["todo_x"]);
  });

  it("hermes-cli is the core bundle", () => {
    const tools = resolveToolsets(["hermes-cli"]).tools;
    expect(tools).toContain("terminal");
    expect(tools).toContain("clarify");
    expect(tools).toContain("todo");
  });
});
