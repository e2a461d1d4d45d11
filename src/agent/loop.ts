/**
 * The tool-calling loop for one user turn: call the model, run the tools it asks for, feed the
 * results back, until it answers without tools, the budget runs out, the user interrupts, or a
 * guardrail stops it. Pure over its dependencies: the transport and tool execution are injected,
 * so tests drive it with a scripted transport in-process.
 *
 * Its promises, whatever the injected parts do (loop-deps.ts holds them to their contracts): it
 * resolves and never rejects; every `tool_start` is followed by its `tool_end`; every tool call
 * appended to `messages` gets its result appended before the next model call or the end of the turn.
 */
import { classifyApiError } from "../ai/error-classifier.js";
import { withInterruptedMarker } from "../ai/history-repair.js";
import { failureAdvice } from "../ai/retry.js";
import { extractTextToolCalls } from "../ai/text-tool-calls.js";
import {
  type FinishReason,
  type Message,
  messageText,
  type ToolCall,
  type ToolSchema,
  type Usage,
} from "../ai/types.js";
import type { ToolOutcome } from "../tools/types.js";
import { repairToolArguments } from "../util/json-repair.js";
import { type CutOff, cutOffMessage, cutOffReason, cutOffWarning } from "./cut-off.js";
import type { StopReason } from "./events.js";
import { guardLoopDeps, type LoopDeps, type ToolTraits } from "./loop-deps.js";
import { callModel, type ModelCallResult, type ModelTurn, newModelTurn } from "./model-call.js";
import { ModelCallError } from "./model-failure.js";
import { type PlannedCall, planWaves, runWaves } from "./tool-executor.js";
import { repairToolName } from "./tool-name-repair.js";

export type { LoopDeps, LoopGuard, ToolCallRequest, ToolTraits } from "./loop-deps.js";

/** The offered tools' names, worked out once per tool list: a turn offers one list to every call. */
const offeredNamesMemo = new WeakMap<readonly ToolSchema[], { list: string[]; set: ReadonlySet<string> }>();

function offeredNames(tools: readonly ToolSchema[]): { list: string[]; set: ReadonlySet<string> } {
  let names = offeredNamesMemo.get(tools);
  if (!names) {
    const list = tools.map((t) => t.function.name);
    names = { list, set: new Set(list) };
    offeredNamesMemo.set(tools, names);
  }
  return names;
}

/** Tools whose calls, when they are all a model call made, refund that call's iteration. */
const REFUNDED_TOOLS: ReadonlySet<string> = new Set(["execute_code"]);

export interface LoopResult {
  reason: StopReason;
  /** The last non-empty assistant text of the turn ("" when there was none). */
  text: string;
  /** Model calls made. */
  iterations: number;
  /** Usage of every model call of the turn. */
  usage: Usage;
  /** What failed, when `reason` is "error". */
  error?: string;
}

const BUDGET_NOTE =
  "[budget] You have reached the iteration limit for this turn. You get one more model call: finish the most important step, then give your final answer.";
const SUMMARY_NOTE =
  "[budget] No more tool calls are possible in this turn. Reply now with a summary of what you did, what you found, and what is left to do.";

/** Where the turn stands between model calls. */
interface TurnState {
  iteration: number;
  /** Model calls that do not count against the budget (see REFUNDED_TOOLS). */
  refunds: number;
  lastText: string;
  /** Set once the turn must end with an answer: the next call is made without tools. */
  forcedSummary: string | null;
  stopReason: StopReason;
  model: ModelTurn;
}

/**
 * Runs one user turn. Appends every new message to `messages` (and emits a `message` event for
 * it). Resolves with how the turn ended; never rejects while the transport is the only part that
 * throws.
 */
