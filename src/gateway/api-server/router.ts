/**
 * The API server's route table: which handler answers which method and path, after CORS and the
 * bearer-key check. `/health`, `/v1/health` and `/health/detailed` need no key (as upstream);
 * every other route does.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { chatCompletions } from "./chat-completions.js";
import type { RouteContext } from "./context.js";
import { capabilities, healthDetailed, skills, toolsets } from "./discovery.js";
import { ApiError, bearerMatches, parseJsonObject, readBody, sendJson } from "./http.js";
import { jobsRoute } from "./jobs-api.js";
import { createResponse, deleteResponse, getResponse } from "./responses.js";
import type { RunRegistry } from "./runs.js";
import { sessionsRoute } from "./sessions-api.js";

export interface RouterSettings {
  key: string;
  maxBody: number;
  corsOrigins: ReadonlySet<string>;
  /** True once the server is closing: new requests get 503. */
  closing: () => boolean;
}

/** Every route, for the 404 message and the README. */
export const ROUTES = [
  "GET /health",
  "GET /v1/health",
  "GET /health/detailed",
  "GET /v1/models",
  "GET /v1/capabilities",
  "GET /v1/skills",
  "GET /v1/toolsets",
  "POST /v1/chat/completions",
  "POST /v1/responses",
  "GET|DELETE /v1/responses/{id}",
  "POST /v1/runs",
  "GET /v1/runs/{id}",
  "GET /v1/runs/{id}/events",
  "POST /v1/runs/{id}/stop",
  "GET|POST /api/sessions",
  "GET|PATCH|DELETE /api/sessions/{id}",
  "GET /api/sessions/{id}/messages",
  "POST /api/sessions/{id}/fork",
  "POST /api/sessions/{id}/chat",
  "GET|POST /api/jobs",
  "GET|PATCH|DELETE /api/jobs/{id}",
  "POST /api/jobs/{id}/pause|resume|run",
] as const;

export async function route(
  ctx: RouteContext,
  runs: RunRegistry,
  settings: RouterSettings,
  req: IncomingMessage,
  res: ServerResponse,
  signal: AbortSignal,
): Promise<void> {
  const method = req.method ?? "GET";
  const url = new URL(req.url ?? "/", "http://localhost");
  const path = url.pathname;
  const origin = typeof req.headers.origin === "string" ? req.headers.origin.replace(/\/+$/, "") : undefined;
  const corsAllowed = origin !== undefined && settings.corsOrigins.has(origin);
  if (corsAllowed) {
    res.setHeader("access-control-allow-origin", origin);
    res.setHeader("vary", "Origin");
    res.setHeader("access-control-expose-headers", "X-Hermes-Session-Id");
  }
  if (method === "OPTIONS") {
    if (!corsAllowed)
      throw new ApiError(
        403,
        `Origin ${origin ?? "(none)"} is not allowed (API_SERVER_CORS_ORIGINS).`,
        "cors_forbidden",
      );
    res.writeHead(204, {
      "access-control-allow-methods": "GET, POST, PATCH, DELETE, OPTIONS",
      "access-control-allow-headers": "Authorization, Content-Type, X-Hermes-Session-Id, Idempotency-Key",
      "access-control-max-age": "600",
    });
    res.end();
    return;
  }
  if (settings.closing())
    throw new ApiError(
      503,
      "The API server is shutting down; try again shortly.",
      "shutting_down",
      "server_error",
    );
  const expect = (allowed: string[]) => expectMethod(method, allowed, path);
  if (path === "/health" || path === "/v1/health") {
    expect(["GET"]);
    sendJson(res, 200, { status: "ok", platform: "hermes-agent" });
    return;
  }
  if (path === "/health/detailed") {
    expect(["GET"]);
    healthDetailed(ctx, res);
    return;
  }
  const api = path.startsWith("/api/");
  if (path !== "/v1" && !path.startsWith("/v1/") && !api) throw unknownRoute(method, path);
  if (!bearerMatches(req.headers.authorization, settings.key)) {
    throw new ApiError(
      401,
      "Invalid or missing API key: send the API_SERVER_KEY value as `Authorization: Bearer <key>`.",
      "invalid_api_key",
    );
  }
  const body = async () => parseJsonObject(await readBody(req, settings.maxBody));
  if (api) {
    if (await sessionsRoute(ctx, method, path, url.searchParams, body, res, signal, expect)) return;
    if (await jobsRoute(ctx, method, path, url.searchParams, body, res, expect)) return;
    throw unknownRoute(method, path);
  }
  switch (path) {
    case "/v1/models":
      expect(["GET"]);
      sendJson(res, 200, {
        object: "list",
        data: [{ id: ctx.modelName, object: "model", created: 0, owned_by: "hermes", root: ctx.modelName }],
      });
      return;
    case "/v1/capabilities":
      expect(["GET"]);
      capabilities(ctx, res);
      return;
    case "/v1/skills":
      expect(["GET"]);
      skills(ctx, res);
      return;
    case "/v1/toolsets":
      expect(["GET"]);
      toolsets(ctx, res);
      return;
    case "/v1/chat/completions":
      expect(["POST"]);
      await chatCompletions(ctx, await body(), req, res, signal);
      return;
    case "/v1/responses":
      expect(["POST"]);
      await createResponse(ctx, await body(), res, signal);
      return;
    case "/v1/runs":
      expect(["POST"]);
      await runs.start(await body(), res);
      return;
  }
  const one = /^\/v1\/responses\/([^/]+)$/.exec(path);
  if (one?.[1]) {
    expect(["GET", "DELETE"]);
    const id = decodeURIComponent(one[1]);
    if (method === "GET") await getResponse(ctx, id, res);
    else await deleteResponse(ctx, id, res);
    return;
  }
  const run = /^\/v1\/runs\/([^/]+)(\/events|\/stop|\/approval)?$/.exec(path);
  if (run?.[1]) {
    const id = decodeURIComponent(run[1]);
    if (!run[2]) {
      expect(["GET"]);
      runs.get(id, res);
    } else if (run[2] === "/events") {
      expect(["GET"]);
      await runs.events(id, req, res);
    } else if (run[2] === "/stop") {
      expect(["POST"]);
      await runs.stop(id, res);
    } else {
      expect(["POST"]);
      runs.approval(id, await body(), res);
    }
    return;
  }
  throw unknownRoute(method, path);
}

function expectMethod(method: string, allowed: string[], path: string): void {
  if (!allowed.includes(method)) {
    throw new ApiError(
      405,
      `${method} is not allowed on ${path}; use ${allowed.join(" or ")}.`,
      "method_not_allowed",
      "invalid_request_error",
      { allow: allowed.join(", ") },
    );
  }
}

function unknownRoute(method: string, path: string): ApiError {
  return new ApiError(
    404,
    `No route ${method} ${path}. Routes: ${ROUTES.join(", ")}.`,
    "not_found",
    "invalid_request_error",
  );
}
