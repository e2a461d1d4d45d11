/**
 * The tool-calling loop for one user turn: call the model, run the tools it asks for, feed the
 * results back, until it answers without tools, the budget runs out, the user interrupts, or a
 * guardrail stops it. Pure over its dependencies: the transport and tool execution are injected,
 * so tests drive it with a scripted transport in-process.
 */
import { classifyApiError } from "../ai/error-classifier.js";
import { withInterruptedMarker } from "../ai/history-repair.js";
import { failureAdvice } from "../ai/retry.js";
import { extractTextToolCalls } from "../ai/text-tool-calls.js";
import { type FinishReason, type Message, messageText, type ToolCall, type Usage } from "../ai/types.js";
import type { ToolOutcome } from "../tools/types.js";
import { repairToolArguments } from "../util/json-repair.js";
import { type CutOff, cutOffMessage, cutOffReason, cutOffWarning } from "./cut-off.js";
import type { StopReason } from "./events.js";
import type { ToolLoopGuard } from "./guardrails.js";
import {
  callModel,
  describeProviderError,
  type ModelCallDeps,
  ModelCallError,
  type TurnRoute,
} from "./model-call.js";
import { type PlannedCall, planWaves, runWaves } from "./tool-executor.js";
import { repairToolName } from "./tool-name-repair.js";

/** What the loop needs to know about a tool to schedule it. */
export interface ToolTraits {
  parallelSafe: boolean;
  interactive: boolean;
  paths?: (args: Record<string, unknown>) => string[];
}

/** Tools whose calls, when they are all a model call made, refund that call's iteration. */
const REFUNDED_TOOLS: ReadonlySet<string> = new Set(["execute_code"]);

export interface LoopDeps extends ModelCallDeps {
  /** Model calls allowed in this turn before the grace call and forced summary. */
  maxIterations: number;
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
  /**
   * Runs after each batch of tool results is appended, before the next model call of the turn:
   * the agent compresses there when the context has passed its threshold mid-turn. May rewrite
   * `messages` in place.
   */
  checkpoint?(): Promise<void>;
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
  // Guardrail counts are per user turn: a new message is a new task.
  deps.guard?.startTurn();
  let iteration = 0;
  /** Model calls that do not count against the budget (see REFUNDED_TOOLS). */
  let refunds = 0;
  let lastText = "";
  let forcedSummary: string | null = null;
  let stopReason: StopReason = "completed";
  const route: TurnRoute = {
    primary: deps.transport,
    fallback: undefined,
    nextFallback: 0,
    stripReasoning: false,
    maxTokens: undefined,
  };

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
    const failed = { partialText: "" };
    try {
      ({ message: assistant, finish } = await callModel(
        messages,
        deps,
        route,
        withTools,
        usage,
        signal,
        failed,
      ));
    } catch (error) {
      // The text received before the stop is kept, marked, so the next request shows the model
      // where its answer broke off (and the transcript shows the user what they saw).
      const partial = failed.partialText;
      if (isAbort(error, signal)) {
        if (partial.trim()) append(interruptedAnswer(partial, "aborted"));
        deps.emit({ type: "turn_end", iteration, finishReason: "aborted" });
        return { reason: "interrupted", text: partial || lastText, iterations: iteration, usage };
      }
      if (partial.trim()) append(interruptedAnswer(partial, "error"));
      const message = error instanceof ModelCallError ? error.message : describeProviderError(error);
      const advice = error instanceof ModelCallError ? error.advice : failureAdvice(classifyApiError(error));
      // A refused local server is said best by the advice alone ("nothing is listening at URL ...").
      const local = error instanceof ModelCallError && error.classified.reason === "local_server_down";
      deps.emit({ type: "error", message: local ? advice : `${message} — ${advice}` });
      deps.emit({ type: "turn_end", iteration, finishReason: "error" });
      return { reason: "error", text: lastText, iterations: iteration, usage, error: message };
    }

    const notes = normaliseToolCalls(assistant, deps, withTools, finish);
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

    const cutOff = calls.map((call) => notes.get(call)?.cutOff).filter((c): c is CutOff => c !== undefined);
    if (cutOff[0]) deps.emit({ type: "warning", message: cutOffWarning(cutOff.length, cutOff[0]) });
    // Each result is stored as soon as it and the ones before it are done (a crash loses only the
    // calls still running); the last one waits for the notes added to it below.
    const batch = await runToolCalls(calls, notes, deps, signal, append);
    // A call that only ran a script of tool calls (execute_code) is work done for the model, not
    // a step of its own: it does not count against the iteration budget.
    // Refunds are capped at the budget itself, so a model looping on scripts still stops.
    if (refunds < deps.maxIterations && calls.every((call) => REFUNDED_TOOLS.has(call.function.name)))
      refunds++;
    const spent = iteration - refunds;
    let note: string | undefined;
    if (batch.stop) {
      stopReason = "guardrail";
      forcedSummary = batch.stop;
      note = `[guardrail] ${batch.stop}\n${SUMMARY_NOTE}`;
      deps.emit({ type: "warning", message: batch.stop });
    } else if (spent === deps.maxIterations) {
      note = BUDGET_NOTE;
      deps.emit({
        type: "warning",
        message: `Iteration budget (${deps.maxIterations}) reached; one grace call left.`,
      });
    } else if (spent > deps.maxIterations) {
      stopReason = "max_turns";
      forcedSummary = "budget";
      note = SUMMARY_NOTE;
    }
    const steering = deps.takeSteering?.();
    const last = batch.last;
    const extras = [steering ? `[User steering, sent while you worked] ${steering}` : "", note ?? ""].filter(
      Boolean,
    );
    if (extras.length > 0) last.content = `${last.content}\n\n${extras.join("\n\n")}`;
    append(last);
    if (signal.aborted) return { reason: "interrupted", text: lastText, iterations: iteration, usage };
    if (forcedSummary === null) await deps.checkpoint?.();
  }
}

