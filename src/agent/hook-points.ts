/**
 * Where `AIAgent` fires the hook bus (hooks.ts). Kept apart so the agent's own code stays a few
 * calls: each function here is a no-op costing one map lookup when nobody registered a handler.
 */
import type { Message } from "../ai/types.js";
import type { ToolOutcome } from "../tools/types.js";
import type { Redactor } from "../util/redact.js";
import type { AgentEvent } from "./events.js";
import type { HookBus, HookSessionInfo } from "./hooks.js";
import type { ToolCallRequest } from "./loop-deps.js";

type RunTool = (call: ToolCallRequest, signal: AbortSignal) => Promise<ToolOutcome>;

/**
 * Wraps the agent's tool execution with `pre_tool_call` (block or rewrite before anything runs,
 * approvals included, so a rewritten command is judged as rewritten), `transform_tool_result`
 * (its output redacted again: a handler must not bring a secret back) and `post_tool_call`.
 * Never rejects when `run` does not.
 */
export function hookedToolCall(
  bus: HookBus,
  info: () => HookSessionInfo,
  redactor: Redactor,
  run: RunTool,
): RunTool {
  return async (call, signal) => {
    if (!bus.has("pre_tool_call") && !bus.has("transform_tool_result") && !bus.has("post_tool_call")) {
      return run(call, signal);
    }
    const base = { ...info(), tool_name: call.name, tool_call_id: call.id };
    const decision = await bus.preToolCall({ ...base, args: call.args }, signal);
    if (decision.action === "block") {
      const content = redactor.redact(`Blocked by ${decision.source}: ${decision.reason}`);
      const outcome: ToolOutcome = { ok: false, content, error: content };
      await bus.notify("post_tool_call", {
        ...base,
        args: call.args,
        result: content,
        ok: false,
        duration_ms: 0,
      });
      return outcome;
    }
    const args = decision.action === "rewrite" ? decision.args : call.args;
    const started = Date.now();
    let outcome = await run({ ...call, args }, signal);
    if (bus.has("transform_tool_result")) {
      const transformed = await bus.transformToolResult(
        { ...base, args, result: outcome.content, ok: outcome.ok },
        signal,
      );
      if (transformed !== outcome.content) outcome = { ...outcome, content: redactor.redact(transformed) };
    }
    await bus.notify("post_tool_call", {
      ...base,
      args,
      result: outcome.content,
      ok: outcome.ok,
      duration_ms: Date.now() - started,
    });
    return outcome;
  };
}

/**
 * `post_api_request` after each model call of the loop, read off the turn's events: the assistant
 * message names the tools asked for, `turn_end` closes the call. Observing only (not awaited), and
 * nothing is built when no handler is registered.
 */
export function withApiRequestHook(
  bus: HookBus,
  info: () => HookSessionInfo,
  emit: (event: AgentEvent) => void,
): (event: AgentEvent) => void {
  let toolNames: string[] = [];
  return (event) => {
    emit(event);
    if (event.type === "message" && event.message.role === "assistant") {
      toolNames = (event.message.tool_calls ?? []).map((c) => c.function.name);
    } else if (event.type === "turn_end") {
      const names = toolNames;
      toolNames = [];
      if (!bus.has("post_api_request")) return;
      void bus.notify("post_api_request", {
        ...info(),
        api_call_count: event.iteration,
        finish_reason: event.finishReason,
        tool_names: names,
      });
    }
  };
}

/**
 * `pre_llm_call`: the contexts handlers return are added to the end of the user's message (stored
 * with it, so later requests repeat the same bytes and the prompt cache holds).
 */
export async function withTurnContext(
  bus: HookBus,
  info: HookSessionInfo,
  content: Message["content"],
  turn: { userText: string; isFirstTurn: boolean; historyLength: number },
  signal: AbortSignal,
): Promise<Message["content"]> {
  if (!bus.has("pre_llm_call")) return content;
  const contexts = await bus.preLlmCall(
    {
      ...info,
      user_message: turn.userText,
      is_first_turn: turn.isFirstTurn,
      history_length: turn.historyLength,
    },
    signal,
  );
  if (contexts.length === 0) return content;
  const added = contexts.join("\n\n");
  if (typeof content === "string") return content ? `${content}\n\n${added}` : added;
  if (Array.isArray(content)) return [...content, { type: "text", text: added }];
  return added;
}

/** The user's own words of a turn's input, for hook payloads ("" for images alone). */
export function inputText(input: string | Message["content"] | null): string {
  if (typeof input === "string") return input;
  if (!Array.isArray(input)) return "";
  return input
    .map((part) => (part.type === "text" ? part.text : ""))
    .filter(Boolean)
    .join("\n");
}
