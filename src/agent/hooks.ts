/**
 * The hook bus: where plugins (`ctx.registerHook`) and shell hooks (`hooks:` in config) attach to
 * an agent's life. `AIAgent` fires the events below; whoever registered a handler is told, and a
 * few events let a handler change what happens (block or rewrite a tool call, replace a tool's
 * result, add context to the user's message).
 *
 * Payload fields are snake_case on purpose: they are upstream Hermes's hook keyword arguments, and
 * shell hooks receive them as JSON, so plugins and hook scripts written for upstream read the same
 * names.
 *
 * Each handler gets its own deep copy of the payload (frozen at the top): changing the arguments
 * it was shown changes nothing; only a `rewrite` answer does, and the rewritten call then meets
 * the same approvals as any other.
 *
 * A handler never takes the agent down: a throw or a timeout is reported through `onError` (the
 * plugin loader disables the plugin that threw) and the event goes on as if that handler had not
 * been there, except for `pre_tool_call` handlers registered `failClosed`, whose failure blocks the
 * call (a guard that cannot answer must not wave everything through).
 */

/** Where the event happened: the same for every event of one agent. */
export interface HookSessionInfo {
  session_id: string;
  task_id: string;
  /** "cli", "telegram", "acp", "batch", "subagent"... */
  platform: string;
  cwd: string;
  model: string;
}

export interface PreToolCallPayload extends HookSessionInfo {
  tool_name: string;
  args: Record<string, unknown>;
  tool_call_id: string;
}

export interface PostToolCallPayload extends PreToolCallPayload {
  /** The result the model reads (already redacted). */
  result: string;
  ok: boolean;
  duration_ms: number;
}

export interface TransformToolResultPayload extends PreToolCallPayload {
  /** The result so far (redacted; earlier transforms applied). */
  result: string;
  ok: boolean;
}

export interface PreLlmCallPayload extends HookSessionInfo {
  /** The user's message of this turn ("" for a turn woken by notices alone). */
  user_message: string;
  is_first_turn: boolean;
  /** How many messages the conversation held before this turn. */
  history_length: number;
}

export interface PostLlmCallPayload extends HookSessionInfo {
  user_message: string;
  assistant_response: string;
  /** The loop's stop reason: "completed", "interrupted", "max_iterations", "error"... */
  reason: string;
}

/** After each model call of the loop (upstream's `post_api_request`). */
export interface PostApiRequestPayload extends HookSessionInfo {
  /** Which model call of this user turn, from 1 (one per loop iteration). */
  api_call_count: number;
  /** "stop", "tool_calls", "length", "aborted", "error"... */
  finish_reason: string;
  /** The tools the model's reply asked for, in order ([] for a final answer). */
  tool_names: string[];
}

export interface SessionEndPayload extends HookSessionInfo {
  /** Why the session ended: "close" when the agent was closed. */
  reason: string;
}

export interface SubagentStartPayload extends HookSessionInfo {
  child_session_id: string;
  goal: string;
}

export interface SubagentStopPayload extends SubagentStartPayload {
  status: string;
  summary: string;
  duration_ms: number;
}

/** A `pre_tool_call` handler's answer; `undefined` lets the call run as it is. */
export type PreToolCallDecision =
  | undefined
  | { action: "allow" }
  | { action: "block"; reason: string }
  /** Runs the call with these arguments instead (approvals then judge the rewritten call). */
  | { action: "rewrite"; args: Record<string, unknown> };

/** Each event: what a handler gets, and what it may answer. */
export interface HookEvents {
  pre_tool_call: { payload: PreToolCallPayload; result: PreToolCallDecision };
  post_tool_call: { payload: PostToolCallPayload; result: unknown };
  /** A string replaces the result the model reads; `undefined` keeps it. */
  transform_tool_result: { payload: TransformToolResultPayload; result: string | undefined };
  /** Once per user turn, before the first model call: `context` is added to the user's message. */
  pre_llm_call: { payload: PreLlmCallPayload; result: { context?: string } | undefined };
  /** Once per user turn, after the loop finished. */
  post_llm_call: { payload: PostLlmCallPayload; result: unknown };
  /** After each model call (once per loop iteration). */
  post_api_request: { payload: PostApiRequestPayload; result: unknown };
  on_session_start: { payload: HookSessionInfo; result: unknown };
  on_session_end: { payload: SessionEndPayload; result: unknown };
  subagent_start: { payload: SubagentStartPayload; result: unknown };
  subagent_stop: { payload: SubagentStopPayload; result: unknown };
}

