/**
 * One live connection to one MCP server: starts it (a stdio child, or Streamable HTTP with an SSE
 * fallback), lists its tools, resources and prompts, calls tools with a deadline, and says when
 * the server went away. Errors are rewritten into sentences that name the server and what to do.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type {
  CallToolResult,
  GetPromptResult,
  Prompt,
  ReadResourceResult,
  Resource,
  ServerCapabilities,
  Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { hermesVersion } from "../../util/version.js";
import type { HttpServerConfig, McpServerConfig, StdioServerConfig } from "./config.js";
import { childEnvironment } from "./env.js";
import { connectionAuthProvider, McpLoginRequiredError } from "./oauth.js";
import {
  type CreateMessageParams,
  type McpSampler,
  McpSamplingRefused,
  samplingHandler,
} from "./sampling.js";
import { loadMcpSdk } from "./sdk.js";
import { describeTlsFailure, McpTlsError, tlsFetch } from "./tls.js";

type Env = Readonly<Record<string, string | undefined>>;

/** How the connection reached its server. */
export type McpTransportKind = "stdio" | "http" | "sse";

export interface OpenConnectionOptions {
  server: McpServerConfig;
  /** The parent environment; stdio children get only its inherited variables (see env.ts). */
  env: Env;
  /** The server said its tool list changed (`notifications/tools/list_changed`). */
  onToolsChanged?: () => void;
  /** The connection ended without `close()` being called (the server exited or hung up). */
  onLost?: (reason: string) => void;
  /** The Hermes home: where an `auth: oauth` server's tokens are (`mcp-tokens/`). */
  home?: string;
  /** Answers the server's `sampling/createMessage` (when its `sampling.enabled` allows). */
  sampler?: McpSampler;
  /** The roots the server may ask for (`roots/list`): the session's working directory. */
  roots?: () => Array<{ uri: string; name?: string }>;
}

export interface CallOptions {
  signal?: AbortSignal;
  onProgress?: (note: string) => void;
}

/** A server that could not be started or reached; the message is ready to show. */
export class McpConnectError extends Error {
  constructor(
    message: string,
    /** The last lines the server wrote to stderr (stdio only), possibly empty. */
    readonly stderr: string,
  ) {
    super(message);
    this.name = "McpConnectError";
  }
}

const STDERR_KEEP = 8192;

export class McpConnection {
  private closing = false;
  private lost = false;

  private constructor(
    readonly server: McpServerConfig,
    private readonly client: Client,
    readonly transport: McpTransportKind,
    private readonly stderrBuffer: StderrTail,
  ) {}

  /**
   * Connects within `connect_timeout` and completes the MCP handshake. Throws
   * {@link McpConnectError} with the cause and the server's stderr tail; nothing is left running.
   */
  static async open(options: OpenConnectionOptions): Promise<McpConnection> {
    const { server } = options;
    const stderr = new StderrTail();
    const deadline = Date.now() + server.connectTimeoutMs;
    const attempt = async (transport: Transport, kind: McpTransportKind): Promise<McpConnection> => {
      const sdk = loadMcpSdk();
      const client = new sdk.Client(
        { name: "hermes", version: hermesVersion() },
        { capabilities: clientCapabilities(options) },
      );
      serveClientRequests(client, options);
      const connection = new McpConnection(server, client, kind, stderr);
      try {
        await withDeadline(
          client.connect(transport, { timeout: Math.max(1, deadline - Date.now()) }),
          deadline - Date.now(),
        );
      } catch (error) {
        await client.close().catch(() => undefined);
        throw error;
      }
      connection.wire(options);
      return connection;
    };
    try {
      if (server.transport === "stdio")
        return await attempt(stdioTransport(server, options.env, stderr), "stdio");
      try {
        return await attempt(httpTransport(server, options.home), "http");
      } catch (error) {
        // Servers from before Streamable HTTP answer its POST with 404/405 (or some other 4xx):
        // they speak the older HTTP+SSE transport on the same URL.
        if (!(error instanceof loadMcpSdk().StreamableHTTPError) || Date.now() >= deadline) throw error;
        const status = (error as { code?: unknown }).code;
        if (status === 401 || status === 403) throw error;
        return await attempt(sseTransport(server, options.home), "sse");
      }
    } catch (error) {
      throw new McpConnectError(describeConnectError(error, server), stderr.text());
    }
  }

  get capabilities(): ServerCapabilities {
    return this.client.getServerCapabilities() ?? {};
  }

  /** The server's own name and version, as it reported them. */
  get serverVersion(): { name: string; version: string } | undefined {
    return this.client.getServerVersion();
  }

  /** Whether the server went away (see `onLost`); calls on a lost connection fail at once. */
  get isLost(): boolean {
    return this.lost;
  }