export async function runLoop(
  messages: Message[],
  unguarded: LoopDeps,
  signal: AbortSignal,
): Promise<LoopResult> {
  const deps = guardLoopDeps(unguarded);
  const state: TurnState = {
    iteration: 0,
    refunds: 0,
    lastText: "",
    forcedSummary: null,
    stopReason: "completed",
    model: newModelTurn(deps.transport),
  };
  const end = (reason: StopReason): LoopResult => ({
    reason,
    text: state.lastText,
    iterations: state.iteration,
    usage: state.model.usage,
  });
  const append = (message: Message, withResults = false) => {
    messages.push(message);
    deps.emit(withResults ? { type: "message", message, withResults } : { type: "message", message });
  };
  // Guardrail counts are per user turn: a new message is a new task.
  deps.guard?.startTurn();

  while (true) {
    if (signal.aborted) return end("interrupted");
    state.iteration++;
    const withTools = state.forcedSummary === null && deps.tools.length > 0;
    deps.emit({ type: "turn_start", iteration: state.iteration });
    await deps.settled?.();
    const reply = await callModelSettled(messages, deps, state.model, withTools, signal);
    if (reply.type !== "reply") return modelStopped(reply, state, deps, append);

    const { message: assistant, finish } = reply;
    const prepared = normaliseToolCalls(assistant, deps, withTools, finish);
    const traits = traitsOf(prepared, deps);
    // Calls that change nothing outside the session need no record before they run: the reply is
    // then stored with their results, in one commit (see ToolTraits.sideEffectFree).
    append(assistant, prepared.length > 0 && prepared.every((p, i) => changesNothing(p, traits[i], deps)));
    const text = messageText(assistant);
    if (text.trim()) state.lastText = text;
    deps.emit({ type: "turn_end", iteration: state.iteration, finishReason: finish });

    if (prepared.length === 0 || state.forcedSummary !== null) {
      if (finish === "length")
        deps.emit({ type: "warning", message: "The model's reply was cut off at its output token limit." });
      if (!text.trim() && prepared.length === 0)
        deps.emit({ type: "warning", message: "The model returned an empty response." });
      return end(state.forcedSummary !== null ? state.stopReason : "completed");
    }

    const cutOff = prepared.map((p) => p.cutOff).filter((c): c is CutOff => c !== undefined);
    if (cutOff[0]) deps.emit({ type: "warning", message: cutOffWarning(cutOff.length, cutOff[0]) });
    // Each result is stored as soon as it and the ones before it are done (a crash loses only the
    // calls still running); the last one waits for the notes added to it below.
    const batch = await runToolCalls(prepared, traits, deps, signal, append);
    const note = budgetNote(state, prepared, batch.stop, deps);
    const steering = deps.takeSteering?.();
    const extras = [steering ? `[User steering, sent while you worked] ${steering}` : "", note ?? ""].filter(
      Boolean,
    );
    const last = batch.last;
    if (extras.length > 0) last.content = `${last.content}\n\n${extras.join("\n\n")}`;
    append(last);
    if (signal.aborted) return end("interrupted");
    if (state.forcedSummary === null) await deps.checkpoint?.();
  }
}

/** `callModel`, with a rejection (a part that broke its contract) taken as the call failing. */
async function callModelSettled(
  messages: Message[],
  deps: LoopDeps,
  turn: ModelTurn,
  withTools: boolean,
  signal: AbortSignal,
): Promise<ModelCallResult> {
  try {
    return await callModel(messages, deps, turn, withTools, signal);
  } catch (error) {
    if (signal.aborted) return { type: "aborted", partialText: "" };
    const classified = classifyApiError(error);
    return {
      type: "failed",
      error: new ModelCallError(error, classified, failureAdvice(classified)),
      partialText: "",
    };
  }
}

/**
 * Ends the turn after a model call that stopped without a reply. The text received before the stop
 * is kept, marked, so the next request shows the model where its answer broke off (and the
 * transcript shows the user what they saw).
 */
function modelStopped(
  reply: Exclude<ModelCallResult, { type: "reply" }>,
  state: TurnState,
  deps: LoopDeps,
  append: (message: Message) => void,
): LoopResult {
  const partial = reply.partialText;
  const base = { iterations: state.iteration, usage: state.model.usage };
  if (reply.type === "aborted") {
    if (partial.trim()) append(interruptedAnswer(partial, "aborted"));
    deps.emit({ type: "turn_end", iteration: state.iteration, finishReason: "aborted" });
    return { reason: "interrupted", text: partial || state.lastText, ...base };
  }
  if (partial.trim()) append(interruptedAnswer(partial, "error"));
  const { message, advice, classified } = reply.error;
  // A refused local server is said best by the advice alone ("nothing is listening at URL ...").
  const local = classified.reason === "local_server_down";
  deps.emit({ type: "error", message: local ? advice : `${message} — ${advice}` });
  deps.emit({ type: "turn_end", iteration: state.iteration, finishReason: "error" });
  return { reason: "error", text: state.lastText, ...base, error: message };
}

