/**
 * The tool-calling loop for one user turn: call the model, run the tools it asks for, feed the
 * results back, until it answers without tools, the budget runs out, the user interrupts, or a
 * guardrail stops it. Pure over its dependencies: the transport and tool execution are injected,
 * so tests drive it with a scripted transport in-process.
 */
import { type ClassifiedError, classifyApiError } from "../ai/error-classifier.js";
import {
  DEFAULT_RETRY_POLICY,
  failureAdvice,
  planRetry,
  type RetryPolicy,
  retryNotice,
  sleep,
} from "../ai/retry.js";
import { extractTextToolCalls } from "../ai/text-tool-calls.js";
import {
  type FinishReason,
  type Message,
  messageText,
  ProviderError,
  type ToolCall,
  type ToolSchema,
  type Transport,
  type Usage,
} from "../ai/types.js";
import type { ToolOutcome } from "../tools/types.js";
import { repairToolArguments } from "../util/json-repair.js";
import type { AgentEvent, StopReason } from "./events.js";
import type { ToolLoopGuard } from "./guardrails.js";
import { mergeUserRuns } from "./role-alternation.js";
import { type PlannedCall, planWaves, runWaves } from "./tool-executor.js";
import { repairToolName } from "./tool-name-repair.js";

/** What the loop needs to know about a tool to schedule it. */
export interface ToolTraits {
  parallelSafe: boolean;
  interactive: boolean;
  paths?: (args: Record<string, unknown>) => string[];
}

export interface LoopDeps {
  transport: Transport;
  model: string;
  /** Frozen for the session (prompt-cache invariant). */
  tools: readonly ToolSchema[];
  systemPrompt: string;
  /** Added to the system message of every request but never stored in the transcript. */
  ephemeralSystemPrompt?: string;
  maxTokens?: number;
  reasoningEffort?: string;
  extraBody?: Record<string, unknown>;
  /** Model calls allowed in this turn before the grace call and forced summary. */
  maxIterations: number;
  retry?: RetryPolicy;
  traits(name: string): ToolTraits | undefined;
  executeTool(
    call: { id: string; name: string; args: Record<string, unknown> },
    signal: AbortSignal,
  ): Promise<ToolOutcome>;
  guard?: ToolLoopGuard;
  /** Pending `/steer` text, taken once; appended to the next tool result. */
  takeSteering?(): string | undefined;
  /** Per-session count of unknown tool names, so repeated misses get the list of valid names. */
  unknownToolMisses: { count: number };
  emit(event: AgentEvent): void;
}

export interface LoopResult {
  reason: StopReason;
  text: string;
  iterations: number;
  usage: Usage;
  error?: string;
}

const BUDGET_NOTE =
  "[budget] You have reached the iteration limit for this turn. You get one more model call: finish the most important step, then give your final answer.";
const SUMMARY_NOTE =
  "[budget] No more tool calls are possible in this turn. Reply now with a summary of what you did, what you found, and what is left to do.";

/** Runs one user turn. Appends every new message to `messages` (and emits a `message` event for it). */
export async function runLoop(messages: Message[], deps: LoopDeps, signal: AbortSignal): Promise<LoopResult> {
  const usage: Usage = {
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
  };
  let iteration = 0;
  let lastText = "";
  let forcedSummary: string | null = null;
  let stopReason: StopReason = "completed";

  const append = (message: Message) => {
    messages.push(message);
    deps.emit({ type: "message", message });
  };

  while (true) {
    if (signal.aborted) return { reason: "interrupted", text: lastText, iterations: iteration, usage };
    iteration++;
    const withTools = forcedSummary === null && deps.tools.length > 0;
    deps.emit({ type: "turn_start", iteration });

    let assistant: Message;
    let finish: FinishReason;
    try {
      ({ message: assistant, finish } = await callModel(messages, deps, withTools, usage, signal));
    } catch (error) {
      if (isAbort(error, signal)) {
        const partial = (error as { partialText?: string }).partialText ?? "";
        if (partial) append({ role: "assistant", content: partial, finish_reason: "aborted" });
        deps.emit({ type: "turn_end", iteration, finishReason: "aborted" });
        return { reason: "interrupted", text: partial || lastText, iterations: iteration, usage };
      }
      const message = describeProviderError(error);
      const advice = failureAdvice(classifyModelError(error, deps, messages));
      deps.emit({ type: "error", message: `${message} — ${advice}` });
      deps.emit({ type: "turn_end", iteration, finishReason: "error" });
      return { reason: "error", text: lastText, iterations: iteration, usage, error: message };
    }

    normaliseToolCalls(assistant, deps, withTools);
    append(assistant);
    const text = messageText(assistant);
    if (text.trim()) lastText = text;
    deps.emit({ type: "turn_end", iteration, finishReason: finish });

    const calls = assistant.tool_calls ?? [];
    if (calls.length === 0 || forcedSummary !== null) {
      if (finish === "length")
        deps.emit({ type: "warning", message: "The model's reply was cut off at its output token limit." });
      if (!text.trim() && calls.length === 0)
        deps.emit({ type: "warning", message: "The model returned an empty response." });
      return {
        reason: forcedSummary !== null ? stopReason : "completed",
        text: lastText,
        iterations: iteration,
        usage,
      };
    }

    const batch = await runToolCalls(calls, deps, signal);
    let note: string | undefined;
    if (batch.stop) {
      stopReason = "guardrail";
      forcedSummary = batch.stop;
      note = `[guardrail] ${batch.stop}\n${SUMMARY_NOTE}`;
      deps.emit({ type: "warning", message: batch.stop });
    } else if (iteration === deps.maxIterations) {
      note = BUDGET_NOTE;
      deps.emit({
        type: "warning",
        message: `Iteration budget (${deps.maxIterations}) reached; one grace call left.`,
      });
    } else if (iteration > deps.maxIterations) {
      stopReason = "max_turns";
      forcedSummary = "budget";
      note = SUMMARY_NOTE;
    }
    const steering = deps.takeSteering?.();
    const results = batch.results;
    const last = results[results.length - 1];
    if (last) {
      const extras = [
        steering ? `[User steering, sent while you worked] ${steering}` : "",
        note ?? "",
      ].filter(Boolean);
      if (extras.length > 0) last.content = `${last.content}\n\n${extras.join("\n\n")}`;
    }
    for (const result of results) append(result);
    if (signal.aborted) return { reason: "interrupted", text: lastText, iterations: iteration, usage };
  }
}

