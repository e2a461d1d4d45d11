/**
 * A per-instance health endpoint for load balancers (issue 27 §4), independent of the API server
 * so an instance serving only webhooks or platform connections has one too. `GET /health` (or
 * `HEAD`) answers 200 while the instance serves, and 503 while it starts or drains (SIGTERM), so
 * a load balancer stops sending it new requests before it goes away. While it serves, a `probe`
 * (the shared database, for an instance of several) is asked too, at most once a second and for
 * at most 2 s: an instance cut off from the database answers 503 `unavailable`, so the load
 * balancer sends its requests to instances that can serve them, and 200 again once it answers.
 * The body is small JSON: `{"status": "ok" | "starting" | "draining" | "unavailable",
 * "instance": …, "pid": …}` (`reason` with `unavailable`); nothing private.
 *
 * Opt-in: `HERMES_HEALTH_PORT` (in the environment or the home's .env) turns it on, and
 * `HERMES_HEALTH_HOST` picks the address (default 0.0.0.0, where a load balancer can reach it).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";

export type HealthPhase = "starting" | "serving" | "draining";

/** How long a probe's answer is reused, and how long a probe may take before it counts as failed. */
export const PROBE_CACHE_MS = 1_000;
export const PROBE_TIMEOUT_MS = 2_000;

export interface HealthEndpoint {
  /** Where it answers, e.g. `http://0.0.0.0:8643/health`. */
  readonly url: string;
  setPhase(phase: HealthPhase): void;
  /** The instance id to report once the coordinator is open. */
  setInstance(id: string): void;
  /** What must answer for this instance to serve (rejects when it cannot), e.g. the database. */
  setProbe(probe: (() => Promise<unknown>) | undefined): void;
  close(): Promise<void>;
}

export class HealthConfigError extends Error {
  override name = "HealthConfigError";
}

/** The endpoint's address from the environment, or undefined when it is off. */
export function healthAddress(
  env: Record<string, string | undefined>,
): { host: string; port: number } | undefined {
  const raw = env["HERMES_HEALTH_PORT"]?.trim();
  if (!raw) return undefined;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new HealthConfigError(
      `HERMES_HEALTH_PORT is ${JSON.stringify(raw)}: use a port number (e.g. 8643)`,
    );
  }
  return { host: env["HERMES_HEALTH_HOST"]?.trim() || "0.0.0.0", port };
}

export async function startHealthEndpoint(options: {
  host: string;
  port: number;
  instance?: string;
}): Promise<HealthEndpoint> {
  let phase: HealthPhase = "starting";
  let instance = options.instance ?? `pid-${process.pid}`;
  let probe: (() => Promise<unknown>) | undefined;
  let last: { at: number; ok: Promise<boolean> } | undefined;
  const probed = (): Promise<boolean> => {
    if (!probe) return Promise.resolve(true);
    const now = Date.now();
    if (last && now - last.at < PROBE_CACHE_MS) return last.ok;
    let timer: NodeJS.Timeout | undefined;
    const ok = Promise.race([
      probe().then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), PROBE_TIMEOUT_MS);
      }),
    ])
      .catch(() => false)
      .finally(() => clearTimeout(timer));
    last = { at: now, ok };
    return ok;
  };
  const answer = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? "/").split("?")[0];
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      const text = JSON.stringify(body);
      res.writeHead(status, {
        "content-type": "application/json",
        "cache-control": "no-store",
        "content-length": String(Buffer.byteLength(text)),
        ...headers,
      });
      res.end(req.method === "HEAD" ? undefined : text);
    };
    req.resume();
    if (path !== "/health")
      return send(404, { error: `Not found: ${path}. The health endpoint is GET /health.` });
    if (req.method !== "GET" && req.method !== "HEAD")
      return send(405, { error: "Use GET" }, { allow: "GET, HEAD" });
    if (phase !== "serving") return send(503, { status: phase, instance, pid: process.pid });
    if (!(await probed()))
      return send(503, {
        status: "unavailable",
        reason: "the database does not answer",
        instance,
        pid: process.pid,
      });
    send(200, { status: "ok", instance, pid: process.pid });
  };
  const server = createServer((req, res) => void answer(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : options.port;
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}/health`,
    setPhase(next) {
      phase = next;
    },
    setInstance(id) {
      instance = id;
    },
    setProbe(next) {
      probe = next;
      last = undefined;
    },
    close() {
      return new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