export type HookEventName = keyof HookEvents;

export const HOOK_EVENTS: readonly HookEventName[] = [
  "pre_tool_call",
  "post_tool_call",
  "transform_tool_result",
  "pre_llm_call",
  "post_llm_call",
  "post_api_request",
  "on_session_start",
  "on_session_end",
  "subagent_start",
  "subagent_stop",
];

/** What a handler of each event looks like: it may answer synchronously or with a promise. */
export type HookHandlers = {
  [E in HookEventName]: (
    payload: Readonly<HookEvents[E]["payload"]>,
    signal: AbortSignal,
  ) => HookEvents[E]["result"] | Promise<HookEvents[E]["result"]>;
};

export type HookHandler<E extends HookEventName> = HookHandlers[E];

export interface HookRegistration {
  /** Who registered it, for messages: "plugin:name", "shell:pre_tool_call[0]"... */
  source: string;
  /** How long one call may take; default 30 s. Past it the handler's signal aborts. */
  timeoutMs?: number;
  /** Only `pre_tool_call`: a throw or a timeout blocks the call instead of letting it run. */
  failClosed?: boolean;
}

/** Told about a handler that threw or timed out (once per failure). */
export type HookErrorListener = (info: { event: HookEventName; source: string; error: Error }) => void;

const DEFAULT_TIMEOUT_MS = 30_000;

type AnyHandler = (payload: unknown, signal: AbortSignal) => unknown;

interface Entry {
  handler: AnyHandler;
  registration: HookRegistration;
}

export class HookBus {
  private readonly entries = new Map<HookEventName, Entry[]>();
  private readonly loading = new Set<Promise<unknown>>();
  private readonly errorListeners = new Set<HookErrorListener>();

  /** Adds a handler; returns the function that removes it. Handlers run in registration order. */
  register<E extends HookEventName>(
    event: E,
    handler: HookHandlers[E],
    registration: HookRegistration,
  ): () => void {
    const entry: Entry = { handler: handler as AnyHandler, registration };
    const list = this.entries.get(event) ?? [];
    list.push(entry);
    this.entries.set(event, list);
    return () => {
      const current = this.entries.get(event);
      const at = current?.indexOf(entry) ?? -1;
      if (current && at >= 0) current.splice(at, 1);
    };
  }

  /** Removes every handler registered under `source` (a plugin being disabled). */
  unregisterSource(source: string): void {
    for (const [event, list] of this.entries) {
      this.entries.set(
        event,
        list.filter((e) => e.registration.source !== source),
      );
    }
  }

  /**
   * Registers handlers that are still loading (plugins, shell hooks read from config): events
   * fired before `loading` settles wait for it, so the first tool call of a session is hooked too.
   * A rejection is the loader's to report; the events then go on without its handlers.
   */
  whenLoaded(loading: Promise<unknown>): void {
    const tracked = loading.then(
      () => undefined,
      () => undefined,
    );
    this.loading.add(tracked);
    void tracked.then(() => this.loading.delete(tracked));
  }

  onError(listener: HookErrorListener): () => void {
    this.errorListeners.add(listener);
    return () => this.errorListeners.delete(listener);
  }

  /** True when a handler for `event` exists or may still be loading. */
  has(event: HookEventName): boolean {
    return this.loading.size > 0 || (this.entries.get(event)?.length ?? 0) > 0;
  }

  /** Sources with a handler for `event`, in order (for `hermes hooks list`, `/plugins`). */
  sources(event: HookEventName): string[] {
    return (this.entries.get(event) ?? []).map((e) => e.registration.source);
  }

