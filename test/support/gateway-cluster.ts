/**
 * Several `hermes gateway run` processes (the built CLI) sharing one PostgreSQL database, for
 * end-to-end tests of issue 27's topology: each instance has its OWN home directory (nothing on
 * disk is shared), and every home gets the same config.yaml (`state.backend: postgres`, the fake
 * LLM as provider) and the same .env (`HERMES_DATABASE_URL`, keys). Per instance: its API server
 * port, health endpoint port (`HERMES_HEALTH_PORT`) and whatever `perInstance` adds (a webhook
 * port), all on loopback, all read back from the "Gateway running" line.
 *
 *   const cluster = await startCluster({ databaseUrl, llmUrl: llm.url }, 2);
 *   const [a, b] = cluster.instances;
 *   await a.kill9();                  // a crash: no drain, no lease released
 *   await cluster.status();           // `hermes gateway status --json` → the live instances
 *   await cluster.close();
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { InstanceInfo } from "../../src/state/coordination.js";
import { fakeProviderConfig, runHermes, tempHome } from "./cli.js";
import { type GatewayProcess, startGatewayProcess } from "./gateway-process.js";

export const CLUSTER_API_KEY = "e2e-cluster-api-server-key";

export interface ClusterSetup {
  /**
   * `postgres` (default): every instance on the one database. `sqlite`: each instance on its own
   * home's state.db, sharing nothing (a one-machine baseline for benches and contrast tests).
   */
  backend?: "postgres" | "sqlite";
  /** The database every instance uses (`HERMES_DATABASE_URL` in each home's .env); postgres only. */
  databaseUrl?: string;
  /** The fake LLM's base URL (config.yaml's custom provider). */
  llmUrl: string;
  /** More config.yaml, after the provider and `state` sections. */
  config?: string;
  /** More .env lines, the same for every instance. */
  env?: Record<string, string>;
  /** The API server on each instance (default true), on its own loopback port. */
  apiServer?: boolean;
  /** Environment for instance `index` only (ports of its webhook listeners, for example). */
  perInstance?: (index: number) => Record<string, string> | Promise<Record<string, string>>;
  /** The start line must also match this (a platform's name), default any "Gateway running" line. */
  ready?: RegExp;
}

export interface ClusterInstance {
  /** 0, 1, 2 … in start order. */
  readonly index: number;
  readonly home: string;
  readonly cwd: string;
  readonly pid: number;
  readonly process: GatewayProcess;
  /** `http://127.0.0.1:<port>` of its API server (the OpenAI client adds `/v1`); "" without one. */
  readonly apiUrl: string;
  /** `http://127.0.0.1:<port>/health`. */
  readonly healthUrl: string;
  /** The environment it was started with beyond the home's .env. */
  readonly env: Record<string, string>;
  /** True until it exited. */
  alive(): boolean;
  /** SIGKILL, as a crash: resolves once the process is gone. */
  kill9(): Promise<void>;
  /** SIGTERM (graceful drain); its exit code. */
  stop(graceMs?: number): Promise<number | null>;
  /** GET of its health endpoint: HTTP status and JSON body (status 0 when nothing answers). */
  health(): Promise<{ status: number; body: Record<string, unknown> }>;
}

export interface ClusterStatus {
  code: number | null;
  /** The live instances `hermes gateway status --json` lists from the database. */
  instances: InstanceInfo[];
  raw: string;
}

export interface GatewayCluster {
  readonly instances: ClusterInstance[];
  /** Starts one more instance with a new home (same config.yaml and .env). */
  add(): Promise<ClusterInstance>;
  /** `hermes gateway status --json` run from a fresh home with the same config (not an instance). */
  status(): Promise<ClusterStatus>;
  /** The instance whose pid `hermes gateway status` reports holding `lease`, if any. */
  holderOf(lease: string): Promise<ClusterInstance | undefined>;
  /** Stops every instance still running (SIGTERM, SIGKILL after the grace period). */
  close(): Promise<void>;
}

function configFor(setup: ClusterSetup): string {
  return fakeProviderConfig(
    setup.llmUrl,
    `state:\n  backend: ${setup.backend ?? "postgres"}\n${setup.config ?? ""}`,
  );
}

