/**
 * Turns OpenAI Responses API stream events into `StreamEvent`s and the final assistant `Message`.
 * Every field is read from `unknown` and checked, because Responses-compatible servers (Codex,
 * xAI, OpenRouter, vLLM, relays) differ in which events they send: some stream every delta, some
 * send only `output_item.done`, some put everything in the final `response.completed`. The final
 * response's `output` fills in whatever the deltas did not carry.
 */
import { newToolCallId } from "../tool-call-id.js";
import type { FinishReason, Message, StreamEvent, ToolCall, Usage } from "../types.js";
import { asRecord, int, type Obj, str } from "./wire-values.js";

/** Maps a Responses `usage` object; undefined when it carries no token counts. */
export function mapResponsesUsage(raw: unknown): Usage | undefined {
  const u = asRecord(raw);
  if (!u) return undefined;
  const input = int(u["input_tokens"]);
  const output = int(u["output_tokens"]);
  if (input === undefined && output === undefined) return undefined;
  // Like chat completions, input_tokens includes the cached ones; cacheReadTokens is that share.
  const usage: Usage = { inputTokens: input ?? 0, outputTokens: output ?? 0 };
  const cached = int(asRecord(u["input_tokens_details"])?.["cached_tokens"]);
  if (cached !== undefined) usage.cacheReadTokens = cached;
  const reasoning = int(asRecord(u["output_tokens_details"])?.["reasoning_tokens"]);
  if (reasoning !== undefined) usage.reasoningTokens = reasoning;
  return usage;
}

/** How a response ended, from its terminal event. */
export type Terminal =
  | { kind: "completed" }
  | { kind: "incomplete"; reason: string | undefined }
  | { kind: "failed"; error: Obj | undefined };

interface CallSlot {
  position: number;
  itemId: string | undefined;
  outputIndex: number | undefined;
  callId: string | undefined;
  name: string;
  args: string;
  done: boolean;
  /** False when the item finished `incomplete` (cut off by the token limit): not a usable call. */
  usable: boolean;
}

export class ResponsesAssembler {
  private text = "";
  private reasoning = "";
  /** Item id + part index of the reasoning text last appended, to separate summary parts. */
  private reasoningPart: string | undefined;
  private readonly reasoningItems: Obj[] = [];
  private readonly reasoningWithText = new Set<string>();
  /** Message items whose text has arrived; text without an item id sets `anonymousText`. */
  private readonly textItems = new Set<string>();
  private anonymousText = false;
  private readonly slots: CallSlot[] = [];
  private usage: Usage | undefined;
  private end: Terminal | undefined;
  private streamError: Obj | undefined;

  /** True once anything the user could have seen (text, reasoning, tool-call parts) has arrived. */
  get hasContent(): boolean {
    return this.text !== "" || this.reasoning !== "" || this.slots.length > 0;
  }

  /** The terminal event seen, if any: only `completed` or `incomplete` mean a usable answer. */
  get terminal(): Terminal | undefined {
    return this.end;
  }

  /** The payload of an `error` event, when the stream reported one. */
  get error(): Obj | undefined {
    return this.streamError;
  }

  /** Events for one stream event. Never throws on odd input; unknown event types are ignored. */
  addEvent(raw: unknown): StreamEvent[] {
    const event = asRecord(raw);
    if (!event || this.end) return [];
    switch (event["type"]) {
      case "response.output_text.delta":
      case "response.refusal.delta":
        return this.addText(str(event["delta"]) ?? "", str(event["item_id"]));
      case "response.reasoning_summary_text.delta":
        return this.addReasoning(
          str(event["delta"]) ?? "",
          str(event["item_id"]),
          `s${int(event["summary_index"]) ?? 0}`,
        );
      case "response.reasoning_text.delta":
        // Raw reasoning text (open-weight models behind vLLM or OpenRouter).
        return this.addReasoning(
          str(event["delta"]) ?? "",
          str(event["item_id"]),
          `c${int(event["content_index"]) ?? 0}`,
        );
      case "response.output_item.added":
        return this.itemAdded(asRecord(event["item"]), int(event["output_index"]));
      case "response.function_call_arguments.delta":
        return this.argumentsDelta(event);
      case "response.function_call_arguments.done": {
        const slot = this.findSlot(str(event["item_id"]), int(event["output_index"]));
        const args = str(event["arguments"]);
        if (slot && !slot.done && args !== undefined) slot.args = args;
        return [];
      }
      case "response.output_item.done":
        return this.itemDone(asRecord(event["item"]), int(event["output_index"]));
      case "response.completed":
        return this.terminate(asRecord(event["response"]), { kind: "completed" });
      case "response.incomplete": {
        const response = asRecord(event["response"]);
        const reason = str(asRecord(response?.["incomplete_details"])?.["reason"]);
        return this.terminate(response, { kind: "incomplete", reason });
      }
      case "response.failed": {
        const response = asRecord(event["response"]);
        return this.terminate(response, { kind: "failed", error: asRecord(response?.["error"]) });
      }
      case "error":
        this.streamError = event;
        return [];
      default:
        return [];
    }
  }

