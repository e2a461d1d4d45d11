/**
 * One dashboard process: opens the home's stores once (the same classes the CLI uses), registers
 * the home's secrets with the redactor, builds the route table and starts the server.
 */
import { randomBytes } from "node:crypto";
import { loadEnvFile } from "../config/env-file.js";
import { registerKnownSecrets } from "../config/known-secrets.js";
import { loadConfig } from "../config/load.js";
import { openStateBackend } from "../knowledge/state-backend.js";
import { connectGatewayControl } from "../state/gateway-control.js";
import { durabilityOptions } from "../state/recording-store.js";
import { openSessionStore, sessionStorePath } from "../state/sqlite-store.js";
import { processRedactor } from "../util/redact.js";
import { chatApi } from "./api-chat.js";
import { configRoutes } from "./api-config.js";
import { cronRoutes } from "./api-cron.js";
import { gatewayRoutes } from "./api-gateway.js";
import { knowledgeRoutes } from "./api-knowledge.js";
import { sessionRoutes } from "./api-sessions.js";
import { usageRoutes } from "./api-usage.js";
import type { Route } from "./http.js";
import { csrfToken, type DashboardAuth } from "./security.js";
import { type DashboardServer, startDashboardServer } from "./server.js";
import { loadWebAssets, webAssetsDir } from "./static.js";

export interface DashboardAppOptions {
  home: string;
  host: string;
  port: number;
  auth: DashboardAuth;
  /** The real environment (without `.env`). */
  baseEnv: Record<string, string | undefined>;
  extraHosts?: readonly string[];
  log?: (line: string) => void;
  /** Starts `hermes cron run <id>` in the background (the CLI knows how to start itself). */
  runCronJob?: (id: string) => void;
  /** Starts `hermes curator run [--dry-run]` detached (the CLI's `--background`); returns its pid. */
  startCuratorRun?: (dryRun: boolean) => number;
}

export interface DashboardApp extends DashboardServer {
  routes: readonly Route[];
}

function settings(home: string, baseEnv: Record<string, string | undefined>) {
  const { env, loaded } = loadEnvFile(home, baseEnv);
  const { config } = loadConfig({ home, env });
  registerKnownSecrets({ home, env, config, redactor: processRedactor() });
  return { env, config, withheldEnv: loaded };
}

export async function startDashboard(options: DashboardAppOptions): Promise<DashboardApp> {
  const { home, baseEnv } = options;
  let current = settings(home, baseEnv);
  // The dashboard reads and edits the state but is not a gateway instance: it joins no coordination.
  const backend = await openStateBackend(home, current.config, { env: current.env, joinInstances: false });
  // A SQLite home's sessions are read through state.db directly (no write queue), as before.
  const store =
    backend.kind === "sqlite"
      ? openSessionStore(sessionStorePath(home), durabilityOptions(current.config.state))
      : backend.openSessions();
  const tz =
    typeof (current.config as unknown as Record<string, unknown>)["timezone"] === "string"
      ? String((current.config as unknown as Record<string, unknown>)["timezone"]).trim()
      : "";
  const cron = backend.cronJobs({
    ...(tz ? { timezone: tz } : {}),
    ...(baseEnv["HOME"] ? { userHome: baseEnv["HOME"] } : {}),
  });
  const gatewayRunning = async (): Promise<boolean> => {
    const control = await connectGatewayControl(home).catch(() => null);
    control?.close();
    return control !== null;
  };
  const csrf = csrfToken(randomBytes(32));
  const chat = chatApi({
    home,
    cwd: process.cwd(),
    settings: () => current,
    ...(options.log ? { log: options.log } : {}),
  });
  const routes: Route[] = [
    ...sessionRoutes(store),
    ...chat.routes,
    ...knowledgeRoutes({
      home,
      memory: backend.memory(current.config.memory),
      skillsConfig: current.config.skills,
      env: current.env,
      config: () => current.config,
      ...(options.startCuratorRun ? { startCuratorRun: options.startCuratorRun } : {}),
    }),
    ...cronRoutes({ cron, gatewayRunning, runCronJob: options.runCronJob }),
    ...usageRoutes(store),
    ...gatewayRoutes({
      home,
      env: () => current.env,
      baseEnv,
      config: () => current.config,
      pairing: backend.pairing,
      subscriptions: backend.webhookSubscriptions,
      ...(backend.pendingApprovals ? { approvals: backend.pendingApprovals } : {}),
      onChange: () => {
        current = settings(home, baseEnv);
      },
    }),
    ...configRoutes({
      home,
      baseEnv,
      onChange: () => {
        current = settings(home, baseEnv);
      },
    }),
  ];
  const index: Route[] = [
    {
      method: "GET",
      path: "/api/",
      summary: "this list of routes",
      handler: () => ({
        json: {
          name: "hermes dashboard",
          auth: "Authorization: Bearer <token> (or the token query parameter), or HTTP basic auth when dashboard.auth has a password",
          csrf: "state-changing requests send X-CSRF-Token (GET /api/csrf) and JSON bodies",
          routes: [...index, ...routes].map((r) => ({ method: r.method, path: r.path, summary: r.summary })),
        },
      }),
    },
    {
      method: "GET",
      path: "/api/csrf",
      summary: "the X-CSRF-Token that POST, PUT, PATCH and DELETE requests carry",
      handler: () => ({ json: { csrf } }),
    },
  ];
  const all = [...index, ...routes];
  let server: DashboardServer;
  try {
    server = await startDashboardServer({
      host: options.host,
      port: options.port,
      auth: options.auth,
      routes: all,
      csrf,
      assets: loadWebAssets(webAssetsDir(baseEnv)),
      ...(options.extraHosts ? { extraHosts: options.extraHosts } : {}),
      ...(options.log ? { log: options.log } : {}),
    });
  } catch (error) {
    await chat.close();
    await store.close();
    await backend.close();
    throw error;
  }
  return {
    ...server,
    routes: all,
    close: async () => {
      await chat.close();
      await server.close();
      await store.close();
      await backend.close();
    },
  };
}
