/**
 * Tool-result pruning: old tool outputs (before the protected tail, longer than 200 characters)
 * become a one-line placeholder that says what the output was, using the call's name and arguments.
 * The cheapest pass: no model call, and the model can re-run the tool if it needs the output again.
 */
import { type Message, messageText, type ToolCall } from "../../ai/types.js";
import { estimateTokens } from "./tokens.js";

export const PRUNE_MIN_CHARS = 200;
const PRUNED_RE = /^\[[\w.-]+ output pruned:/;

function parseJson(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function size(text: string): string {
  const bytes = Buffer.byteLength(text, "utf8");
  return bytes < 1024
    ? `${bytes} B`
    : bytes < 1024 * 1024
      ? `${(bytes / 1024).toFixed(1)} KB`
      : `${(bytes / 1048576).toFixed(1)} MB`;
}

function lineCount(text: string): number {
  return text === "" ? 0 : text.split("\n").length;
}

function clip(text: string, max = 80): string {
  const oneLine = text.replace(/\s+/g, " ").trim();
  return oneLine.length > max ? `${oneLine.slice(0, max - 1)}…` : oneLine;
}

function argString(args: Record<string, unknown> | undefined, ...keys: string[]): string | undefined {
  for (const key of keys) {
    const value = args?.[key];
    if (typeof value === "string" && value.trim()) return value;
  }
  return undefined;
}

/** The one-line placeholder for a tool output. */
export function pruneSummary(call: ToolCall | undefined, name: string, output: string): string {
  const args = call ? parseJson(call.function.arguments) : undefined;
  const result = parseJson(output);
  const path = argString(args, "path", "file_path", "filename");
  const body =
    (result && typeof result["content"] === "string" ? (result["content"] as string) : undefined) ?? output;
  switch (name) {
    case "read_file":
      return `[read_file output pruned: ${lineCount(body)} lines of ${path ?? "a file"}]`;
    case "terminal":
    case "process": {
      const exit = result?.["exit_code"] ?? result?.["returncode"];
      const command = argString(args, "command");
      return `[${name} output pruned: ${exit !== undefined ? `exit ${String(exit)}, ` : ""}${size(output)}${command ? ` from \`${clip(command, 60)}\`` : ""}]`;
    }
    case "search_files": {
      const pattern = argString(args, "pattern", "query");
      return `[search_files output pruned: ${lineCount(body)} lines${pattern ? ` for "${clip(pattern, 60)}"` : ""}]`;
    }
    case "web_search":
    case "web_extract":
    case "browser_navigate":
    case "browser_snapshot": {
      const urls = args?.["urls"];
      const target =
        argString(args, "query", "url") ?? (Array.isArray(urls) && urls.length ? String(urls[0]) : undefined);
      return `[${name} output pruned: ${size(output)}${target ? ` for ${clip(target, 80)}` : ""}]`;
    }
    case "write_file":
    case "patch":
      return `[${name} output pruned: ${path ?? "file"} updated, ${size(output)} of output]`;
    default: {
      const argText = call ? clip(call.function.arguments, 80) : "";
      return `[${name} output pruned: ${size(output)}${argText && argText !== "{}" ? `; args ${argText}` : ""}]`;
    }
  }
}

export interface PruneResult {
  messages: Message[];
  pruned: number;
  savedTokens: number;
}

/**
 * Replaces tool results outside the last `keepLast` messages that are longer than 200 characters
 * with one-line placeholders. Results already pruned are left alone. Returns new arrays; the input
 * is not mutated.
 */
export function pruneToolResults(messages: readonly Message[], options: { keepLast: number }): PruneResult {
  const calls = new Map<string, ToolCall>();
  for (const m of messages) for (const c of m.tool_calls ?? []) calls.set(c.id, c);
  const protectFrom = Math.max(0, messages.length - Math.max(0, options.keepLast));
  let pruned = 0;
  const out = messages.map((message, index) => {
    if (index >= protectFrom || message.role !== "tool") return message;
    const text = messageText(message);
    if (text.length <= PRUNE_MIN_CHARS || PRUNED_RE.test(text)) return message;
    const call = message.tool_call_id ? calls.get(message.tool_call_id) : undefined;
    const name = call?.function.name ?? message.name ?? "tool";
    pruned++;
    return { ...message, content: pruneSummary(call, name, text) };
  });
  return { messages: out, pruned, savedTokens: estimateTokens(messages) - estimateTokens(out) };
}
