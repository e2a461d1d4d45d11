/**
 * The fake LLM server's OpenAI Responses API wire format (POST /v1/responses): the same scripted
 * replies as chat completions, rendered as that API's JSON response or as its SSE stream
 * (`event: <type>` + `data: {type, sequence_number, ...}`), with text, reasoning summaries and
 * function-call arguments each split over several deltas so clients must assemble them.
 *
 * Mapping of a `MessageSpec`: reasoning → a `reasoning` item with one summary part and a fake
 * `encrypted_content`; text → an assistant `message` item with one `output_text` part; each tool
 * call → a `function_call` item (`id` fc_..., `call_id` the scripted id or call_fake_<i>); usage →
 * `input_tokens` / `output_tokens` with cached and reasoning details; finish "length" →
 * `response.incomplete` (max_output_tokens), "content_filter" → `response.incomplete`
 * (content_filter), anything else → `response.completed`. Failure kinds count SSE events.
 */
import type { ServerResponse } from "node:http";
import type { AnswerContext, MessageSpec, ReplySpec } from "./fake-llm.js";
import { openStream, SSE_HEADERS, sendJson, split, write } from "./fake-llm-wire.js";

type Obj = Record<string, unknown>;

/** The fake encrypted reasoning blob for a reasoning text: recognisable in recorded requests. */
export function fakeEncryptedContent(reasoning: string): string {
  return `enc_fake:${Buffer.from(reasoning, "utf8").toString("base64")}`;
}

export async function answerResponses(
  res: ServerResponse,
  spec: ReplySpec,
  ctx: AnswerContext,
): Promise<void> {
  switch (spec.kind) {
    case "hang":
      return;
    case "http_error":
      res.writeHead(spec.status, { "content-type": "application/json", ...spec.headers });
      res.end(spec.body);
      return;
    case "message":
      if (ctx.stream) {
        await writeEvents(res, streamEvents(spec, ctx));
        res.end();
      } else {
        sendJson(res, 200, responseObject(spec, ctx, finalStatus(spec)));
      }
      return;
    case "disconnect":
    case "truncate":
      if (ctx.stream) {
        await writeEvents(res, streamEvents(spec.message, ctx).slice(0, spec.afterChunks));
      } else {
        // A body cut short: the client sees invalid JSON or a reset, never a complete answer.
        res.writeHead(200, { "content-type": "application/json" });
        await write(
          res,
          JSON.stringify(responseObject(spec.message, ctx, finalStatus(spec.message))).slice(0, 20),
        );
      }
      if (spec.kind === "disconnect") res.socket?.destroy();
      else res.end();
      return;
    case "stream_error":
      // response.created opens the stream; `afterChunks` counts events after it.
      await writeEvents(res, streamEvents(spec.message, ctx).slice(0, spec.afterChunks + 1), spec.headers);
      await write(res, `event: ${spec.event ?? "error"}\ndata: ${JSON.stringify(spec.data)}\n\n`);
      res.end();
      return;
  }
}

type Status = "completed" | "incomplete";

function finalStatus(spec: MessageSpec): Status {
  return spec.finish === "length" || spec.finish === "content_filter" ? "incomplete" : "completed";
}

function callId(spec: MessageSpec, index: number): string {
  return spec.toolCalls[index]?.id ?? `call_fake_${index}`;
}

/** The finished output items, in the order the API emits them: reasoning, message, function calls. */
function outputItems(spec: MessageSpec): Obj[] {
  const items: Obj[] = [];
  if (spec.reasoning !== "") {
    items.push({
      id: "rs_fake_0",
      type: "reasoning",
      summary: [{ type: "summary_text", text: spec.reasoning }],
      encrypted_content: fakeEncryptedContent(spec.reasoning),
    });
  }
  if (spec.text !== "") {
    items.push({
      id: "msg_fake_0",
      type: "message",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: spec.text, annotations: [], logprobs: [] }],
    });
  }
  spec.toolCalls.forEach((call, index) => {
    items.push({
      id: `fc_fake_${index}`,
      type: "function_call",
      status: "completed",
      call_id: callId(spec, index),
      name: call.name,
      arguments: call.arguments,
    });
  });
  // The API marks the item it was writing when the limit hit as incomplete.
  const last = items.at(-1);
  if (finalStatus(spec) === "incomplete" && last && "status" in last) last["status"] = "incomplete";
  return items;
}

