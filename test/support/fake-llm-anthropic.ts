/**
 * The fake LLM server's Anthropic Messages (POST /v1/messages) wire format: the same scripted
 * replies as chat completions, rendered as that API's JSON response or SSE stream
 * (`event: <type>` + `data: <json>` pairs). Text, thinking and tool input are split over several
 * deltas so clients must assemble them. Reasoning becomes a `thinking` block with a fake signature
 * (`fakeSignature(text)`); `usage.cached` becomes `cache_read_input_tokens`, and `usage.prompt`
 * counts all prompt tokens, so `input_tokens` is prompt minus cached. OpenAI finish reasons map
 * onto stop reasons (stop → end_turn, tool_calls → tool_use, length → max_tokens,
 * content_filter → refusal); any other string (pause_turn, stop_sequence, ...) is sent as-is.
 * For disconnect and truncate, `afterChunks` counts SSE events.
 */
import { createHash } from "node:crypto";
import type { ServerResponse } from "node:http";
import type { AnswerContext, MessageSpec, ReplySpec } from "./fake-llm.js";
import { openStream, SSE_HEADERS, split, write } from "./fake-llm-wire.js";

type Json = Record<string, unknown>;

/** The signature the fake server gives a thinking block with this text. */
export function fakeSignature(thinking: string): string {
  return `fakesig_${createHash("sha256").update(thinking).digest("base64url").slice(0, 24)}`;
}

export async function answerAnthropic(
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
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(fullMessage(spec, ctx)));
      }
      return;
    case "stall":
      // `afterChunks` events, then silence with the connection open (until the client cuts it).
      if (ctx.stream) await writeEvents(res, streamEvents(spec.message, ctx).slice(0, spec.afterChunks));
      return;
    case "disconnect":
    case "truncate": {
      if (ctx.stream) {
        await writeEvents(res, streamEvents(spec.message, ctx).slice(0, spec.afterChunks));
      } else {
        // A body cut short: the client sees invalid JSON or a reset, never a complete answer.
        res.writeHead(200, { "content-type": "application/json" });
        await write(res, JSON.stringify(fullMessage(spec.message, ctx)).slice(0, 20));
      }
      if (spec.kind === "disconnect") res.socket?.destroy();
      else res.end();
      return;
    }
    case "stream_error": {
      // message_start and ping open the stream; `afterChunks` counts events after them.
      await writeEvents(res, streamEvents(spec.message, ctx).slice(0, spec.afterChunks + 2), spec.headers);
      await write(res, `event: ${spec.event ?? "error"}\ndata: ${JSON.stringify(spec.data)}\n\n`);
      res.end();
      return;
    }
  }
}

/** Resolves once the events are handed to the socket, so a following destroy cannot swallow them. */
async function writeEvents(
  res: ServerResponse,
  events: Json[],
  headers: Record<string, string> = {},
): Promise<void> {
  openStream(res, { ...SSE_HEADERS, ...headers });
  for (const event of events) {
    await write(res, `event: ${String(event["type"])}\ndata: ${JSON.stringify(event)}\n\n`);
  }
}

const STOP_REASONS: Record<string, string> = {
  stop: "end_turn",
  tool_calls: "tool_use",
  length: "max_tokens",
  content_filter: "refusal",
};

function stopReason(spec: MessageSpec): string {
  if (spec.finish === undefined) return spec.toolCalls.length > 0 ? "tool_use" : "end_turn";
  return STOP_REASONS[spec.finish] ?? spec.finish;
}

function callId(spec: MessageSpec, index: number): string {
  return spec.toolCalls[index]?.id ?? `toolu_fake_${index}`;
}

function usageJson(spec: MessageSpec): Json {
  const u = spec.usage ?? { prompt: 0, completion: 0 };
  const cached = u.cached ?? 0;
  const usage: Json = {
    input_tokens: Math.max(0, u.prompt - cached),
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: cached,
    output_tokens: u.completion,
  };
  if (u.reasoning !== undefined) usage["output_tokens_details"] = { thinking_tokens: u.reasoning };
  return usage;
}

