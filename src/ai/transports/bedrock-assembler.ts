/**
 * Turns Bedrock ConverseStream events (as the AWS SDK yields them: one-key objects such as
 * `{contentBlockDelta: {...}}`) or one full Converse output into `StreamEvent`s and the final
 * assistant `Message`. Input is read from `unknown` and checked field by field; unknown event and
 * block types are skipped. Pure: no I/O, no SDK.
 *
 * Converse sends no start event for text and reasoning blocks (the first delta opens them), a
 * `contentBlockStart` for tool use, `messageStop` with the stop reason, and then `metadata` with
 * the usage, so the answer is complete at `messageStop` but usage arrives after it.
 */
import { newToolCallId } from "../tool-call-id.js";
import type { FinishReason, Message, StreamEvent, ToolCall, Usage } from "../types.js";
import { REASONING_REDACTED, REASONING_TEXT } from "./bedrock-convert.js";
import { asRecord, int, type Obj, str } from "./wire-values.js";

/**
 * Converse stop reasons onto ours: `end_turn` and `stop_sequence` are a normal stop, `tool_use`
 * is "tool_calls", `max_tokens` and `model_context_window_exceeded` are "length",
 * `guardrail_intervened` and `content_filtered` are "content_filter". `malformed_model_output`
 * and `malformed_tool_use` (the model wrote something Bedrock could not parse) are "error": the
 * transport reports them as a retryable model error. Unknown reasons count as "tool_calls" when
 * calls arrived, else "stop".
 */
export function normalizeStopReason(raw: string | undefined, hasToolCalls: boolean): FinishReason {
  switch (raw) {
    case "tool_use":
      return "tool_calls";
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length";
    case "guardrail_intervened":
    case "content_filtered":
      return "content_filter";
    case "malformed_model_output":
    case "malformed_tool_use":
      return "error";
    default:
      return hasToolCalls ? "tool_calls" : "stop";
  }
}

/** Exception members a ConverseStream can carry instead of an event. */
const STREAM_EXCEPTIONS = [
  "internalServerException",
  "modelStreamErrorException",
  "serviceUnavailableException",
  "throttlingException",
  "validationException",
];

/**
 * The exception a stream event carries (`{throttlingException: {message}}`), with its type in
 * PascalCase as the error would be named (`ThrottlingException`); undefined for a normal event.
 */
export function streamException(raw: unknown): { type: string; message: string } | undefined {
  const event = asRecord(raw);
  if (!event) return undefined;
  for (const key of STREAM_EXCEPTIONS) {
    const value = event[key];
    if (value === undefined) continue;
    const record = asRecord(value) ?? {};
    const message = str(record["message"]) ?? str(record["Message"]) ?? str(record["originalMessage"]) ?? "";
    return { type: key[0]!.toUpperCase() + key.slice(1), message };
  }
  return undefined;
}

type Slot =
  | { kind: "text" }
  | { kind: "reasoning"; text: string; signature: string }
  | { kind: "redacted"; chunks: Buffer[] }
  | { kind: "tool"; position: number; id: string; name: string; json: string; input: unknown; done: boolean }
  | { kind: "other" };
type ToolSlot = Extract<Slot, { kind: "tool" }>;

export class BedrockAssembler {
  private text = "";
  private reasoning = "";
  private readonly slots = new Map<number, Slot>();
  /** Reasoning blocks in arrival order, for replay. */
  private readonly reasoningSlots: Slot[] = [];
  private readonly toolSlots: ToolSlot[] = [];
  private stopReason: string | undefined;
  private rawUsage: Obj | undefined;

  /** True once anything the user could have seen (text, reasoning, tool-call parts) has arrived. */
  get hasContent(): boolean {
    return this.text !== "" || this.reasoning !== "" || this.toolSlots.length > 0;
  }

  /** True once `messageStop` arrived: the proof that the answer is complete. */
  get finished(): boolean {
    return this.stopReason !== undefined;
  }

  /** The raw Converse stop reason, once `messageStop` arrived. */
  get rawStopReason(): string | undefined {
    return this.stopReason;
  }

  /** The normalised finish reason so far. */
  get finishReason(): FinishReason {
    return normalizeStopReason(this.stopReason, this.toolSlots.length > 0);
  }

