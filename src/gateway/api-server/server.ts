/**
 * The OpenAI-compatible API server: lets any OpenAI client (and any client built for Python
 * Hermes's API server) talk to the Hermes agent.
 *
 *   const server = await startApiServer({ home, config, env });   // key from API_SERVER_KEY
 *   // POST {server.url}/v1/chat/completions with Authorization: Bearer <key>
 *   await server.close();                                         // drains running requests
 *
 * Routes are listed in `router.ts` (`ROUTES`). Every turn runs a `ChatSession` recorded in state.db
 * with source `api_server`; dangerous commands are denied (nobody can approve them). Responses are
 * kept in `response_store.db`. The server never starts without a key of at least 16 characters,
 * even on loopback.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { hermesLoadedNames } from "../../agent/agent.js";
import { ChatSession, type ChatSessionOptions } from "../../agent/chat-session.js";
import { resolveRuntime } from "../../ai/resolve.js";
import type { HermesConfig } from "../../config/defaults.js";
import { openStateBackend, type StateBackend } from "../../knowledge/state-backend.js";
import { SessionStoreError } from "../../state/types.js";
import { createBuiltinRegistry } from "../../tools/builtin.js";
import type { ToolRegistry } from "../../tools/registry.js";
import type { Logger } from "../../util/log.js";
import type { RouteContext } from "./context.js";
import { ApiError, SECURITY_HEADERS, sendError } from "./http.js";
import { AcquireAbortedError, QueueFullError, RunLimiter } from "./limiter.js";
import { route } from "./router.js";
import { RunRegistry } from "./runs.js";

/** How long closing waits for writes still queued behind another process's lock on state.db. */
const SHUTDOWN_SAVE_WAIT_MS = 10_000;

import { API_SERVER_SOURCE, type TurnDeps, TurnRunner } from "./turns.js";

export interface ApiServerOptions {
  /** Several instances: a continued session's turn claims it across them first (`TurnDeps.exclusive`). */
  exclusive?: TurnDeps["exclusive"];
  /** Counts each turn while it runs (`TurnDeps.trackTurn`: the instance listing's `turns`). */
  trackTurn?: () => () => void;
  home: string;
  config: HermesConfig;
  /** Environment (with `.env` applied): API_SERVER_* settings and provider keys. */
  env: Record<string, string | undefined>;
  /** Default `API_SERVER_HOST`, else 127.0.0.1. */
  host?: string;
  /** Default `API_SERVER_PORT`, else 8642; 0 picks a free port. */
  port?: number;
  /** Bearer key; default `API_SERVER_KEY`. Required: the server refuses to start without one. */
  key?: string;
  /** Agent turns at once; default `gateway.api_server.max_concurrent_runs`, else 10. */
  maxConcurrentRuns?: number;
  /** Requests that may wait for a slot; beyond that, 429. Default 20 × maxConcurrentRuns. */
  maxQueuedRuns?: number;
  /** Model id clients see; default `API_SERVER_MODEL_NAME`, else `hermes-agent`. */
  modelName?: string;
  /** Browser origins allowed by CORS; default `API_SERVER_CORS_ORIGINS` (comma-separated), else none. */
  corsOrigins?: string[];
  /** Largest request body in bytes (default 1 MiB). */
  maxBodyBytes?: number;
  /** Working directory of the agent's tools (default `process.cwd()`). */
  cwd?: string;
  /** Tools of every turn (the gateway passes one holding its MCP servers' tools); default the built-ins. */
  registry?: ToolRegistry;
  /** Settles when tools found at start-up (MCP servers) are registered; each turn's tool list waits for it. */
  toolsReady?: Promise<unknown>;
  /** Opens the session of each turn (tests inject one); default `ChatSession.open`. */
  createSession?: (options: ChatSessionOptions) => Promise<ChatSession>;
  /** Where the stores live (the gateway's); default the one `state.backend` names, opened and closed here. */
  backend?: StateBackend;
  /** Recording problems (a locked database): reported, never fatal. */
  onWarning?: (message: string) => void;
  /** The home's log files: each turn's agent events go to agent.log (see agent/event-log.ts). */
  logger?: Logger;
}

export interface ApiServer {
  /** `http://host:port`, without `/v1`. */
  url: string;
  host: string;
  port: number;
  model: string;
  /** Stops accepting requests, waits for running and queued ones to finish, then releases everything. */
  close(): Promise<void>;
}

