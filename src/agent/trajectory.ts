/**
 * Trajectory export in ShareGPT JSONL, the format Hermes writes for training data:
 * `trajectory_samples.jsonl` for completed runs and `failed_trajectories.jsonl` for the rest. The
 * turns follow Python Hermes's converter byte for byte where it matters to a training pipeline: the
 * function-calling system message, a `<think>` block on every `gpt` turn, `<tool_call>` and
 * `<tool_response>` blocks holding JSON written as Python's `json.dumps` writes it.
 */
import { appendFile } from "node:fs/promises";
import { join } from "node:path";
import type { Message, ToolSchema } from "../ai/types.js";
import { messageText } from "../ai/types.js";
import { redactJson, redactText } from "../util/redact.js";

export interface ShareGptTurn {
  from: "system" | "human" | "gpt" | "tool";
  value: string;
}

export interface TrajectoryEntry {
  conversations: ShareGptTurn[];
  timestamp: string;
  model: string;
  completed: boolean;
}

/**
 * JSON as Python's `json.dumps(value, ensure_ascii=False)` writes it (`", "` and `": "` between
 * items), so the text inside `<tool_call>` and `<tool_response>` matches upstream's trajectories.
 */
export function pythonJson(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (Array.isArray(value)) return `[${value.map((v) => pythonJson(v)).join(", ")}]`;
  if (typeof value === "object") {
    const items = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined && typeof v !== "function")
      .map(([k, v]) => `${JSON.stringify(k)}: ${pythonJson(v)}`);
    return `{${items.join(", ")}}`;
  }
  if (typeof value === "number" && !Number.isFinite(value)) return "null";
  return JSON.stringify(value) ?? "null";
}

/** The tool list of the system message: name, description, parameters, `required: null`. */
function formatTools(tools: readonly ToolSchema[]): string {
  return pythonJson(
    tools.map((t) => ({
      name: t.function.name,
      description: t.function.description ?? "",
      parameters: t.function.parameters ?? {},
      required: null,
    })),
  );
}

/** The function-calling system message Hermes trajectories carry, listing the tool schemas. */
export function trajectorySystemMessage(tools: readonly ToolSchema[]): string {
  return (
    "You are a function calling AI model. You are provided with function signatures within <tools> </tools> XML tags. " +
    "You may call one or more functions to assist with the user query. If available tools are not relevant in assisting " +
    "with user query, just respond in natural conversational language. Don't make assumptions about what values to plug " +
    "into functions. After calling & executing the functions, you will be provided with function results within " +
    "<tool_response> </tool_response> XML tags. Here are the available tools:\n" +
    `<tools>\n${formatTools(tools)}\n</tools>\n` +
    "For each function call return a JSON object, with the following pydantic model json schema for each:\n" +
    "{'title': 'FunctionCall', 'type': 'object', 'properties': {'name': {'title': 'Name', 'type': 'string'}, " +
    "'arguments': {'title': 'Arguments', 'type': 'object'}}, 'required': ['name', 'arguments']}\n" +
    "Each function call should be enclosed within <tool_call> </tool_call> XML tags.\n" +
    "Example:\n<tool_call>\n{'name': <function-name>,'arguments': <args-dict>}\n</tool_call>"
  );
}

/** Models told to reason in `<REASONING_SCRATCHPAD>` tags (no native thinking) get `<think>` tags. */
export function scratchpadToThink(text: string): string {
  return text
    .replaceAll("<REASONING_SCRATCHPAD>", "<think>")
    .replaceAll("</REASONING_SCRATCHPAD>", "</think>");
}

const EMPTY_THINK = "<think>\n</think>\n";

function gptTurn(m: Message): string {
  const reasoning = m.reasoning?.trim() ? `<think>\n${m.reasoning}\n</think>\n` : "";
  const text = messageText(m);
  const calls = m.tool_calls ?? [];
  if (calls.length === 0) {
    const content = reasoning + scratchpadToThink(text);
    return (content.includes("<think>") ? content : EMPTY_THINK + content).trim();
  }
  let content = reasoning;
  if (text.trim()) content += `${scratchpadToThink(text)}\n`;
  for (const call of calls) {
    // Arguments were validated before the call ran; unreadable ones become {} as upstream writes them.
    const args = parseJson(call.function.arguments);
    const json = pythonJson({
      name: call.function.name,
      arguments: args.ok && typeof args.value === "object" && args.value !== null ? args.value : {},
    });
    content += `<tool_call>\n${json}\n</tool_call>\n`;
  }
  return (content.includes("<think>") ? content : EMPTY_THINK + content).trimEnd();
}

/**
 * Converts a conversation (without its system prompt) to ShareGPT turns. Pure. Tool results follow
 * the assistant turn that asked for them, grouped into one `tool` turn and named by position; a
 * tool result with no asking turn before it is left out, as upstream's converter does.
 */
export function toShareGpt(messages: readonly Message[], tools: readonly ToolSchema[]): ShareGptTurn[] {
  const turns: ShareGptTurn[] = [{ from: "system", value: trajectorySystemMessage(tools) }];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role === "user") turns.push({ from: "human", value: messageText(m) });
    else if (m.role === "assistant") {
      turns.push({ from: "gpt", value: gptTurn(m) });
      const calls = m.tool_calls ?? [];
      if (calls.length === 0) continue;
      const responses: string[] = [];
      while (messages[i + 1]?.role === "tool") {
        const result = messages[++i]!;
        const text = messageText(result);
        const parsed = /^\s*[[{]/.test(text) ? parseJson(text) : { ok: false as const };
        const name = calls[responses.length]?.function.name ?? "unknown";
        const body = pythonJson({
          tool_call_id: result.tool_call_id ?? "",
          name,
          content: parsed.ok ? parsed.value : text,
        });
        responses.push(`<tool_response>\n${body}\n</tool_response>`);
      }
      if (responses.length > 0) turns.push({ from: "tool", value: responses.join("\n") });
    }
  }
  return turns;
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/**
 * One JSONL line, redacted (default: the process-wide secret redactor): each turn's text first (a
 * value nested as JSON inside a turn is escaped twice in the line), then the line itself.
 */
export function trajectoryLine(entry: object, redact: (text: string) => string = redactText): string {
  return redact(JSON.stringify(redactJson(entry, redact)));
}

/**
 * Appends one trajectory line to the right file in `dir`, redacted (default: the process-wide
 * secret redactor). A new file is created owner-only: it holds whole conversations.
 */
export async function saveTrajectory(
  dir: string,
  entry: {
    messages: readonly Message[];
    tools: readonly ToolSchema[];
    model: string;
    completed: boolean;
    now?: Date;
    redact?: (text: string) => string;
  },
): Promise<string> {
  const file = join(dir, entry.completed ? "trajectory_samples.jsonl" : "failed_trajectories.jsonl");
  const line: TrajectoryEntry = {
    conversations: toShareGpt(entry.messages, entry.tools),
    timestamp: (entry.now ?? new Date()).toISOString(),
    model: entry.model,
    completed: entry.completed,
  };
  await appendFile(file, `${trajectoryLine(line, entry.redact)}\n`, { encoding: "utf8", mode: 0o600 });
  return file;
}

/** `saveTrajectory` for a finished turn: a failure to write becomes a warning, never a failed turn. */
export async function saveTrajectoryOrWarn(
  dir: string,
  entry: Parameters<typeof saveTrajectory>[1],
  emit: (event: { type: "warning"; message: string }) => void,
): Promise<void> {
  try {
    await saveTrajectory(dir, entry);
  } catch (error) {
    emit({ type: "warning", message: `Could not save the trajectory: ${String(error)}` });
  }
}
