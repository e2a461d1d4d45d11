/**
 * `hermes mcp serve`: Hermes as an MCP server on stdio, for MCP clients (Claude Code, Cursor,
 * editors). It offers the conversations in `state.db` (list, read, search, attachments), the
 * running gateway's channels, events and approvals (through its control socket), sends to chats,
 * and `hermes_prompt`, which runs one agent turn with the configured model and tools, in a new
 * session or continuing one. Nothing is printed on stdout except protocol frames; problems go to
 * stderr.
 */
import { createRequire } from "node:module";
import type * as ServerModule from "@modelcontextprotocol/sdk/server/index.js";
import type * as StdioModule from "@modelcontextprotocol/sdk/server/stdio.js";
import type * as TypesModule from "@modelcontextprotocol/sdk/types.js";
import { ChatSession } from "../../agent/chat-session.js";
import { resolveRuntime } from "../../ai/resolve.js";
import type { HermesConfig } from "../../config/defaults.js";
import { openSessionStore, sessionStorePath } from "../../state/sqlite-store.js";
import type { SessionStore } from "../../state/types.js";
import { homeLogger, type Logger } from "../../util/log.js";
import { hermesVersion } from "../../util/version.js";
import { protectSecrets } from "../secrets.js";
import { liveTools } from "./mcp-serve-live.js";
import { type Json, type ServeTool, storeTools, str, ToolContent } from "./mcp-serve-store.js";

export interface McpServeOptions {
  home: string;
  config: HermesConfig;
  env: Record<string, string | undefined>;
  /** Working directory for `hermes_prompt` runs (tools resolve paths against it). */
  cwd: string;
  verbose?: boolean;
  /** The home's log files, for the agent runs of `hermes_prompt` (default: made from `logging:`). */
  logger?: Logger;
}

/**
 * The tools `hermes mcp serve` offers: upstream's ten (conversations, messages, attachments from
 * the store; channels, sends, events and approvals from the running gateway) plus
 * `conversations_search` and `hermes_prompt`.
 */
export function serveTools(store: SessionStore, options: McpServeOptions): ServeTool[] {
  return [
    ...storeTools(store, options.home),
    ...liveTools(options.home),
    {
      name: "hermes_prompt",
      description:
        "Ask the Hermes agent to do something: it runs with its configured model, tools, memory and " +
        "skills, and answers. Give session_id to continue a conversation; otherwise a new one starts. " +
        "Dangerous commands are denied (nobody can approve them here).",
      inputSchema: {
        type: "object",
        properties: {
          prompt: { type: "string", description: "What to ask or have done." },
          session_id: { type: "string", description: "Continue this conversation (id, prefix or title)." },
        },
        required: ["prompt"],
      },
      run: (args) => runPrompt(store, options, str(args, "prompt") ?? "", str(args, "session_id")),
    },
  ];
}

async function runPrompt(
  store: SessionStore,
  options: McpServeOptions,
  prompt: string,
  sessionId: string | undefined,
): Promise<unknown> {
  if (!prompt) throw new Error("Give a non-empty prompt.");
  const resolved = resolveRuntime({
    flags: {},
    config: options.config,
    env: options.env,
    home: options.home,
  });
  const session = await ChatSession.open({
    config: options.config,
    home: options.home,
    cwd: options.cwd,
    env: options.env,
    resolved,
    platform: "mcp",
    source: "mcp",
    store,
    ...(sessionId ? { resume: sessionId } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  });
  try {
    const result = await session.run(prompt).result;
    if (result.reason === "error") throw new Error(result.error ?? "The turn failed.");
    return { session_id: session.id, status: result.reason, answer: result.text };
  } finally {
    await session.close();
  }
}

/** Serves until stdin closes. Resolves with the exit code. */
export async function serveMcp(options: McpServeOptions): Promise<number> {
  const require = createRequire(import.meta.url);
  const { Server } = require("@modelcontextprotocol/sdk/server/index.js") as typeof ServerModule;
  const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js") as typeof StdioModule;
  const types = require("@modelcontextprotocol/sdk/types.js") as typeof TypesModule;
  // Conversations read back and the agent's answers leave through stdout: redacted like any surface.
  protectSecrets({ home: options.home, env: options.env, config: options.config });
  const store = openSessionStore(sessionStorePath(options.home));
  // One logger for the server's life (each holds its files open); nothing is opened before a run.
  const logger =
    options.logger ??
    homeLogger(options.home, options.config.logging, {
      component: "mcp_serve",
      verbose: options.verbose === true,
    });
  const tools = serveTools(store, { ...options, logger });
  const server = new Server(
    { name: "hermes", version: hermesVersion() },
    {
      capabilities: { tools: {} },
      instructions:
        "Hermes's conversations across Telegram, Discord, Slack, Signal, email and its other platforms, and " +
        "the Hermes agent itself. Read with conversations_list / messages_read / conversations_search; follow " +
        "a running gateway with events_poll / events_wait, send with messages_send (targets from channels_list), " +
        "answer approvals with permissions_list_open / permissions_respond; ask the agent with hermes_prompt.",
    },
  );
  server.setRequestHandler(types.ListToolsRequestSchema, async () => ({
    tools: tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
  }));
  server.setRequestHandler(types.CallToolRequestSchema, async (request) => {
    const tool = tools.find((t) => t.name === request.params.name);
    if (!tool) {
      return {
        isError: true,
        content: [
          {
            type: "text",
            text: `Unknown tool "${request.params.name}". Tools: ${tools.map((t) => t.name).join(", ")}.`,
          },
        ],
      };
    }
    try {
      const value = await tool.run((request.params.arguments ?? {}) as Json);
      if (value instanceof ToolContent) return { content: value.content };
      return {
        content: [{ type: "text", text: typeof value === "string" ? value : JSON.stringify(value, null, 2) }],
      };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (options.verbose) process.stderr.write(`hermes mcp serve: ${tool.name} failed: ${message}\n`);
      return { isError: true, content: [{ type: "text", text: message }] };
    }
  });
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once("end", () => resolve());
  });
  await server.connect(transport);
  if (options.verbose) process.stderr.write(`hermes mcp serve: ready (${tools.length} tools)\n`);
  await closed;
  await server.close().catch(() => undefined);
  await store.close();
  return 0;
}