  /** The last lines the server wrote to stderr (stdio servers), trimmed; "" when none. */
  stderrTail(maxLines = 20): string {
    return this.stderrBuffer.text(maxLines);
  }

  /** Every tool, following pagination. */
  async listTools(): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.client.listTools(cursor ? { cursor } : {}, this.requestOptions());
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  }

  async callTool(
    name: string,
    args: Record<string, unknown>,
    options: CallOptions = {},
  ): Promise<CallToolResult> {
    const result = await this.client.callTool({ name, arguments: args }, undefined, {
      ...this.requestOptions(options.signal),
      ...(options.onProgress
        ? {
            onprogress: (p: { progress: number; total?: number; message?: string }) => {
              const count = p.total ? `${p.progress}/${p.total}` : String(p.progress);
              options.onProgress?.(p.message ? `${count} ${p.message}` : count);
            },
          }
        : {}),
    });
    return result as CallToolResult;
  }

  async listResources(cursor?: string): Promise<{ resources: Resource[]; nextCursor?: string }> {
    return this.client.listResources(cursor ? { cursor } : {}, this.requestOptions());
  }

  async readResource(uri: string, signal?: AbortSignal): Promise<ReadResourceResult> {
    return this.client.readResource({ uri }, this.requestOptions(signal));
  }

  async listPrompts(cursor?: string): Promise<{ prompts: Prompt[]; nextCursor?: string }> {
    return this.client.listPrompts(cursor ? { cursor } : {}, this.requestOptions());
  }

  async getPrompt(
    name: string,
    args: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<GetPromptResult> {
    return this.client.getPrompt({ name, arguments: args }, this.requestOptions(signal));
  }

  /** Ends the connection; a stdio server is asked to exit, then terminated, then killed. */
  async close(): Promise<void> {
    this.closing = true;
    await this.client.close().catch(() => undefined);
  }

  private requestOptions(signal?: AbortSignal): { timeout: number; signal?: AbortSignal } {
    return { timeout: this.server.timeoutMs, ...(signal ? { signal } : {}) };
  }

  private wire(options: OpenConnectionOptions): void {
    const sdk = loadMcpSdk();
    // Set directly rather than through the client's listChanged option: some servers send the
    // notification without advertising `tools.listChanged`.
    this.client.setNotificationHandler(sdk.ToolListChangedNotificationSchema, async () => {
      options.onToolsChanged?.();
    });
    this.client.onclose = () => {
      if (this.closing || this.lost) return;
      this.lost = true;
      const tail = this.stderrTail(5);
      options.onLost?.(tail ? `it exited; its last output: ${oneLine(tail)}` : "the connection closed");
    };
  }
}

/** Stdio transport with a filtered environment and stderr captured (never on the user's terminal). */
function stdioTransport(server: StdioServerConfig, env: Env, stderr: StderrTail): Transport {
  const sdk = loadMcpSdk();
  const childEnv: Record<string, string | undefined> = childEnvironment(env, server.env);
  // The SDK adds a few variables from process.env under whatever it is given; an explicit
  // undefined keeps those out too (Node leaves undefined values out of a child's environment).
  for (const name of sdk.DEFAULT_INHERITED_ENV_VARS) {
    if (!(name in childEnv)) childEnv[name] = undefined;
  }
  const transport = new sdk.StdioClientTransport({
    command: server.command,
    args: server.args,
    env: childEnv as Record<string, string>,
    stderr: "pipe",
    ...(server.cwd ? { cwd: server.cwd } : {}),
  });
  transport.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk));
  return transport;
}

/** What Hermes tells the server it can do: sampling when allowed and answerable, roots when given. */
function clientCapabilities(options: OpenConnectionOptions): Record<string, unknown> {
  return {
    ...(options.sampler && options.server.sampling.enabled ? { sampling: {} } : {}),
    ...(options.roots ? { roots: { listChanged: false } } : {}),
  };
}

/** Handlers for the requests a server sends the client: sampling and roots. */
function serveClientRequests(client: Client, options: OpenConnectionOptions): void {
  const sdk = loadMcpSdk();
  const { sampler, roots, server } = options;
  if (sampler && server.sampling.enabled) {
    const handle = samplingHandler(server.name, server.sampling, sampler);
    client.setRequestHandler(sdk.CreateMessageRequestSchema, async (request, extra) => {
      try {
        // The SDK's result union is wider than its index signature admits; the shape is the spec's.
        return (await handle(request.params as CreateMessageParams, extra.signal)) as unknown as Record<
          string,
          unknown
        >;
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        const code =
          error instanceof McpSamplingRefused ? sdk.ErrorCode.InvalidRequest : sdk.ErrorCode.InternalError;
        throw new sdk.McpError(code, message);
      }
    });
  }
  if (roots) client.setRequestHandler(sdk.ListRootsRequestSchema, async () => ({ roots: roots() }));
  // A server that asks anyway (it was never told the client can sample) learns why, by key name.
  client.fallbackRequestHandler = async (request) => {
    if (request.method === "sampling/createMessage") {
      const why = server.sampling.enabled
        ? "this Hermes surface has no model to answer sampling requests"
        : `sampling is turned off for MCP server "${server.name}" (mcp_servers.${server.name}.sampling.enabled)`;
      throw new sdk.McpError(sdk.ErrorCode.InvalidRequest, why);
    }
    throw new sdk.McpError(sdk.ErrorCode.MethodNotFound, `Hermes does not handle ${request.method}`);
  };
}

