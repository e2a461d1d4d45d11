/**
 * The MCP client of a Hermes process: starts every configured server at once, registers each
 * server's tools into a {@link ToolRegistry} as `mcp_<server>_<tool>` in toolset `mcp-<server>`,
 * keeps them in step with `notifications/tools/list_changed`, restarts a server that died (once,
 * on the next call) and ends every server on `close()`.
 *
 * A server that cannot start is reported once through `onWarning` and left out; the others carry
 * on. `ready` settles when every server has connected or failed, and never rejects.
 */
import { basename } from "node:path";
import { pathToFileURL } from "node:url";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { ToolRegistry } from "../registry.js";
import type { ToolContext } from "../types.js";
import { describeEndpoint, type McpServerConfig, parseMcpServers } from "./config.js";
import { McpConnectError, McpConnection, type McpTransportKind, oneLine } from "./connection.js";
import { assignToolNames, mcpToolsetName } from "./names.js";
import type { McpSampler } from "./sampling.js";
import { loadMcpSdk } from "./sdk.js";
import { buildServerTools, type McpCaller } from "./tools.js";

type Env = Readonly<Record<string, string | undefined>>;

export interface StartMcpOptions {
  /** `config.mcp_servers` as loaded from config.yaml (any shape: it is validated here). */
  config: unknown;
  /** Where the servers' tools are registered (and unregistered when they go away). */
  registry: ToolRegistry;
  /** The parent environment: `${VAR}` expansion, and the inherited part of a stdio child's env. */
  env: Env;
  /** One line per problem: a server that failed to start, a config entry that cannot be used. */
  onWarning?: (message: string) => void;
  /** After a server's tools were (re-)registered: at start, after list_changed, after a restart. */
  onToolsChanged?: (server: string, tools: readonly string[]) => void;
  /** Where image results are written; default a directory under the OS temp dir. */
  imageDir?: string;
  /** The Hermes home: `auth: oauth` servers read their tokens from `<home>/mcp-tokens/`. */
  home?: string;
  /** Answers servers' sampling requests (each server's `sampling` settings apply); absent: none. */
  sampler?: McpSampler;
  /** The working directory offered to servers as their root (`roots/list`); absent: none. */
  cwd?: string;
}

export type ServerState = "connecting" | "connected" | "failed" | "disconnected" | "disabled";

export interface ServerStatus {
  name: string;
  /** Configured transport until connected; then `stdio`, `http` (Streamable HTTP) or `sse`. */
  transport: McpTransportKind;
  /** The command line or URL. */
  endpoint: string;
  state: ServerState;
  toolset: string;
  /** Registry names of the tools this server provides now. */
  tools: string[];
  /** Why it failed or stopped. */
  error?: string;
  /** The server's last stderr lines, when it failed to start. */
  stderr?: string;
  /** Time to connect and list tools, once connected. */
  connectMs?: number;
  /** Name and version the server reported. */
  serverInfo?: { name: string; version: string };
}

export interface McpReloadReport {
  /** Tool names that are new since before the reload. */
  added: string[];
  /** Tool names that are gone. */
  removed: string[];
  servers: ServerStatus[];
  /** Config entries that could not be used, and other warnings, one line each. */
  problems: string[];
}

export interface McpManager {
  /** Settles (never rejects) when every server has connected or failed. Replaced by `reload`. */
  readonly ready: Promise<void>;
  /** Every configured server, in config order. */
  status(): ServerStatus[];
  /**
   * Ends every server, then starts those of `config` (the new `mcp_servers`) and says what
   * changed. `env` replaces the environment given at start (a re-read `.env`).
   */
  reload(config: unknown, env?: Env): Promise<McpReloadReport>;
  /** Ends every server (stdio children are stopped) and unregisters their tools. */
  close(): Promise<void>;
}

/** Starts the servers of `options.config` in the background and returns at once. */
export function startMcpServers(options: StartMcpOptions): McpManager {
  return new Manager(options);
}

