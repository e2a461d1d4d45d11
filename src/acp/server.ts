/**
 * `hermes acp`: the Agent Client Protocol server editors (Zed, VS Code, JetBrains) start over
 * stdio, built on the official SDK (`@agentclientprotocol/sdk`, loaded on first use). Every
 * session is a `ChatSession` recorded in state.db with source `acp` (so `hermes -r ID` resumes
 * it), running the same `AIAgent` as the CLI: the same approvals (asked in the editor through
 * `session/request_permission`), write guards, redaction and interrupts. Nothing but protocol
 * frames goes to stdout; diagnostics go to stderr and the home's logs.
 */
import { existsSync, statSync } from "node:fs";
import { isAbsolute } from "node:path";
import { Readable, Writable } from "node:stream";
import type {
  AgentApp,
  AgentContext,
  InitializeResponse,
  ListSessionsResponse,
  McpServer,
  SessionInfo,
} from "@agentclientprotocol/sdk";
import { loadAcpSdk } from "../agent/acp-sdk.js";
import { ChatSession, type ChatSessionOptions } from "../agent/chat-session.js";
import { NoProviderError, type ResolvedRuntime, resolveRuntime } from "../ai/resolve.js";
import type { HermesConfig } from "../config/defaults.js";
import { isYoloMode } from "../config/precedence.js";
import type { SessionStore } from "../state/types.js";
import { createBuiltinRegistry } from "../tools/builtin.js";
import type { McpManager } from "../tools/mcp/manager.js";
import { platformToolsets } from "../tools/platform-tools.js";
import type { ToolRegistry } from "../tools/registry.js";
import type { Logger } from "../util/log.js";
import { hermesVersion } from "../util/version.js";
import { sessionMcpServers } from "./mcp-servers.js";
import { replayUpdates } from "./replay.js";
import { type AcpPeer, AcpSession } from "./session.js";

/** The session source (`sessions.source`) of editor sessions, as upstream records them. */
export const ACP_SOURCE = "acp";
/** Sessions per `session/list` page. */
const PAGE = 50;

export interface AcpServerOptions {
  home: string;
  config: HermesConfig;
  env: Record<string, string | undefined>;
  /** state.db as this process records it. */
  store: SessionStore;
  /** `--yolo` / HERMES_YOLO_MODE: approve dangerous commands without asking (hardline stays refused). */
  yolo?: boolean;
  /** Persists an "Allow always" answer to `command_allowlist`. */
  persistAlways?: (patternKey: string) => Promise<void>;
  logger?: Logger;
  /** One line per problem, for stderr. */
  onWarning?: (message: string) => void;
  /** Adds tools to each registry a session gets (the enabled plugins' tools). */
  extendRegistry?: (registry: ToolRegistry) => void;
}

/** The sign-in an editor offers when no provider is set up (upstream's terminal setup). */
const SETUP_METHOD = {
  id: "hermes-setup",
  name: "Set up a provider",
  description: "Choose a provider and model in a terminal (`hermes acp --setup`), then reconnect.",
};

/**
 * What `hermes acp --check` prints and an editor gets from `initialize`. `terminalAuth`: the editor
 * can run `hermes acp --setup` in a terminal for the user (its `auth.terminal` capability).
 */
export function initializeResponse(
  protocolVersion: number,
  providerReady: boolean,
  terminalAuth = false,
): InitializeResponse {
  return {
    protocolVersion,
    agentCapabilities: {
      loadSession: true,
      promptCapabilities: { image: true, audio: false, embeddedContext: true },
      mcpCapabilities: { http: true, sse: true },
      sessionCapabilities: { list: {}, close: {} },
    },
    // With a provider configured nothing needs authenticating (upstream's check_auth); without
    // one, an editor that can run a terminal sign-in gets `hermes acp --setup` to run, and any
    // other is told to run it.
    authMethods: providerReady
      ? []
      : terminalAuth
        ? [{ ...SETUP_METHOD, type: "terminal", args: ["acp", "--setup"] }]
        : [
            {
              ...SETUP_METHOD,
              description: "Run `hermes acp --setup` (or `hermes model`) in a terminal, then reconnect.",
            },
          ],
    agentInfo: { name: "hermes", title: "Hermes Agent", version: hermesVersion() },
  };
}

