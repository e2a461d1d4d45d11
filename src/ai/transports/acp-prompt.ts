/**
 * A model call as one ACP prompt, and the answer back as text and tool calls. ACP has no channel for
 * OpenAI-style `tools` and `tool_calls`, so, as Python Hermes does for Copilot's ACP mode, the tool
 * schemas travel in the prompt as JSON and the agent writes each call as a
 * `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` block in its answer, which Hermes takes
 * out of the text and runs with its own tools. Pure.
 */
import { extractTextToolCalls } from "../text-tool-calls.js";
import type { ChatRequest, Message, ToolCall } from "../types.js";

const PREAMBLE = [
  "You are the language model behind Hermes, an agent that runs its tools itself.",
  "Do not use tools of your own and do not ask for permissions: Hermes refuses them. When an action " +
    "is needed, call one of Hermes's tools listed below by writing a block of exactly this form, with " +
    'nothing else inside it: <tool_call>{"name": "TOOL_NAME", "arguments": {...}}</tool_call>. You may ' +
    "write several blocks. Hermes runs them and shows you the results in the next message.",
  "When no tool is needed, answer in plain text.",
].join("\n");

const LABELS: Record<Message["role"], string> = {
  system: "System",
  user: "User",
  assistant: "Assistant",
  tool: "Tool result",
};

/** One content block of an ACP prompt: the text, and images when the agent takes them. */
export type AcpPromptBlock =
  | { type: "text"; text: string }
  | { type: "image"; data: string; mimeType: string };

/**
 * The model call as ACP prompt blocks: the text of `renderAcpPrompt`, then each image of the
 * conversation that is a base64 `data:` URL as an image block, when the agent says it takes images
 * (`promptCapabilities.image`); the text marks where each one was.
 */
export function acpPromptBlocks(
  request: Pick<ChatRequest, "messages" | "tools">,
  imagesAccepted: boolean,
): AcpPromptBlock[] {
  const images: AcpPromptBlock[] = [];
  const text = renderAcpPrompt(request, (url) => {
    const match = imagesAccepted ? /^data:([\w.+-]+\/[\w.+-]+);base64,(.+)$/s.exec(url) : null;
    if (!match) return "[an image, not shown to this model]";
    images.push({ type: "image", mimeType: match[1] as string, data: match[2] as string });
    return `[image ${images.length}, attached after this text]`;
  });
  return [{ type: "text", text }, ...images];
}

/** The whole model call as one prompt text: instructions, tools, the conversation so far. */
export function renderAcpPrompt(
  request: Pick<ChatRequest, "messages" | "tools">,
  image: (url: string) => string = () => "[an image, not shown to this model]",
): string {
  const sections: string[] = [PREAMBLE];
  const tools = (request.tools ?? []).map((t) => ({
    name: t.function.name,
    description: t.function.description,
    parameters: t.function.parameters,
  }));
  if (tools.length > 0) sections.push(`Hermes's tools (JSON Schema parameters):\n${JSON.stringify(tools)}`);
  else sections.push("Hermes offers no tools in this conversation: answer in text.");
  const transcript = request.messages.map((m) => renderMessage(m, image)).filter((m) => m !== "");
  if (transcript.length > 0) sections.push(`The conversation so far:\n\n${transcript.join("\n\n")}`);
  sections.push("Continue the conversation: answer the latest message.");
  return sections.join("\n\n");
}

function renderMessage(message: Message, image: (url: string) => string): string {
  const text = contentText(message.content, image);
  const label =
    message.role === "tool"
      ? `${LABELS.tool} (${message.name ?? "tool"}, call ${message.tool_call_id ?? "?"})`
      : LABELS[message.role];
  const calls = (message.tool_calls ?? []).map(
    (call) =>
      `<tool_call>${JSON.stringify({ id: call.id, name: call.function.name, arguments: parsedArguments(call) })}</tool_call>`,
  );
  const body = [text, ...calls].filter((part) => part !== "").join("\n");
  return body === "" ? "" : `${label}:\n${body}`;
}

function contentText(content: Message["content"], image: (url: string) => string): string {
  if (content == null) return "";
  if (typeof content === "string") return content.trim();
  return content
    .map((part) => (part.type === "text" ? part.text : image(part.image_url.url)))
    .join("\n")
    .trim();
}

function parsedArguments(call: ToolCall): unknown {
  try {
    return JSON.parse(call.function.arguments);
  } catch {
    return call.function.arguments;
  }
}

const TAG = "<tool_call>";

/**
 * Splits an answer that streams in pieces into text that can be shown at once and tool calls that
 * are known only at the end. Text before the first `<tool_call>` streams as it comes (less any end
 * that could be the start of the tag); from the tag on, the rest is held until `finish`. An answer
 * that starts like a bare JSON call (`{`, `[` or a code fence) is held whole, since such an answer
 * may be one call written without the tags. Nothing is lost: a block that does not parse comes back
 * as text.
 */
export class ToolCallTextSplitter {
  private all = "";
  private emitted = 0;
  private tagAt = -1;
  private leadingHold = false;

  /** Adds a piece of the answer; returns the text that may be shown now (possibly empty). */
  push(piece: string): string {
    this.all += piece;
    if (this.tagAt >= 0 || this.leadingHold) return "";
    if (this.emitted === 0) {
      const start = this.all.trimStart();
      if (start === "") return "";
      if (/^(?:[{[]|```)/.test(start)) {
        this.leadingHold = true;
        return "";
      }
    }
    const at = this.all.indexOf(TAG, Math.max(0, this.emitted - TAG.length));
    let safe: number;
    if (at >= 0) {
      this.tagAt = at;
      safe = at;
    } else {
      safe = this.all.length - partialTagLength(this.all);
    }
    // Trailing whitespace waits for what follows: before a tool call, or at the end, it is dropped.
    while (safe > this.emitted && /\s/.test(this.all[safe - 1] ?? "")) safe--;
    if (safe <= this.emitted) return "";
    const out = this.all.slice(this.emitted, safe);
    this.emitted = safe;
    return out;
  }

  /**
   * The end of the answer: the tool calls found, the text still to show (`rest`), and the whole
   * text of the message (`content`: what was shown plus `rest`).
   */
  finish(knownToolNames: ReadonlySet<string>): { calls: ToolCall[]; rest: string; content: string } {
    const shown = this.all.slice(0, this.emitted);
    const held = this.all.slice(this.emitted);
    if (held.trim() === "") return { calls: [], rest: "", content: shown.trimEnd() };
    const { calls, remainingText } = extractTextToolCalls(held, knownToolNames);
    const leftover = calls.length > 0 ? remainingText : held;
    const rest = calls.length > 0 && shown !== "" && leftover !== "" ? `\n${leftover}` : leftover;
    return { calls, rest, content: (shown + rest).trimEnd() };
  }
}

/** How many characters at the end of `text` could be the beginning of `<tool_call>`. */
function partialTagLength(text: string): number {
  for (let n = Math.min(TAG.length - 1, text.length); n > 0; n--) {
    if (text.endsWith(TAG.slice(0, n))) return n;
  }
  return 0;
}
