/**
 * `AIAgent`: one conversation with a model and its tools. Owns the session's frozen state (system
 * prompt, tool schemas), the message history, interrupts and steering, and publishes one event
 * stream that every surface consumes.
 */
import { randomUUID } from "node:crypto";
import type { ClassifiedError } from "../ai/error-classifier.js";
import { DEFAULT_RETRY_POLICY } from "../ai/retry.js";
import type { Message, ToolSchema, Usage } from "../ai/types.js";
import { addUsage, emptyUsage } from "../ai/usage.js";
import { defaultConfig, type HermesConfig } from "../config/defaults.js";
import { loadEnvFile } from "../config/env-file.js";
import { resolveHome } from "../config/home.js";
import type { Environment } from "../environments/types.js";
import { createBuiltinRegistry } from "../tools/builtin.js";
import { describeEnvironment } from "../tools/environment.js";
import type { ToolRegistry } from "../tools/registry.js";
import { createToolRuntime } from "../tools/runtime.js";
import type { DelegationRequest, DelegationResult, ToolOutcome, ToolRuntime } from "../tools/types.js";
import { terminalEnv } from "../util/env-scrub.js";
import { EventStream } from "../util/event-stream.js";
import { processRedactor, type Redactor } from "../util/redact.js";
import { agentApprovalPolicy } from "./agent-approvals.js";
import type { AgentRun, AIAgentOptions, CompressionReport, RunResult } from "./agent-types.js";
import { type ApprovalPolicy, approvalSettings } from "./approval-policy.js";
import { mutationReason, sessionCheckpoints } from "./checkpoint-hook.js";
import { estimateTokens, shouldCompress } from "./compression/index.js";
import { compressHistory, learnWindowFromOverflow } from "./context-upkeep.js";
import { type DelegationHost, delegationLimits, mayDelegate, runDelegation } from "./delegation.js";
import { startSessionEnvironment } from "./environment-start.js";
import { EventListeners } from "./event-listeners.js";
import type { AgentEvent, AgentEventListener } from "./events.js";
import { ToolLoopGuard } from "./guardrails.js";
import { hookedToolCall, inputText, withApiRequestHook, withTurnContext } from "./hook-points.js";
import { type HookBus, type HookSessionInfo, processHooks } from "./hooks.js";
import { runLoop } from "./loop.js";
import {
  answerOpenCalls,
  errorText,
  type LoopDeps,
  type ToolCallRequest,
  type ToolTraits,
  toolCrashOutcome,
} from "./loop-deps.js";
import { composeUserTurn } from "./memory-provider-hook.js";
import { NoticeQueue, withNotices } from "./notices.js";
import { SubdirHintTracker } from "./prompt/subdir-hints.js";
import { type Frozen, freezeSession } from "./session-freeze.js";
import { type BackgroundStart, startBackgroundAgent } from "./subagents/background.js";
import { buildToolContext, type ToolContextBase } from "./tool-context.js";
import { traitsOfTool } from "./tool-traits.js";
import { saveTrajectoryOrWarn } from "./trajectory.js";

export type { AgentRun, AIAgentOptions, CompressionReport, RunResult } from "./agent-types.js";

/**
 * The names `<home>/.env` adds to the real environment: secrets Hermes loaded itself, which the
 * terminal does not inherit (env-scrub.ts). Unreadable or missing: none (nothing was loaded either).
 */
export function hermesLoadedNames(home: string): string[] {
  try {
    return loadEnvFile(home, process.env).loaded;
  } catch {
    return [];
  }
}