/** What the loop learnt about a call while normalising it. */
interface CallNotes {
  /** Told to the model after the result: the arguments could not be repaired. */
  repairNote?: string;
  /** Set when the call must not run (see cut-off.ts). */
  cutOff?: CutOff;
  /** Characters of arguments the model sent. */
  rawLength: number;
}

/**
 * Turns text-emitted tool calls into real ones and repairs names and argument JSON in place.
 * Returns what it learnt about each call; calls cut off by the output limit or mid-arguments are
 * marked so they are answered instead of run.
 */
function normaliseToolCalls(
  assistant: Message,
  deps: LoopDeps,
  toolsOffered: boolean,
  finish: FinishReason,
): Map<ToolCall, CallNotes> {
  const notes = new Map<ToolCall, CallNotes>();
  const known = deps.tools.map((t) => t.function.name);
  if (!toolsOffered) {
    // A forced summary must end the turn: tool calls the model still makes are dropped.
    delete assistant.tool_calls;
    return notes;
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
    return notes;
  }
  for (const call of assistant.tool_calls) {
    const repaired = repairToolName(call.function.name, known);
    if (repaired) call.function.name = repaired;
    const raw = call.function.arguments ?? "";
    const args = repairToolArguments(raw);
    const cutOff = cutOffReason(finish, args.truncated);
    notes.set(call, {
      rawLength: raw.length,
      ...(cutOff ? { cutOff } : {}),
      ...(args.gaveUp && !cutOff
        ? {
            repairNote: `The arguments were not valid JSON and could not be repaired, so {} was used. Raw arguments began: ${raw.slice(0, 120)}`,
          }
        : {}),
    });
    // Stored as valid JSON (strict providers reject anything else on replay); for a cut-off call
    // that is the closed-up fragment, so the transcript shows where it was cut.
    call.function.arguments = JSON.stringify(args.value);
  }
  return notes;
}

interface BatchResult {
  /** The last call's result, not yet appended (the loop adds its notes first). */
  last: Message;
  stop?: string;
}

/**
 * Runs a model call's tools and hands each result but the last to `append` in call order, as
 * soon as it and every result before it are done.
 */
async function runToolCalls(
  calls: readonly ToolCall[],
  notes: ReadonlyMap<ToolCall, CallNotes>,
  deps: LoopDeps,
  signal: AbortSignal,
  append: (message: Message) => void,
): Promise<BatchResult> {
  const known = new Set(deps.tools.map((t) => t.function.name));
  const parsed = calls.map((call) => ({
    call,
    args: JSON.parse(call.function.arguments) as Record<string, unknown>,
    repairNote: notes.get(call)?.repairNote,
    cutOff: notes.get(call)?.cutOff,
    rawLength: notes.get(call)?.rawLength ?? call.function.arguments.length,
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
  const done = new Map<number, ToolOutcome>();
  let stored = 0;
  const resultOf = (index: number): Message => ({
    role: "tool",
    tool_call_id: parsed[index]!.call.id,
    name: parsed[index]!.call.function.name,
    content: done.get(index)?.content ?? JSON.stringify({ error: "Tool did not run." }),
  });
  await runWaves(planWaves(planned), async (index) => {
    const { call, args, repairNote, cutOff, rawLength } = parsed[index]!;
    const name = call.function.name;
    const started = Date.now();
    deps.emit({ type: "tool_start", callId: call.id, name, args });
    let outcome: ToolOutcome;
    if (signal.aborted) {
      outcome = errorOutcome("Not run: the user interrupted the turn.");
    } else if (cutOff) {
      outcome = errorOutcome(cutOffMessage(name, cutOff, rawLength));
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
      failed: outcome.failed,
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
    done.set(index, outcome);
    while (stored < parsed.length - 1 && done.has(stored)) append(resultOf(stored++));
    return outcome;
  });
  const last = resultOf(parsed.length - 1);
  return stop ? { last, stop } : { last };
}

/** An answer stopped mid-stream, stored with the interrupted marker as its last line. */
function interruptedAnswer(text: string, finish: "aborted" | "error"): Message {
  return { role: "assistant", content: withInterruptedMarker(text), finish_reason: finish };
}

function unknownToolMessage(name: string, known: string[], misses: number): string {
  const base = `Unknown tool "${name}".`;
  if (misses >= 3) return `${base} Use only these tools: ${known.join(", ")}.`;
  return `${base} Check the tool name against your tool list.`;
}

function errorOutcome(message: string): ToolOutcome {
  return { content: JSON.stringify({ error: message }), ok: false, error: message };
}

function isAbort(error: unknown, signal: AbortSignal): boolean {
  return signal.aborted || (error instanceof Error && error.name === "AbortError");
}
