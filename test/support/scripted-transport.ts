import type {
  ChatRequest,
  FinishReason,
  Message,
  StreamEvent,
  ToolCall,
  Transport,
  Usage,
} from "../../src/ai/types.js";

/** One scripted model reply, or a function of the request, or an error to throw. */
export type Script = Message | Error | ((request: ChatRequest) => Message | Error);

/**
 * An in-process transport that replays scripted assistant messages, streaming their text in
 * small deltas. Records every request it receives.
 */
export class ScriptedTransport implements Transport {
  readonly apiMode = "chat_completions" as const;
  readonly requests: ChatRequest[] = [];
  private readonly scripts: Script[];
  usage: Usage = { inputTokens: 10, outputTokens: 5 };

  /** `record: false` skips copying each request (benchmarks: the copy is the harness's cost, not the loop's). */
  constructor(
    scripts: Script[] = [],
    private readonly options: { record?: boolean } = {},
  ) {
    this.scripts = [...scripts];
  }

  push(...scripts: Script[]): this {
    this.scripts.push(...scripts);
    return this;
  }

  get remaining(): number {
    return this.scripts.length;
  }

  async *stream(request: ChatRequest, signal?: AbortSignal): AsyncIterable<StreamEvent> {
    if (this.options.record !== false) this.requests.push(structuredClone(request));
    const script = this.scripts.shift();
    if (script === undefined) throw new Error("ScriptedTransport: no scripted reply left");
    const reply = typeof script === "function" ? script(request) : script;
    if (reply instanceof Error) throw reply;
    const text = typeof reply.content === "string" ? reply.content : "";
    for (let i = 0; i < text.length; i += 8) {
      if (signal?.aborted) throw Object.assign(new Error("aborted"), { name: "AbortError" });
      yield { type: "text_delta", text: text.slice(i, i + 8) };
    }
    yield { type: "usage", usage: this.usage };
    // A scripted `finish_reason` (e.g. "length") is the finish the transport reports.
    const reason: FinishReason = reply.finish_reason ?? (reply.tool_calls?.length ? "tool_calls" : "stop");
    const message: Message = { ...reply, role: "assistant" };
    if (reply.tool_calls)
      message.tool_calls = reply.tool_calls.map((c) => ({ ...c, function: { ...c.function } }));
    yield { type: "finish", reason, message };
  }
}

let callCounter = 0;

/** An assistant message calling tools. */
export function callTools(...calls: Array<[name: string, args: Record<string, unknown> | string]>): Message {
  const toolCalls: ToolCall[] = calls.map(([name, args]) => ({
    id: `call_${++callCounter}`,
    type: "function",
    function: { name, arguments: typeof args === "string" ? args : JSON.stringify(args) },
  }));
  return { role: "assistant", content: null, tool_calls: toolCalls };
}

export function say(text: string): Message {
  return { role: "assistant", content: text };
}
