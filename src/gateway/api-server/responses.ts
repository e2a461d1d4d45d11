/**
 * `POST /v1/responses` (and `GET`/`DELETE /v1/responses/{id}`): a minimal, real OpenAI Responses
 * API over one agent turn. `instructions` layer on Hermes's prompt; `previous_response_id`
 * continues the session that produced that response (see `ResponseStore`). Streaming sends the
 * Responses event sequence: created, in_progress, output_item/content_part added,
 * `response.output_text.delta`…, the matching done events, then `response.completed`.
 */
import type { ServerResponse } from "node:http";
import type { RunResult } from "../../agent/agent.js";
import { processRedactor } from "../../util/redact.js";
import { StreamTextRedactor } from "../../util/redact-stream.js";
import { turnFailed } from "./chat-completions.js";
import type { RouteContext } from "./context.js";
import { ApiError, randomHex, sendJson, startSse, writeSse } from "./http.js";
import { readResponsesInput } from "./input.js";

type Json = Record<string, unknown>;

function usageOf(result: RunResult) {
  const input = result.usage.inputTokens;
  const output = result.usage.outputTokens;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: result.usage.cacheReadTokens ?? 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: result.usage.reasoningTokens ?? 0 },
    total_tokens: input + output,
  };
}

function messageItem(id: string, text: string, status: "in_progress" | "completed"): Json {
  return {
    type: "message",
    id,
    status,
    role: "assistant",
    content: status === "completed" ? [{ type: "output_text", text, annotations: [] }] : [],
  };
}

export async function createResponse(
  ctx: RouteContext,
  body: Json,
  res: ServerResponse,
  signal: AbortSignal,
): Promise<void> {
  const conversation = readResponsesInput(body["input"], body["instructions"]);
  const previous = body["previous_response_id"];
  if (previous !== undefined && previous !== null && typeof previous !== "string") {
    throw new ApiError(
      400,
      '"previous_response_id" must be a string.',
      "invalid_request",
      "invalid_request_error",
      {},
      "previous_response_id",
    );
  }
  let sessionId: string | undefined;
  if (typeof previous === "string" && previous) {
    const stored = ctx.responses.get(previous);
    if (!stored) {
      throw new ApiError(
        404,
        `Unknown previous_response_id "${previous}". The API server keeps the latest ${ctx.responses.capacity} ` +
          "responses in memory (lost on restart); start a new conversation without it.",
        "previous_response_not_found",
        "invalid_request_error",
        {},
        "previous_response_id",
      );
    }
    sessionId = stored.sessionId;
  }
  const stream = body["stream"] === true;
  const store = body["store"] !== false;
  const id = `resp_${randomHex()}`;
  const itemId = `msg_${randomHex()}`;
  const createdAt = Math.floor(Date.now() / 1000);
  const base = (status: string, output: Json[], result?: RunResult): Json => ({
    id,
    object: "response",
    created_at: createdAt,
    status,
    model: ctx.modelName,
    output,
    instructions: typeof body["instructions"] === "string" ? body["instructions"] : null,
    previous_response_id: typeof previous === "string" && previous ? previous : null,
    error: null,
    incomplete_details: null,
    metadata: {},
    parallel_tool_calls: true,
    temperature: null,
    top_p: null,
    tool_choice: "auto",
    tools: [],
    text: { format: { type: "text" } },
    store,
    usage: result ? usageOf(result) : null,
  });
  const turn = {
    input: conversation.input,
    history: conversation.history,
    ...(conversation.systemPrompt ? { systemPrompt: conversation.systemPrompt } : {}),
    ...(sessionId ? { sessionId } : {}),
    signal,
  };
  const remember = (response: Json, sid: string) => {
    if (store) ctx.responses.set(id, { sessionId: sid, response });
  };

  if (!stream) {
    await ctx.withRunSlot(signal, async () => {
      const { result, sessionId: sid } = await ctx.turns.run(turn);
      if (signal.aborted) return;
      if (result.reason === "error") throw turnFailed(result, sid);
      const response = base("completed", [messageItem(itemId, result.text, "completed")], result);
      remember(response, sid);
      sendJson(res, 200, response, { "x-hermes-session-id": sid });
    });
    return;
  }

  let sequence = 0;
  const emit = (type: string, data: Json) =>
    writeSse(res, { type, sequence_number: sequence++, ...data }, type);
  const part = { item_id: itemId, output_index: 0, content_index: 0 };
  let text = "";
  /** Where the current model call's text starts in `text`. */
  let callStart = 0;
  // Deltas are relayed one by one: a secret cut between two of them is held until it is whole.
  let live = new StreamTextRedactor(processRedactor());
  await ctx.withRunSlot(signal, async () => {
    const { result, sessionId: sid } = await ctx.turns.run({
      ...turn,
      onStart: (started) => {
        startSse(res, { "x-hermes-session-id": started });
        emit("response.created", { response: base("in_progress", []) });
        emit("response.in_progress", { response: base("in_progress", []) });
        emit("response.output_item.added", { output_index: 0, item: messageItem(itemId, "", "in_progress") });
        emit("response.content_part.added", {
          ...part,
          part: { type: "output_text", text: "", annotations: [] },
        });
      },
      onEvent: (event) => {
        if (event.type === "text_delta" && event.text) {
          const delta = live.push(event.text);
          text += delta;
          if (delta) emit("response.output_text.delta", { ...part, delta, logprobs: [] });
        } else if (event.type === "turn_start") {
          callStart = text.length;
        } else if (event.type === "stream_discarded") {
          // The failed attempt's deltas cannot be taken back from a live view, but the text the
          // `done` and `completed` events carry (what clients keep) leaves them out.
          text = text.slice(0, callStart);
          live = new StreamTextRedactor(processRedactor());
        }
      },
    });
    if (signal.aborted) return;
    const rest = live.end();
    if (rest) {
      text += rest;
      emit("response.output_text.delta", { ...part, delta: rest, logprobs: [] });
    }
    if (result.reason === "error") {
      const failed = {
        ...base("failed", []),
        error: {
          code: "server_error",
          message: `The agent's turn failed: ${result.error ?? "unknown error"}`,
        },
      };
      emit("response.failed", { response: failed });
      res.end();
      return;
    }
    if (!text && result.text) {
      text = result.text;
      emit("response.output_text.delta", { ...part, delta: text, logprobs: [] });
    }
    emit("response.output_text.done", { ...part, text, logprobs: [] });
    emit("response.content_part.done", { ...part, part: { type: "output_text", text, annotations: [] } });
    const item = messageItem(itemId, text, "completed");
    emit("response.output_item.done", { output_index: 0, item });
    const response = base("completed", [item], result);
    remember(response, sid);
    emit("response.completed", { response });
    res.end();
  });
}

/** `GET /v1/responses/{id}`. */
export function getResponse(ctx: RouteContext, id: string, res: ServerResponse): void {
  const stored = ctx.responses.get(id);
  if (!stored) throw notFound(id);
  sendJson(res, 200, stored.response);
}

/** `DELETE /v1/responses/{id}`: forgets the mapping (the session stays in state.db). */
export function deleteResponse(ctx: RouteContext, id: string, res: ServerResponse): void {
  if (!ctx.responses.delete(id)) throw notFound(id);
  sendJson(res, 200, { id, object: "response.deleted", deleted: true });
}

function notFound(id: string): ApiError {
  return new ApiError(
    404,
    `No response "${id}": the API server keeps the latest responses in memory only.`,
    "response_not_found",
    "invalid_request_error",
  );
}
