/**
 * Turns Anthropic Messages stream events (or one full response) into `StreamEvent`s and the final
 * assistant `Message`. Events are read from `unknown` and checked field by field: compatible
 * servers (MiniMax, proxies) differ in details, and unknown event or block types are skipped.
 */
import { newToolCallId } from "../tool-call-id.js";
import type { FinishReason, Message, StreamEvent, ToolCall, Usage } from "../types.js";
import { asRecord, int, type Obj, str } from "./wire-values.js";

/**
 * Anthropic stop reasons onto ours. `end_turn` and `stop_sequence` are a normal stop; `pause_turn`
 * (the server paused a long server-tool turn, which Hermes does not use) also ends the turn as
 * "stop" with what arrived so far; `max_tokens` and `model_context_window_exceeded` are "length";
 * `refusal` is "content_filter". Unknown reasons count as "tool_calls" when calls arrived, else "stop".
 */
export function normalizeStopReason(raw: string | undefined, hasToolCalls: boolean): FinishReason {
  switch (raw) {
    case "tool_use":
      return "tool_calls";
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length";
    case "refusal":
      return "content_filter";
    default:
      // end_turn, stop_sequence, pause_turn and anything newer.
      return hasToolCalls ? "tool_calls" : "stop";
  }
}

type Slot =
  | { kind: "text" }
  | { kind: "thinking"; thinking: string; signature: string }
  | { kind: "redacted_thinking"; data: string }
  | {
      kind: "tool_use";
      position: number;
      id: string;
      name: string;
      json: string;
      input: unknown;
      done: boolean;
    }
  | { kind: "other" };

export class AnthropicAssembler {
  private text = "";
  private reasoning = "";
  private readonly slots = new Map<number, Slot>();
  /** Thinking and redacted-thinking blocks in arrival order, for replay. */
  private readonly thinkingSlots: Slot[] = [];
  private readonly toolSlots: Extract<Slot, { kind: "tool_use" }>[] = [];
  private stopReason: string | undefined;
  private stopped = false;
  private inputTokens: number | undefined;
  private cacheRead: number | undefined;
  private cacheWrite: number | undefined;
  private outputTokens: number | undefined;
  private thinkingTokens: number | undefined;

  /** True once anything the user could have seen (text, thinking, tool-call parts) has arrived. */
  get hasContent(): boolean {
    return this.text !== "" || this.reasoning !== "" || this.toolSlots.length > 0;
  }

  /** True once the stop reason arrived (message_delta): the proof that the answer is complete. */
  get finished(): boolean {
    return this.stopReason !== undefined;
  }

  /** True once `message_stop` arrived. */
  get ended(): boolean {
    return this.stopped;
  }

  /** Events for one raw stream event. Never throws on odd input. */
  addEvent(raw: unknown): StreamEvent[] {
    const event = asRecord(raw);
    if (!event) return [];
    switch (event["type"]) {
      case "message_start": {
        this.addUsage(asRecord(asRecord(event["message"])?.["usage"]));
        return [];
      }
      case "content_block_start":
        return this.startBlock(int(event["index"]) ?? this.slots.size, asRecord(event["content_block"]));
      case "content_block_delta":
        return this.addDelta(int(event["index"]) ?? this.slots.size - 1, asRecord(event["delta"]));
      case "content_block_stop": {
        const slot = this.slots.get(int(event["index"]) ?? -1);
        return slot?.kind === "tool_use" ? this.completeToolCall(slot) : [];
      }
      case "message_delta": {
        const reason = str(asRecord(event["delta"])?.["stop_reason"]);
        if (reason) this.stopReason = reason;
        this.addUsage(asRecord(event["usage"]));
        return [];
      }
      case "message_stop":
        this.stopped = true;
        return [];
      default:
        return [];
    }
  }