export class AIAgent {
  /** Changes when compression continues the conversation as a child session. */
  private currentSessionId: string;
  readonly taskId: string;
  readonly cwd: string;
  readonly config: HermesConfig;
  /** HERMES_HOME of this agent (tools use it to guard the home's secrets). */
  readonly home: string;
  private readonly options: AIAgentOptions;
  private readonly registry: ToolRegistry;
  private readonly runtime: ToolRuntime;
  private readonly ownsRuntime: boolean;
  private readonly listeners = new EventListeners();
  private readonly history: Message[];
  private readonly toolSession: Map<string, unknown>;
  private readonly approvals: ApprovalPolicy;
  /** Configuration problems of `approvals.*`, told once with the session's first events. */
  private readonly approvalWarnings: string[] = [];
  private readonly guard: ToolLoopGuard;
  private readonly unknownToolMisses = { count: 0 };
  private readonly steering: string[] = [];
  /** Notices from tools (background processes, children) waiting for the next turn. */
  private readonly notices: NoticeQueue;
  /** Subprocess environment for tools, without Hermes's own secrets; computed once. */
  private readonly toolEnv: Record<string, string | undefined>;
  /** Redacts every tool result before the model (and every consumer of the events) sees it. */
  private readonly redactor: Redactor;
  private frozen: Promise<Frozen> | null = null;
  /** The frozen state once it settled, for synchronous readers (the REPL's status line). */
  private frozenNow: Frozen | null = null;
  private announced = false;
  private controller: AbortController | null = null;
  private totalUsage: Usage = { inputTokens: 0, outputTokens: 0 };
  /** Prompt tokens of the latest model call: how full the context window is. */
  private lastPromptTokens = 0;
  /** Saved ratios of this session's compression passes (anti-thrashing). */
  private readonly compressionPasses: number[] = [];
  /** Snapshots before the turn's first file mutation (`checkpoints.enabled`); undefined when off. */
  private readonly checkpoints: ReturnType<typeof sessionCheckpoints>;
  /** Context files of subdirectories, announced once in the tool result that reaches them. */
  private readonly hints: SubdirHintTracker;
  /** Plugins' and shell hooks' handlers (hooks.ts); the process's bus unless given one. */
  readonly hooks: HookBus;
  /** How deep in a delegation tree: 0 at the top. */
  private readonly depth: number;

  constructor(options: AIAgentOptions = {}) {
    this.options = options;
    this.toolSession = new Map(Object.entries(options.toolState ?? {}));
    this.config = options.config ?? defaultConfig();
    this.currentSessionId = options.sessionId ?? randomUUID();
    this.taskId = options.taskId ?? this.currentSessionId;
    this.cwd = options.cwd ?? process.cwd();
    this.registry = options.registry ?? createBuiltinRegistry();
    this.runtime = options.runtime ?? createToolRuntime();
    this.ownsRuntime = options.runtime === undefined;
    this.history = [...(options.messages ?? [])];
    this.notices = options.notices ?? new NoticeQueue();
    this.approvals = options.approvals ?? this.buildApprovalPolicy(options);
    this.guard = ToolLoopGuard.fromConfig(this.config.tool_loop_guardrails);
    this.home = options.home ?? resolveHome({ env: options.env ?? process.env });
    this.redactor = options.redactor ?? processRedactor();
    this.toolEnv = terminalEnv(options.env ?? process.env, {
      withheld: options.withheldEnv ?? hermesLoadedNames(this.home),
      passthrough: this.config.terminal.env_passthrough,
    });
    this.checkpoints = sessionCheckpoints(this.config, this.home, this.cwd);
    this.hints = new SubdirHintTracker({ root: this.cwd, enabled: !options.skipContextFiles });
    this.hooks = options.hooks ?? processHooks();
    this.depth = options.delegationDepth ?? 0;
  }

  get sessionId(): string {
    return this.currentSessionId;
  }

  /**
   * Starts a non-local terminal environment now, before the first model call (see
   * environment-start.ts); rejects with its `EnvironmentError`. Local: nothing to do.
   */
  async prepareEnvironment(): Promise<Environment | undefined> {
    return startSessionEnvironment({
      runtime: this.runtime,
      config: this.config,
      home: this.home,
      cwd: this.cwd,
      env: this.toolEnv,
      secrets: this.options.env ?? process.env,
      toolsets: this.options.toolsets,
    });
  }

  private buildApprovalPolicy(options: AIAgentOptions): ApprovalPolicy {
    const { settings, warnings } = approvalSettings(this.config, options.platform);
    this.approvalWarnings.push(...warnings);
    return agentApprovalPolicy(options, settings, {
      config: this.config,
      cwd: this.cwd,
      home: () => this.home,
      prepare: () => this.prepare(),
    });
  }

  /** The conversation so far (without the system prompt). */
  get messages(): readonly Message[] {
    return this.history;
  }

  get usage(): Usage {
    return { ...this.totalUsage };
  }

  get running(): boolean {
    return this.controller !== null;
  }

  get yolo(): boolean {
    return this.approvals.yolo;
  }

  set yolo(value: boolean) {
    this.approvals.yolo = value;
  }

  /** Subscribes to every event of every run; returns the unsubscribe function. */
  on(listener: AgentEventListener): () => void {
    return this.listeners.add(listener);
  }

  /** The session's system prompt, built once (resolves the provider on first use). */
  async systemPrompt(): Promise<string> {
    return (await this.prepare()).systemPrompt;
  }

