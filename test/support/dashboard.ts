/**
 * Drives `hermes dashboard` in end-to-end tests: starts the built CLI on a free port (`--port 0`)
 * and reads its URL, and talks raw HTTP to it with `node:http` (so tests can send any Host, Origin
 * or body, which `fetch` refuses to).
 */
import { request } from "node:http";
import { type RunningHermes, spawnHermes } from "./cli.js";

export interface RunningDashboard {
  proc: RunningHermes;
  /** The URL it printed (with `?token=` when the token is per start). */
  url: string;
  port: number;
  token: string | null;
  stop(): Promise<void>;
}

export async function startDashboardProcess(
  h: { home: string; cwd: string },
  args: string[] = [],
  timeoutMs = 15_000,
): Promise<RunningDashboard> {
  const proc = spawnHermes(["dashboard", "--no-open", "--port", "0", ...args], h);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const out = proc.output();
    const m = /Dashboard: (http:\/\/\S+)/.exec(out.stdout);
    if (m?.[1]) {
      const url = new URL(m[1]);
      return {
        proc,
        url: m[1],
        port: Number(url.port),
        token: url.searchParams.get("token"),
        stop: async () => {
          if (proc.output().code === null && proc.child.exitCode === null) proc.child.kill("SIGTERM");
          await proc.exited;
        },
      };
    }
    if (proc.child.exitCode !== null || Date.now() > deadline) {
      proc.child.kill("SIGKILL");
      const done = await proc.exited;
      throw new Error(`hermes dashboard did not start (code ${done.code})\n${done.stdout}\n${done.stderr}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: () => Record<string, unknown>;
}

/** One raw HTTP request to 127.0.0.1:`port`. */
export function http(
  port: number,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: string | Buffer; chunks?: Buffer[] } = {},
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { host: `127.0.0.1:${port}`, ...(options.headers ?? {}) };
    if (options.body !== undefined) {
      headers["content-length"] = String(Buffer.byteLength(options.body));
      headers["content-type"] ??= "application/json";
    }
    const req = request({ host: "127.0.0.1", port, method, path, headers, setHost: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text,
          json: () => JSON.parse(text) as Record<string, unknown>,
        });
      });
      res.on("error", reject);
    });
    // A server that answers 413 and closes may reset the rest of an upload: the answer still counts.
    req.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EPIPE" || error.code === "ECONNRESET") return;
      reject(error);
    });
    if (options.chunks) {
      for (const chunk of options.chunks) req.write(chunk);
      req.end();
    } else req.end(options.body);
  });
}

/** A client bound to one dashboard and its token, sending the CSRF token on state changes. */
export function dashboardClient(d: { port: number }, token: string) {
  let csrf: string | undefined;
  const auth = { authorization: `Bearer ${token}` };
  const get = (path: string, headers: Record<string, string> = {}) =>
    http(d.port, "GET", path, { headers: { ...auth, ...headers } });
  const csrfToken = async (): Promise<string> => {
    if (csrf === undefined) csrf = String((await get("/api/csrf")).json()["csrf"]);
    return csrf;
  };
  const send = async (
    method: string,
    path: string,
    body: unknown = {},
    headers: Record<string, string> = {},
  ) => {
    return http(d.port, method, path, {
      headers: {
        ...auth,
        "x-csrf-token": await csrfToken(),
        origin: `http://127.0.0.1:${d.port}`,
        ...headers,
      },
      body: JSON.stringify(body),
    });
  };
  return { get, send, csrf: csrfToken };
}