interface Handle {
  config: McpServerConfig;
  state: ServerState;
  connection?: McpConnection;
  tools: Tool[];
  registered: Set<string>;
  error?: string;
  stderr?: string;
  connectMs?: number;
  /** A start in progress (first start or restart). */
  starting?: Promise<boolean>;
  /** A restart was tried since the server last died. */
  restartTried: boolean;
  /** The restart in progress, resolving to whether it worked. */
  restarting?: Promise<boolean>;
  /** Tools were registered at least once; until then list_changed only marks the list dirty. */
  synced: boolean;
  dirty: boolean;
  refreshing: boolean;
  removed: boolean;
}

class Manager implements McpManager, McpCaller {
  private handles = new Map<string, Handle>();
  private closed = false;
  private current: Promise<void>;
  private env: Env;

  constructor(private readonly options: StartMcpOptions) {
    this.env = options.env;
    this.current = this.startAll(options.config, true).then(() => undefined);
  }

  get ready(): Promise<void> {
    return this.current;
  }

  status(): ServerStatus[] {
    return [...this.handles.values()].map((h) => ({
      name: h.config.name,
      transport: h.connection?.transport ?? (h.config.transport === "stdio" ? "stdio" : "http"),
      endpoint: describeEndpoint(h.config),
      state: h.state,
      toolset: mcpToolsetName(h.config.name),
      tools: [...h.registered],
      ...(h.error ? { error: h.error } : {}),
      ...(h.stderr ? { stderr: h.stderr } : {}),
      ...(h.connectMs !== undefined ? { connectMs: h.connectMs } : {}),
      ...(h.connection?.serverVersion ? { serverInfo: h.connection.serverVersion } : {}),
    }));
  }