/** A tool call's input as an object, or the raw text when the script holds malformed JSON. */
function toolInput(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

function contentBlocks(spec: MessageSpec): Json[] {
  const blocks: Json[] = [];
  if (spec.reasoning !== "") {
    blocks.push({ type: "thinking", thinking: spec.reasoning, signature: fakeSignature(spec.reasoning) });
  }
  if (spec.text !== "") blocks.push({ type: "text", text: spec.text, citations: null });
  spec.toolCalls.forEach((call, index) => {
    blocks.push({
      type: "tool_use",
      id: callId(spec, index),
      name: call.name,
      input: toolInput(call.arguments),
    });
  });
  return blocks;
}

function messageEnvelope(ctx: AnswerContext): Json {
  return { id: "msg_fake", type: "message", role: "assistant", model: ctx.model, stop_sequence: null };
}

function fullMessage(spec: MessageSpec, ctx: AnswerContext): Json {
  return {
    ...messageEnvelope(ctx),
    content: contentBlocks(spec),
    stop_reason: stopReason(spec),
    usage: usageJson(spec),
  };
}

function streamEvents(spec: MessageSpec, ctx: AnswerContext): Json[] {
  const usage = usageJson(spec);
  const events: Json[] = [
    {
      type: "message_start",
      message: {
        ...messageEnvelope(ctx),
        content: [],
        stop_reason: null,
        usage: { ...usage, output_tokens: Math.min(1, spec.usage?.completion ?? 0) },
      },
    },
    { type: "ping" },
  ];
  let index = 0;
  const block = (start: Json, deltas: Json[]) => {
    events.push({ type: "content_block_start", index, content_block: start });
    for (const delta of deltas) events.push({ type: "content_block_delta", index, delta });
    events.push({ type: "content_block_stop", index });
    index++;
  };
  if (spec.reasoning !== "") {
    block({ type: "thinking", thinking: "", signature: "" }, [
      ...split(spec.reasoning, 3).map((thinking) => ({ type: "thinking_delta", thinking })),
      { type: "signature_delta", signature: fakeSignature(spec.reasoning) },
    ]);
  }
  if (spec.text !== "") {
    block(
      { type: "text", text: "", citations: null },
      split(spec.text, 4).map((text) => ({ type: "text_delta", text })),
    );
  }
  spec.toolCalls.forEach((call, i) => {
    block(
      { type: "tool_use", id: callId(spec, i), name: call.name, input: {} },
      split(call.arguments, 3).map((partial_json) => ({ type: "input_json_delta", partial_json })),
    );
  });
  const { output_tokens, output_tokens_details } = usage;
  events.push({
    type: "message_delta",
    delta: { stop_reason: stopReason(spec), stop_sequence: null },
    usage: { output_tokens, ...(output_tokens_details ? { output_tokens_details } : {}) },
  });
  events.push({ type: "message_stop" });
  return events;
}

/**
 * What the real Messages API says (HTTP 400, `invalid_request_error`) about a request whose tool
 * blocks do not pair up: a `tool_use` without a `tool_result` in the very next message, or a
 * `tool_result` whose `tool_use` is not in the message before. Undefined when the pairs are fine.
 */
export function anthropicPairingError(body: unknown): string | undefined {
  const messages = (body as { messages?: unknown })?.messages;
  if (!Array.isArray(messages)) return undefined;
  const blocks = (m: unknown): Json[] => {
    const content = (m as { content?: unknown })?.content;
    return Array.isArray(content) ? (content as Json[]) : [];
  };
  const ids = (m: unknown, type: string, key: string) =>
    blocks(m)
      .filter((b) => b["type"] === type)
      .map((b) => String(b[key]));
  for (let i = 0; i < messages.length; i++) {
    const uses = ids(messages[i], "tool_use", "id");
    const next = messages[i + 1];
    const answered = new Set(ids(next, "tool_result", "tool_use_id"));
    const missing = uses.filter((id) => !answered.has(id));
    if (missing.length > 0) {
      return `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
    }
    const previousUses = new Set(i > 0 ? ids(messages[i - 1], "tool_use", "id") : []);
    const stray = ids(messages[i], "tool_result", "tool_use_id").filter((id) => !previousUses.has(id));
    if (stray.length > 0) {
      return `messages.${i}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${stray.join(", ")}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
    }
  }
  return undefined;
}
