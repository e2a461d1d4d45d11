/**
 * Turns OpenAI chat-completions chunks (or one full response) into `StreamEvent`s and the final
 * assistant `Message`. Servers that call themselves OpenAI-compatible differ in the details, so
 * every field is read from `unknown` and checked: ids and names may arrive only in a call's first
 * chunk, or be repeated, or be missing; an index may be missing or reused; reasoning arrives under
 * several names.
 */
import { newToolCallId } from "../tool-call-id.js";
import type { FinishReason, Message, StreamEvent, ToolCall, Usage } from "../types.js";
import { asRecord, int, type Obj, str } from "./wire-values.js";

/** Maps a wire finish reason onto ours; tool calls with a "stop" reason count as "tool_calls". */
export function normalizeFinishReason(raw: string | undefined, hasToolCalls: boolean): FinishReason {
  switch (raw) {
    case "length":
    case "max_tokens":
      return "length";
    case "content_filter":
      return "content_filter";
    case "tool_calls":
    case "function_call":
    case "tool_use":
      return "tool_calls";
    default:
      return hasToolCalls ? "tool_calls" : "stop";
  }
}

/** Maps an OpenAI `usage` object; undefined when it carries no token counts. */
export function mapUsage(raw: unknown): Usage | undefined {
  const u = asRecord(raw);
  if (!u) return undefined;
  const input = int(u["prompt_tokens"]);
  const output = int(u["completion_tokens"]);
  if (input === undefined && output === undefined) return undefined;
  const usage: Usage = { inputTokens: input ?? 0, outputTokens: output ?? 0 };
  const promptDetails = asRecord(u["prompt_tokens_details"]);
  // DeepSeek reports cache hits under its own name.
  const cacheRead = int(promptDetails?.["cached_tokens"]) ?? int(u["prompt_cache_hit_tokens"]);
  if (cacheRead !== undefined) usage.cacheReadTokens = cacheRead;
  const cacheWrite = int(promptDetails?.["cache_write_tokens"]);
  if (cacheWrite !== undefined) usage.cacheWriteTokens = cacheWrite;
  const reasoning = int(asRecord(u["completion_tokens_details"])?.["reasoning_tokens"]);
  if (reasoning !== undefined) usage.reasoningTokens = reasoning;
  return usage;
}

/**
 * Reasoning text from a delta or message. OpenRouter sends the same text as both `reasoning` and
 * `reasoning_details`, so the first source present wins rather than concatenating them.
 */
function reasoningText(part: Obj): string {
  const direct = str(part["reasoning_content"]) || str(part["reasoning"]);
  if (direct) return direct;
  const details = part["reasoning_details"];
  if (!Array.isArray(details)) return "";
  let text = "";
  for (const d of details) {
    const detail = asRecord(d);
    text += str(detail?.["text"]) ?? str(detail?.["summary"]) ?? "";
  }
  return text;
}

function argumentsText(value: unknown): string {
  if (typeof value === "string") return value;
  // A few servers send arguments as an object instead of a JSON string.
  if (asRecord(value)) return JSON.stringify(value);
  return "";
}

interface ToolSlot {
  position: number;
  id: string | undefined;
  name: string;
  args: string;
}

export class ResponseAssembler {
  private text = "";
  private reasoning = "";
  private readonly slots: ToolSlot[] = [];
  private readonly slotByIndex = new Map<number, ToolSlot>();
  private rawFinish: string | undefined;
  private finalized: ToolCall[] | undefined;
  private usage: Usage | undefined;

  /** True once anything the user could have seen (text, reasoning, tool-call parts) has arrived. */
  get hasContent(): boolean {
    return this.text !== "" || this.reasoning !== "" || this.slots.length > 0;
  }

  /** True once a chunk carried a finish reason: the only proof that a stream ended on purpose. */
  get finished(): boolean {
    return this.rawFinish !== undefined;
  }

  get finishReason(): string | undefined {
    return this.rawFinish;
  }

