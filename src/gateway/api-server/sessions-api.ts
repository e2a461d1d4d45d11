/**
 * The Sessions API, shaped as Python Hermes serves it over state.db: `GET|POST /api/sessions`,
 * `GET|PATCH|DELETE /api/sessions/{id}`, `GET /api/sessions/{id}/messages`,
 * `POST /api/sessions/{id}/fork` and `POST /api/sessions/{id}/chat` (one agent turn in that
 * session). Session objects carry client-safe fields only: never the stored system prompt or
 * model config, just whether they exist.
 */
import type { ServerResponse } from "node:http";
import {
  type SessionRecord,
  SessionStoreError,
  type SessionSummary,
  type StoredMessage,
} from "../../state/types.js";
import { newSessionId } from "../../util/session-id.js";
import { turnFailed } from "./chat-completions.js";
import type { RouteContext } from "./context.js";
import { ApiError, sendJson } from "./http.js";
import { API_SERVER_SOURCE } from "./turns.js";

type Json = Record<string, unknown>;

const SESSION_ID = /^[\w.:-]{1,128}$/;

export function sessionJson(s: SessionRecord | SessionSummary): Json {
  return {
    id: s.id,
    source: s.source,
    user_id: s.userId,
    model: s.model,
    title: s.title,
    started_at: s.startedAt,
    ended_at: s.endedAt,
    end_reason: s.endReason,
    message_count: s.messageCount,
    tool_call_count: s.toolCallCount,
    input_tokens: s.inputTokens,
    output_tokens: s.outputTokens,
    cache_read_tokens: s.cacheReadTokens,
    cache_write_tokens: s.cacheWriteTokens,
    reasoning_tokens: s.reasoningTokens,
    estimated_cost_usd: s.estimatedCostUsd,
    actual_cost_usd: s.actualCostUsd,
    api_call_count: s.apiCallCount,
    parent_session_id: s.parentSessionId,
    ...("lastActiveAt" in s ? { last_active: s.lastActiveAt, preview: s.preview } : {}),
    has_system_prompt: Boolean(s.systemPrompt),
    has_model_config: Boolean(s.modelConfig),
  };
}

function messageJson(m: StoredMessage): Json {
  return {
    id: m.id,
    session_id: m.sessionId,
    role: m.role,
    content: m.content,
    tool_call_id: m.toolCallId,
    tool_calls: m.toolCalls,
    tool_name: m.toolName,
    timestamp: m.timestamp,
    token_count: m.tokenCount,
    finish_reason: m.finishReason,
    reasoning: m.reasoning,
  };
}

/** A whole number query parameter within [0, max], else `fallback`. */
function intParam(value: string | null, fallback: number, max: number): number {
  const n = value === null ? Number.NaN : Number(value);
  return Number.isInteger(n) && n >= 0 ? Math.min(n, max) : fallback;
}

async function existing(ctx: RouteContext, id: string): Promise<SessionRecord> {
  const session = SESSION_ID.test(id) ? await ctx.store.getSession(id) : null;
  if (!session) {
    throw new ApiError(404, `Session not found: ${id}. GET /api/sessions lists them.`, "session_not_found");
  }
  return session;
}

function titleError(error: unknown): never {
  if (error instanceof SessionStoreError) throw new ApiError(400, error.message, "invalid_title");
  throw error;
}