function usageJson(spec: MessageSpec): Obj | null {
  const u = spec.usage;
  if (!u) return null;
  return {
    input_tokens: u.prompt,
    input_tokens_details: { cached_tokens: u.cached ?? 0 },
    output_tokens: u.completion,
    output_tokens_details: { reasoning_tokens: u.reasoning ?? 0 },
    total_tokens: u.prompt + u.completion,
  };
}

function responseObject(spec: MessageSpec, ctx: AnswerContext, status: Status | "in_progress"): Obj {
  const done = status !== "in_progress";
  const output = done ? outputItems(spec) : [];
  const text = spec.text;
  return {
    id: "resp_fake",
    object: "response",
    created_at: 0,
    status,
    error: null,
    incomplete_details:
      status === "incomplete"
        ? { reason: spec.finish === "content_filter" ? "content_filter" : "max_output_tokens" }
        : null,
    model: ctx.model,
    output,
    ...(done ? { output_text: text } : {}),
    parallel_tool_calls: true,
    tool_choice: "auto",
    tools: [],
    usage: done ? usageJson(spec) : null,
  };
}

/** The SSE events for a reply, each `{type, ...}`; `sequence_number` is added when written. */
function streamEvents(spec: MessageSpec, ctx: AnswerContext): Obj[] {
  const events: Obj[] = [];
  events.push({ type: "response.created", response: responseObject(spec, ctx, "in_progress") });
  events.push({ type: "response.in_progress", response: responseObject(spec, ctx, "in_progress") });
  outputItems(spec).forEach((item, outputIndex) => {
    const id = item["id"];
    switch (item["type"]) {
      case "reasoning": {
        events.push({
          type: "response.output_item.added",
          output_index: outputIndex,
          item: { id, type: "reasoning", summary: [] },
        });
        const part = { item_id: id, output_index: outputIndex, summary_index: 0 };
        events.push({ type: "response.reasoning_summary_part.added", ...part, part: emptySummary() });
        for (const delta of split(spec.reasoning, 3)) {
          events.push({ type: "response.reasoning_summary_text.delta", ...part, delta });
        }
        events.push({ type: "response.reasoning_summary_text.done", ...part, text: spec.reasoning });
        events.push({
          type: "response.reasoning_summary_part.done",
          ...part,
          part: { type: "summary_text", text: spec.reasoning },
        });
        break;
      }
      case "message": {
        events.push({
          type: "response.output_item.added",
          output_index: outputIndex,
          item: { id, type: "message", role: "assistant", status: "in_progress", content: [] },
        });
        const part = { item_id: id, output_index: outputIndex, content_index: 0 };
        const emptyPart = { type: "output_text", text: "", annotations: [], logprobs: [] };
        events.push({ type: "response.content_part.added", ...part, part: emptyPart });
        for (const delta of split(spec.text, 4)) {
          events.push({ type: "response.output_text.delta", ...part, delta, logprobs: [] });
        }
        events.push({ type: "response.output_text.done", ...part, text: spec.text, logprobs: [] });
        events.push({ type: "response.content_part.done", ...part, part: { ...emptyPart, text: spec.text } });
        break;
      }
      case "function_call": {
        events.push({
          type: "response.output_item.added",
          output_index: outputIndex,
          item: { ...item, status: "in_progress", arguments: "" },
        });
        const args = String(item["arguments"]);
        const part = { item_id: id, output_index: outputIndex };
        for (const delta of split(args, 3)) {
          events.push({ type: "response.function_call_arguments.delta", ...part, delta });
        }
        events.push({
          type: "response.function_call_arguments.done",
          ...part,
          name: item["name"],
          arguments: args,
        });
        break;
      }
    }
    events.push({ type: "response.output_item.done", output_index: outputIndex, item });
  });
  const status = finalStatus(spec);
  events.push({
    type: status === "completed" ? "response.completed" : "response.incomplete",
    response: responseObject(spec, ctx, status),
  });
  return events;
}

function emptySummary(): Obj {
  return { type: "summary_text", text: "" };
}

/** Resolves once the events are handed to the socket, so a following destroy cannot swallow them. */
async function writeEvents(
  res: ServerResponse,
  events: Obj[],
  headers: Record<string, string> = {},
): Promise<void> {
  openStream(res, { ...SSE_HEADERS, ...headers });
  let sequence = 0;
  for (const event of events) {
    const data = { ...event, sequence_number: sequence++ };
    await write(res, `event: ${String(event["type"])}\ndata: ${JSON.stringify(data)}\n\n`);
  }
}