/** The provider, or why there is none (the message says how to configure one). */
export function providerStatus(
  options: Pick<AcpServerOptions, "config" | "env" | "home">,
): { ok: true; resolved: ResolvedRuntime } | { ok: false; message: string } {
  try {
    return {
      ok: true,
      resolved: resolveRuntime({ flags: {}, config: options.config, env: options.env, home: options.home }),
    };
  } catch (error) {
    if (error instanceof NoProviderError) return { ok: false, message: error.message };
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
}

/** The server's state across one connection: its sessions and shared tools. */
export class AcpServer {
  private readonly sessions = new Map<string, AcpSession>();
  private shared: { registry: ToolRegistry; mcp?: McpManager } | undefined;
  private peer: AcpPeer | undefined;

  constructor(private readonly options: AcpServerOptions) {}

  /** The SDK app with every handler registered. */
  app(): AgentApp {
    const sdk = loadAcpSdk();
    const { RequestError } = sdk;
    const app = sdk.agent({ name: "hermes" });
    app.onConnect((connection) => {
      this.peer = peerOf(connection.client);
    });
    app.onRequest("initialize", ({ params }) =>
      initializeResponse(
        Math.min(params.protocolVersion, sdk.PROTOCOL_VERSION),
        providerStatus(this.options).ok,
        params.clientCapabilities?.auth?.terminal === true,
      ),
    );
    app.onRequest("authenticate", () => {
      const status = providerStatus(this.options);
      if (!status.ok) throw RequestError.authRequired(undefined, status.message);
      return {};
    });
    app.onRequest("session/new", async ({ params }) => {
      const session = await this.open({ cwd: params.cwd, mcpServers: params.mcpServers });
      return { sessionId: session.id, configOptions: session.configOptions() };
    });
    app.onRequest("session/load", async ({ params }) => {
      const stored = await this.options.store.getSession(params.sessionId);
      if (!stored) throw RequestError.resourceNotFound(params.sessionId);
      const open = this.sessions.get(params.sessionId);
      if (open) await this.close(open);
      const session = await this.open({
        cwd: params.cwd,
        mcpServers: params.mcpServers,
        resume: params.sessionId,
      });
      await session.replay(replayUpdates(session.session.agent.messages.filter((m) => m.role !== "system")));
      return { configOptions: session.configOptions() };
    });
    app.onRequest("session/list", ({ params }) =>
      this.list(params.cwd ?? undefined, params.cursor ?? undefined),
    );
    app.onRequest("session/close", async ({ params }) => {
      const session = this.sessions.get(params.sessionId);
      if (session) await this.close(session);
      return {};
    });
    app.onRequest("session/prompt", async ({ params }) => {
      const session = this.require(params.sessionId);
      const stopReason = await session.prompt(params.prompt);
      return { stopReason };
    });
    app.onNotification("session/cancel", ({ params }) => {
      this.sessions.get(params.sessionId)?.cancel();
    });
    app.onRequest("session/set_config_option", async ({ params }) => {
      const session = this.require(params.sessionId);
      if (params.configId !== "model" || typeof params.value !== "string") {
        throw RequestError.invalidParams(
          undefined,
          `Unknown option "${params.configId}"; Hermes offers "model".`,
        );
      }
      try {
        await session.setModel(params.value);
      } catch (error) {
        throw RequestError.invalidParams(undefined, error instanceof Error ? error.message : String(error));
      }
      return { configOptions: session.configOptions() };
    });
    return app;
  }

  /** Serves the editor on this process's stdin/stdout until the editor closes the pipe. */
  async serveStdio(): Promise<void> {
    const sdk = loadAcpSdk();
    const stream = sdk.ndJsonStream(
      Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
      Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
    );
    const connection = this.app().connect(stream);
    await connection.closed;
    await this.shutdown();
  }

  /** Ends every session (their turns are interrupted; the recordings stay) and the MCP servers. */
  async shutdown(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((s) => this.close(s)));
    await this.shared?.mcp?.close().catch(() => undefined);
  }

  private require(id: string): AcpSession {
    const session = this.sessions.get(id);
    if (!session)
      throw loadAcpSdk().RequestError.invalidParams(
        undefined,
        `No open session "${id}"; create or load it first.`,
      );
    return session;
  }

  private async open(request: {
    cwd: string;
    mcpServers: readonly McpServer[];
    resume?: string;
  }): Promise<AcpSession> {
    const { RequestError } = loadAcpSdk();
    const { home, config, env, store } = this.options;
    if (!isAbsolute(request.cwd) || !existsSync(request.cwd) || !statSync(request.cwd).isDirectory()) {
      throw RequestError.invalidParams(
        undefined,
        `cwd must be an existing absolute directory, got "${request.cwd}".`,
      );
    }
    const provider = providerStatus(this.options);
    if (!provider.ok) throw RequestError.authRequired(undefined, provider.message);
    const peer = this.peer;
    if (!peer) throw RequestError.internalError(undefined, "The connection is not ready.");
    const tools = await this.toolsFor(request.mcpServers, request.cwd);
    const models = await modelsOffered(provider.resolved, config, home);
    const acp = new AcpSession(request.cwd, peer, {
      ...(tools.own ? { mcp: tools.own } : {}),
      models,
      onError: (m) => this.warn(m),
    });
    const options: ChatSessionOptions = {
      config,
      home,
      env,
      cwd: request.cwd,
      resolved: provider.resolved,
      registry: tools.registry,
      ...(tools.ready ? { toolsReady: tools.ready } : {}),
      toolsets: platformToolsets(config as unknown as Record<string, unknown>, ACP_SOURCE),
      yolo: this.options.yolo === true || isYoloMode(env),
      platform: ACP_SOURCE,
      source: ACP_SOURCE,
      store,
      autoTitle: true,
      onApproval: (req, opts) => acp.askApproval(req, opts),
      onClarify: (req) => acp.askClarify(req),
      ...(this.options.persistAlways ? { persistAlwaysApproval: this.options.persistAlways } : {}),
      onWarning: (m) => this.warn(m),
      ...(this.options.logger ? { logger: this.options.logger } : {}),
      ...(request.resume ? { resume: request.resume } : {}),
    };
    let chat: ChatSession;
    try {
      chat = await ChatSession.open(options);
    } catch (error) {
      await tools.own?.close().catch(() => undefined);
      throw RequestError.internalError(undefined, error instanceof Error ? error.message : String(error));
    }
    acp.attach(chat);
    this.sessions.set(acp.id, acp);
    return acp;
  }

  private async close(session: AcpSession): Promise<void> {
    this.sessions.delete(session.id);
    await session.close();
  }

  /** The registry a session's tools come from: the shared one, or its own with the editor's MCP servers. */
  private async toolsFor(
    fromEditor: readonly McpServer[],
    cwd: string,
  ): Promise<{ registry: ToolRegistry; ready?: Promise<void>; own?: McpManager }> {
    const { config, env, home } = this.options;
    const { startMcpServers } = await import("../tools/mcp/manager.js");
    const { modelSampler } = await import("../tools/mcp/sampling-model.js");
    // Servers' sampling requests are answered by the configured model within each server's
    // `sampling` limits; OAuth servers read their tokens from the home.
    const common = {
      env,
      home,
      sampler: modelSampler({ config, env, home }),
      onWarning: (m: string) => this.warn(`MCP: ${m}`),
    };
    if (fromEditor.length > 0) {
      const registry = createBuiltinRegistry();
      this.options.extendRegistry?.(registry);
      // The session's own servers see its working directory as their root.
      const own = startMcpServers({
        ...common,
        config: sessionMcpServers(config["mcp_servers"], fromEditor),
        registry,
        cwd,
      });
      return { registry, ready: own.ready, own };
    }
    if (!this.shared) {
      const registry = createBuiltinRegistry();
      this.options.extendRegistry?.(registry);
      const configured = config["mcp_servers"];
      const mcp =
        configured !== undefined && configured !== null
          ? startMcpServers({ ...common, config: configured, registry })
          : undefined;
      this.shared = { registry, ...(mcp ? { mcp } : {}) };
    }
    return { registry: this.shared.registry, ...(this.shared.mcp ? { ready: this.shared.mcp.ready } : {}) };
  }

  private async list(cwd: string | undefined, cursor: string | undefined): Promise<ListSessionsResponse> {
    const offset = cursor && /^\d+$/.test(cursor) ? Number(cursor) : 0;
    const rows = await this.options.store.listSessions({ source: ACP_SOURCE, limit: PAGE + 1, offset });
    const sessions: SessionInfo[] = rows
      .slice(0, PAGE)
      .filter((r) => !cwd || r.cwd === cwd)
      .map((r) => ({
        sessionId: r.id,
        cwd: r.cwd ?? "",
        title: r.title ?? (r.preview || null),
        updatedAt: new Date(r.lastActiveAt * 1000).toISOString(),
      }));
    return { sessions, ...(rows.length > PAGE ? { nextCursor: String(offset + PAGE) } : {}) };
  }

  private warn(message: string): void {
    this.options.logger?.warning(message);
    this.options.onWarning?.(message);
  }
}