  /** Events for one streamed chunk. Never throws on odd input; unknown shapes are ignored. */
  addChunk(chunk: unknown): StreamEvent[] {
    const c = asRecord(chunk);
    if (!c) return [];
    const events: StreamEvent[] = [];
    const usage = mapUsage(c["usage"]);
    if (usage) this.usage = usage;
    const choices = Array.isArray(c["choices"]) ? c["choices"] : [];
    const choice = asRecord(choices[0]);
    if (!choice) return events;
    const delta = asRecord(choice["delta"]) ?? {};

    const reasoning = reasoningText(delta);
    if (reasoning) {
      this.reasoning += reasoning;
      events.push({ type: "reasoning_delta", text: reasoning });
    }
    const content = str(delta["content"]);
    if (content) {
      this.text += content;
      events.push({ type: "text_delta", text: content });
    }
    const toolCalls = delta["tool_calls"];
    if (Array.isArray(toolCalls)) {
      for (const raw of toolCalls) {
        const event = this.addToolCallPart(raw);
        if (event) events.push(event);
      }
    }
    const finish = str(choice["finish_reason"]);
    if (finish && this.rawFinish === undefined) {
      this.rawFinish = finish;
      events.push(...this.completeToolCalls());
    }
    return events;
  }

  /** Events for a complete (non-streamed) response, as if it had streamed in one piece. */
  addResponse(response: unknown): StreamEvent[] {
    const r = asRecord(response) ?? {};
    const choices = Array.isArray(r["choices"]) ? r["choices"] : [];
    const choice = asRecord(choices[0]) ?? {};
    const message = asRecord(choice["message"]) ?? {};
    const chunk = {
      usage: r["usage"],
      choices: [
        {
          delta: { ...message, tool_calls: addIndexes(message["tool_calls"]) },
          // A full body is complete by construction, even when a server leaves the reason null.
          finish_reason: str(choice["finish_reason"]) || "stop",
        },
      ],
    };
    return this.addChunk(chunk);
  }

  private addToolCallPart(raw: unknown): StreamEvent | undefined {
    const part = asRecord(raw);
    if (!part) return undefined;
    const fn = asRecord(part["function"]) ?? {};
    const id = str(part["id"]) || undefined;
    const name = str(fn["name"]) || undefined;
    const slot = this.slotFor(int(part["index"]), id, name);
    const event: Extract<StreamEvent, { type: "tool_call_delta" }> = {
      type: "tool_call_delta",
      index: slot.position,
    };
    if (id && slot.id === undefined) {
      slot.id = id;
      event.id = id;
    }
    if (name && slot.name === "") {
      slot.name = name;
      event.name = name;
    }
    const args = argumentsText(fn["arguments"]);
    if (args) {
      slot.args += args;
      event.argumentsDelta = args;
    }
    return event.id || event.name || event.argumentsDelta ? event : undefined;
  }

  private slotFor(index: number | undefined, id: string | undefined, name: string | undefined): ToolSlot {
    if (index !== undefined) {
      const existing = this.slotByIndex.get(index);
      // Some servers reuse index 0 for every parallel call; a new id at a known index is a new call.
      if (existing && !(id && existing.id && existing.id !== id)) return existing;
      const slot = this.newSlot();
      this.slotByIndex.set(index, slot);
      return slot;
    }
    if (id) return this.slots.find((s) => s.id === id) ?? this.newSlot();
    const last = this.slots.at(-1);
    if (last && !name) return last;
    return this.newSlot();
  }

  private newSlot(): ToolSlot {
    const slot: ToolSlot = { position: this.slots.length, id: undefined, name: "", args: "" };
    this.slots.push(slot);
    return slot;
  }

  private completeToolCalls(): StreamEvent[] {
    this.finalized = this.slots.map((slot) => ({
      id: slot.id ?? newToolCallId(),
      type: "function" as const,
      function: { name: slot.name, arguments: slot.args.trim() === "" ? "{}" : slot.args },
    }));
    return this.finalized.map((call, index) => ({ type: "tool_call" as const, index, call }));
  }

  /** The trailing `usage` (when reported) and `finish` events. Call only once `finished` is true. */
  finishEvents(): StreamEvent[] {
    const calls = this.finalized ?? [];
    const reason = normalizeFinishReason(this.rawFinish, calls.length > 0);
    const message: Message = {
      role: "assistant",
      content: this.text !== "" ? this.text : calls.length > 0 ? null : "",
      finish_reason: reason,
    };
    if (calls.length > 0) message.tool_calls = calls;
    if (this.reasoning !== "") message.reasoning = this.reasoning;
    const events: StreamEvent[] = [];
    if (this.usage) events.push({ type: "usage", usage: this.usage });
    events.push({ type: "finish", reason, message });
    return events;
  }
}

/** Full responses list tool calls without `index`; give them one so they take distinct slots. */
function addIndexes(toolCalls: unknown): unknown {
  if (!Array.isArray(toolCalls)) return toolCalls;
  return toolCalls.map((tc, index) => {
    const record = asRecord(tc);
    return record ? { index, ...record } : tc;
  });
}