/** A setting that keeps the server from starting; the message says what to change. */
export class ApiServerConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ApiServerConfigError";
  }
}

const DEFAULT_PORT = 8642;
const DEFAULT_HOST = "127.0.0.1";
const DEFAULT_MODEL = "hermes-agent";
const MIB = 1024 * 1024;
/** Shortest API key accepted: shorter ones are guessable placeholders (issue 22). */
export const MIN_KEY_LENGTH = 16;

function configuredRuns(config: HermesConfig): number | undefined {
  const gateway = (config as unknown as Record<string, unknown>)["gateway"];
  const api =
    typeof gateway === "object" && gateway !== null
      ? (gateway as Record<string, unknown>)["api_server"]
      : undefined;
  const value =
    typeof api === "object" && api !== null
      ? (api as Record<string, unknown>)["max_concurrent_runs"]
      : undefined;
  return typeof value === "number" ? value : undefined;
}

function configuredToolsets(config: HermesConfig): string[] {
  const all = (config as unknown as Record<string, unknown>)["platform_toolsets"];
  const mine =
    typeof all === "object" && all !== null ? (all as Record<string, unknown>)[API_SERVER_SOURCE] : undefined;
  return Array.isArray(mine) && mine.every((t) => typeof t === "string") ? mine : ["hermes-api-server"];
}

function parsePort(text: string): number {
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ApiServerConfigError(`API_SERVER_PORT must be a port number (0-65535), got "${text}".`);
  }
  return port;
}

