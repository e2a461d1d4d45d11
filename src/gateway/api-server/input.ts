/**
 * Reads what a client sent (chat-completions `messages`, Responses `input`) into Hermes's own
 * message shape: the new user input, the earlier messages, and the client's system prompt. Pure;
 * every problem is a 400 `ApiError` naming the field at fault.
 */
import type { ContentPart, Message, ToolCall } from "../../ai/types.js";
import { ApiError } from "./http.js";

export interface ConversationInput {
  input: string | ContentPart[];
  history: Message[];
  /** System and developer messages joined, or undefined when there were none. */
  systemPrompt: string | undefined;
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const bad = (message: string, param: string) =>
  new ApiError(400, message, "invalid_request", "invalid_request_error", {}, param);

/** Text and image parts of a content array (chat `text`/`image_url`, Responses `input_text`/…). */
function readContent(value: unknown, param: string): string | ContentPart[] {
  if (typeof value === "string") return value;
  if (value === null || value === undefined) return "";
  if (!Array.isArray(value)) throw bad(`${param} must be a string or an array of content parts.`, param);
  const parts: ContentPart[] = [];
  value.forEach((part, i) => {
    const where = `${param}[${i}]`;
    if (!isObject(part)) throw bad(`${where} must be an object with a "type".`, where);
    const type = part["type"];
    if (type === "text" || type === "input_text" || type === "output_text") {
      if (typeof part["text"] !== "string") throw bad(`${where}.text must be a string.`, where);
      parts.push({ type: "text", text: part["text"] });
    } else if (type === "image_url" || type === "input_image") {
      const raw = part["image_url"];
      const url = typeof raw === "string" ? raw : isObject(raw) ? raw["url"] : undefined;
      if (typeof url !== "string" || !url) throw bad(`${where} needs an image URL.`, where);
      parts.push({ type: "image_url", image_url: { url } });
    } else {
      throw bad(
        `${where} has type ${JSON.stringify(type)}; the API server accepts text and image parts only.`,
        where,
      );
    }
  });
  return parts.every((p) => p.type === "text")
    ? parts.map((p) => (p as { text: string }).text).join("\n")
    : parts;
}

function flatText(content: string | ContentPart[]): string {
  return typeof content === "string"
    ? content
    : content.map((p) => (p.type === "text" ? p.text : "")).join("\n");
}

function readToolCalls(value: unknown, param: string): ToolCall[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw bad(`${param} must be an array.`, param);
  return value.map((call, i) => {
    const fn = isObject(call) ? call["function"] : undefined;
    if (!isObject(call) || !isObject(fn) || typeof fn["name"] !== "string") {
      throw bad(
        `${param}[${i}] must be {id, type: "function", function: {name, arguments}}.`,
        `${param}[${i}]`,
      );
    }
    return {
      id: typeof call["id"] === "string" ? call["id"] : `call_${i}`,
      type: "function" as const,
      function: {
        name: fn["name"],
        arguments:
          typeof fn["arguments"] === "string" ? fn["arguments"] : JSON.stringify(fn["arguments"] ?? {}),
      },
    };
  });
}

/**
 * Splits a message list: the last message must be the user's (the new input); system and
 * developer messages become the client system prompt; the rest is history.
 */
function split(messages: Message[], systems: string[], param: string): ConversationInput {
  const last = messages.at(-1);
  if (last?.role !== "user") {
    throw bad(`The last message in ${param} must be a user message: it is what the agent answers.`, param);
  }
  const input = last.content ?? "";
  if (typeof input === "string" ? !input.trim() : input.length === 0) {
    throw bad(`The last user message in ${param} is empty.`, param);
  }
  const systemPrompt = systems
    .map((s) => s.trim())
    .filter(Boolean)
    .join("\n\n");
  return { input, history: messages.slice(0, -1), systemPrompt: systemPrompt || undefined };
}

/** Reads a chat-completions `messages` array. */
export function readChatMessages(value: unknown): ConversationInput {
  if (!Array.isArray(value) || value.length === 0) {
    throw bad('"messages" must be a non-empty array of {role, content} objects.', "messages");
  }
  const systems: string[] = [];
  const messages: Message[] = [];
  value.forEach((raw, i) => {
    const param = `messages[${i}]`;
    if (!isObject(raw)) throw bad(`${param} must be an object with "role" and "content".`, param);
    const role = raw["role"];
    const content = readContent(raw["content"], `${param}.content`);
    if (role === "system" || role === "developer") {
      systems.push(flatText(content));
    } else if (role === "user") {
      messages.push({ role: "user", content });
    } else if (role === "assistant") {
      const toolCalls = readToolCalls(raw["tool_calls"], `${param}.tool_calls`);
      messages.push({
        role: "assistant",
        content: flatText(content) || (toolCalls ? null : ""),
        ...(toolCalls ? { tool_calls: toolCalls } : {}),
      });
    } else if (role === "tool") {
      if (typeof raw["tool_call_id"] !== "string")
        throw bad(`${param}.tool_call_id must be a string.`, param);
      messages.push({ role: "tool", content: flatText(content), tool_call_id: raw["tool_call_id"] });
    } else {
      throw bad(
        `${param}.role is ${JSON.stringify(role)}; expected system, developer, user, assistant or tool.`,
        param,
      );
    }
  });
  return split(messages, systems, "messages");
}

/** Reads a Responses `input` (a string, or message items) plus `instructions`. */
export function readResponsesInput(value: unknown, instructions: unknown): ConversationInput {
  if (instructions !== undefined && instructions !== null && typeof instructions !== "string") {
    throw bad('"instructions" must be a string.', "instructions");
  }
  const systems: string[] = typeof instructions === "string" ? [instructions] : [];
  if (typeof value === "string") {
    if (!value.trim()) throw bad('"input" is empty.', "input");
    return { input: value, history: [], systemPrompt: systems.join("\n\n").trim() || undefined };
  }
  if (!Array.isArray(value) || value.length === 0) {
    throw bad('"input" must be a string or a non-empty array of message items.', "input");
  }
  const messages: Message[] = [];
  value.forEach((raw, i) => {
    const param = `input[${i}]`;
    if (!isObject(raw)) throw bad(`${param} must be a message item {role, content}.`, param);
    const type = raw["type"];
    if (type !== undefined && type !== "message") {
      throw bad(
        `${param} has type ${JSON.stringify(type)}; the API server accepts message items only.`,
        param,
      );
    }
    const role = raw["role"];
    const content = readContent(raw["content"], `${param}.content`);
    if (role === "system" || role === "developer") systems.push(flatText(content));
    else if (role === "user") messages.push({ role: "user", content });
    else if (role === "assistant") messages.push({ role: "assistant", content: flatText(content) });
    else {
      throw bad(
        `${param}.role is ${JSON.stringify(role)}; expected user, assistant, system or developer.`,
        param,
      );
    }
  });
  return split(messages, systems, "input");
}