/** The editor connection as the sessions use it. */
function peerOf(client: AgentContext): AcpPeer {
  return {
    update: (sessionId, update) => client.notify("session/update", { sessionId, update }),
    requestPermission: (params, signal) =>
      client.request("session/request_permission", params, { cancellationSignal: signal }),
  };
}

/** How long `session/new` waits for the provider's model list before offering the configured ones only. */
const MODEL_LIST_WAIT_MS = 2_000;

/**
 * Models offered in the editor's selector: the session's model, the configured default, and the
 * provider's own list (cached an hour in the home, as `/model` reads it). A provider that is slow
 * or cannot list its models leaves the selector with the configured ones.
 */
async function modelsOffered(
  resolved: ResolvedRuntime,
  config: HermesConfig,
  home: string,
): Promise<string[]> {
  const out = new Set<string>();
  if (resolved.model) out.add(resolved.model);
  const configured = config.model.default;
  if (typeof configured === "string" && configured) out.add(configured);
  try {
    const [{ listModelsCached }, { requestAuth }] = await Promise.all([
      import("../ai/model-cache.js"),
      import("../ai/oauth/entra-config.js"),
    ]);
    let timer: NodeJS.Timeout | undefined;
    const listing = await Promise.race([
      // The bearer (Entra ID) is asked inside the race: a slow credential chain waits no longer.
      requestAuth(resolved).then((auth) =>
        listModelsCached({
          home,
          provider: resolved.provider,
          baseUrl: resolved.baseUrl,
          apiKey: auth.apiKey,
          apiKeyHeader: auth.apiKeyHeader,
          apiMode: resolved.apiMode,
        }),
      ),
      new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), MODEL_LIST_WAIT_MS);
        timer.unref();
      }),
    ]);
    if (timer) clearTimeout(timer);
    if (listing?.ok) for (const m of listing.models.slice(0, 100)) out.add(m.id);
  } catch {
    // Only the selector's choices: the session works with the configured model.
  }
  return [...out];
}
