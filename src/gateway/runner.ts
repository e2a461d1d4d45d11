/**
 * The gateway process (`hermes gateway run`): one long-running process per home that hosts what is
 * enabled (the messaging platforms whose tokens are set, the OpenAI-compatible API server, webhooks;
 * all with the configured MCP servers' tools) and the cron ticker, which delivers to the connected
 * platforms. It holds the home's gateway lock and `gateway.pid` while it runs; `stop()` stops
 * taking work, lets running turns and a running cron tick finish, then releases them.
 */
import { ChatSession, type ChatSessionOptions } from "../agent/chat-session.js";
import { processHooks } from "../agent/hooks.js";
import { loadShellHooks, reportShellHooks } from "../agent/shell-hooks/register.js";
import { resolveRuntime } from "../ai/resolve.js";
import type { HermesConfig } from "../config/defaults.js";
import { registerKnownSecrets } from "../config/known-secrets.js";
import { createDeliverer, type PlatformSender } from "../cron/delivery.js";
import { agentJobRunner } from "../cron/run-job.js";
import { startTicker } from "../cron/scheduler.js";
import { logTick } from "../cron/tick-log.js";
import { curatorTicker } from "../knowledge/curator/schedule.js";
import { openStateBackend, type StateBackend } from "../knowledge/state-backend.js";
import { listUnloadedPlugins } from "../plugins/discover.js";
import { isSafeModeEnv, loadPluginsOnce, pluginsWanted } from "../plugins/loader.js";
import { API_SERVER_CLAIM, type Coordinator } from "../state/coordination.js";
import { webhookEnabled } from "../state/gateway/webhook-subscriptions.js";
import { createBuiltinRegistry } from "../tools/builtin.js";
import { hasEnabledMcpServers } from "../tools/mcp/config.js";
import { startMcpServers } from "../tools/mcp/manager.js";
import { modelSampler } from "../tools/mcp/sampling-model.js";
import { type Logger, silentLogger } from "../util/log.js";
import { ApiError } from "./api-server/http.js";
import { startApiServer } from "./api-server/index.js";
import { LiveAuthEnv } from "./auth/live-allowlist.js";
import { startControlServer } from "./control/server.js";
import { GatewayControlState } from "./control/state.js";
import { ChatBusyError, waitForChatClaim } from "./coordination/chat-wait.js";
import { GatewayCoordination, type ReloadKind } from "./coordination/index.js";
import { SharedApprovals } from "./coordination/shared-approvals.js";
import { type HealthEndpoint, healthAddress, startHealthEndpoint } from "./health-endpoint.js";
import { startGatewayHooks } from "./hooks/index.js";
import { addPluginChatCommands, chatCommandMenu, chatCommands } from "./messaging/commands.js";
import { MessageRouter } from "./messaging/router.js";
import { claimGateway } from "./pid-file.js";
import { createAdapter, enabledPlatforms } from "./platforms/registry.js";
import type { PlatformAdapter } from "./platforms/types.js";
import { startWebhookServer } from "./webhooks/server.js";

/** How long stopping waits for writes still queued behind another process's lock on state.db. */
const SHUTDOWN_SAVE_WAIT_MS = 10_000;

import { webhookDeliverer, webhookRunner } from "./webhooks/wiring.js";