/**
 * The note the last tool result of a batch carries about the budget or a guardrail stop, if any;
 * moves the turn towards its forced summary when the budget is spent or a guardrail stopped it.
 */
function budgetNote(
  state: TurnState,
  prepared: readonly PreparedCall[],
  stop: string | undefined,
  deps: LoopDeps,
): string | undefined {
  // A call that only ran a script of tool calls (execute_code) is work done for the model, not
  // a step of its own: it does not count against the iteration budget.
  // Refunds are capped at the budget itself, so a model looping on scripts still stops.
  if (state.refunds < deps.maxIterations && prepared.every((p) => REFUNDED_TOOLS.has(p.call.function.name)))
    state.refunds++;
  const spent = state.iteration - state.refunds;
  if (stop) {
    state.stopReason = "guardrail";
    state.forcedSummary = stop;
    deps.emit({ type: "warning", message: stop });
    return `[guardrail] ${stop}\n${SUMMARY_NOTE}`;
  }
  if (spent === deps.maxIterations) {
    deps.emit({
      type: "warning",
      message: `Iteration budget (${deps.maxIterations}) reached; one grace call left.`,
    });
    return BUDGET_NOTE;
  }
  if (spent > deps.maxIterations) {
    state.stopReason = "max_turns";
    state.forcedSummary = "budget";
    return SUMMARY_NOTE;
  }
  return undefined;
}

/** A tool call of the model's reply, normalised and ready to run (or to answer without running). */
interface PreparedCall {
  /** The call as stored in the history: repaired name, arguments as valid JSON. */
  call: ToolCall;
  /** The arguments the tool gets: the repaired value the stored JSON was written from. */
  args: Record<string, unknown>;
  /** Characters of arguments the model sent. */
  rawLength: number;
  /** Told to the model after the result: the arguments could not be repaired. */
  repairNote?: string;
  /** Set when the call must not run (see cut-off.ts). */
  cutOff?: CutOff;
}

/**
 * Turns text-emitted tool calls into real ones and repairs names and argument JSON in place.
 * Returns the calls in order with what was learnt about each (none: the reply ends the turn);
 * calls cut off by the output limit or mid-arguments are marked so they are answered, not run.
 */
function normaliseToolCalls(
  assistant: Message,
  deps: LoopDeps,
  toolsOffered: boolean,
  finish: FinishReason,
): PreparedCall[] {
  const known = offeredNames(deps.tools).list;
  if (!toolsOffered) {
    // A forced summary must end the turn: tool calls the model still makes are dropped.
    delete assistant.tool_calls;
    return [];
  }
  if ((!assistant.tool_calls || assistant.tool_calls.length === 0) && known.length > 0) {
    const text = messageText(assistant);
    if (text.includes("{")) {
      const extracted = extractTextToolCalls(text, offeredNames(deps.tools).set);
      if (extracted.calls.length > 0) {
        assistant.tool_calls = extracted.calls;
        assistant.content = extracted.remainingText.trim() ? extracted.remainingText : null;
      }
    }
  }
  if (!assistant.tool_calls || assistant.tool_calls.length === 0) {
    delete assistant.tool_calls;
    return [];
  }
  return assistant.tool_calls.map((call) => {
    const repaired = repairToolName(call.function.name, known);
    if (repaired) call.function.name = repaired;
    const raw = call.function.arguments ?? "";
    const args = repairToolArguments(raw);
    const cutOff = cutOffReason(finish, args.truncated);
    // Stored as valid JSON (strict providers reject anything else on replay); for a cut-off call
    // that is the closed-up fragment, so the transcript shows where it was cut.
    call.function.arguments = JSON.stringify(args.value);
    return {
      call,
      args: args.value,
      rawLength: raw.length,
      ...(cutOff ? { cutOff } : {}),
      ...(args.gaveUp && !cutOff
        ? {
            repairNote: `The arguments were not valid JSON and could not be repaired, so {} was used. Raw arguments began: ${raw.slice(0, 120)}`,
          }
        : {}),
    };
  });
}

