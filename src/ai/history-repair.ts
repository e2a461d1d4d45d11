/**
 * History repair: turns any stored conversation into one the strictest providers accept (Anthropic
 * Messages, Bedrock Converse, the Responses API, OpenAI chat completions), without hiding what
 * happened from the model. A session killed mid-turn (`kill -9`, a crash, a power cut) can leave
 * an assistant message whose tool calls never got results, results whose call is gone, or an
 * answer cut off while it streamed; replayed as is, strict providers answer 400 on every request.
 *
 * The rules, in order of the history:
 * - Each assistant tool call is answered by a tool message right after its assistant message.
 *   Results stored later (before the next assistant message) are moved up; a call with no result
 *   gets a stand-in saying it was interrupted, so the model knows the action may or may not have
 *   happened.
 * - A tool result whose call is not there becomes a user message quoting it (or is dropped, for
 *   compression, whose summary already covers it); a second result for the same call is dropped.
 * - An answer stopped mid-stream (`finish_reason` aborted or error) keeps its text and gets the
 *   interrupted marker, once.
 * - An assistant message with neither text nor tool calls is dropped (providers reject it).
 *
 * Tool call ids are only unique within one assistant message (local models reuse `call_0`), so
 * results are matched by position, never by a global id index. Pure: the input is not mutated and
 * unchanged messages are returned as the same objects, which is how `appended` is computed.
 */
import { type Message, messageText, type ToolCall } from "./types.js";

/** The line an answer stopped mid-stream ends with, for the model and the transcript. */
export const INTERRUPTED_MARKER = "[interrupted: this answer was cut off here and never finished]";

/** The stand-in result of a tool call that never returned (the session stopped while it ran). */
export const INTERRUPTED_TOOL_RESULT = JSON.stringify({
  error:
    "Interrupted: no result was recorded for this tool call (the session stopped while it ran, or the history was cut). It may or may not have taken effect; check before repeating it.",
});

export interface RepairOptions {
  /** Content of the stand-in for a call without a result. Default: `INTERRUPTED_TOOL_RESULT`. */
  missingResult?: (call: ToolCall) => string;
  /** A tool result without its call: `text` (a user message quoting it, the default) or `drop`. */
  orphanResults?: "text" | "drop";
}

export interface RepairReport {
  /** The repaired history (the input itself is never changed). */
  messages: Message[];
  /**
   * When the repair only added messages at the end (the usual crash: the last assistant message's
   * calls have no results), those messages: a store that appends them holds the repaired history,
   * so the repair happens once. Empty when nothing changed; undefined when earlier messages
   * changed (then the repair is applied again, identically, on each load).
   */
  appended: Message[] | undefined;
  /** Stand-in results added for calls that had none. */
  missingResults: number;
  /** Results whose call was not there (quoted as text or dropped). */
  orphanResults: number;
  /** Results moved up next to their call, and duplicate results dropped. */
  movedResults: number;
  droppedDuplicates: number;
  /** Assistant answers given the interrupted marker now. */
  markedInterrupted: number;
  /** Empty assistant messages dropped. */
  droppedEmpty: number;
}

/** Repairs `messages` as described in the module comment. */
export function repairHistory(messages: readonly Message[], options: RepairOptions = {}): RepairReport {
  const missing = options.missingResult ?? (() => INTERRUPTED_TOOL_RESULT);
  const orphanMode = options.orphanResults ?? "text";
  const report: Omit<RepairReport, "messages" | "appended"> = {
    missingResults: 0,
    orphanResults: 0,
    movedResults: 0,
    droppedDuplicates: 0,
    markedInterrupted: 0,
    droppedEmpty: 0,
  };
  const out: Message[] = [];
  /** Indices of tool messages already placed after their call. */
  const consumed = new Set<number>();
  /** Call ids of the latest assistant message with calls (for telling duplicates from orphans). */
  let block = new Set<string>();

  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role === "tool") {
      if (consumed.has(i)) continue;
      if (message.tool_call_id !== undefined && block.has(message.tool_call_id)) {
        report.droppedDuplicates++;
        continue;
      }
      report.orphanResults++;
      if (orphanMode === "text") out.push(orphanAsText(message));
      continue;
    }
    if (message.role !== "assistant") {
      out.push(message);
      continue;
    }
    const calls = uniqueCalls(message.tool_calls);
    if (calls.length === 0 && !messageText(message).trim()) {
      report.droppedEmpty++;
      continue;
    }
    let marked = markIfInterrupted(message);
    if (marked !== message) report.markedInterrupted++;
    if (calls.length !== (message.tool_calls?.length ?? 0)) {
      marked = { ...marked, tool_calls: calls };
      report.droppedDuplicates++;
    }
    out.push(marked);
    if (calls.length === 0) continue;

    block = new Set(calls.map((c) => c.id));
    const pending = new Set(block);
    // The results right after the call, in the order they were stored.
    let j = i + 1;
    for (; j < messages.length && messages[j]!.role === "tool"; j++) {
      const id = messages[j]!.tool_call_id;
      if (id !== undefined && pending.has(id)) {
        pending.delete(id);
        consumed.add(j);
        out.push(messages[j]!);
      }
    }
    // Results stored later in the same turn (before the next assistant message) move up.
    for (let k = j; k < messages.length && pending.size > 0 && messages[k]!.role !== "assistant"; k++) {
      const later = messages[k]!;
      if (later.role === "tool" && later.tool_call_id !== undefined && pending.has(later.tool_call_id)) {
        pending.delete(later.tool_call_id);
        consumed.add(k);
        out.push(later);
        report.movedResults++;
      }
    }
    for (const call of calls) {
      if (!pending.has(call.id)) continue;
      out.push({ role: "tool", tool_call_id: call.id, name: call.function.name, content: missing(call) });
      report.missingResults++;
    }
  }
  return { messages: out, appended: appendedPart(messages, out), ...report };
}

