/**
 * A stored conversation as the `session/update` notifications an editor replays on `session/load`:
 * user text, the agent's reasoning and answers, and each tool call with its result. Pure. System
 * messages (the prompt) are not part of what the user saw, so they are left out.
 */
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import type { Message } from "../ai/types.js";
import { endContent, endStatus, startContent, toolKind, toolTitle } from "./tool-updates.js";

/** The updates that redraw `messages` in an editor, in order. */
export function replayUpdates(messages: readonly Message[]): SessionUpdate[] {
  const updates: SessionUpdate[] = [];
  const callArgs = new Map<string, { name: string; args: Record<string, unknown> }>();
  for (const message of messages) {
    if (message.role === "user") {
      for (const block of userBlocks(message))
        updates.push({ sessionUpdate: "user_message_chunk", content: block });
    } else if (message.role === "assistant") {
      if (message.reasoning) {
        updates.push({
          sessionUpdate: "agent_thought_chunk",
          content: { type: "text", text: message.reasoning },
        });
      }
      const text = textOf(message);
      if (text) updates.push({ sessionUpdate: "agent_message_chunk", content: { type: "text", text } });
      for (const call of message.tool_calls ?? []) {
        const args = parseArgs(call.function.arguments);
        callArgs.set(call.id, { name: call.function.name, args });
        updates.push({
          sessionUpdate: "tool_call",
          toolCallId: call.id,
          title: toolTitle(call.function.name, args),
          kind: toolKind(call.function.name),
          status: "in_progress",
          content: startContent(call.function.name, args),
          rawInput: args,
        });
      }
    } else if (message.role === "tool" && message.tool_call_id) {
      const call = callArgs.get(message.tool_call_id);
      const name = call?.name ?? message.name ?? "tool";
      const result = textOf(message);
      updates.push({
        sessionUpdate: "tool_call_update",
        toolCallId: message.tool_call_id,
        status: endStatus(true, result),
        content: endContent(name, call?.args ?? {}, result, []),
      });
    }
  }
  return updates;
}

function userBlocks(
  message: Message,
): Array<{ type: "text"; text: string } | { type: "image"; data: string; mimeType: string }> {
  const { content } = message;
  if (content == null) return [];
  if (typeof content === "string") return content ? [{ type: "text", text: content }] : [];
  const out: Array<{ type: "text"; text: string } | { type: "image"; data: string; mimeType: string }> = [];
  for (const part of content) {
    if (part.type === "text") {
      if (part.text) out.push({ type: "text", text: part.text });
      continue;
    }
    const match = /^data:([^;,]+);base64,(.*)$/s.exec(part.image_url.url);
    if (match?.[1] && match[2]) out.push({ type: "image", mimeType: match[1], data: match[2] });
  }
  return out;
}

function textOf(message: Message): string {
  const { content } = message;
  if (content == null) return "";
  if (typeof content === "string") return content;
  return content.map((p) => (p.type === "text" ? p.text : "")).join("");
}

function parseArgs(text: string): Record<string, unknown> {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}
