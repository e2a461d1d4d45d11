import { describe, expect, it } from "vitest";
import {
  assignToolNames,
  MAX_TOOL_NAME_LENGTH,
  mcpToolName,
  mcpToolsetName,
  sanitizeNamePart,
} from "../../../../src/tools/mcp/names.js";

describe("MCP tool names", () => {
  it.each<[string, string, string]>([
    ["filesystem", "read_file", "mcp_filesystem_read_file"],
    ["my-server", "get-sum", "mcp_my_server_get_sum"],
    ["gh.enterprise", "search issues", "mcp_gh_enterprise_search_issues"],
    ["ünï", "wörk/42", "mcp__n__w_rk_42"],
  ])("%s / %s → %s", (server, tool, expected) => {
    expect(mcpToolName(server, tool)).toBe(expected);
    expect(expected).toMatch(/^[a-zA-Z0-9_-]+$/);
  });

  it("keeps the configured server name in the toolset name", () => {
    expect(mcpToolsetName("my-server")).toBe("mcp-my-server");
    expect(sanitizeNamePart("a-b.c d")).toBe("a_b_c_d");
  });

  it("cuts long names to 64 characters with a stable hash, and keeps them distinct", () => {
    const long = "x".repeat(80);
    const names = assignToolNames("server", [`${long}_one`, `${long}_two`]);
    const values = [...names.values()];
    for (const name of values) expect(name.length).toBeLessThanOrEqual(MAX_TOOL_NAME_LENGTH);
    expect(new Set(values).size).toBe(2);
    // Same input, same names: nothing depends on order or time.
    expect([...assignToolNames("server", [`${long}_two`, `${long}_one`]).entries()].sort()).toEqual(
      [...names.entries()].sort(),
    );
  });

  it("resolves collisions deterministically: sorted first keeps the plain name", () => {
    const names = assignToolNames("s", ["read_file", "read-file"]);
    expect(names.get("read-file")).toBe("mcp_s_read_file");
    expect(names.get("read_file")).toMatch(/^mcp_s_read_file_[0-9a-f]{8}$/);
    expect(assignToolNames("s", ["read-file", "read_file"])).toEqual(names);
  });

  it("avoids names another server already owns", () => {
    // Server "a_b" tool "c" and server "a" tool "b_c" both sanitise to mcp_a_b_c.
    const taken = new Set(["mcp_a_b_c"]);
    const names = assignToolNames("a", ["b_c"], (n) => taken.has(n));
    expect(names.get("b_c")).not.toBe("mcp_a_b_c");
    expect(names.get("b_c")).toMatch(/^mcp_a_b_c_[0-9a-f]{8}$/);
  });
});