/** True when the report changed anything. */
export function repairChanged(report: RepairReport): boolean {
  return report.appended === undefined || report.appended.length > 0;
}

/** One sentence for the user about what a repair did; empty when it did nothing. */
export function describeRepair(report: RepairReport): string {
  const parts: string[] = [];
  const n = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;
  if (report.missingResults > 0)
    parts.push(
      `${n(report.missingResults, "tool call", "tool calls")} never returned (the model is told ${report.missingResults === 1 ? "it was" : "they were"} interrupted)`,
    );
  if (report.markedInterrupted > 0)
    parts.push(`${n(report.markedInterrupted, "answer was", "answers were")} cut off mid-stream`);
  if (report.orphanResults > 0)
    parts.push(`${n(report.orphanResults, "tool result has", "tool results have")} no call (kept as text)`);
  if (report.movedResults + report.droppedDuplicates + report.droppedEmpty > 0)
    parts.push("misplaced or empty messages were put in order");
  return parts.length > 0 ? `This session was interrupted before: ${parts.join("; ")}.` : "";
}

/**
 * `text` with the interrupted marker as its last line (unchanged when it already ends with it).
 * Used when an answer stops mid-stream, so the stored text says so wherever it is replayed.
 */
export function withInterruptedMarker(text: string): string {
  if (text.trimEnd().endsWith(INTERRUPTED_MARKER)) return text;
  return `${text.trimEnd()}\n\n${INTERRUPTED_MARKER}`;
}

function markIfInterrupted(message: Message): Message {
  if (message.finish_reason !== "aborted" && message.finish_reason !== "error") return message;
  if (message.tool_calls?.length) return message;
  const { content } = message;
  if (typeof content === "string") {
    const marked = withInterruptedMarker(content);
    return marked === content ? message : { ...message, content: marked };
  }
  if (content === null || content.length === 0) return message;
  const last = content[content.length - 1];
  if (last?.type === "text" && last.text.trimEnd().endsWith(INTERRUPTED_MARKER)) return message;
  return { ...message, content: [...content, { type: "text", text: `\n\n${INTERRUPTED_MARKER}` }] };
}

/** The calls with a repeated id left out (strict providers reject duplicate ids in one turn). */
function uniqueCalls(calls: readonly ToolCall[] | undefined): ToolCall[] {
  if (!calls || calls.length === 0) return [];
  const seen = new Set<string>();
  return calls.filter((c) => !seen.has(c.id) && seen.add(c.id));
}

function orphanAsText(message: Message): Message {
  const name = message.name ? `${message.name} ` : "";
  const id = message.tool_call_id ? ` ${message.tool_call_id}` : "";
  return {
    role: "user",
    content: `[Result of an earlier ${name}tool call${id} whose call is no longer in the conversation]\n${messageText(message)}`,
  };
}

/** What `out` adds after an unchanged copy of `input`, or undefined when earlier messages changed. */
function appendedPart(input: readonly Message[], out: readonly Message[]): Message[] | undefined {
  if (out.length < input.length) return undefined;
  for (let i = 0; i < input.length; i++) if (out[i] !== input[i]) return undefined;
  return out.slice(input.length);
}
