/**
 * `hermes mcp serve`: Hermes as an MCP server on stdio, for MCP clients (Claude Code, Cursor,
 * editors). It offers the conversations in `state.db` (list, read, search) and `hermes_prompt`,
 * which runs one agent turn with the configured model and tools, in a new session or continuing
 * one. Nothing is printed on stdout except protocol frames; problems go to stderr.
 */
import { createRequire } from "node:module";
import type * as ServerModule from "@modelcontextprotocol/sdk/server/index.js";
import type * as StdioModule from "@modelcontextprotocol/sdk/server/stdio.js";
import type * as TypesModule from "@modelcontextprotocol/sdk/types.js";
import { ChatSession } from "../../agent/chat-session.js";
import { resolveRuntime } from "../../ai/resolve.js";
import { type Message, messageText } from "../../ai/types.js";
import type { HermesConfig } from "../../config/defaults.js";
import { openSessionStore, sessionStorePath } from "../../state/sqlite-store.js";
import type { SessionStore } from "../../state/types.js";
import { homeLogger, type Logger } from "../../util/log.js";
import { hermesVersion } from "../../util/version.js";
import { protectSecrets } from "../secrets.js";

type Json = Record<string, unknown>;

interface ServeTool {
  name: string;
  description: string;
  inputSchema: Json;
  run(args: Json): Promise<unknown> | unknown;
}

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

const str = (args: Json, key: string): string | undefined =>
  typeof args[key] === "string" && (args[key] as string).trim() ? (args[key] as string).trim() : undefined;

function int(args: Json, key: string, fallback: number, max: number): number {
  const value = Number(args[key]);
  return Number.isFinite(value) && value >= 1 ? Math.min(Math.floor(value), max) : fallback;
}

function iso(seconds: number | null | undefined): string | null {
  return typeof seconds === "number" && seconds > 0 ? new Date(seconds * 1000).toISOString() : null;
}

/** The tools `hermes mcp serve` offers, over one open session store. */
export function serveTools(store: SessionStore, options: McpServeOptions): ServeTool[] {
  const messageView = (m: Message) => ({
    role: m.role,
    content: messageText(m),
    ...(m.tool_calls?.length ? { tool_calls: m.tool_calls.map((c) => c.function.name) } : {}),
  });
  return [
    {
      name: "conversations_list",
      description:
        "List recent Hermes conversations (newest first): id, title, source, model, times, preview.",
      inputSchema: {
        type: "object",
        properties: {
          limit: { type: "integer", minimum: 1, maximum: 100, description: "How many (default 20)." },
          source: { type: "string", description: "Only this source: cli, telegram, discord, mcp, ..." },
        },
      },
      run: (args) =>
        store
          .listSessions({
            limit: int(args, "limit", 20, 100),
            ...(str(args, "source") ? { source: str(args, "source") as string } : {}),
          })
          .map((s) => ({
            id: s.id,
            title: s.title,
            source: s.source,
            model: s.model,
            started_at: iso(s.startedAt),
            last_active_at: iso(s.lastActiveAt),
            messages: s.messageCount,
            preview: s.preview,
          })),
    },
    {
      name: "conversation_get",
      description: "One conversation's details by id (or title): model, times, tokens, cost, parent.",
      inputSchema: {
        type: "object",
        properties: { session_id: { type: "string", description: "Session id, id prefix or title." } },
        required: ["session_id"],
      },
      run: (args) => {
        const s = store.resolveSession(str(args, "session_id") ?? "");
        return {
          id: s.id,
          title: s.title,
          source: s.source,
          model: s.model,
          started_at: iso(s.startedAt),
          ended_at: iso(s.endedAt),
          end_reason: s.endReason,
          parent_session_id: s.parentSessionId,
          messages: s.messageCount,
          input_tokens: s.inputTokens,
          output_tokens: s.outputTokens,
          estimated_cost_usd: s.estimatedCostUsd,
        };
      },
    },
    {
      name: "messages_read",
      description: "The latest messages of a conversation, oldest first (text only; tool calls named).",
      inputSchema: {
        type: "object",
        properties: {
          session_id: { type: "string", description: "Session id, id prefix or title." },
          limit: { type: "integer", minimum: 1, maximum: 500, description: "How many (default 50)." },
        },
        required: ["session_id"],
      },
      run: (args) => {
        const s = store.resolveSession(str(args, "session_id") ?? "");
        const all = store.conversation(s.id);
        const limit = int(args, "limit", 50, 500);
        return { session_id: s.id, total: all.length, messages: all.slice(-limit).map(messageView) };
      },
    },
    {
      name: "conversations_search",
      description: "Full-text search over every stored conversation; returns matching snippets.",
      inputSchema: {
        type: "object",
        properties: {
          query: { type: "string", description: 'Words (ANDed), "a phrase", prefix*, OR, NOT.' },
          limit: { type: "integer", minimum: 1, maximum: 100, description: "How many (default 10)." },
        },
        required: ["query"],
      },
      run: (args) =>
        store.search({ query: str(args, "query") ?? "", limit: int(args, "limit", 10, 100) }).map((h) => ({
          session_id: h.sessionId,
          session_title: h.sessionTitle,
          role: h.role,
          snippet: h.snippet,
          at: iso(h.timestamp),
        })),
    },
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
        "Hermes's conversations (all platforms) and the Hermes agent itself. Read with " +
        "conversations_list / messages_read / conversations_search; ask the agent with hermes_prompt.",
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
  store.close();
  return 0;
}
