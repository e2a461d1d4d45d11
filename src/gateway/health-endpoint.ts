/**
 * A per-instance health endpoint for load balancers (issue 27 §4), independent of the API server
 * so an instance serving only webhooks or platform connections has one too. `GET /health` (or
 * `HEAD`) answers 200 while the instance serves, and 503 while it starts or drains (SIGTERM), so
 * a load balancer stops sending it new requests before it goes away. The body is small JSON:
 * `{"status": "ok" | "starting" | "draining", "instance": …, "pid": …}`; nothing private.
 *
 * Opt-in: `HERMES_HEALTH_PORT` (in the environment or the home's .env) turns it on, and
 * `HERMES_HEALTH_HOST` picks the address (default 0.0.0.0, where a load balancer can reach it).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";

export type HealthPhase = "starting" | "serving" | "draining";

export interface HealthEndpoint {
  /** Where it answers, e.g. `http://0.0.0.0:8643/health`. */
  readonly url: string;
  setPhase(phase: HealthPhase): void;
  /** The instance id to report once the coordinator is open. */
  setInstance(id: string): void;
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
  const answer = (req: IncomingMessage, res: ServerResponse) => {
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
    const status = phase === "serving" ? "ok" : phase;
    send(phase === "serving" ? 200 : 503, { status, instance, pid: process.pid });
  };
  const server = createServer(answer);
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
    close() {
      return new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