  /**
   * Asks every `pre_tool_call` handler in order. The first block wins; a rewrite replaces the
   * arguments the later handlers (and the tool) see. Never rejects.
   */
  async preToolCall(payload: PreToolCallPayload, signal: AbortSignal): Promise<PreToolDecisionResult> {
    let args = payload.args;
    let rewritten = false;
    for (const entry of await this.handlers("pre_tool_call")) {
      const answer = await this.call(entry, "pre_tool_call", { ...payload, args }, signal);
      if (!answer.ok) {
        if (entry.registration.failClosed) {
          return {
            action: "block",
            reason: `The hook ${entry.registration.source} failed (${answer.error.message}), and it blocks calls when it cannot answer.`,
            source: entry.registration.source,
          };
        }
        continue;
      }
      const decision = answer.value as PreToolCallDecision;
      if (decision?.action === "block") {
        return { action: "block", reason: decision.reason, source: entry.registration.source };
      }
      if (decision?.action === "rewrite" && isRecord(decision.args)) {
        args = decision.args;
        rewritten = true;
      }
    }
    return rewritten ? { action: "rewrite", args } : { action: "allow" };
  }

  /** Runs every `transform_tool_result` handler in order, each seeing the previous one's result. */
  async transformToolResult(payload: TransformToolResultPayload, signal: AbortSignal): Promise<string> {
    let result = payload.result;
    for (const entry of await this.handlers("transform_tool_result")) {
      const answer = await this.call(entry, "transform_tool_result", { ...payload, result }, signal);
      if (answer.ok && typeof answer.value === "string") result = answer.value;
    }
    return result;
  }

  /** The contexts `pre_llm_call` handlers returned, in order (empty strings dropped). */
  async preLlmCall(payload: PreLlmCallPayload, signal: AbortSignal): Promise<string[]> {
    const contexts: string[] = [];
    for (const entry of await this.handlers("pre_llm_call")) {
      const answer = await this.call(entry, "pre_llm_call", payload, signal);
      const value = answer.ok ? (answer.value as { context?: unknown } | undefined) : undefined;
      if (typeof value?.context === "string" && value.context.trim()) contexts.push(value.context.trim());
    }
    return contexts;
  }

  /** Tells every handler of an observing event; their answers are ignored. Never rejects. */
  async notify<
    E extends
      | "post_tool_call"
      | "post_llm_call"
      | "post_api_request"
      | "on_session_start"
      | "on_session_end"
      | "subagent_start"
      | "subagent_stop",
  >(event: E, payload: HookEvents[E]["payload"], signal?: AbortSignal): Promise<void> {
    const list = await this.handlers(event);
    // Most events have no handler: no signal is made for nobody (several events every model call).
    if (list.length === 0) return;
    const never = signal ?? new AbortController().signal;
    await Promise.all(list.map((entry) => this.call(entry, event, payload, never)));
  }

  private async handlers(event: HookEventName): Promise<Entry[]> {
    if (this.loading.size > 0) await Promise.all(this.loading);
    return [...(this.entries.get(event) ?? [])];
  }

  private async call(
    entry: Entry,
    event: HookEventName,
    payload: HookEvents[HookEventName]["payload"],
    outer: AbortSignal,
  ): Promise<{ ok: true; value: unknown } | { ok: false; error: Error }> {
    const timeoutMs = entry.registration.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const controller = new AbortController();
    const onOuter = () => controller.abort(outer.reason);
    outer.addEventListener("abort", onOuter, { once: true });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const error = new Error(`timed out after ${timeoutMs} ms`);
        controller.abort(error);
        reject(error);
      }, timeoutMs);
      timer.unref();
    });
    try {
      const value = await Promise.race([
        Promise.resolve().then(() =>
          entry.handler(Object.freeze(structuredClone(payload)), controller.signal),
        ),
        timeout,
      ]);
      return { ok: true, value };
    } catch (thrown) {
      const error = thrown instanceof Error ? thrown : new Error(String(thrown));
      for (const listener of this.errorListeners) {
        try {
          listener({ event, source: entry.registration.source, error });
        } catch {
          // A failing listener must not turn a hook failure into an agent failure.
        }
      }
      return { ok: false, error };
    } finally {
      clearTimeout(timer);
      outer.removeEventListener("abort", onOuter);
    }
  }
}

export type PreToolDecisionResult =
  | { action: "allow" }
  | { action: "block"; reason: string; source: string }
  | { action: "rewrite"; args: Record<string, unknown> };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

let processBus: HookBus | undefined;

/**
 * The process's hook bus: every agent of the process (CLI, gateway conversations, subagents,
 * batch workers) fires into it unless given its own, so a plugin or shell hook loaded once sees
 * them all.
 */
export function processHooks(): HookBus {
  processBus ??= new HookBus();
  return processBus;
}
