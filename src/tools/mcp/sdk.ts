/**
 * The MCP SDK, loaded on first use. Nothing here runs at import time: a Hermes with no MCP server
 * configured never loads the SDK (the CLI bundle keeps it external and requires it from
 * node_modules).
 */
import { createRequire } from "node:module";
import type * as ClientModule from "@modelcontextprotocol/sdk/client/index.js";
import type * as SseModule from "@modelcontextprotocol/sdk/client/sse.js";
import type * as StdioModule from "@modelcontextprotocol/sdk/client/stdio.js";
import type * as HttpModule from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type * as TypesModule from "@modelcontextprotocol/sdk/types.js";

export interface McpSdk {
  Client: typeof ClientModule.Client;
  StdioClientTransport: typeof StdioModule.StdioClientTransport;
  /** Variables the SDK copies from `process.env` into every stdio child unless given explicitly. */
  DEFAULT_INHERITED_ENV_VARS: readonly string[];
  StreamableHTTPClientTransport: typeof HttpModule.StreamableHTTPClientTransport;
  StreamableHTTPError: typeof HttpModule.StreamableHTTPError;
  SSEClientTransport: typeof SseModule.SSEClientTransport;
  SseError: typeof SseModule.SseError;
  ToolListChangedNotificationSchema: typeof TypesModule.ToolListChangedNotificationSchema;
  CreateMessageRequestSchema: typeof TypesModule.CreateMessageRequestSchema;
  ListRootsRequestSchema: typeof TypesModule.ListRootsRequestSchema;
  ErrorCode: typeof TypesModule.ErrorCode;
  McpError: typeof TypesModule.McpError;
}

let cached: McpSdk | undefined;

/** The SDK's client classes; the first call loads them (a few hundred ms), later calls are free. */
export function loadMcpSdk(): McpSdk {
  if (cached) return cached;
  const require = createRequire(import.meta.url);
  const client = require("@modelcontextprotocol/sdk/client/index.js") as typeof ClientModule;
  const stdio = require("@modelcontextprotocol/sdk/client/stdio.js") as typeof StdioModule;
  const http = require("@modelcontextprotocol/sdk/client/streamableHttp.js") as typeof HttpModule;
  const sse = require("@modelcontextprotocol/sdk/client/sse.js") as typeof SseModule;
  const types = require("@modelcontextprotocol/sdk/types.js") as typeof TypesModule;
  cached = {
    Client: client.Client,
    StdioClientTransport: stdio.StdioClientTransport,
    DEFAULT_INHERITED_ENV_VARS: stdio.DEFAULT_INHERITED_ENV_VARS,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    StreamableHTTPError: http.StreamableHTTPError,
    SSEClientTransport: sse.SSEClientTransport,
    SseError: sse.SseError,
    ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
    CreateMessageRequestSchema: types.CreateMessageRequestSchema,
    ListRootsRequestSchema: types.ListRootsRequestSchema,
    ErrorCode: types.ErrorCode,
    McpError: types.McpError,
  };
  return cached;
}