function dotEnv(setup: ClusterSetup): string {
  const postgres = (setup.backend ?? "postgres") === "postgres";
  if (postgres && !setup.databaseUrl) throw new Error("a postgres cluster needs databaseUrl");
  const vars: Record<string, string> = {
    ...(postgres && setup.databaseUrl ? { HERMES_DATABASE_URL: setup.databaseUrl } : {}),
    ...(setup.apiServer === false ? {} : { API_SERVER_KEY: CLUSTER_API_KEY }),
    ...(setup.env ?? {}),
  };
  return `${Object.entries(vars)
    .map(([k, v]) => `${k}=${v}`)
    .join("\n")}\n`;
}

/** A home with the cluster's config.yaml and .env, not running anything. */
export function clusterHome(setup: ClusterSetup): { home: string; cwd: string } {
  const h = tempHome(configFor(setup));
  writeFileSync(join(h.home, ".env"), dotEnv(setup), { mode: 0o600 });
  return h;
}

async function startInstance(setup: ClusterSetup, index: number): Promise<ClusterInstance> {
  const h = clusterHome(setup);
  const env: Record<string, string> = {
    HERMES_HEALTH_PORT: "0",
    HERMES_HEALTH_HOST: "127.0.0.1",
    ...(setup.apiServer === false
      ? {}
      : { API_SERVER_ENABLED: "true", API_SERVER_PORT: "0", API_SERVER_HOST: "127.0.0.1" }),
    ...((await setup.perInstance?.(index)) ?? {}),
  };
  const proc = await startGatewayProcess(h, env, setup.ready ?? /^Gateway running/);
  const apiUrl = /api_server (http:\/\/[^\s,]+)/.exec(proc.line)?.[1]?.replace(/\/$/, "") ?? "";
  const healthUrl = /health (http:\/\/[^\s,]+)/.exec(proc.line)?.[1] ?? "";
  if (setup.apiServer !== false && !apiUrl) throw new Error(`no API server in: ${proc.line}`);
  const child = proc.child;
  const gone = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("exit", () => resolve());
  });
  const alive = () => child.exitCode === null && child.signalCode === null;
  return {
    index,
    home: h.home,
    cwd: h.cwd,
    pid: child.pid ?? 0,
    process: proc,
    apiUrl,
    healthUrl,
    env,
    alive,
    async kill9() {
      if (alive()) child.kill("SIGKILL");
      await gone;
    },
    stop: (graceMs) => proc.stop(graceMs),
    async health() {
      try {
        const res = await fetch(healthUrl, { signal: AbortSignal.timeout(5_000) });
        return { status: res.status, body: (await res.json()) as Record<string, unknown> };
      } catch {
        return { status: 0, body: {} };
      }
    },
  };
}

/** Starts `count` instances one after another (each migrates or finds the schema migrated). */
export async function startCluster(setup: ClusterSetup, count: number): Promise<GatewayCluster> {
  const instances: ClusterInstance[] = [];
  const statusHome = clusterHome(setup);
  const cluster: GatewayCluster = {
    instances,
    async add() {
      const instance = await startInstance(setup, instances.length);
      instances.push(instance);
      return instance;
    },
    async status() {
      const result = await runHermes(["gateway", "status", "--json"], statusHome);
      let instancesNow: InstanceInfo[] = [];
      try {
        const parsed = JSON.parse(result.stdout) as { shared?: { instances?: InstanceInfo[] } };
        instancesNow = parsed.shared?.instances ?? [];
      } catch {
        // Not JSON: the caller sees `raw`.
      }
      return { code: result.code, instances: instancesNow, raw: `${result.stdout}${result.stderr}` };
    },
    async holderOf(lease) {
      const { instances: live } = await cluster.status();
      const holder = live.find((i) => i.holds.some((h) => h === lease || h.startsWith(`${lease}:`)));
      return holder ? instances.find((i) => i.pid === holder.pid) : undefined;
    },
    async close() {
      await Promise.all(instances.filter((i) => i.alive()).map((i) => i.stop(10_000)));
    },
  };
  try {
    for (let i = 0; i < count; i++) await cluster.add();
  } catch (error) {
    await cluster.close();
    throw error;
  }
  return cluster;
}

/** Polls `probe` every 100 ms until it answers something truthy; rejects after `timeoutMs`. */
export async function waitUntil<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
