/**
 * `POST /v1/responses` (and `GET`/`DELETE /v1/responses/{id}`): the OpenAI Responses API over one
 * agent turn, as Python Hermes serves it. `instructions` layer on Hermes's prompt (and carry to a
 * continuation that sends none); `previous_response_id` or a named `conversation` continues the
 * session that produced the earlier response (stored in `response_store.db`, see `ResponseStore`).
 * The agent's tool calls appear as `function_call` and `function_call_output` output items, live in
 * the stream (`response.output_item.added`/`done`) and in the final response.
 */
import type { ServerResponse } from "node:http";
import type { RunResult } from "../../agent/agent.js";
import type { AgentEvent } from "../../agent/events.js";
import type { Message } from "../../ai/types.js";
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

const bad = (message: string, param: string, status = 400, code = "invalid_request") =>
  new ApiError(status, message, code, "invalid_request_error", {}, param);

/** The conversation name a request names (`"name"` or `{id: "name"}`), validated. */
function conversationName(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  const name =
    typeof value === "string"
      ? value
      : typeof value === "object" && typeof (value as Json)["id"] === "string"
        ? ((value as Json)["id"] as string)
        : undefined;
  if (name === undefined || !name.trim() || name.length > 256) {
    throw bad('"conversation" must be a name of 1 to 256 characters (or {"id": name}).', "conversation");
  }
  return name.trim();
}

/**
 * Tool calls of one turn as Responses output items, in the order they happened. Subagents' calls
 * (`parentCallId`) stay out: the client sees what its agent did.
 */
export class ToolItems {
  readonly items: Json[] = [];
  private readonly open = new Map<string, { id: string; name: string; arguments: string }>();

  /** Returns the events to emit (`added`/`done` with the item), or [] for events it ignores. */
  take(event: AgentEvent): Array<{ type: "added" | "done"; item: Json; index: number }> {
    if (event.type === "tool_start" && !event.parentCallId) {
      const call = { id: `fc_${randomHex()}`, name: event.name, arguments: JSON.stringify(event.args ?? {}) };
      this.open.set(event.callId, call);
      const item = { ...callItem(call, event.callId), status: "in_progress" };
      this.items.push(callItem(call, event.callId));
      return [{ type: "added", item, index: this.items.length - 1 }];
    }
    if (event.type === "tool_end" && !event.parentCallId) {
      const call = this.open.get(event.callId);
      if (!call) return [];
      this.open.delete(event.callId);
      const index = this.items.findIndex((i) => i["id"] === call.id);
      const output = {
        id: `fco_${randomHex()}`,
        type: "function_call_output",
        call_id: event.callId,
        output: event.result,
        status: "completed",
      };
      this.items.push(output);
      return [
        { type: "done", item: callItem(call, event.callId), index },
        { type: "added", item: output, index: this.items.length - 1 },
        { type: "done", item: output, index: this.items.length - 1 },
      ];
    }
    return [];
  }
}

function callItem(call: { id: string; name: string; arguments: string }, callId: string): Json {
  return {
    id: call.id,
    type: "function_call",
    status: "completed",
    name: call.name,
    call_id: callId,
    arguments: call.arguments,
  };
}