/** Starts the API server; rejects with `ApiServerConfigError` (or the provider's error) when it cannot. */
export async function startApiServer(options: ApiServerOptions): Promise<ApiServer> {
  const env = options.env;
  const key = (options.key ?? env["API_SERVER_KEY"] ?? "").trim();
  if (!key) {
    throw new ApiServerConfigError(
      "The API server needs a key: set API_SERVER_KEY (a long random string, for example from " +
        "`openssl rand -hex 32`) in ~/.hermes/.env, and send it as `Authorization: Bearer <key>`.",
    );
  }
  if (key.length < MIN_KEY_LENGTH) {
    throw new ApiServerConfigError(
      `API_SERVER_KEY is ${key.length} characters long; the API server needs at least ${MIN_KEY_LENGTH} ` +
        "so the key cannot be guessed. Set a long random one (for example from `openssl rand -hex 32`) " +
        "in ~/.hermes/.env.",
    );
  }
  const host = options.host ?? (env["API_SERVER_HOST"]?.trim() || DEFAULT_HOST);
  const port =
    options.port ??
    (env["API_SERVER_PORT"]?.trim() ? parsePort(env["API_SERVER_PORT"].trim()) : DEFAULT_PORT);
  const modelName = options.modelName ?? (env["API_SERVER_MODEL_NAME"]?.trim() || DEFAULT_MODEL);
  const maxRuns = options.maxConcurrentRuns ?? configuredRuns(options.config) ?? 10;
  if (!Number.isInteger(maxRuns) || maxRuns < 1) {
    throw new ApiServerConfigError(
      `gateway.api_server.max_concurrent_runs must be a whole number of at least 1, got ${maxRuns}.`,
    );
  }
  const corsOrigins = new Set(
    options.corsOrigins ??
      (env["API_SERVER_CORS_ORIGINS"] ?? "")
        .split(",")
        .map((o) => o.trim().replace(/\/+$/, ""))
        .filter(Boolean),
  );
  const maxBody = options.maxBodyBytes ?? MIB;
  const limiter = new RunLimiter(maxRuns, options.maxQueuedRuns ?? maxRuns * 20);
  // Resolve the provider once, now, so a configuration problem stops start-up with its message.
  const resolved = resolveRuntime({ flags: {}, config: options.config, env, home: options.home });
  // Recording store: a damaged state.db is moved aside, and writes that meet another process's
  // lock are queued and retried instead of lost.
  // `state.durability` as the CLI honours it: without it every commit was fsynced, and with many
  // conversations at once those fsyncs, one after another on the event loop, were most of a turn.
  const backend = options.backend ?? (await openStateBackend(options.home, options.config, { env }));
  const ownBackend = options.backend ? undefined : backend;
  const store = backend.openSessions({ notify: (message) => options.onWarning?.(`state.db: ${message}`) });
  const cwd = options.cwd ?? process.cwd();
  const registry = options.registry ?? createBuiltinRegistry();
  const toolsets = configuredToolsets(options.config);
  const responses = backend.openResponses({ onWarning: (m) => options.onWarning?.(m) });
  let closing = false;
  const ctx: RouteContext = {
    modelName,
    turns: new TurnRunner({
      store,
      ...(options.exclusive ? { exclusive: options.exclusive } : {}),
      ...(options.trackTurn ? { trackTurn: options.trackTurn } : {}),
      cwd,
      openSession: options.createSession ?? ((o) => ChatSession.open(o)),
      sessionOptions: {
        config: options.config,
        home: options.home,
        env,
        cwd,
        resolved,
        registry,
        ...(options.toolsReady ? { toolsReady: options.toolsReady } : {}),
        toolsets,
        // What `.env` added to the environment, asked once: the sessions all run on the env the
        // server started with, so an agent per request need not stat and read the file again.
        withheldEnv: hermesLoadedNames(options.home),
        platform: API_SERVER_SOURCE,
        source: API_SERVER_SOURCE,
        store,
        ...(options.onWarning ? { onWarning: options.onWarning } : {}),
        ...(options.logger ? { logger: options.logger } : {}),
      },
    }),
    responses,
    store,
    cronJobs: (o) => backend.cronJobs(o),
    home: options.home,
    config: options.config,
    env,
    registry,
    toolsets,
    cors: corsOrigins.size > 0,
    startedAt: Date.now(),
    load: () => ({ running: limiter.running, queued: limiter.queued, maxRunning: maxRuns }),
    toolEmoji: (name) => registry.get(name)?.emoji ?? "",
    withRunSlot: async (signal, work) => {
      let release: () => void;
      try {
        release = await limiter.acquire(signal);
      } catch (error) {
        if (error instanceof AcquireAbortedError) return undefined;
        if (error instanceof QueueFullError) {
          throw new ApiError(
            429,
            `The agent is busy: ${error.message}`,
            "too_many_requests",
            "rate_limit_error",
            { "retry-after": "1" },
          );
        }
        throw error;
      }
      try {
        return await work();
      } finally {
        release();
      }
    },
  };
  const runs = new RunRegistry(ctx);
  const settings = { key, maxBody, corsOrigins, closing: () => closing };

  let active = 0;
  let drained: (() => void) | undefined;

  const server = createServer((req, res) => {
    active++;
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
    if (closing) res.setHeader("connection", "close");
    const controller = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) controller.abort();
      active--;
      if (active === 0) drained?.();
    });
    res.on("error", () => undefined);
    req.on("error", () => undefined);
    route(ctx, runs, settings, req, res, controller.signal).catch((error: unknown) => {
      if (res.headersSent) {
        res.end();
        return;
      }
      if (error instanceof ApiError) {
        sendError(res, error);
      } else if (error instanceof SessionStoreError && error.code === "locked") {
        // The state database does not answer (down, restarting, refusing): a client or load
        // balancer may try again; where the database is and why stays in this instance's log.
        options.onWarning?.(`API request ${req.method} ${req.url} failed: ${String(error)}`);
        sendError(
          res,
          new ApiError(
            503,
            "The state database is not available right now, so this request could not be completed; try again shortly.",
            "state_unavailable",
            "server_error",
            { "retry-after": "5" },
          ),
        );
      } else {
        options.onWarning?.(`API request ${req.method} ${req.url} failed: ${String(error)}`);
        sendError(
          res,
          new ApiError(
            500,
            `The API server failed on this request: ${String(error)}`,
            "internal_error",
            "server_error",
          ),
        );
      }
    });
  });
  server.on("clientError", (_error, socket) => {
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n");
    else socket.destroy();
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => {
      void store.close();
      void responses.close();
      void ownBackend?.close();
      reject(
        error.code === "EADDRINUSE"
          ? new ApiServerConfigError(
              `Port ${port} on ${host} is already in use; set API_SERVER_PORT or --port.`,
            )
          : error,
      );
    });
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;

  let closed: Promise<void> | undefined;
  return {
    url: `http://${shownHost}:${address.port}`,
    host: address.address,
    port: address.port,
    model: modelName,
    close: () => {
      closed ??= (async () => {
        closing = true;
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        if (active > 0) await new Promise<void>((resolve) => (drained = resolve));
        await runs.settled();
        await limiter.idle();
        server.closeAllConnections();
        await stopped;
        await store.drain(SHUTDOWN_SAVE_WAIT_MS);
        await store.close();
        await responses.close();
        await ownBackend?.close();
      })();
      return closed;
    },
  };
}