/** Headers, OAuth and TLS for an HTTP server's transport (either kind). */
function httpOptions(server: HttpServerConfig, home: string | undefined) {
  if (server.oauth && !home) {
    throw new McpLoginRequiredError(server.name);
  }
  return {
    requestInit: { headers: server.headers },
    ...(server.oauth && home
      ? { authProvider: connectionAuthProvider(server.name, server.oauth, home) }
      : {}),
    ...(server.tls ? { fetch: tlsFetch(server.name, server.tls) } : {}),
  };
}

function httpTransport(server: HttpServerConfig, home: string | undefined): Transport {
  const sdk = loadMcpSdk();
  return new sdk.StreamableHTTPClientTransport(new URL(server.url), httpOptions(server, home));
}

function sseTransport(server: HttpServerConfig, home: string | undefined): Transport {
  const sdk = loadMcpSdk();
  return new sdk.SSEClientTransport(new URL(server.url), httpOptions(server, home));
}

class DeadlineError extends Error {}

function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  if (ms <= 0) return Promise.reject(new DeadlineError());
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new DeadlineError()), ms);
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}

/** A readable cause for a failed start, naming the server's config keys where they are the fix. */
export function describeConnectError(error: unknown, server: McpServerConfig): string {
  const key = `mcp_servers.${server.name}`;
  const sdk = loadMcpSdk();
  const seconds = Math.round(server.connectTimeoutMs / 100) / 10;
  if (
    error instanceof DeadlineError ||
    (error instanceof sdk.McpError && error.code === sdk.ErrorCode.RequestTimeout)
  ) {
    return `no answer within ${seconds} s (${key}.connect_timeout)`;
  }
  if (error instanceof McpLoginRequiredError || error instanceof McpTlsError) return error.message;
  if (server.transport === "http") {
    const tls = describeTlsFailure(server.name, error);
    if (tls) return tls;
  }
  const code = errorCode(error);
  if (server.transport === "stdio") {
    if (code === "ENOENT") {
      return `command ${JSON.stringify(server.command)} was not found; check ${key}.command (is it installed and on PATH?)`;
    }
    if (code === "EACCES")
      return `command ${JSON.stringify(server.command)} is not executable (${key}.command)`;
    if (error instanceof sdk.McpError && error.code === sdk.ErrorCode.ConnectionClosed) {
      return "the server exited before it finished starting";
    }
  } else {
    if (code === "ECONNREFUSED")
      return `connection refused at ${server.url}; is the server running? (${key}.url)`;
    if (code === "ENOTFOUND" || code === "EAI_AGAIN") return `host not found for ${server.url} (${key}.url)`;
    if (error instanceof sdk.StreamableHTTPError || error instanceof sdk.SseError) {
      const status = (error as { code?: unknown }).code;
      if ((status === 401 || status === 403) && server.oauth) {
        return `the server refused the stored sign-in (HTTP ${status}); run hermes mcp login ${server.name}`;
      }
      if (status === 401 || status === 403) {
        return `the server refused the request (HTTP ${status}); check ${key}.headers, or set ${key}.auth: oauth and run hermes mcp login ${server.name}`;
      }
    }
  }
  const message = error instanceof Error ? error.message : String(error);
  const cause = (error as { cause?: unknown } | null)?.cause;
  const because =
    cause instanceof Error && cause.message && !message.includes(cause.message) ? ` (${cause.message})` : "";
  return `${message || "unknown error"}${because}`;
}

function errorCode(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Lines joined with " | ", the last 300 characters kept: output fit for a one-line message. */
export function oneLine(text: string): string {
  const joined = text.split(/\r?\n/).filter(Boolean).join(" | ");
  return joined.length > 300 ? `…${joined.slice(-300)}` : joined;
}

/** The last few KB a server wrote to stderr. */
class StderrTail {
  private data = "";

  push(chunk: Buffer | string): void {
    this.data += chunk.toString();
    if (this.data.length > STDERR_KEEP * 2) this.data = this.data.slice(-STDERR_KEEP);
  }

  text(maxLines = 20): string {
    const lines = this.data
      .slice(-STDERR_KEEP)
      .split(/\r?\n/)
      .filter((line) => line.trim() !== "");
    return lines.slice(-maxLines).join("\n");
  }
}