export interface GatewayOptions {
  home: string;
  config: HermesConfig;
  env: Record<string, string | undefined>;
  /** The real process environment (its allowlist names win over `.env`'s); see `LiveAuthEnv`. */
  processEnv?: Readonly<Record<string, string | undefined>>;
  /** Where every store lives; default the one `state.backend` names (opened and closed here). */
  backend?: StateBackend;
  /** Profile name (`-p`): the namespace of the chats' session keys. */
  profile?: string | undefined;
  /** The command line recorded in gateway.pid. */
  argv?: readonly string[];
  /** Seconds between cron ticks (default 60; `HERMES_CRON_TICK_SECONDS` overrides). */
  cronIntervalSeconds?: number;
  /** Progress and problems, one line each (the CLI prints them on stderr). */
  log?: (line: string) => void;
  /**
   * The home's log files: the gateway's own events (platforms, messages, pairing) go to
   * gateway.log, its agents' and cron's to agent.log, problems also to errors.log.
   */
  logger?: Logger;
  /** A chat asked for a restart (`/restart`); absent: the command says this gateway cannot. */
  onRestartRequested?: () => void;
  /**
   * A coordinator to use instead of the state backend's (tests); default the backend's: the
   * one-process one for SQLite (nothing changes), PostgreSQL's shared one for several instances.
   * The caller closes one it passed.
   */
  coordinator?: Coordinator;
  /** More refreshes to run on `reload.<kind>` (tests). */
  reloads?: Partial<Record<ReloadKind, () => void | Promise<void>>>;
}

export interface RunningGateway {
  /** What runs: "api_server http://127.0.0.1:8642", "cron (every 60 s)". */
  readonly services: readonly string[];
  /**
   * A restart's first phase: chats' new requests are turned away while running turns may finish.
   * Resolves true when none runs any more, false when `agent.restart_after_turn_timeout` ran out.
   */
  quiesce(): Promise<boolean>;
  /**
   * Stops taking work; running chat turns get `agent.restart_drain_timeout`, then are interrupted
   * (their chats told, their sessions marked to continue); a cron job gets `agent.cron_drain_timeout`.
   * Then releases the pid file and lock.
   */
  stop(): Promise<void>;
}

const truthy = (value: unknown): boolean =>
  value === true || (typeof value === "string" && /^(1|true|yes|on)$/i.test(value.trim()));

/** Whether the API server platform is enabled: `API_SERVER_ENABLED` or `platforms.api_server.enabled`. */
/** A webhook run counted in the instance listing's `turns` while it runs. */
function tracked<A extends unknown[], R>(
  coordinator: Coordinator,
  run: (...args: A) => Promise<R>,
): (...args: A) => Promise<R> {
  return async (...args) => {
    const ended = coordinator.trackTurn();
    try {
      return await run(...args);
    } finally {
      ended();
    }
  };
}

export function apiServerEnabled(config: HermesConfig, env: Record<string, string | undefined>): boolean {
  if (env["API_SERVER_ENABLED"] !== undefined) return truthy(env["API_SERVER_ENABLED"]);
  const platforms = config["platforms"];
  const section =
    platforms && typeof platforms === "object"
      ? (platforms as Record<string, unknown>)["api_server"]
      : undefined;
  return (
    section !== null && typeof section === "object" && truthy((section as Record<string, unknown>)["enabled"])
  );
}

const section = (value: unknown): Record<string, unknown> =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

/** `platform_toolsets.<platform>` from config.yaml, else the platform's `hermes-<platform>` toolset. */
export function platformToolsets(config: HermesConfig, platform: string): string[] {
  const mine = section(config["platform_toolsets"])[platform];
  return Array.isArray(mine) && mine.every((t) => typeof t === "string") ? mine : [`hermes-${platform}`];
}

/** A non-negative number of seconds from config, else `fallback`. */
export function secondsOf(value: unknown, fallback: number): number {
  const n = Number(value);
  return value !== null && value !== "" && Number.isFinite(n) && n >= 0 ? n : fallback;
}

/** Seconds to wait for a platform to connect (`gateway.platform_connect_timeout`, default 30). */
function connectTimeoutMs(config: HermesConfig): number {
  const value = Number(section(config["gateway"])["platform_connect_timeout"]);
  return (Number.isFinite(value) && value > 0 ? value : 30) * 1000;
}

function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    work,
    new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`${what} did not finish within ${Math.round(ms / 1000)} s`)),
        ms,
      );
    }),
  ]).finally(() => clearTimeout(timer));
}

/**
 * Starts the gateway. Throws `GatewayRunningError` when another gateway holds this home, and
 * configuration errors (the API server's missing key, no provider for the platforms) before
 * anything is left running. A platform that cannot connect is reported and left out; the rest run.
 */
