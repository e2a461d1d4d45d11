/**
 * The API server's discovery routes, shaped as Python Hermes answers them: `GET /v1/capabilities`
 * (the stable surface external UIs probe), `GET /v1/skills` and `GET /v1/toolsets` (JSON arrays),
 * and `GET /health/detailed` (no auth, like `/health`: state, load, pid, uptime).
 */
import type { ServerResponse } from "node:http";
import { discoverSkills } from "../../knowledge/skills/discovery.js";
import { skillsConfigOf } from "../../tools/skills/shared.js";
import { resolveToolsets, TOOLSETS } from "../../tools/toolsets.js";
import type { RouteContext } from "./context.js";
import { sendJson } from "./http.js";

const route = (method: string, path: string) => ({ method, path });

export function capabilities(ctx: RouteContext, res: ServerResponse): void {
  sendJson(res, 200, {
    object: "hermes.api_server.capabilities",
    platform: "hermes-agent",
    model: ctx.modelName,
    auth: { type: "bearer", required: true },
    runtime: {
      mode: "server_agent",
      tool_execution: "server",
      split_runtime: false,
      description:
        "Each request runs a Hermes agent on the API-server host; its tools execute there. Dangerous " +
        "commands are denied (nobody can approve them over HTTP).",
    },
    features: {
      chat_completions: true,
      chat_completions_streaming: true,
      responses_api: true,
      responses_streaming: true,
      responses_store: "response_store.db",
      named_conversations: true,
      run_submission: true,
      run_status: true,
      run_events_sse: true,
      run_stop: true,
      run_approval_response: true,
      tool_progress_events: true,
      approval_events: false,
      session_continuity_header: "X-Hermes-Session-Id",
      sessions_api: true,
      jobs_api: true,
      skills_api: true,
      toolsets_api: true,
      cors: ctx.cors,
    },
    endpoints: {
      health: route("GET", "/health"),
      health_detailed: route("GET", "/health/detailed"),
      models: route("GET", "/v1/models"),
      capabilities: route("GET", "/v1/capabilities"),
      skills: route("GET", "/v1/skills"),
      toolsets: route("GET", "/v1/toolsets"),
      chat_completions: route("POST", "/v1/chat/completions"),
      responses: route("POST", "/v1/responses"),
      response: route("GET", "/v1/responses/{response_id}"),
      delete_response: route("DELETE", "/v1/responses/{response_id}"),
      runs: route("POST", "/v1/runs"),
      run_status: route("GET", "/v1/runs/{run_id}"),
      run_events: route("GET", "/v1/runs/{run_id}/events"),
      run_stop: route("POST", "/v1/runs/{run_id}/stop"),
      sessions: route("GET", "/api/sessions"),
      session: route("GET", "/api/sessions/{session_id}"),
      session_messages: route("GET", "/api/sessions/{session_id}/messages"),
      session_fork: route("POST", "/api/sessions/{session_id}/fork"),
      jobs: route("GET", "/api/jobs"),
      job: route("GET", "/api/jobs/{job_id}"),
    },
  });
}

/** `GET /v1/skills`: the skills the agent can load, as `[{name, description, category, …}]`. */
export function skills(ctx: RouteContext, res: ServerResponse): void {
  const { skills: found } = discoverSkills({
    home: ctx.home,
    config: skillsConfigOf(ctx.config),
    env: ctx.env,
    verifyBundled: false,
  });
  sendJson(
    res,
    200,
    found.map((s) => ({
      name: s.name,
      description: s.description,
      category: s.category || null,
      tags: s.tags,
      version: s.version ?? null,
      source: s.source,
    })),
  );
}

/** `GET /v1/toolsets`: every toolset with its tools, `enabled` when API turns get it. */
export function toolsets(ctx: RouteContext, res: ServerResponse): void {
  const custom = customToolsets(ctx);
  const enabledTools = new Set(resolveToolsets(ctx.toolsets, { custom }).tools);
  const table = { ...TOOLSETS, ...custom };
  sendJson(
    res,
    200,
    Object.entries(table).map(([name, spec]) => {
      const tools = resolveToolsets([name], { custom }).tools.filter((t) => ctx.registry.has(t));
      return {
        name,
        description: "description" in spec && typeof spec.description === "string" ? spec.description : "",
        enabled: ctx.toolsets.includes(name) || (tools.length > 0 && tools.every((t) => enabledTools.has(t))),
        tools,
      };
    }),
  );
}

function customToolsets(ctx: RouteContext): Record<string, { tools?: string[]; includes?: string[] }> {
  const raw = (ctx.config as unknown as Record<string, unknown>)["custom_toolsets"];
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return {};
  return raw as Record<string, { tools?: string[]; includes?: string[] }>;
}

/** `GET /health/detailed` (no auth, as upstream): whether it is up, its load, pid and uptime. */
export function healthDetailed(ctx: RouteContext, res: ServerResponse): void {
  const load = ctx.load();
  sendJson(res, 200, {
    status: "ok",
    platform: "hermes-agent",
    gateway_state: "running",
    platforms: { api_server: { state: "connected" } },
    active_agents: load.running,
    queued_requests: load.queued,
    max_concurrent_runs: load.maxRunning,
    exit_reason: null,
    updated_at: new Date().toISOString(),
    uptime_seconds: Math.round((Date.now() - ctx.startedAt) / 1000),
    pid: process.pid,
  });
}