  /**
   * The context window the session plans with (the endpoint's own figure once it answered), or
   * null before the session was first prepared. Never starts the preparation itself.
   */
  get contextLength(): number | null {
    return this.frozenNow?.contextLength ?? null;
  }

  /** The tool names offered to the model this session (frozen at first use). */
  async toolNames(): Promise<string[]> {
    return (await this.toolSchemas()).map((t) => t.function.name);
  }

  /** The tool schemas offered to the model this session (frozen at first use): for trajectories. */
  async toolSchemas(): Promise<ToolSchema[]> {
    return [...(await this.prepare()).tools];
  }

  /** Stops the running turn: the model call and running tools see the abort. */
  interrupt(): void {
    this.controller?.abort();
  }

  /** Adds a note the model will see with the next tool result of the running turn. */
  steer(text: string): void {
    if (text.trim()) this.steering.push(text.trim());
  }

  /** Runs one user turn and returns its final text. */
  async chat(input: string | Message["content"]): Promise<string> {
    const result = await this.run(input).result;
    if (result.reason === "error") throw new Error(result.error ?? "The turn failed.");
    return result.text;
  }

  /** Starts one user turn. Only one turn runs at a time; a second call while running throws. */
  run(input: string | Message["content"]): AgentRun {
    return this.start(input);
  }

  /**
   * Starts a turn for the queued notices alone (an idle surface woken by a `wake` notice): the
   * model reads them as the turn's message. Undefined when nothing is queued or a turn is running.
   */
  wake(): AgentRun | undefined {
    if (this.controller || this.notices.size === 0) return undefined;
    return this.start(null);
  }

  /** `input` null: a turn for the queued notices alone. */
  private start(input: string | Message["content"] | null): AgentRun {
    if (this.controller) throw new Error("A turn is already running; interrupt it or wait for it to finish.");
    const controller = new AbortController();
    this.controller = controller;
    const stream = new EventStream<AgentEvent>();
    const emit = (event: AgentEvent) => {
      if (event.type === "usage") this.addUsage(event.usage);
      stream.push(event);
      this.listeners.broadcast(event);
    };
    const result = this.execute(input, controller, emit)
      .then(async (outcome) => {
        await this.listenersSettled();
        return outcome;
      })
      .finally(() => {
        this.controller = null;
        stream.end();
      });
    return { result, [Symbol.asyncIterator]: () => stream[Symbol.asyncIterator]() };
  }

  /**
   * `/background PROMPT`: a separate agent works on `prompt` while this one goes on, with this
   * session's tools (not clarify) and its own shell; `onDone` gets its result. Throws when
   * `delegation.max_async_children` are already running.
   */
  async background(prompt: string, onDone: (result: DelegationResult) => void): Promise<BackgroundStart> {
    const frozen = await this.prepare();
    const tools = frozen.tools.map((t) => t.function.name);
    const host = this.delegationHost(frozen, tools, new AbortController().signal, () => undefined);
    return startBackgroundAgent(host, prompt, delegationLimits(this.config), onDone);
  }

  /** Releases tool resources (shells, background processes) when the agent owns them. */
  async close(): Promise<void> {
    this.controller?.abort();
    if (this.announced) await this.hooks.notify("on_session_end", { ...this.hookInfo(), reason: "close" });
    if (this.frozen) {
      try {
        await (await this.frozen).recovery.flush();
      } catch {
        // Nothing to flush when the session never resolved its provider.
      }
    }
    if (this.ownsRuntime) await this.runtime.dispose();
  }

  /**
   * One user turn, with the event contract kept whatever fails inside: `done` is always the last
   * event, and a tool call left without a result gets the interrupted stand-in (stored like any
   * message), so the session stays resumable.
   */
  private async execute(
    input: string | Message["content"] | null,
    controller: AbortController,
    emit: (e: AgentEvent) => void,
  ): Promise<RunResult> {
    // What the turn did so far, for the result of a turn that broke off.
    let usage = emptyUsage();
    let iterations = 0;
    const tally = (event: AgentEvent) => {
      if (event.type === "usage") usage = addUsage(usage, event.usage);
      else if (event.type === "turn_start") iterations = event.iteration;
      emit(event);
    };
    let result: RunResult;
    try {
      result = await this.runTurn(input, controller, tally);
    } catch (error) {
      const message = `The turn failed unexpectedly: ${errorText(error)}`;
      answerOpenCalls(this.history, tally);
      tally({ type: "error", message });
      result = { text: "", reason: "error", iterations, usage, error: message };
    }
    emit({
      type: "done",
      reason: result.reason,
      text: result.text,
      iterations: result.iterations,
      usage: result.usage,
    });
    return result;
  }

