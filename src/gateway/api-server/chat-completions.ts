/**
 * `POST /v1/chat/completions`: OpenAI's chat completions over one Hermes agent turn. Stateless like
 * Hermes: the request's earlier messages seed a new session; `X-Hermes-Session-Id` continues a
 * stored one instead (its stored history is used, the request's earlier messages are ignored).
 * Streaming sends `chat.completion.chunk` deltas, tool progress as `event: hermes.tool.progress`
 * frames (`{tool, emoji, label, toolCallId, status: running|completed|failed}`, as upstream), a
 * final chunk with `finish_reason`, then `data: [DONE]`. The official openai clients yield such a
 * frame's data as one more chunk, without `choices`; frontends built for Hermes read the event name.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { RunResult } from "../../agent/agent.js";
import { processRedactor } from "../../util/redact.js";
import { StreamTextRedactor } from "../../util/redact-stream.js";
import { finishReason, type RouteContext } from "./context.js";
import { ApiError, randomHex, sendJson, startSse, writeSse, writeSseComment } from "./http.js";
import { readChatMessages } from "./input.js";
import { API_SERVER_SOURCE } from "./turns.js";

/** A short line saying what a tool call does (its main argument), for progress displays. */
export function toolLabel(name: string, args: Record<string, unknown> | undefined): string {
  const main = ["command", "path", "query", "url", "pattern", "name", "action"]
    .map((key) => args?.[key])
    .find((value): value is string => typeof value === "string" && value.trim() !== "");
  if (!main) return name;
  const line = main.replace(/\s+/g, " ").trim();
  return `${name}: ${line.length > 60 ? `${line.slice(0, 57)}...` : line}`;
}

const SESSION_HEADER = "x-hermes-session-id";