  /**
   * Events for a complete (non-streamed) `Message` body, as if it had streamed block by block.
   * A full body is complete by construction, so a missing stop reason counts as `end_turn`.
   */
  addMessage(raw: unknown): StreamEvent[] {
    const message = asRecord(raw) ?? {};
    const events: StreamEvent[] = [];
    const push = (event: Obj) => events.push(...this.addEvent(event));
    push({ type: "message_start", message: { usage: message["usage"] } });
    const content = Array.isArray(message["content"]) ? message["content"] : [];
    content.forEach((rawBlock, index) => {
      const block = asRecord(rawBlock) ?? {};
      switch (block["type"]) {
        case "text":
          push({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
          push({ type: "content_block_delta", index, delta: { type: "text_delta", text: block["text"] } });
          break;
        case "thinking":
          push({ type: "content_block_start", index, content_block: { type: "thinking", thinking: "" } });
          push({
            type: "content_block_delta",
            index,
            delta: { type: "thinking_delta", thinking: block["thinking"] },
          });
          push({
            type: "content_block_delta",
            index,
            delta: { type: "signature_delta", signature: block["signature"] },
          });
          break;
        case "tool_use": {
          const input = block["input"];
          push({
            type: "content_block_start",
            index,
            content_block: { type: "tool_use", id: block["id"], name: block["name"], input: {} },
          });
          const json = typeof input === "string" ? input : JSON.stringify(input ?? {});
          push({
            type: "content_block_delta",
            index,
            delta: { type: "input_json_delta", partial_json: json },
          });
          break;
        }
        default:
          push({ type: "content_block_start", index, content_block: block });
      }
      push({ type: "content_block_stop", index });
    });
    push({
      type: "message_delta",
      delta: { stop_reason: str(message["stop_reason"]) ?? "end_turn" },
      usage: {},
    });
    push({ type: "message_stop" });
    return events;
  }

  private startBlock(index: number, block: Obj | undefined): StreamEvent[] {
    const type = block?.["type"];
    const events: StreamEvent[] = [];
    if (type === "text") {
      this.slots.set(index, { kind: "text" });
      const initial = str(block?.["text"]);
      if (initial) events.push(...this.addText(initial));
    } else if (type === "thinking") {
      const slot: Slot = { kind: "thinking", thinking: "", signature: str(block?.["signature"]) ?? "" };
      this.slots.set(index, slot);
      this.thinkingSlots.push(slot);
      const initial = str(block?.["thinking"]);
      if (initial) events.push(...this.addThinking(slot, initial));
    } else if (type === "redacted_thinking") {
      const slot: Slot = { kind: "redacted_thinking", data: str(block?.["data"]) ?? "" };
      this.slots.set(index, slot);
      this.thinkingSlots.push(slot);
    } else if (type === "tool_use") {
      const slot: Extract<Slot, { kind: "tool_use" }> = {
        kind: "tool_use",
        position: this.toolSlots.length,
        id: str(block?.["id"]) || newToolCallId(),
        name: str(block?.["name"]) ?? "",
        json: "",
        input: block?.["input"],
        done: false,
      };
      this.slots.set(index, slot);
      this.toolSlots.push(slot);
      events.push({ type: "tool_call_delta", index: slot.position, id: slot.id, name: slot.name });
    } else {
      // Server tools, citations blocks and anything newer: nothing Hermes can act on.
      this.slots.set(index, { kind: "other" });
    }
    return events;
  }

  private addDelta(index: number, delta: Obj | undefined): StreamEvent[] {
    const slot = this.slots.get(index);
    if (!delta || !slot) return [];
    switch (delta["type"]) {
      case "text_delta": {
        const text = str(delta["text"]);
        return text && slot.kind === "text" ? this.addText(text) : [];
      }
      case "thinking_delta": {
        const text = str(delta["thinking"]);
        return text && slot.kind === "thinking" ? this.addThinking(slot, text) : [];
      }
      case "signature_delta": {
        const signature = str(delta["signature"]);
        if (signature && slot.kind === "thinking") slot.signature += signature;
        return [];
      }
      case "input_json_delta": {
        const part = str(delta["partial_json"]);
        if (!part || slot.kind !== "tool_use" || slot.done) return [];
        slot.json += part;
        return [{ type: "tool_call_delta", index: slot.position, argumentsDelta: part }];
      }
      default:
        return [];
    }
  }

  private addText(text: string): StreamEvent[] {
    this.text += text;
    return [{ type: "text_delta", text }];
  }

  private addThinking(slot: Extract<Slot, { kind: "thinking" }>, text: string): StreamEvent[] {
    // Separate the text of successive thinking blocks, as the joined `reasoning` does.
    const separator = slot.thinking === "" && this.reasoning !== "" ? "\n\n" : "";
    slot.thinking += text;
    this.reasoning += separator + text;
    return [{ type: "reasoning_delta", text: separator + text }];
  }

  private completeToolCall(slot: Extract<Slot, { kind: "tool_use" }>): StreamEvent[] {
    if (slot.done) return [];
    slot.done = true;
    return [{ type: "tool_call", index: slot.position, call: toToolCall(slot) }];
  }

  private addUsage(usage: Obj | undefined): void {
    if (!usage) return;
    // message_delta counts are cumulative, so a later non-null value replaces an earlier one.
    this.inputTokens = int(usage["input_tokens"]) ?? this.inputTokens;
    this.cacheRead = int(usage["cache_read_input_tokens"]) ?? this.cacheRead;
    this.cacheWrite = int(usage["cache_creation_input_tokens"]) ?? this.cacheWrite;
    this.outputTokens = int(usage["output_tokens"]) ?? this.outputTokens;
    this.thinkingTokens =
      int(asRecord(usage["output_tokens_details"])?.["thinking_tokens"]) ?? this.thinkingTokens;
  }

  /** Usage so far; undefined when no counts arrived. `inputTokens` includes cache reads and writes. */
  get usage(): Usage | undefined {
    if (this.inputTokens === undefined && this.outputTokens === undefined) return undefined;
    const usage: Usage = {
      inputTokens: (this.inputTokens ?? 0) + (this.cacheRead ?? 0) + (this.cacheWrite ?? 0),
      outputTokens: this.outputTokens ?? 0,
    };
    if (this.cacheRead !== undefined) usage.cacheReadTokens = this.cacheRead;
    if (this.cacheWrite !== undefined) usage.cacheWriteTokens = this.cacheWrite;
    if (this.thinkingTokens !== undefined) usage.reasoningTokens = this.thinkingTokens;
    return usage;
  }

  /**
   * Tool calls not yet closed by `content_block_stop`, then the `usage` (when reported) and
   * `finish` events. Call once `finished` is true.
   */
  finishEvents(): StreamEvent[] {
    const events: StreamEvent[] = [];
    for (const slot of this.toolSlots) events.push(...this.completeToolCall(slot));
    const calls = this.toolSlots.map(toToolCall);
    const reason = normalizeStopReason(this.stopReason, calls.length > 0);
    const message: Message = {
      role: "assistant",
      content: this.text !== "" ? this.text : calls.length > 0 ? null : "",
      finish_reason: reason,
    };
    if (calls.length > 0) message.tool_calls = calls;
    if (this.reasoning !== "") message.reasoning = this.reasoning;
    const details = this.thinkingSlots.flatMap((slot): unknown[] => {
      if (slot.kind === "thinking")
        return [{ type: "thinking", thinking: slot.thinking, signature: slot.signature }];
      if (slot.kind === "redacted_thinking") return [{ type: "redacted_thinking", data: slot.data }];
      return [];
    });
    if (details.length > 0) message.reasoning_details = details;
    const usage = this.usage;
    if (usage) events.push({ type: "usage", usage });
    events.push({ type: "finish", reason, message });
    return events;
  }
}

function toToolCall(slot: Extract<Slot, { kind: "tool_use" }>): ToolCall {
  let args = slot.json;
  // A server that puts the whole input in content_block_start sends no input_json_delta.
  if (args.trim() === "") {
    const input = asRecord(slot.input);
    args = input && Object.keys(input).length > 0 ? JSON.stringify(input) : "{}";
  }
  return { id: slot.id, type: "function", function: { name: slot.name, arguments: args } };
}