  /** The turn itself; rejects only on an unexpected failure, which `execute` turns into an error. */
  private async runTurn(
    input: string | Message["content"] | null,
    controller: AbortController,
    emit: (e: AgentEvent) => void,
  ): Promise<RunResult> {
    let frozen: Frozen;
    try {
      frozen = await this.prepare();
    } catch (error) {
      // Not frozen: the next turn tries again (a key added, a server started meanwhile).
      this.frozen = null;
      const message = errorText(error);
      emit({ type: "error", message });
      return { text: "", reason: "error", iterations: 0, usage: this.usage, error: message };
    }
    if (!this.announced) {
      this.announced = true;
      emit({
        type: "session_start",
        sessionId: this.sessionId,
        model: frozen.model,
        systemPrompt: frozen.systemPrompt,
        tools: frozen.tools.map((t) => t.function.name),
      });
      for (const message of [...this.approvalWarnings, ...frozen.warnings])
        emit({ type: "warning", message });
      await this.hooks.notify("on_session_start", this.hookInfo());
    }
    // The previous call filled the context past `compression.threshold`: compress before this turn.
    if (this.config.compression.enabled && this.pastThreshold(frozen, this.lastPromptTokens)) {
      await this.compressHistory(frozen, emit, { signal: controller.signal });
    }
    this.checkpoints?.newTurn();
    // A wake turn has no words of the user's: nothing to recall memory for or to remember.
    const memory = input === null ? undefined : this.options.memory;
    const { content: userText, own: ownText } = await composeUserTurn(input ?? "", {
      steering: this.steering.splice(0),
      memory,
      sessionId: this.sessionId,
      signal: controller.signal,
      warn: (message) => emit({ type: "warning", message }),
    });
    // Taken only now, right before the message is stored: a turn that failed to start keeps them.
    const notices = this.notices.take();
    if (input === null && notices === undefined) {
      // Retracted while the turn started: nothing to tell the model, so no model call.
      return { text: "", reason: "completed", iterations: 0, usage: emptyUsage() };
    }
    const turn = { userText: inputText(input), isFirstTurn: this.history.length === 0 };
    const content = await withTurnContext(
      this.hooks,
      this.hookInfo(),
      notices === undefined ? userText : withNotices(notices, userText),
      { ...turn, historyLength: this.history.length },
      controller.signal,
    );
    const userMessage: Message = { role: "user", content };
    this.history.push(userMessage);
    emit({ type: "message", message: userMessage });

    frozen.recovery.warn = (message) => emit({ type: "warning", message });
    const outcome = await runLoop(
      this.history,
      this.loopDeps(frozen, controller.signal, emit),
      controller.signal,
    );

    if (this.options.saveTrajectories ?? this.config.agent.save_trajectories) {
      await saveTrajectoryOrWarn(
        this.cwd,
        {
          messages: this.history,
          tools: frozen.tools,
          model: frozen.model,
          completed: outcome.reason === "completed",
        },
        emit,
      );
    }
    await this.hooks.notify("post_llm_call", {
      ...this.hookInfo(),
      user_message: turn.userText,
      assistant_response: outcome.text,
      reason: outcome.reason,
    });
    if (memory && typeof ownText === "string" && outcome.reason === "completed") {
      memory.remember(ownText, outcome.text, this.sessionId);
    }
    return {
      text: outcome.text,
      reason: outcome.reason,
      iterations: outcome.iterations,
      usage: outcome.usage,
      ...(outcome.error ? { error: outcome.error } : {}),
    };
  }