/** Routes `/api/sessions…`; returns false when the path is not one of them. */
export async function sessionsRoute(
  ctx: RouteContext,
  method: string,
  path: string,
  query: URLSearchParams,
  body: () => Promise<Json>,
  res: ServerResponse,
  signal: AbortSignal,
  expect: (allowed: string[]) => void,
): Promise<boolean> {
  if (path === "/api/sessions") {
    expect(["GET", "POST"]);
    if (method === "GET") {
      const limit = intParam(query.get("limit"), 50, 200);
      const offset = intParam(query.get("offset"), 0, 1_000_000);
      const source = query.get("source") || undefined;
      const list = await ctx.store.listSessions({
        limit,
        offset,
        ...(source ? { source: source as SessionRecord["source"] } : {}),
      });
      sendJson(res, 200, {
        object: "list",
        data: list.map(sessionJson),
        limit,
        offset,
        has_more: list.length === limit,
      });
      return true;
    }
    const input = await body();
    const raw = input["id"] ?? input["session_id"];
    const id = typeof raw === "string" && raw.trim() ? raw.trim() : newSessionId();
    if (!SESSION_ID.test(id)) {
      throw new ApiError(
        400,
        `Session id "${id.slice(0, 40)}" may hold letters, digits, _ . : - only (1-128).`,
        "invalid_session_id",
      );
    }
    if (await ctx.store.getSession(id))
      throw new ApiError(409, `Session already exists: ${id}`, "session_exists");
    const title = input["title"];
    if (title !== undefined && title !== null && typeof title !== "string") {
      throw new ApiError(400, '"title" must be a string.', "invalid_title");
    }
    let created: SessionRecord;
    try {
      created = await ctx.store.createSession({
        id,
        source: API_SERVER_SOURCE,
        model: typeof input["model"] === "string" ? input["model"] : ctx.modelName,
        ...(typeof title === "string" && title.trim() ? { title: title.trim() } : {}),
      });
    } catch (error) {
      titleError(error);
    }
    sendJson(res, 201, { object: "hermes.session", session: sessionJson(created) });
    return true;
  }
  const match = /^\/api\/sessions\/([^/]+)(\/messages|\/fork|\/chat)?$/.exec(path);
  if (!match?.[1]) return false;
  const id = decodeURIComponent(match[1]);
  const sub = match[2];
  if (!sub) {
    expect(["GET", "PATCH", "DELETE"]);
    const session = await existing(ctx, id);
    if (method === "GET") {
      sendJson(res, 200, { object: "hermes.session", session: sessionJson(session) });
    } else if (method === "DELETE") {
      await ctx.store.deleteSession(id);
      sendJson(res, 200, { object: "hermes.session.deleted", id, deleted: true });
    } else {
      const input = await body();
      const unknown = Object.keys(input).filter((k) => k !== "title" && k !== "end_reason");
      if (unknown.length > 0) {
        throw new ApiError(
          400,
          `Unsupported session fields: ${unknown.join(", ")}. PATCH accepts title and end_reason.`,
          "unsupported_session_field",
        );
      }
      if ("title" in input) {
        const title = input["title"];
        try {
          await ctx.store.setTitle(id, typeof title === "string" && title.trim() ? title.trim() : null);
        } catch (error) {
          titleError(error);
        }
      }
      if (typeof input["end_reason"] === "string" && input["end_reason"].trim()) {
        await ctx.store.endSession(id, input["end_reason"].trim());
      }
      sendJson(res, 200, { object: "hermes.session", session: sessionJson(await existing(ctx, id)) });
    }
    return true;
  }
  if (sub === "/messages") {
    expect(["GET"]);
    await existing(ctx, id);
    sendJson(res, 200, {
      object: "list",
      session_id: id,
      data: (await ctx.store.getMessages(id)).map(messageJson),
    });
    return true;
  }
  if (sub === "/fork") {
    expect(["POST"]);
    const source = await existing(ctx, id);
    const input = await body();
    const title =
      typeof input["title"] === "string" && input["title"].trim() ? input["title"].trim() : undefined;
    let fork: SessionRecord;
    try {
      fork = await ctx.store.branchSession(source.id, {
        title: title ?? (await ctx.store.nextLineageTitle(source.title ?? "fork")),
        source: API_SERVER_SOURCE,
      });
    } catch (error) {
      titleError(error);
    }
    sendJson(res, 201, { object: "hermes.session", session: sessionJson(fork) });
    return true;
  }
  expect(["POST"]);
  await existing(ctx, id);
  const input = await body();
  const message = input["message"] ?? input["input"] ?? input["content"];
  if (typeof message !== "string" || !message.trim()) {
    throw new ApiError(400, 'Send the user message as "message" (a non-empty string).', "invalid_request");
  }
  const system = input["system_message"] ?? input["instructions"];
  if (system !== undefined && system !== null && typeof system !== "string") {
    throw new ApiError(400, '"system_message" must be a string.', "invalid_system_message");
  }
  await ctx.withRunSlot(signal, async () => {
    const { result, sessionId } = await ctx.turns.run({
      input: message,
      history: [],
      sessionId: id,
      ...(typeof system === "string" && system.trim() ? { systemPrompt: system } : {}),
      signal,
    });
    if (signal.aborted) return;
    if (result.reason === "error") throw turnFailed(result, sessionId);
    const usage = {
      input_tokens: result.usage.inputTokens,
      output_tokens: result.usage.outputTokens,
      total_tokens: result.usage.inputTokens + result.usage.outputTokens,
    };
    sendJson(
      res,
      200,
      {
        object: "hermes.session.chat.completion",
        session_id: sessionId,
        message: { role: "assistant", content: result.text },
        usage,
      },
      { "x-hermes-session-id": sessionId },
    );
  });
  return true;
}