  /** Events for one ConverseStream event. Never throws on odd input; exceptions are the caller's. */
  addEvent(raw: unknown): StreamEvent[] {
    const event = asRecord(raw);
    if (!event) return [];
    const start = asRecord(event["contentBlockStart"]);
    if (start)
      return this.startBlock(int(start["contentBlockIndex"]) ?? this.slots.size, asRecord(start["start"]));
    const delta = asRecord(event["contentBlockDelta"]);
    if (delta) return this.addDelta(int(delta["contentBlockIndex"]) ?? 0, asRecord(delta["delta"]));
    const stop = asRecord(event["contentBlockStop"]);
    if (stop) {
      const slot = this.slots.get(int(stop["contentBlockIndex"]) ?? -1);
      return slot?.kind === "tool" ? this.completeToolCall(slot) : [];
    }
    const messageStop = asRecord(event["messageStop"]);
    if (messageStop) this.stopReason = str(messageStop["stopReason"]) ?? "end_turn";
    const metadata = asRecord(event["metadata"]);
    if (metadata) this.rawUsage = asRecord(metadata["usage"]) ?? this.rawUsage;
    return [];
  }

  /**
   * Events for a complete (non-streamed) Converse output, as if it had streamed block by block.
   * A full output is complete by construction, so a missing stop reason counts as `end_turn`.
   */
  addOutput(raw: unknown): StreamEvent[] {
    const output = asRecord(raw) ?? {};
    const message = asRecord(asRecord(output["output"])?.["message"]) ?? {};
    const content = Array.isArray(message["content"]) ? message["content"] : [];
    const events: StreamEvent[] = [];
    const push = (event: Obj) => events.push(...this.addEvent(event));
    content.forEach((rawBlock, contentBlockIndex) => {
      const block = asRecord(rawBlock) ?? {};
      const toolUse = asRecord(block["toolUse"]);
      const reasoning = asRecord(block["reasoningContent"]);
      const delta = (d: Obj) => push({ contentBlockDelta: { contentBlockIndex, delta: d } });
      if (typeof block["text"] === "string") {
        delta({ text: block["text"] });
      } else if (reasoning) {
        const reasoningText = asRecord(reasoning["reasoningText"]);
        if (reasoningText) {
          delta({ reasoningContent: { text: reasoningText["text"] } });
          delta({ reasoningContent: { signature: reasoningText["signature"] } });
        } else if (reasoning["redactedContent"] !== undefined) {
          delta({ reasoningContent: { redactedContent: reasoning["redactedContent"] } });
        }
      } else if (toolUse) {
        push({ contentBlockStart: { contentBlockIndex, start: { toolUse } } });
        const input = toolUse["input"];
        delta({ toolUse: { input: typeof input === "string" ? input : JSON.stringify(input ?? {}) } });
      }
      push({ contentBlockStop: { contentBlockIndex } });
    });
    push({ messageStop: { stopReason: str(output["stopReason"]) ?? "end_turn" } });
    push({ metadata: { usage: output["usage"] } });
    return events;
  }

  private startBlock(index: number, start: Obj | undefined): StreamEvent[] {
    const toolUse = asRecord(start?.["toolUse"]);
    if (!toolUse) {
      // Tool results, images and anything newer: nothing an assistant turn needs.
      this.slots.set(index, { kind: "other" });
      return [];
    }
    const slot = this.newToolSlot(index, str(toolUse["toolUseId"]), str(toolUse["name"]), toolUse["input"]);
    return [{ type: "tool_call_delta", index: slot.position, id: slot.id, name: slot.name }];
  }

  private newToolSlot(
    index: number,
    id: string | undefined,
    name: string | undefined,
    input: unknown,
  ): ToolSlot {
    const slot: ToolSlot = {
      kind: "tool",
      position: this.toolSlots.length,
      id: id || newToolCallId(),
      name: name ?? "",
      json: "",
      input,
      done: false,
    };
    this.slots.set(index, slot);
    this.toolSlots.push(slot);
    return slot;
  }

  private addDelta(index: number, delta: Obj | undefined): StreamEvent[] {
    if (!delta) return [];
    let slot = this.slots.get(index);
    const text = str(delta["text"]);
    if (text !== undefined) {
      if (!slot) {
        slot = { kind: "text" };
        this.slots.set(index, slot);
      }
      if (slot.kind !== "text" || text === "") return [];
      this.text += text;
      return [{ type: "text_delta", text }];
    }
    const reasoning = asRecord(delta["reasoningContent"]);
    if (reasoning) return this.addReasoning(index, slot, reasoning);
    const toolUse = asRecord(delta["toolUse"]);
    if (toolUse) {
      const events: StreamEvent[] = [];
      if (!slot) {
        slot = this.newToolSlot(index, undefined, undefined, undefined);
        events.push({ type: "tool_call_delta", index: slot.position, id: slot.id, name: slot.name });
      }
      const part = str(toolUse["input"]);
      if (slot.kind !== "tool" || slot.done || !part) return events;
      slot.json += part;
      events.push({ type: "tool_call_delta", index: slot.position, argumentsDelta: part });
      return events;
    }
    return [];
  }