interface ModelReply {
  message: Message;
  finish: FinishReason;
}

async function callModel(
  messages: readonly Message[],
  deps: LoopDeps,
  withTools: boolean,
  usage: Usage,
  signal: AbortSignal,
): Promise<ModelReply> {
  const policy = deps.retry ?? DEFAULT_RETRY_POLICY;
  const system = deps.ephemeralSystemPrompt
    ? `${deps.systemPrompt}\n\n${deps.ephemeralSystemPrompt}`
    : deps.systemPrompt;
  const request = {
    model: deps.model,
    messages: [{ role: "system" as const, content: system }, ...mergeUserRuns(messages)],
    ...(withTools ? { tools: [...deps.tools] } : {}),
    ...(deps.maxTokens ? { maxTokens: deps.maxTokens } : {}),
    ...(deps.reasoningEffort ? { reasoningEffort: deps.reasoningEffort } : {}),
    ...(deps.extraBody ? { extraBody: deps.extraBody } : {}),
  };
  let previousDelayMs: number | undefined;
  for (let attempt = 0; ; attempt++) {
    let partialText = "";
    try {
      for await (const event of deps.transport.stream(request, signal)) {
        switch (event.type) {
          case "text_delta":
            partialText += event.text;
            deps.emit({ type: "text_delta", text: event.text });
            break;
          case "reasoning_delta":
            deps.emit({ type: "reasoning_delta", text: event.text });
            break;
          case "usage":
            addUsage(usage, event.usage);
            deps.emit({ type: "usage", usage: event.usage, total: { ...usage } });
            break;
          case "finish":
            return { message: { ...event.message, role: "assistant" }, finish: event.reason };
          default:
            break;
        }
      }
      throw new ProviderError("The provider ended the response without finishing it.", {
        transport: true,
        partial: partialText.length > 0,
      });
    } catch (error) {
      if (signal.aborted) throw Object.assign(abortError(), { partialText });
      // The classifier decides; rotation, compression and fallback are not done here yet.
      const classified = classifyModelError(error, deps, messages);
      const plan = planRetry(classified, attempt + 1, policy, { previousMs: previousDelayMs });
      if (!plan.retry) throw error;
      previousDelayMs = plan.delayMs;
      deps.emit({
        type: "warning",
        message: retryNotice(classified, plan.delayMs, attempt + 1, policy.maxRetries),
      });
      if (!(await sleep(plan.delayMs, signal))) throw Object.assign(abortError(), { partialText: "" });
    }
  }
}

/** Turns text-emitted tool calls into real ones and repairs names and argument JSON in place. */
function normaliseToolCalls(assistant: Message, deps: LoopDeps, toolsOffered: boolean): void {
  const known = deps.tools.map((t) => t.function.name);
  if (!toolsOffered) {
    // A forced summary must end the turn: tool calls the model still makes are dropped.
    delete assistant.tool_calls;
    return;
  }
  if ((!assistant.tool_calls || assistant.tool_calls.length === 0) && known.length > 0) {
    const text = messageText(assistant);
    if (text.includes("{")) {
      const extracted = extractTextToolCalls(text, new Set(known));
      if (extracted.calls.length > 0) {
        assistant.tool_calls = extracted.calls;
        assistant.content = extracted.remainingText.trim() ? extracted.remainingText : null;
      }
    }
  }
  if (!assistant.tool_calls || assistant.tool_calls.length === 0) {
    delete assistant.tool_calls;
    return;
  }
  for (const call of assistant.tool_calls) {
    const repaired = repairToolName(call.function.name, known);
    if (repaired) call.function.name = repaired;
    const args = repairToolArguments(call.function.arguments);
    (call as ToolCall & { repairNote?: string }).repairNote = args.gaveUp
      ? `The arguments were not valid JSON and could not be repaired, so {} was used. Raw arguments began: ${call.function.arguments.slice(0, 120)}`
      : undefined;
    call.function.arguments = JSON.stringify(args.value);
  }
}

