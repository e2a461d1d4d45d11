/**
 * The gateway process (`hermes gateway run`): one long-running process per home that hosts what is
 * enabled (the OpenAI-compatible API server with the configured MCP servers' tools, and the
 * messaging platforms as they arrive) and the cron ticker. It holds the home's gateway lock and `gateway.pid` while it runs; `stop()` stops
 * taking work, lets running turns and a running cron tick finish, then releases them.
 */
import type { HermesConfig } from "../config/defaults.js";
import { createDeliverer } from "../cron/delivery.js";
import { agentJobRunner } from "../cron/run-job.js";
import { startTicker } from "../cron/scheduler.js";
import { createBuiltinRegistry } from "../tools/builtin.js";
import { hasEnabledMcpServers } from "../tools/mcp/config.js";
import { startMcpServers } from "../tools/mcp/manager.js";
import { startApiServer } from "./api-server/index.js";
import { claimGateway } from "./pid-file.js";

export interface GatewayOptions {
  home: string;
  config: HermesConfig;
  env: Record<string, string | undefined>;
  /** The command line recorded in gateway.pid. */
  argv?: readonly string[];
  /** Seconds between cron ticks (default 60; `HERMES_CRON_TICK_SECONDS` overrides). */
  cronIntervalSeconds?: number;
  /** Progress and problems, one line each (the CLI prints them on stderr). */
  log?: (line: string) => void;
}

export interface RunningGateway {
  /** What runs: "api_server http://127.0.0.1:8642", "cron (every 60 s)". */
  readonly services: readonly string[];
  /** Stops taking work, waits for running turns and ticks, releases the pid file and lock. */
  stop(): Promise<void>;
}

const truthy = (value: unknown): boolean =>
  value === true || (typeof value === "string" && /^(1|true|yes|on)$/i.test(value.trim()));

/** Whether the API server platform is enabled: `API_SERVER_ENABLED` or `platforms.api_server.enabled`. */
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

/**
 * Starts the gateway. Throws `GatewayRunningError` when another gateway holds this home, and the
 * API server's configuration errors (missing key) before anything is left running.
 */
export async function startGateway(options: GatewayOptions): Promise<RunningGateway> {
  const { home, config, env } = options;
  const log = options.log ?? (() => {});
  const release = claimGateway(home, options.argv ?? process.argv.slice(1));
  const services: string[] = [];
  const stops: Array<() => Promise<void>> = [];
  try {
    if (apiServerEnabled(config, env)) {
      // MCP servers start in the background; turns wait for them before freezing their tools.
      const registry = createBuiltinRegistry();
      const mcp = hasEnabledMcpServers(config["mcp_servers"])
        ? startMcpServers({
            config: config["mcp_servers"],
            registry,
            env,
            onWarning: (message) => log(`mcp: ${message}`),
          })
        : undefined;
      if (mcp) stops.push(() => mcp.close());
      const server = await startApiServer({
        home,
        config,
        env,
        registry,
        ...(mcp ? { toolsReady: mcp.ready } : {}),
        onWarning: (message) => log(`api_server: ${message}`),
      });
      services.push(`api_server ${server.url}`);
      stops.push(() => server.close());
    }
    const fromEnv = Number(env["HERMES_CRON_TICK_SECONDS"]);
    const seconds = Number.isFinite(fromEnv) && fromEnv > 0 ? fromEnv : (options.cronIntervalSeconds ?? 60);
    const timezone =
      typeof config["timezone"] === "string" && config["timezone"] ? config["timezone"] : undefined;
    const ticker = startTicker({
      home,
      runJob: agentJobRunner({ home, config, env }),
      deliver: createDeliverer(),
      intervalMs: seconds * 1000,
      ...(timezone ? { timezone } : {}),
      onProgress: (message) => log(`cron: ${message}`),
      onTick: (outcome) => {
        if (outcome.status !== "done") return;
        for (const job of outcome.ran)
          log(`cron: ${job.name} (${job.id}) ${job.ok ? "ran" : `failed: ${job.error ?? "unknown error"}`}`);
        for (const job of outcome.skipped)
          log(`cron: ${job.name} (${job.id}) missed its run at ${job.missedAt}`);
      },
      onError: (error) => log(`cron: tick failed: ${error instanceof Error ? error.message : String(error)}`),
    });
    services.push(`cron (every ${seconds} s)`);
    stops.push(() => ticker.stop());
  } catch (error) {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    release();
    throw error;
  }
  let stopping: Promise<void> | undefined;
  return {
    services,
    stop() {
      stopping ??= (async () => {
        for (const stop of [...stops].reverse()) {
          try {
            await stop();
          } catch (error) {
            log(`stop: ${error instanceof Error ? error.message : String(error)}`);
          }
        }
        release();
      })();
      return stopping;
    },
  };
}