export async function createResponse(
  ctx: RouteContext,
  body: Json,
  res: ServerResponse,
  signal: AbortSignal,
): Promise<void> {
  const conversation = readResponsesInput(body["input"], body["instructions"]);
  const previousGiven = body["previous_response_id"];
  if (previousGiven !== undefined && previousGiven !== null && typeof previousGiven !== "string") {
    throw bad('"previous_response_id" must be a string.', "previous_response_id");
  }
  const named = conversationName(body["conversation"]);
  if (named && previousGiven) {
    throw bad('Send either "conversation" or "previous_response_id", not both.', "conversation");
  }
  // A named conversation continues its latest response; a new name starts a new conversation.
  const previous = named ? await ctx.responses.conversation(named) : previousGiven || undefined;
  let sessionId: string | undefined;
  let history = conversation.history;
  let instructions = typeof body["instructions"] === "string" ? body["instructions"] : null;
  if (previous) {
    const stored = await ctx.responses.get(previous);
    if (!stored) {
      throw bad(
        `Unknown previous_response_id "${previous}". The API server keeps the latest ${ctx.responses.capacity} ` +
          "responses (response_store.db); start a new conversation without it.",
        "previous_response_id",
        404,
        "previous_response_not_found",
      );
    }
    instructions ??= stored.instructions;
    if (stored.sessionId && (await ctx.store.getSession(stored.sessionId))) sessionId = stored.sessionId;
    // A response whose session is gone (written by another Hermes, or pruned) still carries its
    // conversation: it seeds a new session.
    else history = [...stored.conversationHistory, ...history];
  }
  // `conversation.systemPrompt` already holds this request's instructions; carried ones go first.
  const carried = typeof body["instructions"] === "string" ? null : instructions;
  const systemPrompt = [carried, conversation.systemPrompt].filter(Boolean).join("\n\n") || undefined;
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
    instructions,
    previous_response_id: previous ?? null,
    conversation: named ? { id: named } : null,
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
    history,
    ...(systemPrompt ? { systemPrompt } : {}),
    ...(sessionId ? { sessionId } : {}),
    signal,
  };
  const remember = async (response: Json, sid: string) => {
    if (!store) return;
    let transcript: Message[] = [];
    try {
      transcript = await ctx.store.conversation(sid);
    } catch {
      // The session's rows may still be queued behind another writer; the id alone continues it.
    }
    await ctx.responses.put(id, { sessionId: sid, response, conversationHistory: transcript, instructions });
    if (named) await ctx.responses.setConversation(named, id);
  };
  const tools = new ToolItems();

  if (!stream) {
    await ctx.withRunSlot(signal, async () => {
      const { result, sessionId: sid } = await ctx.turns.run({ ...turn, onEvent: (e) => tools.take(e) });
      if (signal.aborted) return;
      if (result.reason === "error") throw turnFailed(result, sid);
      const response = base(
        "completed",
        [...tools.items, messageItem(itemId, result.text, "completed")],
        result,
      );
      await remember(response, sid);
      sendJson(res, 200, response, { "x-hermes-session-id": sid });
    });
    return;
  }

  let sequence = 0;
  const emit = (type: string, data: Json) =>
    writeSse(res, { type, sequence_number: sequence++, ...data }, type);
  /** Output slots in order: tool items and (once text arrives) the message. */
  const slots: Array<{ kind: "tool"; at: number } | { kind: "message" }> = [];
  let messageIndex = -1;
  const part = () => ({ item_id: itemId, output_index: messageIndex, content_index: 0 });
  const openMessage = () => {
    if (messageIndex >= 0) return;
    messageIndex = slots.length;
    slots.push({ kind: "message" });
    emit("response.output_item.added", {
      output_index: messageIndex,
      item: messageItem(itemId, "", "in_progress"),
    });
    emit("response.content_part.added", {
      ...part(),
      part: { type: "output_text", text: "", annotations: [] },
    });
  };
  let text = "";
  /** Where the current model call's text starts in `text`. */
  let callStart = 0;
  // Deltas are relayed one by one: a secret cut between two of them is held until it is whole.
  let live = new StreamTextRedactor(processRedactor());
  const sendDelta = (delta: string) => {
    if (!delta) return;
    openMessage();
    text += delta;
    emit("response.output_text.delta", { ...part(), delta, logprobs: [] });
  };
  const output = (finalText: string): Json[] =>
    slots.map((slot) =>
      slot.kind === "message" ? messageItem(itemId, finalText, "completed") : (tools.items[slot.at] as Json),
    );
  let sid = "";
  let finished = false;
  await ctx.withRunSlot(signal, async () => {
    try {
      const outcome = await ctx.turns.run({
        ...turn,
        onStart: (started) => {
          sid = started;
          startSse(res, { "x-hermes-session-id": started });
          emit("response.created", { response: base("in_progress", []) });
          emit("response.in_progress", { response: base("in_progress", []) });
        },
        onEvent: (event) => {
          if (event.type === "text_delta" && event.text) {
            sendDelta(live.push(event.text));
          } else if (event.type === "turn_start") {
            callStart = text.length;
          } else if (event.type === "stream_discarded") {
            // The failed attempt's deltas cannot be taken back from a live view, but the text the
            // `done` and `completed` events carry (what clients keep) leaves them out.
            text = text.slice(0, callStart);
            live = new StreamTextRedactor(processRedactor());
          } else if (event.type === "tool_start" || event.type === "tool_end") {
            // Text held back by the redactor goes out before the tool item, in the order it came.
            sendDelta(live.end());
            live = new StreamTextRedactor(processRedactor());
            for (const step of tools.take(event)) {
              if (step.type === "added" && !slots.some((s) => s.kind === "tool" && s.at === step.index)) {
                slots.push({ kind: "tool", at: step.index });
              }
              const outputIndex = slots.findIndex((s) => s.kind === "tool" && s.at === step.index);
              emit(`response.output_item.${step.type}`, { output_index: outputIndex, item: step.item });
            }
          }
        },
      });
      sid = outcome.sessionId;
      if (signal.aborted) return;
      const { result } = outcome;
      sendDelta(live.end());
      if (result.reason === "error") {
        const failed = {
          ...base("failed", output(text)),
          error: {
            code: "server_error",
            message: `The agent's turn failed: ${result.error ?? "unknown error"}`,
          },
        };
        await remember(failed, sid);
        finished = true;
        emit("response.failed", { response: failed });
        res.end();
        return;
      }
      if (!text && result.text) sendDelta(result.text);
      openMessage();
      emit("response.output_text.done", { ...part(), text, logprobs: [] });
      emit("response.content_part.done", { ...part(), part: { type: "output_text", text, annotations: [] } });
      emit("response.output_item.done", {
        output_index: messageIndex,
        item: messageItem(itemId, text, "completed"),
      });
      const response = base("completed", output(text), result);
      await remember(response, sid);
      finished = true;
      emit("response.completed", { response });
      res.end();
    } catch (error) {
      if (!(error instanceof ApiError) || !res.headersSent) throw error;
      // The turn stopped after the stream started (`session_moved`): its error event ends it, and
      // nothing is stored for it (another instance continues the conversation now).
      finished = true;
      emit("error", { code: error.code, message: error.message, param: null });
      res.end();
    } finally {
      // A client that went away mid-stream can still continue from what it saw (as upstream).
      if (!finished && sid) await remember(base("incomplete", output(text)), sid);
    }
  });
}

/** `GET /v1/responses/{id}`. */
export async function getResponse(ctx: RouteContext, id: string, res: ServerResponse): Promise<void> {
  const stored = await ctx.responses.get(id);
  if (!stored) throw notFound(id);
  sendJson(res, 200, stored.response);
}

/** `DELETE /v1/responses/{id}`: forgets the stored response (the session stays in state.db). */
export async function deleteResponse(ctx: RouteContext, id: string, res: ServerResponse): Promise<void> {
  if (!(await ctx.responses.delete(id))) throw notFound(id);
  sendJson(res, 200, { id, object: "response.deleted", deleted: true });
}

function notFound(id: string): ApiError {
  return new ApiError(
    404,
    `No stored response "${id}": the API server keeps only the latest responses (response_store.db).`,
    "response_not_found",
    "invalid_request_error",
  );
}