interface BatchResult {
  /** The last call's result, not yet appended (the loop adds its notes first). */
  last: Message;
  /** A guardrail's hard stop: the turn must end with a summary. */
  stop?: string;
}

/**
 * Runs a model call's tools and hands each result but the last to `append` in call order, as
 * soon as it and every result before it are done. Every call gets a result and a `tool_end`.
 */
async function runToolCalls(
  prepared: readonly PreparedCall[],
  allTraits: readonly (ToolTraits | undefined)[],
  deps: LoopDeps,
  signal: AbortSignal,
  append: (message: Message) => void,
): Promise<BatchResult> {
  const known = offeredNames(deps.tools).set;
  const planned: PlannedCall[] = prepared.map(({ args }, index) => {
    const traits = allTraits[index];
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
    tool_call_id: prepared[index]!.call.id,
    name: prepared[index]!.call.function.name,
    content: done.get(index)?.content ?? JSON.stringify({ error: "Tool did not run." }),
  });
  await runWaves(planWaves(planned), async (index) => {
    const p = prepared[index]!;
    const name = p.call.function.name;
    // The call and the results before it are stored before the tool runs (unless every call of
    // the reply changes nothing outside the session: then they are stored with the results).
    await deps.settled?.();
    const started = Date.now();
    deps.emit({ type: "tool_start", callId: p.call.id, name, args: p.args });
    let outcome = await toolOutcome(p, known, deps, signal);
    if (p.repairNote) outcome = { ...outcome, content: `${outcome.content}\n[note] ${p.repairNote}` };
    const verdict = deps.guard?.record({
      name,
      args: p.args,
      ok: outcome.ok,
      failed: outcome.failed,
      result: outcome.content,
      readOnly: planned[index]?.parallelSafe ?? false,
    });
    if (verdict?.stop && !stop) stop = verdict.stop;
    if (verdict?.warning) outcome = { ...outcome, content: `${outcome.content}\n\n${verdict.warning}` };
    deps.emit({
      type: "tool_end",
      callId: p.call.id,
      name,
      ok: outcome.ok,
      result: outcome.content,
      durationMs: Date.now() - started,
    });
    done.set(index, outcome);
    while (stored < prepared.length - 1 && done.has(stored)) append(resultOf(stored++));
    return outcome;
  });
  const last = resultOf(prepared.length - 1);
  return stop ? { last, stop } : { last };
}

/** The traits of each call's tool (undefined for a tool the model was not offered). */
function traitsOf(prepared: readonly PreparedCall[], deps: LoopDeps): (ToolTraits | undefined)[] {
  if (prepared.length === 0) return [];
  const known = offeredNames(deps.tools).set;
  return prepared.map(({ call }) =>
    known.has(call.function.name) ? deps.traits(call.function.name) : undefined,
  );
}

/**
 * True when running the call cannot change anything outside the session: it is answered without
 * running (cut off, or a tool the model was not offered), or its tool says so for these arguments.
 * A tool whose traits could not be read, or whose judgement throws, is taken to act.
 */
function changesNothing(p: PreparedCall, traits: ToolTraits | undefined, deps: LoopDeps): boolean {
  if (p.cutOff) return true;
  if (!offeredNames(deps.tools).set.has(p.call.function.name)) return true;
  try {
    return traits?.sideEffectFree?.(p.args) === true;
  } catch {
    return false;
  }
}

/** One call's outcome: answered without running (interrupted, cut off, unknown), or run. */
async function toolOutcome(
  p: PreparedCall,
  known: ReadonlySet<string>,
  deps: LoopDeps,
  signal: AbortSignal,
): Promise<ToolOutcome> {
  const name = p.call.function.name;
  if (signal.aborted) return errorOutcome("Not run: the user interrupted the turn.");
  if (p.cutOff) return errorOutcome(cutOffMessage(name, p.cutOff, p.rawLength));
  if (!known.has(name)) {
    deps.unknownToolMisses.count++;
    return errorOutcome(unknownToolMessage(name, [...known], deps.unknownToolMisses.count));
  }
  return deps.executeTool({ id: p.call.id, name, args: p.args }, signal);
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
