/**
 * The dashboard's HTTP server: every request meets, in this order, the Host check (DNS
 * rebinding), the `/api/` prefix, authentication (401 for reads too, whatever the Origin; with basic
 * auth 429 for an address after 10 failed sign-ins in a minute), then for
 * a state-changing method the Origin check, the CSRF token and a JSON content type, and the body
 * size cap. Only then does a route's handler run. Outside `/api/` only the built page is served
 * (`GET`/`HEAD` of `/` and `/assets/<file>`): it holds no data, so with a token it needs none (the
 * page reads the token from its URL); with basic auth it asks for the password like the API.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  ApiError,
  type ApiRequest,
  type Route,
  readJsonBody,
  sendDownload,
  sendEvents,
  sendJson,
} from "./http.js";
import {
  allowedHosts,
  allowedOrigins,
  authenticate,
  BasicAuthGate,
  csrfMatches,
  type DashboardAuth,
} from "./security.js";
import { NOT_BUILT_PAGE, PAGE_CSP, type WebAssets } from "./static.js";

export interface DashboardServerOptions {
  host: string;
  port: number;
  auth: DashboardAuth;
  routes: readonly Route[];
  /** The CSRF token state-changing requests must carry (see `csrfToken`). */
  csrf: string;
  /** Extra `host:port`-less names the Host header may carry (`dashboard.allowed_hosts`). */
  extraHosts?: readonly string[];
  log?: (line: string) => void;
  /** The built page (static.ts); empty when it was not built. */
  assets?: WebAssets;
}

export interface DashboardServer {
  server: Server;
  port: number;
  csrf: string;
  close(): Promise<void>;
}

const STATE_CHANGING = new Set(["POST", "PUT", "PATCH", "DELETE"]);
const BASIC_CHALLENGE = { "www-authenticate": 'Basic realm="hermes-dashboard", charset="UTF-8"' };

/** `GET`/`HEAD` of the built page's files; 404 JSON for anything else outside `/api/`. */
function servePage(
  req: IncomingMessage,
  res: ServerResponse,
  method: string,
  path: string,
  assets: WebAssets | undefined,
): void {
  req.resume();
  const page = path === "/" || path === "/index.html";
  const file = assets?.get(page ? "/" : path);
  if ((method !== "GET" && method !== "HEAD") || (!file && !(page && (assets?.size ?? 0) === 0))) {
    sendJson(res, method === "GET" || method === "HEAD" ? 404 : 405, {
      error: "not found: the dashboard serves its page at / and its JSON API under /api/",
    });
    return;
  }
  const body = file?.body ?? NOT_BUILT_PAGE;
  const headers: Record<string, string | number> = {
    "content-type": file?.type ?? "text/html; charset=utf-8",
    "content-length": body.length,
    "cache-control": "no-cache",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cross-origin-opener-policy": "same-origin",
    "content-security-policy": PAGE_CSP,
  };
  if (file) headers["etag"] = file.etag;
  if (file && req.headers["if-none-match"] === file.etag) {
    res.writeHead(304, { etag: file.etag, "cache-control": "no-cache" });
    res.end();
    return;
  }
  res.writeHead(200, headers);
  res.end(method === "HEAD" ? undefined : body);
}

interface CompiledRoute {
  route: Route;
  pattern: RegExp;
  names: string[];
}

function compile(route: Route): CompiledRoute {
  const names: string[] = [];
  const source = route.path
    .split("/")
    .map((part) => {
      if (part.startsWith(":")) {
        names.push(part.slice(1));
        return "([^/]+)";
      }
      return part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    })
    .join("/");
  return { route, pattern: new RegExp(`^${source}$`), names };
}

/** Decodes one path segment; refuses `.`/`..`, slashes, NUL and control characters (400). */
function decodeSegment(raw: string): string {
  let value: string;
  try {
    value = decodeURIComponent(raw);
  } catch {
    throw new ApiError(400, "malformed percent-encoding in the path");
  }
  if (value === "." || value === ".." || /[/\\\u0000-\u001f]/.test(value)) {
    throw new ApiError(400, "invalid path segment");
  }
  return value;
}

