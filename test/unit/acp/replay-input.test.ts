import { describe, expect, it } from "vitest";
import { sessionMcpServers } from "../../../src/acp/mcp-servers.js";
import { promptInput } from "../../../src/acp/prompt-input.js";
import { replayUpdates } from "../../../src/acp/replay.js";

describe("replaying a stored conversation", () => {
  it("redraws user text, thoughts, answers and tool calls with their results", () => {
    const updates = replayUpdates([
      { role: "user", content: "hi" },
      {
        role: "assistant",
        content: null,
        reasoning: "think",
        tool_calls: [
          {
            id: "c1",
            type: "function",
            function: { name: "write_file", arguments: '{"path":"a.txt","content":"x"}' },
          },
        ],
      },
      { role: "tool", content: '{"ok":true}', tool_call_id: "c1", name: "write_file" },
      { role: "assistant", content: "done" },
    ]);
    expect(updates.map((u) => u.sessionUpdate)).toEqual([
      "user_message_chunk",
      "agent_thought_chunk",
      "tool_call",
      "tool_call_update",
      "agent_message_chunk",
    ]);
    expect(updates[2]).toMatchObject({ toolCallId: "c1", kind: "edit", title: "write_file: a.txt" });
  });

  it("survives malformed stored arguments and results without a call", () => {
    const updates = replayUpdates([
      {
        role: "assistant",
        content: "",
        tool_calls: [{ id: "c", type: "function", function: { name: "terminal", arguments: "{not json" } }],
      },
      { role: "tool", content: "orphan", tool_call_id: "zzz" },
    ]);
    expect(updates[0]).toMatchObject({ sessionUpdate: "tool_call", title: "terminal", rawInput: {} });
    expect(updates[1]).toMatchObject({ sessionUpdate: "tool_call_update", toolCallId: "zzz" });
  });

  it("replays image parts as images", () => {
    const updates = replayUpdates([
      {
        role: "user",
        content: [
          { type: "text", text: "look" },
          { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
        ],
      },
    ]);
    expect(updates[1]).toMatchObject({ content: { type: "image", mimeType: "image/png", data: "AAAA" } });
  });
});

describe("an editor's prompt as the user message", () => {
  it("keeps a text-only prompt a string, with embedded context fenced and named", () => {
    const input = promptInput([
      { type: "text", text: "explain" },
      { type: "resource", resource: { uri: "file:///w/a.ts", text: "const a = 1;" } },
      { type: "resource_link", uri: "file:///w/b.ts", name: "b.ts" },
    ]);
    expect(typeof input.content).toBe("string");
    expect(input.content).toContain("Context from file:///w/a.ts:\n```\nconst a = 1;\n```");
    expect(input.content).toContain("[Referenced: b.ts <file:///w/b.ts>]");
  });

  it("sends supported images as data URLs and reports what it leaves out", () => {
    const input = promptInput([
      { type: "text", text: "what is this" },
      { type: "image", mimeType: "image/png", data: "AAAA" },
      { type: "image", mimeType: "image/svg+xml", data: "PHN2Zz4=" },
      { type: "audio", mimeType: "audio/wav", data: "AAAA" },
      { type: "resource", resource: { uri: "file:///w/bin", blob: "AAAA" } },
    ]);
    expect(input.content).toEqual([
      { type: "text", text: "what is this" },
      { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
    ]);
    expect(input.skipped).toHaveLength(3);
    expect(input.skipped.join(" ")).toContain("image/svg+xml");
  });
});

describe("an editor's MCP servers", () => {
  it("become mcp_servers entries over the configured ones", () => {
    const merged = sessionMcpServers({ fs: { command: "old" }, keep: { url: "http://x" } }, [
      { name: "fs", command: "npx", args: ["-y", "server-fs"], env: [{ name: "A", value: "1" }] },
      {
        type: "http",
        name: "remote",
        url: "http://127.0.0.1:9/mcp",
        headers: [{ name: "Authorization", value: "Bearer t" }],
      },
    ]);
    expect(merged).toEqual({
      fs: { command: "npx", args: ["-y", "server-fs"], env: { A: "1" } },
      keep: { url: "http://x" },
      remote: { url: "http://127.0.0.1:9/mcp", headers: { Authorization: "Bearer t" } },
    });
    expect(sessionMcpServers("not a mapping", [])).toEqual({});
  });
});