  async reload(config: unknown, env?: Env): Promise<McpReloadReport> {
    await this.current;
    if (env) this.env = env;
    const before = new Set(this.registeredNames());
    await this.stopAll();
    this.closed = false;
    const started = this.startAll(config, false);
    this.current = started.then(() => undefined);
    const problems = await started;
    const after = new Set(this.registeredNames());
    return {
      added: [...after].filter((name) => !before.has(name)),
      removed: [...before].filter((name) => !after.has(name)),
      servers: this.status(),
      problems,
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.stopAll();
  }

  /** {@link McpCaller}: a live connection (restarting a dead server once), errors made readable. */
  async run<T>(
    server: string,
    work: (connection: McpConnection) => Promise<T>,
    ctx: ToolContext,
  ): Promise<T> {
    const handle = this.handles.get(server);
    if (!handle || handle.removed || this.closed) {
      throw new Error(
        `The MCP server "${server}" is no longer configured (it was removed or Hermes is shutting down).`,
      );
    }
    const connection = await this.live(handle);
    try {
      return await work(connection);
    } catch (error) {
      if (ctx.signal.aborted) throw error;
      throw new Error(this.describeCallError(handle, connection, error));
    }
  }

  private registeredNames(): string[] {
    return [...this.handles.values()].flatMap((h) => [...h.registered]);
  }

  /** Starts every server concurrently; registers their tools in config order. Returns the problems. */
  private async startAll(raw: unknown, warn: boolean): Promise<string[]> {
    const problems: string[] = [];
    const report = (message: string): void => {
      problems.push(message);
      if (warn) this.options.onWarning?.(message);
    };
    const parsed = parseMcpServers(raw, this.env);
    for (const problem of [...parsed.errors, ...parsed.warnings]) report(problem);
    const handles = parsed.servers.map((config): Handle => {
      const handle: Handle = {
        config,
        state: config.enabled ? "connecting" : "disabled",
        tools: [],
        registered: new Set(),
        restartTried: false,
        synced: false,
        dirty: false,
        refreshing: false,
        removed: false,
      };
      this.handles.set(config.name, handle);
      return handle;
    });
    const starts = handles.map((h) => (h.config.enabled ? this.start(h) : Promise.resolve(false)));
    // Registering in config order (not in order of arrival) keeps names stable when two servers'
    // tools would collide: the server listed first keeps the plain name.
    for (const [i, handle] of handles.entries()) {
      const ok = await starts[i]?.catch(() => false);
      if (handle.removed) continue;
      if (ok) {
        this.sync(handle);
        const missing = this.missingIncludes(handle);
        if (missing) report(missing);
      } else if (handle.state === "failed") {
        const output = handle.stderr ? ` (server output: ${oneLine(handle.stderr)})` : "";
        report(
          `MCP server "${handle.config.name}" failed to start: ${handle.error ?? "unknown error"}${output}; continuing without it`,
        );
      }
    }
    return problems;
  }

  private start(handle: Handle): Promise<boolean> {
    const started = Date.now();
    handle.state = "connecting";
    const attempt = (async () => {
      let connection: McpConnection | undefined;
      try {
        const { home, sampler, cwd } = this.options;
        connection = await McpConnection.open({
          server: handle.config,
          env: this.env,
          ...(home ? { home } : {}),
          ...(sampler ? { sampler } : {}),
          ...(cwd ? { roots: () => [{ uri: pathToFileURL(cwd).href, name: basename(cwd) || cwd }] } : {}),
          onToolsChanged: () => this.toolsChanged(handle),
          onLost: (reason) => {
            if (handle.connection !== connection || handle.removed) return;
            handle.state = "disconnected";
            handle.error = `the server stopped (${reason})`;
          },
        });
        const tools = await connection.listTools().catch((error: unknown) => {
          throw new Error(
            `it started but listing its tools failed: ${error instanceof Error ? error.message : String(error)}`,
          );
        });
        if (handle.removed || this.closed) {
          await connection.close();
          return false;
        }
        handle.connection = connection;
        handle.tools = tools;
        handle.state = "connected";
        handle.connectMs = Date.now() - started;
        delete handle.error;
        delete handle.stderr;
        return true;
      } catch (error) {
        await connection?.close();
        handle.state = "failed";
        handle.error = error instanceof Error ? error.message : String(error);
        const stderr = error instanceof McpConnectError ? error.stderr : (connection?.stderrTail() ?? "");
        if (stderr) handle.stderr = stderr;
        else delete handle.stderr;
        return false;
      }
    })();
    handle.starting = attempt;
    return attempt.finally(() => {
      if (handle.starting === attempt) delete handle.starting;
    });
  }

  /** Registers the handle's current tool list, unregistering tools that went away. */
  private sync(handle: Handle): void {
    const { config } = handle;
    const toolset = mcpToolsetName(config.name);
    const { registry } = this.options;
    const offered = filterTools(handle.tools, config);
    const names = assignToolNames(
      config.name,
      offered.map((t) => t.name),
      (name) => {
        const owner = registry.get(name);
        return owner !== undefined && owner.toolset !== toolset;
      },
    );
    const capabilities = handle.connection?.capabilities ?? {};
    const defs = buildServerTools({
      server: config,
      tools: offered,
      names,
      resources: config.resources && capabilities.resources !== undefined,
      prompts: config.prompts && capabilities.prompts !== undefined,
      caller: this,
      ...(this.options.imageDir ? { imageDir: this.options.imageDir } : {}),
    });
    const next = new Set<string>();
    for (const def of defs) {
      try {
        registry.register(def);
        next.add(def.name);
      } catch (error) {
        this.options.onWarning?.(
          `MCP server "${config.name}": tool ${def.name} was not registered: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }
    for (const name of handle.registered) {
      if (!next.has(name) && registry.get(name)?.toolset === toolset) registry.unregister(name);
    }
    handle.registered = next;
    handle.synced = true;
    this.options.onToolsChanged?.(config.name, [...next]);
    if (handle.dirty) this.toolsChanged(handle);
  }

  private missingIncludes(handle: Handle): string | undefined {
    const have = new Set(handle.tools.map((t) => t.name));
    const missing = handle.config.include.filter((name) => !have.has(name));
    if (missing.length === 0) return undefined;
    return (
      `mcp_servers.${handle.config.name}.tools.include names ${missing.join(", ")}, which the server does not have ` +
      `(it has: ${[...have].sort().join(", ") || "no tools"})`
    );
  }

  /** list_changed: re-list and re-register, one refresh at a time, coalescing bursts. */
  private toolsChanged(handle: Handle): void {
    handle.dirty = true;
    if (!handle.synced || handle.refreshing) return;
    handle.refreshing = true;
    void (async () => {
      try {
        while (handle.dirty && !handle.removed && handle.connection && !handle.connection.isLost) {
          handle.dirty = false;
          handle.tools = await handle.connection.listTools();
          if (handle.removed) return;
          this.sync(handle);
        }
      } catch (error) {
        this.options.onWarning?.(
          `MCP server "${handle.config.name}" changed its tools but they could not be listed: ${error instanceof Error ? error.message : String(error)}`,
        );
      } finally {
        handle.refreshing = false;
      }
    })();
  }

  /** The handle's connection; a server that died is restarted once (on the call after it died). */
  private async live(handle: Handle): Promise<McpConnection> {
    if (handle.starting) await handle.starting;
    if (handle.restarting) await handle.restarting;
    if (handle.state === "connected" && handle.connection && !handle.connection.isLost) {
      return handle.connection;
    }
    if ((handle.state === "connected" || handle.state === "disconnected") && !handle.restartTried) {
      // Calls arriving while the restart runs wait for it rather than failing.
      handle.restartTried = true;
      handle.restarting = this.restart(handle).finally(() => delete handle.restarting);
      if (await handle.restarting) return handle.connection as McpConnection;
    }
    const why = handle.error ? `: ${handle.error}` : "";
    throw new Error(
      `The MCP server "${handle.config.name}" is not running${why}. Fix it, then run /reload-mcp or start a new session.`,
    );
  }

  private async restart(handle: Handle): Promise<boolean> {
    await handle.connection?.close();
    if (!(await this.start(handle)) || handle.removed || !handle.connection) return false;
    handle.restartTried = false;
    this.sync(handle);
    return true;
  }

  private describeCallError(handle: Handle, connection: McpConnection, error: unknown): string {
    const sdk = loadMcpSdk();
    const name = handle.config.name;
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof sdk.McpError && error.code === sdk.ErrorCode.RequestTimeout) {
      const seconds = Math.round(handle.config.timeoutMs / 100) / 10;
      return `The MCP server "${name}" did not answer within ${seconds} s (mcp_servers.${name}.timeout); the call was cancelled.`;
    }
    const closed = error instanceof sdk.McpError && error.code === sdk.ErrorCode.ConnectionClosed;
    const unreachable = /fetch failed|ECONNREFUSED|ECONNRESET|socket hang up/i.test(
      `${message} ${causeOf(error)}`,
    );
    if (connection.isLost || closed || unreachable) {
      if (handle.connection === connection) {
        handle.state = "disconnected";
        handle.error = `the server stopped (${message})`;
      }
      const tail = connection.stderrTail(5);
      return (
        `The MCP server "${name}" stopped while handling the call (${message})` +
        `${tail ? `; its last output: ${oneLine(tail)}` : ""}. The next call will try to restart it.`
      );
    }
    if (error instanceof sdk.McpError) return `The MCP server "${name}" refused the call: ${message}`;
    return message;
  }

  private async stopAll(): Promise<void> {
    const handles = [...this.handles.values()];
    this.handles.clear();
    const { registry } = this.options;
    for (const handle of handles) {
      handle.removed = true;
      const toolset = mcpToolsetName(handle.config.name);
      for (const name of handle.registered) {
        if (registry.get(name)?.toolset === toolset) registry.unregister(name);
      }
      handle.registered.clear();
    }
    await Promise.all(
      handles.map(async (handle) => {
        await handle.starting?.catch(() => false);
        await handle.connection?.close();
      }),
    );
  }
}

/** The tools config allows: `include` when it names any, else all but `exclude`. */
export function filterTools<T extends { name: string }>(
  tools: readonly T[],
  config: Pick<McpServerConfig, "include" | "exclude">,
): T[] {
  if (config.include.length > 0) return tools.filter((t) => config.include.includes(t.name));
  return tools.filter((t) => !config.exclude.includes(t.name));
}

function causeOf(error: unknown): string {
  const cause = (error as { cause?: unknown } | null)?.cause;
  if (!cause) return "";
  return cause instanceof Error
    ? `${cause.message} ${(cause as { code?: string }).code ?? ""}`
    : String(cause);
}
