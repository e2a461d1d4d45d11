#!/usr/bin/env node
// A small stdio MCP server for the MCP client tests, built with the SDK's McpServer. Tools:
//   report_env            the server's environment, as JSON (proves what a child inherits)
//   pid                   the server's process id
//   echo {text}           "echo: <text>"
//   add_tool {name}       registers a new tool `name` (answers "<name> ran"); the SDK then sends
//                         notifications/tools/list_changed
//   remove_tool {name}    removes a tool added with add_tool (list_changed again)
//   sleep {ms}            answers after ms milliseconds (for call timeouts)
//   slow_read {ms, mark}  annotated read-only (readOnlyHint): writes `mark` (a file path) as it
//                         starts, then answers after ms milliseconds
//   slow_write {ms, mark} the same without the annotation (a tool that may act)
//   crash                 writes to stderr and exits with status 3 mid-call
//   fail                  a result flagged isError
//   image                 a 1x1 PNG image block
//   ask_model {prompt, max_tokens?, model_hint?}
//                         asks the client's model (sampling/createMessage); answers "model <name>
//                         said: <text>", or "sampling failed: <message>"
//   roots                 the client's roots (roots/list) as JSON, or "roots failed: <message>"
// Environment switches: MCP_TEST_CRASH_ON_START=<message> prints it to stderr and exits 1 before
// speaking MCP; MCP_TEST_HANG_ON_START=1 never answers the handshake.
import { writeFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

if (process.env.MCP_TEST_CRASH_ON_START) {
  process.stderr.write(`fatal: ${process.env.MCP_TEST_CRASH_ON_START}\n`);
  process.exit(1);
}
if (process.env.MCP_TEST_HANG_ON_START) {
  process.stderr.write("hanging before the handshake\n");
  setInterval(() => undefined, 60_000);
} else {
  const server = new McpServer({ name: "hermes-test-server", version: "1.0.0" });
  const text = (value) => ({ content: [{ type: "text", text: value }] });
  const added = new Map();

  server.registerTool("report_env", { description: "Report this server's environment as JSON." }, async () =>
    text(JSON.stringify(process.env)),
  );
  server.registerTool("pid", { description: "Report this server's process id." }, async () =>
    text(String(process.pid)),
  );
  server.registerTool(
    "echo",
    { description: "Echo the text back.", inputSchema: { text: z.string() } },
    async ({ text: value }) => text(`echo: ${value}`),
  );
  server.registerTool(
    "add_tool",
    { description: "Add a tool with this name.", inputSchema: { name: z.string() } },
    async ({ name }) => {
      added.set(
        name,
        server.registerTool(name, { description: `Dynamically added tool ${name}.` }, async () =>
          text(`${name} ran`),
        ),
      );
      return text(`added ${name}`);
    },
  );
  server.registerTool(
    "remove_tool",
    { description: "Remove a tool added with add_tool.", inputSchema: { name: z.string() } },
    async ({ name }) => {
      added.get(name)?.remove();
      added.delete(name);
      return text(`removed ${name}`);
    },
  );
  server.registerTool(
    "sleep",
    { description: "Answer after ms milliseconds.", inputSchema: { ms: z.number() } },
    async ({ ms }) => {
      await new Promise((resolve) => setTimeout(resolve, ms));
      return text(`slept ${ms} ms`);
    },
  );
  for (const [name, readOnlyHint] of [
    ["slow_read", true],
    ["slow_write", false],
  ]) {
    server.registerTool(
      name,
      {
        description: `Answer after ms milliseconds (${readOnlyHint ? "reads only" : "may act"}).`,
        inputSchema: { ms: z.number(), mark: z.string() },
        ...(readOnlyHint ? { annotations: { readOnlyHint } } : {}),
      },
      async ({ ms, mark }) => {
        writeFileSync(mark, String(process.pid));
        await new Promise((resolve) => setTimeout(resolve, ms));
        return text(`${name} done after ${ms} ms`);
      },
    );
  }
  server.registerTool("crash", { description: "Exit in the middle of the call." }, async () => {
    process.stderr.write("about to crash on purpose\n");
    process.exit(3);
  });
  server.registerTool("fail", { description: "Return an error result." }, async () => ({
    content: [{ type: "text", text: "the widget is jammed" }],
    isError: true,
  }));
  server.registerTool("image", { description: "Return a 1x1 PNG." }, async () => ({
    content: [
      { type: "text", text: "here is a pixel" },
      {
        type: "image",
        mimeType: "image/png",
        data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
      },
    ],
  }));

  server.registerTool(
    "ask_model",
    {
      description: "Ask the client's model a question (MCP sampling).",
      inputSchema: {
        prompt: z.string(),
        max_tokens: z.number().optional(),
        model_hint: z.string().optional(),
      },
    },
    async ({ prompt, max_tokens, model_hint }) => {
      try {
        const result = await server.server.createMessage({
          messages: [{ role: "user", content: { type: "text", text: prompt } }],
          systemPrompt: "You answer for an MCP server.",
          maxTokens: max_tokens ?? 100000,
          ...(model_hint ? { modelPreferences: { hints: [{ name: model_hint }] } } : {}),
        });
        return text(
          `model ${result.model} said: ${result.content.type === "text" ? result.content.text : "?"}`,
        );
      } catch (error) {
        return text(`sampling failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    },
  );
  server.registerTool("roots", { description: "List the client's roots." }, async () => {
    try {
      return text(JSON.stringify((await server.server.listRoots()).roots));
    } catch (error) {
      return text(`roots failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  });

  process.stderr.write("test server ready\n");
  await server.connect(new StdioServerTransport());
}