function usageOf(result: RunResult) {
  const prompt = result.usage.inputTokens;
  const completion = result.usage.outputTokens;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** The session id a client asked to continue, if any. */
export function sessionHeader(req: IncomingMessage): string | undefined {
  const value = req.headers[SESSION_HEADER];
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (text && !/^[\w.:-]{1,128}$/.test(text)) {
    throw new ApiError(
      400,
      `X-Hermes-Session-Id "${text.slice(0, 40)}" is not a session id.`,
      "invalid_session_id",
    );
  }
  return text || undefined;
}

/** The error a failed turn answers with; never retried by the official clients. */
export function turnFailed(result: RunResult, sessionId: string): ApiError {
  return new ApiError(
    502,
    `The agent's turn failed: ${result.error ?? "unknown error"}`,
    "agent_error",
    "server_error",
    { "x-should-retry": "false", [SESSION_HEADER]: sessionId },
  );
}

export async function chatCompletions(
  ctx: RouteContext,
  body: Record<string, unknown>,
  req: IncomingMessage,
  res: ServerResponse,
  signal: AbortSignal,
): Promise<void> {
  const conversation = readChatMessages(body["messages"]);
  if (body["stream"] !== undefined && body["stream"] !== null && typeof body["stream"] !== "boolean") {
    throw new ApiError(
      400,
      '"stream" must be true or false.',
      "invalid_request",
      "invalid_request_error",
      {},
      "stream",
    );
  }
  const stream = body["stream"] === true;
  const options = body["stream_options"];
  const includeUsage =
    typeof options === "object" &&
    options !== null &&
    (options as Record<string, unknown>)["include_usage"] === true;
  const sessionId = sessionHeader(req);
  // Only the API server's own transcripts continue by header (as upstream): a CLI or Telegram
  // session may hold private chats and tool output that an HTTP client must not be handed.
  const named = sessionId ? await ctx.store.getSession(sessionId) : undefined;
  if (sessionId && named && named.source !== API_SERVER_SOURCE) {
    throw new ApiError(
      404,
      `No API server session "${sessionId}" to continue; X-Hermes-Session-Id takes ids this server issued.`,
      "session_not_found",
    );
  }
  const id = `chatcmpl-${randomHex()}`;
  const created = Math.floor(Date.now() / 1000);
  const model = ctx.modelName;
  const turn = {
    input: conversation.input,
    history: sessionId ? [] : conversation.history,
    ...(conversation.systemPrompt ? { systemPrompt: conversation.systemPrompt } : {}),
    ...(sessionId ? { sessionId } : {}),
    signal,
  };

  if (!stream) {
    await ctx.withRunSlot(signal, async () => {
      const outcome = await ctx.turns.run(turn);
      if (signal.aborted) return;
      if (outcome.result.reason === "error") throw turnFailed(outcome.result, outcome.sessionId);
      sendJson(
        res,
        200,
        {
          id,
          object: "chat.completion",
          created,
          model,
          choices: [
            {
              index: 0,
              message: { role: "assistant", content: outcome.result.text, refusal: null },
              finish_reason: finishReason(outcome.result.reason),
              logprobs: null,
            },
          ],
          usage: usageOf(outcome.result),
        },
        { [SESSION_HEADER]: outcome.sessionId },
      );
    });
    return;
  }

  const chunk = (delta: Record<string, unknown>, finish: string | null) => ({
    id,
    object: "chat.completion.chunk",
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
  });
  let streamed = false;
  // Deltas are relayed one by one: a secret cut between two of them is held until it is whole.
  const live = new StreamTextRedactor(processRedactor());
  // A model call that fails after part of its text reached the client cannot be taken back in
  // this protocol (clients concatenate deltas), so the turn is stopped and the stream ends with
  // an error rather than a retried answer glued to a void fragment.
  const brokeOff = new AbortController();
  let relayedThisCall = false;
  /** Tool calls announced as running: only these get a matching end frame. */
  const started = new Set<string>();
  await ctx.withRunSlot(signal, async () => {
    const running = ctx.turns.run({
      ...turn,
      signal: AbortSignal.any([signal, brokeOff.signal]),
      onStart: (sid) => {
        startSse(res, { [SESSION_HEADER]: sid });
        writeSse(res, chunk({ role: "assistant", content: "" }, null));
      },
      onEvent: (event) => {
        if (brokeOff.signal.aborted) return;
        if (event.type === "text_delta" && event.text) {
          streamed = true;
          const text = live.push(event.text);
          if (text) {
            relayedThisCall = true;
            writeSse(res, chunk({ content: text }, null));
          }
        } else if (event.type === "turn_start") {
          relayedThisCall = false;
        } else if (event.type === "stream_discarded" && relayedThisCall) {
          brokeOff.abort();
        } else if (event.type === "retry") {
          // Seen by clients that read comments (as the tool progress is); the others just wait.
          writeSseComment(
            res,
            `hermes.retry ${JSON.stringify({ message: event.message, delay_ms: event.delayMs, attempt: event.attempt, attempts: event.attempts })}`,
          );
        } else if (event.type === "tool_start" && !event.parentCallId) {
          // Upstream's named SSE event: frontends built for Hermes show it; it never enters the text.
          started.add(event.callId);
          writeSse(
            res,
            {
              tool: event.name,
              emoji: ctx.toolEmoji(event.name),
              label: toolLabel(event.name, event.args),
              toolCallId: event.callId,
              status: "running",
            },
            "hermes.tool.progress",
          );
        } else if (event.type === "tool_end" && started.delete(event.callId)) {
          writeSse(
            res,
            { tool: event.name, toolCallId: event.callId, status: event.ok ? "completed" : "failed" },
            "hermes.tool.progress",
          );
        }
      },
    });
    const outcome = await running.catch((error: unknown) => {
      // Once the stream started an error can only go out as its last frame (`session_moved`).
      if (!(error instanceof ApiError) || !res.headersSent) throw error;
      writeSse(res, { error: { message: error.message, type: error.type, code: error.code } });
      res.end();
      return undefined;
    });
    if (!outcome || signal.aborted) return;
    if (brokeOff.signal.aborted) {
      writeSse(res, {
        error: {
          message:
            "The model's stream broke off after part of this answer was sent, so that part is void. " +
            "Send the request again.",
          type: "server_error",
          code: "stream_broken",
        },
      });
      res.end();
      return;
    }
    const rest = live.end();
    if (rest) writeSse(res, chunk({ content: rest }, null));
    const { result } = outcome;
    if (result.reason === "error") {
      // The official clients raise an APIError for a data frame carrying `error`.
      writeSse(res, {
        error: {
          message: `The agent's turn failed: ${result.error ?? "unknown error"}`,
          type: "server_error",
          code: "agent_error",
        },
      });
      res.end();
      return;
    }
    if (!streamed && result.text) writeSse(res, chunk({ content: result.text }, null));
    writeSse(res, chunk({}, finishReason(result.reason)));
    if (includeUsage)
      writeSse(res, {
        id,
        object: "chat.completion.chunk",
        created,
        model,
        choices: [],
        usage: usageOf(result),
      });
    res.end("data: [DONE]\n\n");
  });
}