interface BatchResult {
  results: Message[];
  stop?: string;
}

async function runToolCalls(
  calls: readonly ToolCall[],
  deps: LoopDeps,
  signal: AbortSignal,
): Promise<BatchResult> {
  const known = new Set(deps.tools.map((t) => t.function.name));
  const parsed = calls.map((call) => ({
    call,
    args: JSON.parse(call.function.arguments) as Record<string, unknown>,
    repairNote: (call as ToolCall & { repairNote?: string }).repairNote,
  }));
  const planned: PlannedCall[] = parsed.map(({ call, args }, index) => {
    const traits = known.has(call.function.name) ? deps.traits(call.function.name) : undefined;
    let paths: string[] | undefined;
    try {
      paths = traits?.paths?.(args);
    } catch {
      paths = undefined;
    }
    return {
      index,
      parallelSafe: traits?.parallelSafe ?? false,
      interactive: traits?.interactive ?? false,
      ...(paths ? { paths } : {}),
    };
  });

  let stop: string | undefined;
  const outcomes = await runWaves(planWaves(planned), async (index) => {
    const { call, args, repairNote } = parsed[index]!;
    const name = call.function.name;
    const started = Date.now();
    deps.emit({ type: "tool_start", callId: call.id, name, args });
    let outcome: ToolOutcome;
    if (signal.aborted) {
      outcome = errorOutcome("Not run: the user interrupted the turn.");
    } else if (!known.has(name)) {
      deps.unknownToolMisses.count++;
      outcome = errorOutcome(unknownToolMessage(name, [...known], deps.unknownToolMisses.count));
    } else {
      outcome = await deps.executeTool({ id: call.id, name, args }, signal);
    }
    if (repairNote) outcome = { ...outcome, content: `${outcome.content}\n[note] ${repairNote}` };
    const verdict = deps.guard?.record({
      name,
      args,
      ok: outcome.ok,
      result: outcome.content,
      readOnly: planned[index]?.parallelSafe ?? false,
    });
    if (verdict?.stop && !stop) stop = verdict.stop;
    if (verdict?.warning) outcome = { ...outcome, content: `${outcome.content}\n\n${verdict.warning}` };
    deps.emit({
      type: "tool_end",
      callId: call.id,
      name,
      ok: outcome.ok,
      result: outcome.content,
      durationMs: Date.now() - started,
    });
    return outcome;
  });

  const results: Message[] = parsed.map(({ call }, index) => ({
    role: "tool",
    tool_call_id: call.id,
    name: call.function.name,
    content: outcomes.get(index)?.content ?? JSON.stringify({ error: "Tool did not run." }),
  }));
  return stop ? { results, stop } : { results };
}

function unknownToolMessage(name: string, known: string[], misses: number): string {
  const base = `Unknown tool "${name}".`;
  if (misses >= 3) return `${base} Use only these tools: ${known.join(", ")}.`;
  return `${base} Check the tool name against your tool list.`;
}

function errorOutcome(message: string): ToolOutcome {
  return { content: JSON.stringify({ error: message }), ok: false, error: message };
}

function addUsage(total: Usage, add: Usage): void {
  total.inputTokens += add.inputTokens;
  total.outputTokens += add.outputTokens;
  total.cacheReadTokens = (total.cacheReadTokens ?? 0) + (add.cacheReadTokens ?? 0);
  total.cacheWriteTokens = (total.cacheWriteTokens ?? 0) + (add.cacheWriteTokens ?? 0);
  total.reasoningTokens = (total.reasoningTokens ?? 0) + (add.reasoningTokens ?? 0);
}

function abortError(): Error {
  const error = new Error("The turn was interrupted.");
  error.name = "AbortError";
  return error;
}

function isAbort(error: unknown, signal: AbortSignal): boolean {
  return signal.aborted || (error instanceof Error && error.name === "AbortError");
}

/** Classifies a failed model call with what the loop knows: the model and the conversation's size. */
function classifyModelError(error: unknown, deps: LoopDeps, messages: readonly Message[]): ClassifiedError {
  // About 4 characters per token; only the order of magnitude matters ("a large session").
  const chars = deps.systemPrompt.length + JSON.stringify(messages).length;
  return classifyApiError(error, { model: deps.model, approxContextTokens: Math.ceil(chars / 4) });
}

/** One line for the user: what failed, with the provider's status and message. */
export function describeProviderError(error: unknown): string {
  if (error instanceof ProviderError) {
    const status = error.status ? `HTTP ${error.status}` : error.transport ? "connection problem" : "error";
    const detail = error.message.replace(/\s+/g, " ").slice(0, 300);
    return `Provider ${status}: ${detail}`;
  }
  return `Model call failed: ${error instanceof Error ? error.message : String(error)}`;
}