  /** What the loop is given for one turn (see loop-deps.ts for each part's contract). */
  private loopDeps(frozen: Frozen, signal: AbortSignal, emit: (e: AgentEvent) => void): LoopDeps {
    const compression = this.config.compression.enabled;
    return {
      transport: frozen.recovery.transport,
      recovery: frozen.recovery,
      ...(compression
        ? {
            compress: async (failure: ClassifiedError) => {
              await learnWindowFromOverflow(frozen, failure, emit, {
                config: this.config,
                home: this.home,
                history: this.history,
                lastPromptTokens: this.lastPromptTokens,
              });
              return (await this.compressHistory(frozen, emit, { signal })).status === "compressed";
            },
            checkpoint: () => this.checkpoint(frozen, emit, signal),
          }
        : {}),
      model: frozen.model,
      ...(frozen.runtime?.provider ? { provider: frozen.runtime.provider } : {}),
      ...(frozen.baseUrl ? { baseUrl: frozen.baseUrl } : {}),
      tools: frozen.tools,
      systemPrompt: frozen.systemPrompt,
      ...(this.options.ephemeralSystemPrompt
        ? { ephemeralSystemPrompt: this.options.ephemeralSystemPrompt }
        : {}),
      ...(this.config.model.max_tokens ? { maxTokens: this.config.model.max_tokens } : {}),
      ...(this.config.agent.reasoning_effort ? { reasoningEffort: this.config.agent.reasoning_effort } : {}),
      maxIterations: this.options.maxTurns ?? this.config.agent.max_turns,
      retry: {
        ...DEFAULT_RETRY_POLICY,
        maxRetries: this.config.agent.api_max_retries,
        ...(this.options.retry ?? {}),
      },
      traits: (name) => this.traitsOf(name),
      executeTool: hookedToolCall(
        this.hooks,
        () => this.hookInfo(),
        this.redactor,
        (call, toolSignal) => this.executeTool(frozen, call, toolSignal, emit),
      ),
      guard: this.guard,
      takeSteering: () => {
        const notes = this.steering.splice(0);
        return notes.length > 0 ? notes.join("\n") : undefined;
      },
      unknownToolMisses: this.unknownToolMisses,
      emit: withApiRequestHook(this.hooks, () => this.hookInfo(), emit),
      settled: () => this.listeners.settled(),
    };
  }

  /**
   * Mid-turn compression: tool results since the last call count too, so a big file read mid-turn
   * does not wait for the provider to refuse the next request.
   */
  private async checkpoint(
    frozen: Frozen,
    emit: (e: AgentEvent) => void,
    signal: AbortSignal,
  ): Promise<void> {
    const lastCall = this.history.findLastIndex((m) => m.role === "assistant");
    const added = estimateTokens(this.history.slice(lastCall + 1));
    const promptTokens = this.lastPromptTokens > 0 ? this.lastPromptTokens + added : 0;
    if (this.pastThreshold(frozen, promptTokens)) await this.compressHistory(frozen, emit, { signal });
  }

  private pastThreshold(frozen: Frozen, promptTokens: number): boolean {
    return shouldCompress({
      promptTokens,
      contextLength: frozen.contextLength,
      threshold: this.config.compression.threshold,
    });
  }

  private hookInfo(): HookSessionInfo {
    return {
      session_id: this.sessionId,
      task_id: this.taskId,
      platform: this.options.platform ?? "cli",
      cwd: this.cwd,
      model: this.frozenNow?.model ?? this.options.model ?? this.config.model.default ?? "",
    };
  }

  private traitsOf(name: string): ToolTraits | undefined {
    const tool = this.registry.get(name);
    return tool ? traitsOfTool(tool, () => this.cwd) : undefined;
  }

  /**
   * Runs a tool through the registry. Keeps the loop's contract (never rejects) and redacts: this
   * is where tool output enters the conversation, and a `cat .env` or `env` must not carry a key
   * into the model's context, the session store, a trajectory or a chat reply.
   */
  private async executeTool(
    frozen: Frozen,
    call: ToolCallRequest,
    signal: AbortSignal,
    emit: (e: AgentEvent) => void,
  ): Promise<ToolOutcome> {
    let outcome: ToolOutcome;
    try {
      const reason = this.checkpoints && mutationReason(call.name, call.args);
      const note = reason ? await this.checkpoints?.beforeMutation(reason) : undefined;
      if (note) emit({ type: "warning", message: note.message });
      const base = this.toolBase(frozen);
      const enabled = frozen.tools.map((t) => t.function.name);
      const ctx = buildToolContext(base, { callId: call.id, name: call.name, signal, emit, enabled });
      outcome = await this.registry.execute(call.name, call.args, ctx, base.limits);
      const hint = outcome.ok ? this.hints.hintFor(call.name, call.args, this.cwd) : undefined;
      if (hint) outcome = { ...outcome, content: `${outcome.content}\n\n${hint}` };
    } catch (error) {
      outcome = toolCrashOutcome(call.name, error, signal);
    }
    const content = this.redactor.redact(outcome.content);
    const error = outcome.error === undefined ? undefined : this.redactor.redact(outcome.error);
    return content === outcome.content && error === outcome.error
      ? outcome
      : { ...outcome, content, ...(error === undefined ? {} : { error }) };
  }