  private addText(delta: string, itemId: string | undefined): StreamEvent[] {
    if (delta === "") return [];
    if (itemId) this.textItems.add(itemId);
    else this.anonymousText = true;
    this.text += delta;
    return [{ type: "text_delta", text: delta }];
  }

  private addReasoning(delta: string, itemId: string | undefined, part: string): StreamEvent[] {
    if (delta === "") return [];
    if (itemId) this.reasoningWithText.add(itemId);
    const key = `${itemId ?? ""}/${part}`;
    const text = this.reasoning !== "" && this.reasoningPart !== key ? `\n\n${delta}` : delta;
    this.reasoningPart = key;
    this.reasoning += text;
    return [{ type: "reasoning_delta", text }];
  }

  private itemAdded(item: Obj | undefined, outputIndex: number | undefined): StreamEvent[] {
    if (item?.["type"] !== "function_call") return [];
    const itemId = str(item["id"]);
    if (this.findSlot(itemId, outputIndex)) return [];
    const slot = this.newSlot(itemId, outputIndex);
    slot.callId = str(item["call_id"]) || undefined;
    slot.name = str(item["name"]) ?? "";
    slot.args = str(item["arguments"]) ?? "";
    const event: Extract<StreamEvent, { type: "tool_call_delta" }> = {
      type: "tool_call_delta",
      index: slot.position,
    };
    if (slot.callId) event.id = slot.callId;
    if (slot.name) event.name = slot.name;
    if (slot.args) event.argumentsDelta = slot.args;
    return [event];
  }

  private argumentsDelta(event: Obj): StreamEvent[] {
    const delta = str(event["delta"]) ?? "";
    const itemId = str(event["item_id"]);
    const outputIndex = int(event["output_index"]);
    // A server that skipped `output_item.added` still gets its arguments assembled.
    const slot = this.findSlot(itemId, outputIndex) ?? this.newSlot(itemId, outputIndex);
    if (delta === "" || slot.done) return [];
    slot.args += delta;
    return [{ type: "tool_call_delta", index: slot.position, argumentsDelta: delta }];
  }

  private itemDone(item: Obj | undefined, outputIndex: number | undefined): StreamEvent[] {
    if (!item) return [];
    switch (item["type"]) {
      case "function_call":
        return this.callDone(item, outputIndex);
      case "reasoning":
        return this.reasoningDone(item);
      case "message": {
        // Text of an item that did not stream (servers that send whole items instead of deltas).
        // Deltas without an item id cannot be matched to items, so then streamed text wins.
        const id = str(item["id"]) || undefined;
        if (this.anonymousText || (id !== undefined && this.textItems.has(id))) return [];
        if (id === undefined && this.text !== "") return [];
        const events = this.addText(messageText(item), id);
        if (id) this.textItems.add(id);
        return events;
      }
      default:
        return [];
    }
  }

  private callDone(item: Obj, outputIndex: number | undefined): StreamEvent[] {
    const itemId = str(item["id"]);
    const slot = this.findSlot(itemId, outputIndex) ?? this.newSlot(itemId, outputIndex);
    if (slot.done) return [];
    slot.done = true;
    slot.callId = str(item["call_id"]) || slot.callId;
    slot.name = str(item["name"]) || slot.name;
    const args = str(item["arguments"]);
    if (args !== undefined && args !== "") slot.args = args;
    slot.usable = item["status"] !== "incomplete";
    if (!slot.usable) return [];
    const call = this.toCall(slot);
    return [{ type: "tool_call", index: slot.position, call }];
  }