/**
 * Opens a chat's session and starts a non-local terminal environment before its first model call;
 * an environment that cannot start fails the open (the chat is told why), never a host run.
 */
async function openWithEnvironment(options: Parameters<typeof ChatSession.open>[0]): Promise<ChatSession> {
  const session = await ChatSession.open(options);
  try {
    await session.agent.prepareEnvironment();
  } catch (error) {
    await session.close("environment").catch(() => undefined);
    const fix = error instanceof Error && "fix" in error ? ` Fix: ${String(error.fix)}` : "";
    throw new Error(`${error instanceof Error ? error.message : String(error)}${fix}`);
  }
  return session;
}

export async function startGateway(options: GatewayOptions): Promise<RunningGateway> {
  const { home, config, env } = options;
  // Every surface hosted here shares the process's secret set (the CLI registered it already when
  // it started us; a library caller may not have).
  registerKnownSecrets({ home, env, config });
  const print = options.log ?? (() => {});
  const logger = options.logger ?? silentLogger;
  const glog = logger.child({ component: "gateway" });
  /** A problem: on stderr as before, and in the logs under `component`. */
  const log = (line: string, component = "gateway") => {
    print(line);
    logger.child({ component }).warning(line);
  };
  // Shell hooks: nobody can be asked here, so a hook not yet approved is refused with how to allow it.
  if (config["hooks"]) {
    void loadShellHooks({ bus: processHooks(), config, home, env, onRunWarning: (m) => log(m, "hooks") })
      .then((report) => reportShellHooks(report, (line) => log(`hooks: ${line}`, "hooks")))
      .catch((error: unknown) =>
        log(`hooks: not loaded: ${error instanceof Error ? error.message : String(error)}`, "hooks"),
      );
  }
  const release = claimGateway(home, options.argv ?? process.argv.slice(1));
  const services: string[] = [];
  const stops: Array<() => Promise<void>> = [];
  // Live state for the control socket (status, events, approvals); fed by the router and below.
  const control = new GatewayControlState();
  let chats: MessageRouter | undefined;
  let health: HealthEndpoint | undefined;
  try {
    // The load balancer's probe: 503 until everything is up, and again from the first stop.
    const healthAt = healthAddress(env);
    if (healthAt) {
      const endpoint = await startHealthEndpoint(healthAt);
      health = endpoint;
      stops.push(() => endpoint.close());
      services.push(`health ${endpoint.url}`);
    }
    const backend =
      options.backend ??
      (await openStateBackend(home, config, {
        env,
        ...(health ? { instance: { healthUrl: health.url } } : {}),
      }));
    if (!options.backend) stops.push(() => backend.close());
    // One process (SQLite): the one-process coordinator; PostgreSQL: the instances' shared one.
    const coordinator = options.coordinator ?? backend.coordinator;
    health?.setInstance(coordinator.instanceId);
    // Several instances: one cut off from the shared database answers 503 until it answers again.
    if (coordinator.shared) health?.setProbe(() => coordinator.instances());
    const coordination = new GatewayCoordination(coordinator, {
      home,
      env,
      config,
      log: (line) => log(line, "gateway.coordination"),
    });
    for (const [kind, refresh] of Object.entries(options.reloads ?? {}))
      if (refresh) coordination.reloads.on(kind as ReloadKind, refresh);
    // Stopped before the backend (which closes its coordinator), after the router's turns.
    stops.push(() => coordination.close());
    // Several instances: every instance's pending approvals listed and answered from any of them.
    const approvals =
      coordinator.shared && backend.pendingApprovals
        ? new SharedApprovals(backend.pendingApprovals, coordinator, {
            log: (line) => log(line, "gateway.coordination"),
          })
        : undefined;
    if (approvals) stops.push(() => approvals.close());
    const platforms = enabledPlatforms(config, env);
    const needsAgents = platforms.length > 0 || apiServerEnabled(config, env) || webhookEnabled(config, env);
    // One registry for every surface; MCP servers start in the background and turns wait for them.
    const registry = createBuiltinRegistry();
    const mcp =
      needsAgents && hasEnabledMcpServers(config["mcp_servers"])
        ? startMcpServers({
            config: config["mcp_servers"],
            registry,
            env,
            home,
            sampler: modelSampler({ config, env, home }),
            onWarning: (message) => log(`mcp: ${message}`, "mcp"),
          })
        : undefined;
    if (mcp) stops.push(() => mcp.close());
    // Enabled plugins (not with HERMES_SAFE_MODE): their tools join the shared registry, their
    // hooks the process's hook bus, which every conversation's agent fires.
    if (needsAgents && pluginsWanted(config, env)) {
      await loadPluginsOnce({ home, config, env, registry, onWarning: (message) => log(message, "plugins") });
      // Their slash commands reach every chat (and the platforms' command menus, published below).
      addPluginChatCommands();
    } else listUnloadedPlugins(home, config, isSafeModeEnv(env));
    if (apiServerEnabled(config, env)) {
      const shared = coordinator.shared ? coordinator : undefined;
      const server = await startApiServer({
        // Several instances: a continued session waits until no other instance runs it, and its
        // turn is fenced on the claim (see `TurnDeps.exclusive`).
        ...(shared
          ? {
              exclusive: async (id: string, signal: AbortSignal) => {
                try {
                  return await waitForChatClaim(shared, `${API_SERVER_CLAIM}${id}`, { signal });
                } catch (error) {
                  if (!(error instanceof ChatBusyError)) throw error;
                  throw new ApiError(
                    409,
                    `Session ${id} is ${error.message}; try again later.`,
                    "session_busy",
                  );
                }
              },
            }
          : {}),
        trackTurn: () => coordinator.trackTurn(),
        home,
        config,
        env,
        registry,
        backend,
        ...(mcp ? { toolsReady: mcp.ready } : {}),
        onWarning: (message) => log(`api_server: ${message}`, "gateway.api_server"),
        logger,
      });
      services.push(`api_server ${server.url}`);
      stops.push(() => server.close());
    }

    const adapters = new Map<string, PlatformAdapter>();
    let router: MessageRouter | undefined;
    const webhooks = webhookEnabled(config, env);
    let sessionOptions: ChatSessionOptions | undefined;
    if (platforms.length > 0 || webhooks) {
      // Resolve the provider now so a configuration problem stops start-up with its message.
      const resolved = resolveRuntime({ flags: {}, config, env, home });
      // Recording store: a damaged state.db is moved aside, and writes that meet another
      // process's lock are queued and retried instead of lost.
      const store = backend.openSessions({ notify: (message) => print(`state.db: ${message}`) });
      stops.push(async () => {
        await store.drain(SHUTDOWN_SAVE_WAIT_MS);
        await store.close();
      });
      sessionOptions = {
        config,
        home,
        env,
        cwd: env["MESSAGING_CWD"]?.trim() || process.cwd(),
        resolved,
        registry,
        ...(mcp ? { toolsReady: mcp.ready } : {}),
        store,
        onWarning: (message) => print(message),
        logger,
      };
    }
    if (platforms.length > 0 && sessionOptions) {
      const shared = sessionOptions;
      // Gateway hooks (`<home>/hooks/<name>/`, only those `gateway_hooks.enabled` names); stopped
      // after the router, so the session ends of its shutdown still reach them.
      const gatewayHooks = startGatewayHooks({
        home,
        config,
        env,
        bus: processHooks(),
        warn: (m) => log(m, "hooks"),
      });
      stops.push(() => gatewayHooks.stop());
      // Several instances: a chat's index entry is written only while this instance holds the chat.
      const fenced = <T extends object>(index: T): T => coordination.relay?.fenceIndex(index) ?? index;
      const authEnv = new LiveAuthEnv({ home, env, processEnv: options.processEnv, warn: (m) => log(m) });
      const messaging = new MessageRouter({
        home,
        config,
        env,
        authEnv: () => authEnv.current(),
        profile: options.profile,
        adapters,
        observer: gatewayHooks.observer(approvals ? approvals.observe(control) : control, chatCommands),
        ...(coordination.relay ? { relay: coordination.relay } : {}),
        ...(coordinator.shared && backend.chatSettings ? { chatSettings: backend.chatSettings } : {}),
        pairing: backend.pairing,
        index: fenced(backend.chatIndex((message) => log(`sessions: ${message}`))),
        log: print,
        logger,
        toolsets: (platform) => platformToolsets(config, platform),
        ...(mcp ? { mcp: async () => mcp } : {}),
        ...(options.onRestartRequested ? { restart: options.onRestartRequested } : {}),
        openSession: (request) =>
          openWithEnvironment({
            ...shared,
            toolsets: platformToolsets(config, request.platform),
            platform: request.platform,
            source: request.platform,
            userId: request.source.userId,
            onWarning: (message) => print(`${request.platform}: ${message}`),
            onApproval: request.onApproval,
            // Called by the approval policy only for the chat user's own "always" answer.
            persistAlwaysApproval: async (patternKey) => {
              config.command_allowlist = [...new Set([...(config.command_allowlist ?? []), patternKey])];
              try {
                await backend.commandAllowlist.add(patternKey);
              } catch (error) {
                log(
                  `"always" was not saved to command_allowlist: ${error instanceof Error ? error.message : String(error)}`,
                );
              }
            },
            toolState: request.toolState,
            // Several instances: this conversation writes, runs tools and asks only while it holds its chat.
            ...coordination.relay?.fenceSession(request.key, {
              store: shared.store,
              registry: shared.registry,
              onApproval: request.onApproval,
            }),
            // The router starts a due background review once the reply is sent.
            holdReviews: true,
            ...(request.resume ? { resume: request.resume } : {}),
          }).then((chat) => {
            gatewayHooks.track(request.key, request.source, chat);
            return chat;
          }),
      });
      router = messaging;
      chats = messaging;
      approvals?.attach(messaging.approvals);
      coordination.attach((platform) => {
        const adapter = adapters.get(platform);
        return adapter ? messaging.handlersFor(adapter) : undefined;
      }, messaging);
      stops.push(() => messaging.stop());
      const timeout = connectTimeoutMs(config);
      for (const name of platforms) {
        let adapter: PlatformAdapter;
        try {
          adapter = await createAdapter(name, {
            home,
            config,
            env,
            // Several instances: a platform's retry that reaches another instance is not run twice.
            ...(backend.sharedWebhooks ? { deliveries: backend.sharedWebhooks.deliveries } : {}),
          });
          await withTimeout(
            coordination.connect(adapter, messaging.handlersFor(adapter)),
            timeout,
            `connecting to ${name}`,
          );
        } catch (error) {
          const reason = error instanceof Error ? error.message : String(error);
          print(`${name}: not started: ${reason}`);
          control.platformFailed(name, reason);
          logger.child({ component: `gateway.${name}` }).error("not connected", { error: reason });
          continue;
        }
        const plog = logger.child({ component: `gateway.${name}` });
        plog.info("connected");
        control.platformUp(name);
        adapters.set(name, adapter);
        // Disconnect after the router has drained (stops run in reverse order).
        stops.splice(stops.length - 1, 0, async () => {
          await adapter.disconnect();
          control.platformDown(name);
          plog.info("disconnected");
        });
        services.push(name);
        adapter
          .setCommands?.(chatCommandMenu())
          .catch((error: unknown) =>
            log(
              `${name}: could not publish the command menu: ${error instanceof Error ? error.message : String(error)}`,
              `gateway.${name}`,
            ),
          );
      }
      gatewayHooks.startup([...adapters.keys()]);
    }

    if (webhooks && sessionOptions) {
      const wiring = {
        sessionOptions,
        toolsets: platformToolsets(config, "webhook"),
        router: () => router,
      };
      const server = await startWebhookServer({
        home,
        config,
        env,
        runAgent: tracked(coordinator, webhookRunner(wiring)),
        deliver: webhookDeliverer(wiring),
        ...backend.sharedWebhooks,
        onLog: (line) => {
          print(line);
          logger.child({ component: "gateway.webhook" }).info(line);
        },
      });
      services.push(`webhook ${server.url}`);
      // Subscriptions changed on another instance: read them again now.
      coordination.reloads.on("webhooks", () => void server.routes());
      stops.push(() => server.close());
    }

    const senders = new Map<string, PlatformSender>();
    for (const name of adapters.keys()) {
      senders.set(name, {
        send: ({ chatId, threadId, text }) =>
          (router as MessageRouter).deliver(
            name,
            { ...(chatId ? { chatId } : {}), ...(threadId ? { threadId } : {}) },
            text,
          ),
      });
    }
    const fromEnv = Number(env["HERMES_CRON_TICK_SECONDS"]);
    const seconds = Number.isFinite(fromEnv) && fromEnv > 0 ? fromEnv : (options.cronIntervalSeconds ?? 60);
    const timezone =
      typeof config["timezone"] === "string" && config["timezone"] ? config["timezone"] : undefined;
    const clog = logger.child({ component: "cron" });
    // The skill curator rides the cron ticker: a cheap due check per tick, a run when due.
    const curatorTick = curatorTicker({
      home,
      config,
      env,
      log: (line) => {
        print(line);
        logger.child({ component: "curator" }).info(line);
      },
    });
    const ticker = startTicker({
      home,
      // Several instances: each due slot runs once across them (cron/slot-claims.ts).
      ...(coordinator.shared ? { coordinator } : {}),
      runJob: agentJobRunner({
        home,
        config,
        env,
        logger,
        openSessions: () => backend.openSessions({ notify: (message) => print(`state.db: ${message}`) }),
      }),
      jobs: backend.cronJobs(timezone ? { timezone } : {}),
      deliver: createDeliverer(senders),
      intervalMs: seconds * 1000,
      ...(timezone ? { timezone } : {}),
      onProgress: (message) => {
        print(`cron: ${message}`);
        clog.info(message);
      },
      onTick: (outcome) => {
        logTick(outcome, clog, print);
        curatorTick();
      },
      onError: (error) =>
        log(`cron: tick failed: ${error instanceof Error ? error.message : String(error)}`, "cron"),
    });
    services.push(`cron (every ${seconds} s)`);
    // A running job gets `agent.cron_drain_timeout` to finish, then its script and agent are stopped.
    stops.push(() => ticker.stop({ graceMs: secondsOf(config.agent?.cron_drain_timeout, 30) * 1000 }));
    // Stopping starts here: no new chats claimed, leases handed to another instance at once.
    stops.push(() => coordination.drain());
    // Started last (status is whole) and stopped last, so `status` answers while turns drain.
    try {
      const socket = await startControlServer({
        home,
        config,
        env,
        state: control,
        services,
        router: () => router,
        connected: () => [...adapters.keys()],
        ...(approvals ? { shared: approvals } : {}),
        onRefused: (method, why) => glog.warning("control socket call refused", { method, why }),
      });
      stops.unshift(async () => {
        control.events.close();
        await socket.close();
      });
    } catch (error) {
      log(`control socket not started: ${error instanceof Error ? error.message : String(error)}`);
    }
  } catch (error) {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    release();
    glog.error("not started", { error: error instanceof Error ? error.message : String(error) });
    throw error;
  }
  glog.info("started", { pid: process.pid, services: services.join(", ") });
  health?.setPhase("serving");
  let stopping: Promise<void> | undefined;
  return {
    services,
    quiesce: () => (chats ? chats.quiesce() : Promise.resolve(true)),
    stop() {
      stopping ??= (async () => {
        health?.setPhase("draining");
        for (const stop of [...stops].reverse()) {
          try {
            await stop();
          } catch (error) {
            log(`stop: ${error instanceof Error ? error.message : String(error)}`);
          }
        }
        release();
        glog.info("stopped", { pid: process.pid });
      })();
      return stopping;
    },
  };
}