  /**
   * Compresses the conversation now (`/compress [focus]`): the middle turns become one structured
   * summary; the first turns and a recent tail stay verbatim. A failed summary changes nothing.
   */
  async compress(options: { focus?: string } = {}): Promise<CompressionReport> {
    if (this.controller) throw new Error("A turn is running; compress after it finishes.");
    const frozen = await this.prepare();
    const report = await this.compressHistory(frozen, (event) => this.listeners.broadcast(event), {
      force: true,
      ...(options.focus ? { focus: options.focus } : {}),
    });
    await this.listenersSettled();
    return report;
  }

  /**
   * Settles when the work listeners returned for the events so far has (the session recorder's
   * writes): what the turns so far said is then in the store. Never rejects.
   */
  listenersSettled(): Promise<void> {
    return this.listeners.settled();
  }

  private async compressHistory(
    frozen: Frozen,
    emit: (e: AgentEvent) => void,
    options: { force?: boolean; focus?: string; signal?: AbortSignal },
  ): Promise<CompressionReport> {
    const outcome = await compressHistory(
      this.history,
      this.compressionPasses,
      frozen,
      this.config,
      this.currentSessionId,
      emit,
      options,
    );
    if (outcome.childSessionId) {
      this.lastPromptTokens = 0;
      this.currentSessionId = outcome.childSessionId;
    }
    return outcome.report;
  }

  private prepare(): Promise<Frozen> {
    this.frozen ??= freezeSession({
      options: this.options,
      config: this.config,
      home: this.home,
      cwd: this.cwd,
      registry: this.registry,
      depth: this.depth,
      environment: describeEnvironment(this.runtime, this.config as unknown as Record<string, unknown>),
    });
    const frozen = this.frozen;
    void frozen.then(
      (settled) => {
        if (this.frozen === frozen) this.frozenNow = settled;
      },
      () => undefined,
    );
    return this.frozen;
  }

  /** What every tool call of this turn shares; `frozen` enables delegation where allowed. */
  private toolBase(frozen: Frozen): ToolContextBase {
    const delegate =
      mayDelegate(this.config, this.depth) && this.options.delegationRole !== "leaf"
        ? (
            request: DelegationRequest,
            scope: { signal: AbortSignal; emit: (e: AgentEvent) => void; enabled: readonly string[] },
          ) => runDelegation(this.delegationHost(frozen, scope.enabled, scope.signal, scope.emit), request)
        : undefined;
    return {
      taskId: this.taskId,
      sessionId: this.sessionId,
      cwd: this.cwd,
      home: this.home,
      config: this.config as Record<string, unknown>,
      env: this.toolEnv,
      secrets: this.options.env ?? process.env,
      requestApproval: (request, signal) => this.approvals.request(request, signal),
      ask: this.options.onClarify,
      // Notices carry process output into the conversation, so they pass the redactor like tool results.
      notify: (notice) =>
        this.notices.push(notice.retract ? notice : { ...notice, text: this.redactor.redact(notice.text) }),
      redact: (text) => this.redactor.redact(text),
      session: this.toolSession,
      runtime: this.runtime,
      sessionStore: this.options.sessionStore,
      writeOrigin: this.options.writeOrigin,
      registry: this.registry,
      limits: {
        maxBytes: this.config.limits.tool_output.max_bytes,
        maxLines: this.config.limits.tool_output.max_lines,
        maxLineLength: this.config.limits.tool_output.max_line_length,
      },
      delegate,
    };
  }

  private delegationHost(
    frozen: Frozen,
    enabled: readonly string[],
    signal: AbortSignal,
    emit: (e: AgentEvent) => void,
  ): DelegationHost {
    return {
      config: this.config,
      home: this.home,
      cwd: this.cwd,
      taskId: this.taskId,
      sessionId: this.sessionId,
      depth: this.depth,
      env: this.options.env ?? process.env,
      runtime: this.runtime,
      registry: this.registry,
      resolved: frozen.runtime,
      transport: frozen.recovery.transport,
      model: frozen.model,
      sessionStore: this.options.sessionStore,
      enabledTools: enabled,
      emit,
      signal,
      approvals: this.approvals,
      hooks: this.hooks,
      hookInfo: () => this.hookInfo(),
      spawn: (options) => new AIAgent(options),
    };
  }

  private addUsage(add: Usage): void {
    if (add.inputTokens > 0) this.lastPromptTokens = add.inputTokens;
    this.totalUsage = addUsage(this.totalUsage, add);
  }
}