  private reasoningDone(item: Obj): StreamEvent[] {
    const id = str(item["id"]);
    const seen = id
      ? this.reasoningItems.some((r) => r["id"] === id)
      : this.reasoningItems.some((r) => JSON.stringify(r) === JSON.stringify(item));
    if (seen) return [];
    // Kept exactly as received: the next request replays it, encrypted_content and all.
    this.reasoningItems.push(item);
    if (id && this.reasoningWithText.has(id)) return [];
    // No deltas came for this item: take its summary text from the finished item.
    const summary = Array.isArray(item["summary"]) ? item["summary"] : [];
    const events: StreamEvent[] = [];
    summary.forEach((part, index) => {
      events.push(...this.addReasoning(str(asRecord(part)?.["text"]) ?? "", id, `s${index}`));
    });
    return events;
  }

  private terminate(response: Obj | undefined, terminal: Terminal): StreamEvent[] {
    const events: StreamEvent[] = [];
    if (terminal.kind !== "failed") {
      const output = Array.isArray(response?.["output"]) ? response["output"] : [];
      output.forEach((item, index) => {
        events.push(...this.itemDone(asRecord(item), index));
      });
      // Calls whose `output_item.done` never came, on a response that says it completed.
      for (const slot of this.slots) {
        if (slot.done || terminal.kind !== "completed") continue;
        slot.done = true;
        events.push({ type: "tool_call", index: slot.position, call: this.toCall(slot) });
      }
    }
    const usage = mapResponsesUsage(response?.["usage"]);
    if (usage) this.usage = usage;
    this.end = terminal;
    return events;
  }

  private toCall(slot: CallSlot): ToolCall {
    slot.callId ??= newToolCallId();
    return {
      id: slot.callId,
      type: "function",
      function: { name: slot.name, arguments: slot.args.trim() === "" ? "{}" : slot.args },
    };
  }

  private findSlot(itemId: string | undefined, outputIndex: number | undefined): CallSlot | undefined {
    if (itemId) {
      const byId = this.slots.find((s) => s.itemId === itemId);
      if (byId) return byId;
    }
    if (outputIndex === undefined) return undefined;
    return this.slots.find((s) => s.outputIndex === outputIndex && (!itemId || !s.itemId));
  }

  private newSlot(itemId: string | undefined, outputIndex: number | undefined): CallSlot {
    const slot: CallSlot = {
      position: this.slots.length,
      itemId,
      outputIndex,
      callId: undefined,
      name: "",
      args: "",
      done: false,
      usable: true,
    };
    this.slots.push(slot);
    return slot;
  }

  /** The trailing `usage` (when reported) and `finish` events. Call only after a usable terminal. */
  finishEvents(): StreamEvent[] {
    // A call item cut off by the output limit is kept (with what arrived of its arguments) so the
    // agent can tell the model it was not run; the "length" finish keeps it from running.
    const cutOff = this.end?.kind === "incomplete" && this.end.reason !== "content_filter";
    const calls = this.slots.filter((s) => (s.done && s.usable) || cutOff).map((s) => this.toCall(s));
    const reason = finishReason(this.end, calls.length > 0);
    const message: Message = {
      role: "assistant",
      content: this.text !== "" ? this.text : calls.length > 0 ? null : "",
      finish_reason: reason,
    };
    if (calls.length > 0) message.tool_calls = calls;
    if (this.reasoning !== "") message.reasoning = this.reasoning;
    if (this.reasoningItems.length > 0) message.codex_reasoning_items = [...this.reasoningItems];
    const events: StreamEvent[] = [];
    if (this.usage) events.push({ type: "usage", usage: this.usage });
    events.push({ type: "finish", reason, message });
    return events;
  }
}

function finishReason(end: Terminal | undefined, hasCalls: boolean): FinishReason {
  if (end?.kind !== "incomplete") return hasCalls ? "tool_calls" : "stop";
  if (end.reason === "content_filter") return hasCalls ? "tool_calls" : "content_filter";
  // max_output_tokens, or a reason this code does not know: the answer was cut short.
  return "length";
}

function messageText(item: Obj): string {
  const content = Array.isArray(item["content"]) ? item["content"] : [];
  let text = "";
  for (const part of content) {
    const p = asRecord(part);
    if (p?.["type"] === "output_text" || p?.["type"] === "refusal") {
      text += str(p["text"]) ?? str(p["refusal"]) ?? "";
    }
  }
  return text;
}
