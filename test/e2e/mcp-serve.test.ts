/**
 * `hermes mcp serve` driven by the MCP SDK's own stdio client: it lists its tools, runs a prompt
 * through the agent against the fake LLM, and reads the conversation back.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeProviderConfig, HERMES_BIN, tempHome } from "../support/cli.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";

let llm: FakeLlm;
beforeAll(async () => {
  llm = await startFakeLlm();
});
afterAll(async () => {
  await llm.close();
});

type TextResult = { content: Array<{ type: string; text: string }>; isError?: boolean };
const text = (result: unknown) => (result as TextResult).content.map((c) => c.text).join("");

describe("hermes mcp serve", () => {
  it("answers a real MCP client: tools, a prompt run by the agent, the stored conversation", async () => {
    const h = tempHome(fakeProviderConfig(llm.url));
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [HERMES_BIN, "mcp", "serve"],
      cwd: h.cwd,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: h.home, HERMES_HOME: h.home, NO_COLOR: "1" },
      stderr: "pipe",
    });
    const client = new Client({ name: "test-client", version: "1.0.0" });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual([
        "attachments_fetch",
        "channels_list",
        "conversation_get",
        "conversations_list",
        "conversations_search",
        "events_poll",
        "events_wait",
        "hermes_prompt",
        "messages_read",
        "messages_send",
        "permissions_list_open",
        "permissions_respond",
      ]);

      llm.enqueue(reply().text("Paris is the capital of France."));
      const answer = JSON.parse(
        text(await client.callTool({ name: "hermes_prompt", arguments: { prompt: "Capital of France?" } })),
      ) as { session_id: string; status: string; answer: string };
      expect(answer.status).toBe("completed");
      expect(answer.answer).toBe("Paris is the capital of France.");
      const sent = llm.chatRequests.at(-1)?.body as { messages: Array<{ role: string; content: string }> };
      expect(sent.messages.at(-1)).toEqual({ role: "user", content: "Capital of France?" });

      // The run is a stored conversation that the read tools see.
      const listed = JSON.parse(text(await client.callTool({ name: "conversations_list", arguments: {} })));
      expect(listed).toEqual({
        count: 1,
        conversations: [
          expect.objectContaining({
            session_key: null,
            session_id: answer.session_id,
            platform: "mcp",
            messages: 2,
          }),
        ],
      });
      // Not a gateway chat: its session id names it (upstream's session_key argument, or session_id).
      for (const args of [{ session_key: answer.session_id }, { session_id: answer.session_id }]) {
        const read = JSON.parse(text(await client.callTool({ name: "messages_read", arguments: args }))) as {
          messages: Array<{ role: string; content: string }>;
        };
        expect(read.messages).toEqual([
          expect.objectContaining({ role: "user", content: "Capital of France?" }),
          expect.objectContaining({ role: "assistant", content: "Paris is the capital of France." }),
        ]);
      }
      const hits = JSON.parse(
        text(await client.callTool({ name: "conversations_search", arguments: { query: "capital" } })),
      ) as { results: Array<{ session_id: string }> };
      expect(hits.results.length).toBeGreaterThan(0);

      // Continuing the same conversation carries its history.
      llm.enqueue(reply().text("About 2.1 million people."));
      const more = JSON.parse(
        text(
          await client.callTool({
            name: "hermes_prompt",
            arguments: { prompt: "How many live there?", session_id: answer.session_id },
          }),
        ),
      ) as { session_id: string; answer: string };
      expect(more.session_id).toBe(answer.session_id);
      const second = llm.chatRequests.at(-1)?.body as { messages: Array<{ role: string; content: string }> };
      expect(second.messages.map((m) => m.content)).toContain("Capital of France?");

      // Bad input is an error result, not a crash.
      const missing = await client.callTool({ name: "messages_read", arguments: { session_key: "no-such" } });
      expect((missing as TextResult).isError).toBe(true);
      expect(text(missing)).toMatch(/Conversation not found: no-such/);
      // Without a gateway the live tools say so, and how to start one.
      const live = await client.callTool({ name: "permissions_list_open", arguments: {} });
      expect((live as TextResult).isError).toBe(true);
      expect(text(live)).toMatch(/No gateway is running .*hermes gateway start/);
    } finally {
      await client.close();
    }
  }, 60_000);
});