export async function startDashboardServer(options: DashboardServerOptions): Promise<DashboardServer> {
  const compiled = options.routes.map(compile);
  const csrf = options.csrf;
  const log = options.log ?? (() => {});
  let hosts = new Set<string>();
  let origins = new Set<string>();
  const basic = options.auth.kind === "basic" ? new BasicAuthGate(options.auth) : null;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const method = (req.method ?? "GET").toUpperCase();
    const host = (req.headers.host ?? "").toLowerCase();
    if (!hosts.has(host)) {
      sendJson(res, 421, { error: "this dashboard does not answer to that Host name" });
      return;
    }
    const url = new URL(req.url ?? "/", "http://dashboard.invalid");
    const rawPath = (req.url ?? "/").split("?")[0] ?? "/";
    const gate = basic?.check(req.headers.authorization, req.socket.remoteAddress ?? "");
    if (gate === "throttled") {
      sendJson(
        res,
        429,
        { error: "too many failed sign-ins from this address; wait a minute" },
        {
          "retry-after": "60",
        },
      );
      req.resume();
      return;
    }
    const authenticated = (): boolean =>
      gate !== undefined
        ? gate === "ok"
        : authenticate(
            options.auth,
            { authorization: req.headers.authorization },
            url.searchParams.get("token"),
          );
    if (rawPath !== "/api" && !rawPath.startsWith("/api/")) {
      if (options.auth.kind === "basic" && !authenticated()) {
        sendJson(res, 401, { error: "authentication required" }, BASIC_CHALLENGE);
        req.resume();
        return;
      }
      servePage(req, res, method, rawPath, options.assets);
      return;
    }
    if (!authenticated()) {
      const headers: Record<string, string> = options.auth.kind === "basic" ? BASIC_CHALLENGE : {};
      sendJson(res, 401, { error: "authentication required" }, headers);
      req.resume();
      return;
    }
    if (STATE_CHANGING.has(method)) {
      const origin = req.headers.origin;
      if (origin !== undefined && !origins.has(origin.toLowerCase())) {
        sendJson(res, 403, { error: "cross-origin request refused" });
        req.resume();
        return;
      }
      const site = req.headers["sec-fetch-site"];
      if (typeof site === "string" && site !== "same-origin" && site !== "none") {
        sendJson(res, 403, { error: "cross-site request refused" });
        req.resume();
        return;
      }
      const given = req.headers["x-csrf-token"];
      if (!csrfMatches(typeof given === "string" ? given : undefined, csrf)) {
        sendJson(res, 403, { error: "missing or wrong X-CSRF-Token (GET /api/csrf)" });
        req.resume();
        return;
      }
      const type = req.headers["content-type"] ?? "";
      const hasBody =
        Number(req.headers["content-length"] ?? "0") > 0 || req.headers["transfer-encoding"] !== undefined;
      if (hasBody && !/^application\/json\b/i.test(type)) {
        sendJson(res, 415, { error: "send the body as application/json" });
        req.resume();
        return;
      }
    }
    const path = rawPath === "/api" ? "/api/" : rawPath;
    const segments = path.split("/");
    for (const segment of segments.slice(2)) decodeSegment(segment);
    let allowedMethods: string[] = [];
    for (const c of compiled) {
      const match = c.pattern.exec(path);
      if (!match) continue;
      if (c.route.method !== method) {
        allowedMethods.push(c.route.method);
        continue;
      }
      const params: Record<string, string> = {};
      c.names.forEach((name, i) => {
        params[name] = decodeSegment(match[i + 1] ?? "");
      });
      const body = STATE_CHANGING.has(method) ? await readJsonBody(req) : {};
      const request: ApiRequest = { method, params, query: url.searchParams, body };
      const result = await c.route.handler(request);
      if ("events" in result) await sendEvents(req, res, result.events);
      else if ("download" in result) sendDownload(res, result.download, result.filename, result.contentType);
      else sendJson(res, result.status ?? 200, result.json);
      return;
    }
    if (allowedMethods.length > 0) {
      allowedMethods = [...new Set(allowedMethods)];
      sendJson(
        res,
        405,
        { error: `use ${allowedMethods.join(" or ")}` },
        { allow: allowedMethods.join(", ") },
      );
      return;
    }
    sendJson(res, 404, { error: "no such API route (GET /api/ lists them)" });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (error instanceof ApiError) {
        sendJson(
          res,
          error.status,
          { error: error.message, ...(error.extra ?? {}) },
          error.status === 413 ? { connection: "close" } : {},
        );
        if (error.status === 413) req.destroy();
        return;
      }
      log(
        `dashboard: ${req.method} ${(req.url ?? "").split("?")[0]} failed: ${error instanceof Error ? error.message : String(error)}`,
      );
      sendJson(res, 500, { error: error instanceof Error ? error.message : String(error) });
    });
  });
  server.headersTimeout = 20_000;
  server.requestTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  hosts = allowedHosts(options.host, port, options.extraHosts);
  origins = allowedOrigins(hosts);
  return {
    server,
    port,
    csrf,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
