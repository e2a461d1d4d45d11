/**
 * Trajectory export in ShareGPT JSONL, the format Hermes writes for training data:
 * `trajectory_samples.jsonl` for completed runs and `failed_trajectories.jsonl` for the rest.
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

/** The function-calling system message Hermes trajectories carry, listing the tool schemas. */
export function trajectorySystemMessage(tools: readonly ToolSchema[]): string {
  const schemas = tools.map((t) => ({
    name: t.function.name,
    description: t.function.description,
    parameters: t.function.parameters,
    required: null,
  }));
  return [
    "You are a function calling AI model. You are provided with function signatures within <tools> </tools> XML tags.",
    "You may call one or more functions to assist with the user query. Don't make assumptions about what values to plug into functions.",
    `<tools>\n${JSON.stringify(schemas)}\n</tools>`,
    'For each function call return a JSON object with the function name and arguments within <tool_call> </tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-dict>}\n</tool_call>',
  ].join("\n");
}

/** Converts a conversation (without its system prompt) to ShareGPT turns. Pure. */
export function toShareGpt(messages: readonly Message[], tools: readonly ToolSchema[]): ShareGptTurn[] {
  const turns: ShareGptTurn[] = [{ from: "system", value: trajectorySystemMessage(tools) }];
  let pendingTool: string[] = [];
  const flushTools = () => {
    if (pendingTool.length > 0) turns.push({ from: "tool", value: pendingTool.join("\n") });
    pendingTool = [];
  };
  for (const m of messages) {
    if (m.role === "tool") {
      pendingTool.push(
        `<tool_response>\n${JSON.stringify({ tool_call_id: m.tool_call_id, name: m.name, content: parseMaybeJson(messageText(m)) })}\n</tool_response>`,
      );
      continue;
    }
    flushTools();
    if (m.role === "user") turns.push({ from: "human", value: messageText(m) });
    else if (m.role === "assistant") {
      const parts = [`<think>\n${m.reasoning ?? ""}\n</think>`];
      const text = messageText(m);
      if (text) parts.push(text);
      for (const call of m.tool_calls ?? []) {
        parts.push(
          `<tool_call>\n${JSON.stringify({ name: call.function.name, arguments: parseMaybeJson(call.function.arguments) })}\n</tool_call>`,
        );
      }
      turns.push({ from: "gpt", value: parts.join("\n") });
    }
  }
  flushTools();
  return turns;
}

function parseMaybeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
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
  const redact = entry.redact ?? redactText;
  // Each turn's text first (a value nested as JSON inside a turn is escaped twice in the line),
  // then the line itself.
  const text = redact(JSON.stringify(redactJson(line, redact)));
  await appendFile(file, `${text}\n`, { encoding: "utf8", mode: 0o600 });
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