  private addReasoning(index: number, existing: Slot | undefined, delta: Obj): StreamEvent[] {
    const redacted = delta["redactedContent"];
    if (redacted !== undefined) {
      // The SDK hands over bytes; a plain JSON source would carry base64.
      const bytes =
        redacted instanceof Uint8Array ? Buffer.from(redacted) : Buffer.from(str(redacted) ?? "", "base64");
      if (bytes.length === 0) return [];
      if (!existing) {
        const slot: Slot = { kind: "redacted", chunks: [bytes] };
        this.slots.set(index, slot);
        this.reasoningSlots.push(slot);
      } else if (existing.kind === "redacted") {
        existing.chunks.push(bytes);
      }
      return [];
    }
    let slot = existing;
    if (!slot) {
      slot = { kind: "reasoning", text: "", signature: "" };
      this.slots.set(index, slot);
      this.reasoningSlots.push(slot);
    }
    if (slot.kind !== "reasoning") return [];
    const signature = str(delta["signature"]);
    if (signature) slot.signature += signature;
    const text = str(delta["text"]);
    if (!text) return [];
    // Separate the text of successive reasoning blocks, as the joined `reasoning` does.
    const separator = slot.text === "" && this.reasoning !== "" ? "\n\n" : "";
    slot.text += text;
    this.reasoning += separator + text;
    return [{ type: "reasoning_delta", text: separator + text }];
  }

  private completeToolCall(slot: ToolSlot): StreamEvent[] {
    if (slot.done) return [];
    slot.done = true;
    return [{ type: "tool_call", index: slot.position, call: toToolCall(slot) }];
  }

  /**
   * Usage so far; undefined when none arrived. `inputTokens` includes cache reads and writes
   * (Bedrock's own `inputTokens` leaves them out).
   */
  get usage(): Usage | undefined {
    const u = this.rawUsage;
    if (!u) return undefined;
    const input = int(u["inputTokens"]);
    const output = int(u["outputTokens"]);
    if (input === undefined && output === undefined) return undefined;
    const read = int(u["cacheReadInputTokens"]);
    const write = int(u["cacheWriteInputTokens"]);
    const usage: Usage = {
      inputTokens: (input ?? 0) + (read ?? 0) + (write ?? 0),
      outputTokens: output ?? 0,
    };
    if (read !== undefined) usage.cacheReadTokens = read;
    if (write !== undefined) usage.cacheWriteTokens = write;
    return usage;
  }

  /**
   * Tool calls not yet closed by `contentBlockStop`, then `usage` (when reported) and the one
   * `finish` event. Call once, after the stream ended with `finished` true.
   */
  finishEvents(): StreamEvent[] {
    const events: StreamEvent[] = [];
    for (const slot of this.toolSlots) events.push(...this.completeToolCall(slot));
    const calls = this.toolSlots.map(toToolCall);
    const reason = this.finishReason;
    const message: Message = {
      role: "assistant",
      content: this.text !== "" ? this.text : calls.length > 0 ? null : "",
      finish_reason: reason,
    };
    if (calls.length > 0) message.tool_calls = calls;
    if (this.reasoning !== "") message.reasoning = this.reasoning;
    const details = this.reasoningSlots.flatMap((slot): unknown[] => {
      if (slot.kind === "reasoning")
        return [{ type: REASONING_TEXT, text: slot.text, signature: slot.signature }];
      if (slot.kind === "redacted")
        return [{ type: REASONING_REDACTED, data: Buffer.concat(slot.chunks).toString("base64") }];
      return [];
    });
    if (details.length > 0) message.reasoning_details = details;
    const usage = this.usage;
    if (usage) events.push({ type: "usage", usage });
    events.push({ type: "finish", reason, message });
    return events;
  }
}

function toToolCall(slot: ToolSlot): ToolCall {
  let args = slot.json;
  // A server that puts the whole input in the start event sends no input deltas.
  if (args.trim() === "") {
    const input = asRecord(slot.input);
    args = input && Object.keys(input).length > 0 ? JSON.stringify(input) : "{}";
  }
  return { id: slot.id, type: "function", function: { name: slot.name, arguments: args } };
}
