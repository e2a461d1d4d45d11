/**
 * Tool definitions for one MCP server: a wrapper per server tool (its JSON Schema as parameters,
 * its description), plus resource and prompt wrappers when the server offers those. Handlers go
 * through the protected-path guard (for tools that write) and an {@link McpCaller}, which owns
 * reconnecting and error wording.
 */

import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { TSchema } from "@sinclair/typebox";
import type { AnyTool } from "../registry.js";
import type { ToolContext } from "../types.js";
import type { McpServerConfig } from "./config.js";
import type { McpConnection } from "./connection.js";
import { mcpToolName, mcpToolsetName } from "./names.js";
import { renderPrompt, renderResourceContents, renderToolResult } from "./results.js";
import { guardMcpCall } from "./write-guard.js";

/** Runs work against a server's live connection; throws readable errors for the model. */
export interface McpCaller {
  run<T>(server: string, work: (connection: McpConnection) => Promise<T>, ctx: ToolContext): Promise<T>;
}

/** Longest description kept from a server; longer ones are cut at a word with "…". */
export const MAX_DESCRIPTION_CHARS = 1024;

export interface BuildToolsOptions {
  server: McpServerConfig;
  /** The server's tools after include/exclude filtering. */
  tools: readonly Tool[];
  /** Server tool name → registry name (see `assignToolNames`). */
  names: ReadonlyMap<string, string>;
  /** Add resource / prompt wrappers (the server advertises the capability and config allows it). */
  resources: boolean;
  prompts: boolean;
  caller: McpCaller;
  /** Where image results are saved; default a temp directory. */
  imageDir?: string;
}

/** Registry tools for one server. Utility wrappers whose name a server tool already has are left out. */
export function buildServerTools(options: BuildToolsOptions): AnyTool[] {
  const { server, caller } = options;
  const toolset = mcpToolsetName(server.name);
  const render = { server: server.name, ...(options.imageDir ? { imageDir: options.imageDir } : {}) };
  const out: AnyTool[] = [];
  for (const tool of options.tools) {
    const name = options.names.get(tool.name);
    if (!name) continue;
    out.push({
      name,
      toolset,
      description: describeTool(tool, server.name),
      parameters: normaliseInputSchema(tool.inputSchema) as unknown as TSchema,
      parallelSafe: server.parallel,
      // Only what the server itself declares read-only (its annotations are the server's word).
      ...(tool.annotations?.readOnlyHint === true ? { sideEffectFree: true } : {}),
      handler: async (args: Record<string, unknown>, ctx: ToolContext) => {
        // A filesystem server's write to config.yaml, ~/.bashrc or .env is judged like write_file's.
        await guardMcpCall(ctx, name, tool, args, server);
        return caller.run(
          server.name,
          async (connection) =>
            renderToolResult(
              await connection.callTool(tool.name, args, { signal: ctx.signal, onProgress: ctx.progress }),
              render,
            ),
          ctx,
        );
      },
    });
  }
  const taken = new Set(out.map((tool) => tool.name));
  const utility = (suffix: string, def: Omit<AnyTool, "name" | "toolset" | "parallelSafe">): void => {
    const name = mcpToolName(server.name, suffix);
    if (taken.has(name) || name.length > 64) return;
    // Listing and reading resources and prompts: reads.
    out.push({ ...def, name, toolset, parallelSafe: true, sideEffectFree: true });
  };
  if (options.resources) {
    utility("list_resources", {
      description: `List the resources (files, records, documents) the MCP server "${server.name}" makes available, with their URIs. Read one with ${mcpToolName(server.name, "read_resource")}.`,
      parameters: objectSchema({
        cursor: { type: "string", description: "nextCursor from an earlier page" },
      }),
      handler: (args: { cursor?: string }, ctx: ToolContext) =>
        caller.run(
          server.name,
          async (connection) => {
            const page = await connection.listResources(args.cursor);
            return {
              resources: page.resources.map((r) => ({
                uri: r.uri,
                name: r.name,
                ...(r.mimeType ? { mimeType: r.mimeType } : {}),
                ...(r.description ? { description: r.description } : {}),
              })),
              ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
            };
          },
          ctx,
        ),
    });
    utility("read_resource", {
      description: `Read one resource of the MCP server "${server.name}" by its URI (from ${mcpToolName(server.name, "list_resources")}).`,
      parameters: objectSchema({ uri: { type: "string", description: "the resource URI" } }, ["uri"]),
      handler: (args: { uri: string }, ctx: ToolContext) =>
        caller.run(
          server.name,
          async (connection) => renderResourceContents(await connection.readResource(args.uri, ctx.signal)),
          ctx,
        ),
    });
  }
  if (options.prompts) {
    utility("list_prompts", {
      description: `List the prompt templates the MCP server "${server.name}" offers, with the arguments each takes.`,
      parameters: objectSchema({
        cursor: { type: "string", description: "nextCursor from an earlier page" },
      }),
      handler: (args: { cursor?: string }, ctx: ToolContext) =>
        caller.run(
          server.name,
          async (connection) => {
            const page = await connection.listPrompts(args.cursor);
            return {
              prompts: page.prompts.map((p) => ({
                name: p.name,
                ...(p.description ? { description: p.description } : {}),
                ...(p.arguments?.length ? { arguments: p.arguments } : {}),
              })),
              ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
            };
          },
          ctx,
        ),
    });
    utility("get_prompt", {
      description: `Fill in one prompt template of the MCP server "${server.name}" and return its messages.`,
      parameters: objectSchema(
        {
          name: { type: "string", description: "the prompt name" },
          arguments: {
            type: "object",
            description: "values for the prompt's arguments",
            additionalProperties: { type: "string" },
          },
        },
        ["name"],
      ),
      handler: (args: { name: string; arguments?: Record<string, string> }, ctx: ToolContext) =>
        caller.run(
          server.name,
          async (connection) =>
            renderPrompt(await connection.getPrompt(args.name, args.arguments ?? {}, ctx.signal), render),
          ctx,
        ),
    });
  }
  return out;
}

/** The server's description, trimmed; a sentence of our own when it gave none. */
export function describeTool(tool: Pick<Tool, "name" | "description" | "title">, server: string): string {
  const text = (tool.description ?? "").trim() || (tool.title ?? "").trim();
  if (!text) return `Tool "${tool.name}" of the MCP server "${server}".`;
  if (text.length <= MAX_DESCRIPTION_CHARS) return text;
  const cut = text.slice(0, MAX_DESCRIPTION_CHARS - 1);
  const space = cut.search(/\s\S*$/);
  return `${(space > MAX_DESCRIPTION_CHARS / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/**
 * A server's input schema made acceptable to ajv and to providers: always an object schema with
 * `properties`, without `$schema` (ajv would try to load a 2020-12 meta-schema it does not have).
 */
export function normaliseInputSchema(schema: unknown): Record<string, unknown> {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    return { type: "object", properties: {} };
  }
  const { $schema: _ignored, ...rest } = schema as Record<string, unknown>;
  const out: Record<string, unknown> = { ...rest };
  if (out["type"] === undefined) out["type"] = "object";
  if (out["type"] === "object" && (typeof out["properties"] !== "object" || out["properties"] === null)) {
    out["properties"] = {};
  }
  return out;
}

function objectSchema(properties: Record<string, unknown>, required: string[] = []): TSchema {
  return {
    type: "object",
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
  } as unknown as TSchema;
}
