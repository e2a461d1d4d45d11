/**
 * `AIAgent`: one conversation with a model and its tools. Owns the session's frozen state (system
 * prompt, tool schemas), the message history, interrupts and steering, and publishes one event
 * stream that every surface consumes.
 */
import { randomUUID } from "node:crypto";
import { resolveAuxiliaryChain } from "../ai/auxiliary.js";
import { fileContextLengthStore } from "../ai/context-length.js";
import type { ClassifiedError } from "../ai/error-classifier.js";
import {
  createTransport,
  type ResolvedRuntime,
  resolveRuntime,
  type TransportOptions,
} from "../ai/resolve.js";
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from "../ai/retry.js";
import type { Message, ToolSchema, Usage } from "../ai/types.js";
import { defaultConfig, type HermesConfig } from "../config/defaults.js";
import { loadEnvFile } from "../config/env-file.js";
import { resolveHome } from "../config/home.js";
import { createBuiltinRegistry } from "../tools/builtin.js";
import type { ToolRegistry } from "../tools/registry.js";
import { createToolRuntime } from "../tools/runtime.js";
import type { DelegationRequest, ToolRuntime } from "../tools/types.js";
import { terminalEnv } from "../util/env-scrub.js";
import { EventStream } from "../util/event-stream.js";
import { processRedactor, type Redactor } from "../util/redact.js";
import { newSessionId } from "../util/session-id.js";
import type { AgentRun, AIAgentOptions, CompressionReport, RunResult } from "./agent-types.js";
import { ApprovalPolicy, approvalSettings } from "./approval-policy.js";
import { auxiliaryJudge } from "./approval-smart.js";
import { compressMessages, estimateTokens, shouldCompress } from "./compression/index.js";
import { type DelegationHost, mayDelegate, runDelegation } from "./delegation.js";
import type { AgentEvent, AgentEventListener } from "./events.js";
import { ToolLoopGuard } from "./guardrails.js";
import { runLoop } from "./loop.js";
import { buildSessionPrompt } from "./prompt/session-prompt.js";
import { ProviderRecovery } from "./recovery.js";
import { learnContextLength, makeSummarizer, resolveContextLength, type Summarize } from "./summarizer.js";
import { buildToolContext, type ToolContextBase } from "./tool-context.js";
import { saveTrajectory } from "./trajectory.js";

export type { AgentRun, AIAgentOptions, CompressionReport, RunResult } from "./agent-types.js";

interface Frozen {
  /** Owns the primary transport (rotated or rebuilt after failures) and the fallback list. */
  recovery: ProviderRecovery;
  model: string;
  tools: ToolSchema[];
  systemPrompt: string;
  /** Problems met while building the prompt (blocked or unreadable files), told once. */
  warnings: string[];
  /** The model's context window, the basis of the compression threshold (lowered when learnt). */
  contextLength: number;
  /** The primary endpoint (context-window cache key); undefined with a ready transport. */
  baseUrl: string | undefined;
  /** The resolved provider, which subagents reuse; undefined with a ready transport. */
  runtime: ResolvedRuntime | undefined;
  /** Summarises a compression prompt with the auxiliary model (the main model as last resort). */
  summarize: Summarize;
}

/**
 * The names `<home>/.env` adds to the real environment: secrets Hermes loaded itself, which the
 * terminal does not inherit (env-scrub.ts). Unreadable or missing: none (nothing was loaded either).
 */
function hermesLoadedNames(home: string): string[] {
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
  private readonly listeners = new Set<AgentEventListener>();
  private readonly history: Message[];
  private readonly toolSession: Map<string, unknown>;
  private readonly approvals: ApprovalPolicy;
  /** Configuration problems of `approvals.*`, told once with the session's first events. */
  private readonly approvalWarnings: string[] = [];
  private readonly guard: ToolLoopGuard;
  private readonly unknownToolMisses = { count: 0 };
  private readonly steering: string[] = [];
  /** Subprocess environment for tools, without Hermes's own secrets; computed once. */
  private readonly toolEnv: Record<string, string | undefined>;
  /** Redacts every tool result before the model (and every consumer of the events) sees it. */
  private readonly redactor: Redactor;
  private frozen: Promise<Frozen> | null = null;
  private announced = false;
  private controller: AbortController | null = null;
  private totalUsage: Usage = { inputTokens: 0, outputTokens: 0 };
  /** Prompt tokens of the latest model call: how full the context window is. */
  private lastPromptTokens = 0;
  /** Saved ratios of this session's compression passes (anti-thrashing). */
  private readonly compressionPasses: number[] = [];

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
    this.approvals = options.approvals ?? this.buildApprovalPolicy(options);
    this.guard = ToolLoopGuard.fromConfig(this.config.tool_loop_guardrails);
    this.home = options.home ?? resolveHome({ env: options.env ?? process.env });
    this.redactor = options.redactor ?? processRedactor();
    this.toolEnv = terminalEnv(options.env ?? process.env, {
      withheld: options.withheldEnv ?? hermesLoadedNames(this.home),
      passthrough: this.config.terminal.env_passthrough,
    });
  }

  get sessionId(): string {
    return this.currentSessionId;
  }

  private buildApprovalPolicy(options: AIAgentOptions): ApprovalPolicy {
    const { settings, warnings } = approvalSettings(this.config, options.platform);
    this.approvalWarnings.push(...warnings);
    const judge = auxiliaryJudge({
      chain: async () => {
        const frozen = await this.prepare();
        const env = this.options.env ?? process.env;
        const chain = frozen.runtime
          ? resolveAuxiliaryChain("approval", { config: this.config, env, main: frozen.runtime })
          : [];
        return { chain, transport: frozen.recovery.transport, model: frozen.model };
      },
    });
    return new ApprovalPolicy({
      settings,
      yolo: options.yolo ?? false,
      allowlist: this.config.command_allowlist ?? [],
      cwd: this.cwd,
      judge,
      ...(options.onApproval ? { prompt: options.onApproval } : {}),
      ...(options.persistAlwaysApproval ? { persistAlways: options.persistAlwaysApproval } : {}),
      ...(options.onApprovalDenied ? { onDenied: options.onApprovalDenied } : {}),
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
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The session's system prompt, built once (resolves the provider on first use). */
  async systemPrompt(): Promise<string> {
    return (await this.prepare()).systemPrompt;
  }

  /** The tool names offered to the model this session (frozen at first use). */
  async toolNames(): Promise<string[]> {
    return (await this.prepare()).tools.map((t) => t.function.name);
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
    if (this.controller) throw new Error("A turn is already running; interrupt it or wait for it to finish.");
    const controller = new AbortController();
    this.controller = controller;
    const stream = new EventStream<AgentEvent>();
    const emit = (event: AgentEvent) => {
      if (event.type === "usage") this.addUsage(event.usage);
      stream.push(event);
      for (const listener of this.listeners) {
        try {
          listener(event);
        } catch {
          // A failing consumer must not break the turn or the other consumers.
        }
      }
    };
    const result = this.execute(input, controller, emit).finally(() => {
      this.controller = null;
      stream.end();
    });
    return { result, [Symbol.asyncIterator]: () => stream[Symbol.asyncIterator]() };
  }

  /** Releases tool resources (shells, background processes) when the agent owns them. */
  async close(): Promise<void> {
    this.controller?.abort();
    if (this.frozen) {
      try {
        await (await this.frozen).recovery.flush();
      } catch {
        // Nothing to flush when the session never resolved its provider.
      }
    }
    if (this.ownsRuntime) await this.runtime.dispose();
  }

  private async execute(
    input: string | Message["content"],
    controller: AbortController,
    emit: (e: AgentEvent) => void,
  ): Promise<RunResult> {
    let frozen: Frozen;
    try {
      frozen = await this.prepare();
    } catch (error) {
      this.frozen = null;
      const message = error instanceof Error ? error.message : String(error);
      emit({ type: "error", message });
      const failed: RunResult = {
        text: "",
        reason: "error",
        iterations: 0,
        usage: this.usage,
        error: message,
      };
      emit({ type: "done", reason: "error", text: "", iterations: 0, usage: failed.usage });
      return failed;
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
    }
    // The previous call filled the context past `compression.threshold`: compress before this turn.
    if (
      this.config.compression.enabled &&
      shouldCompress({
        promptTokens: this.lastPromptTokens,
        contextLength: frozen.contextLength,
        threshold: this.config.compression.threshold,
      })
    ) {
      await this.compressHistory(frozen, emit, { signal: controller.signal });
    }
    const pendingSteer = this.steering.splice(0);
    const userText =
      typeof input === "string" && pendingSteer.length > 0 ? `${pendingSteer.join("\n")}\n\n${input}` : input;
    const userMessage: Message = { role: "user", content: userText };
    this.history.push(userMessage);
    emit({ type: "message", message: userMessage });

    const retry: RetryPolicy = {
      ...DEFAULT_RETRY_POLICY,
      maxRetries: this.config.agent.api_max_retries,
      ...(this.options.retry ?? {}),
    };
    frozen.recovery.warn = (message) => emit({ type: "warning", message });
    const enabled = frozen.tools.map((t) => t.function.name);
    const outcome = await runLoop(
      this.history,
      {
        transport: frozen.recovery.transport,
        recovery: frozen.recovery,
        ...(this.config.compression.enabled
          ? {
              compress: async (failure) => {
                await this.learnContextLength(frozen, failure, emit);
                return (
                  (await this.compressHistory(frozen, emit, { signal: controller.signal })).status ===
                  "compressed"
                );
              },
              checkpoint: async () => {
                // Tool results since the last call count too: a big file read mid-turn must not
                // wait for the provider to refuse the next request.
                const lastCall = this.history.findLastIndex((m) => m.role === "assistant");
                const added = estimateTokens(this.history.slice(lastCall + 1));
                const promptTokens = this.lastPromptTokens > 0 ? this.lastPromptTokens + added : 0;
                if (
                  shouldCompress({
                    promptTokens,
                    contextLength: frozen.contextLength,
                    threshold: this.config.compression.threshold,
                  })
                ) {
                  await this.compressHistory(frozen, emit, { signal: controller.signal });
                }
              },
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
        ...(this.config.agent.reasoning_effort
          ? { reasoningEffort: this.config.agent.reasoning_effort }
          : {}),
        maxIterations: this.options.maxTurns ?? this.config.agent.max_turns,
        retry,
        traits: (name) => {
          const tool = this.registry.get(name);
          if (!tool) return undefined;
          const pathScoped = tool.pathScoped?.bind(tool);
          return {
            parallelSafe: tool.parallelSafe ?? false,
            interactive: tool.interactive ?? false,
            ...(pathScoped ? { paths: (args: Record<string, unknown>) => pathScoped(args, this.cwd) } : {}),
          };
        },
        executeTool: (call, signal) => {
          const base = this.toolBase(frozen);
          const ctx = buildToolContext(base, { callId: call.id, name: call.name, signal, emit, enabled });
          // Where tool output enters the conversation: a `cat .env` or `env` must not carry a key
          // into the model's context, the session store, a trajectory or a chat reply.
          return this.registry.execute(call.name, call.args, ctx, base.limits).then((outcome) => {
            const content = this.redactor.redact(outcome.content);
            const error = outcome.error === undefined ? undefined : this.redactor.redact(outcome.error);
            return content === outcome.content && error === outcome.error
              ? outcome
              : { ...outcome, content, ...(error === undefined ? {} : { error }) };
          });
        },
        guard: this.guard,
        takeSteering: () => {
          const notes = this.steering.splice(0);
          return notes.length > 0 ? notes.join("\n") : undefined;
        },
        unknownToolMisses: this.unknownToolMisses,
        emit,
      },
      controller.signal,
    );

    if (this.options.saveTrajectories ?? this.config.agent.save_trajectories) {
      try {
        await saveTrajectory(this.cwd, {
          messages: this.history,
          tools: frozen.tools,
          model: frozen.model,
          completed: outcome.reason === "completed",
        });
      } catch (error) {
        emit({ type: "warning", message: `Could not save the trajectory: ${String(error)}` });
      }
    }
    emit({
      type: "done",
      reason: outcome.reason,
      text: outcome.text,
      iterations: outcome.iterations,
      usage: outcome.usage,
    });
    return {
      text: outcome.text,
      reason: outcome.reason,
      iterations: outcome.iterations,
      usage: outcome.usage,
      ...(outcome.error ? { error: outcome.error } : {}),
    };
  }

  /**
   * Compresses the conversation now (`/compress [focus]`): the middle turns become one structured
   * summary; the first turns and a recent tail stay verbatim. A failed summary changes nothing.
   */
  async compress(options: { focus?: string } = {}): Promise<CompressionReport> {
    if (this.controller) throw new Error("A turn is running; compress after it finishes.");
    const frozen = await this.prepare();
    const report = await this.compressHistory(frozen, (event) => this.broadcast(event), {
      force: true,
      ...(options.focus ? { focus: options.focus } : {}),
    });
    return report;
  }

  private broadcast(event: AgentEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // A failing consumer must not break the others.
      }
    }
  }

  private async compressHistory(
    frozen: Frozen,
    emit: (e: AgentEvent) => void,
    options: { force?: boolean; focus?: string; signal?: AbortSignal },
  ): Promise<CompressionReport> {
    const result = await compressMessages(this.history, {
      summarize: (prompt) => frozen.summarize(prompt, options.signal),
      contextLength: frozen.contextLength,
      targetRatio: this.config.compression.target_ratio,
      previousPasses: this.compressionPasses,
      ...(options.force ? { force: true } : {}),
      ...(options.focus ? { focus: options.focus } : {}),
    });
    if (result.status === "compressed") {
      this.history.splice(0, this.history.length, ...result.messages);
      this.compressionPasses.push(result.savedRatio);
      this.lastPromptTokens = 0;
      const parent = this.currentSessionId;
      this.currentSessionId = newSessionId();
      emit({
        type: "compression",
        sessionId: parent,
        childSessionId: this.currentSessionId,
        messages: [...result.messages],
        tokensBefore: result.tokensBefore,
        tokensAfter: result.tokensAfter,
      });
      emit({
        type: "warning",
        message: `Context compressed: about ${result.tokensBefore} → ${result.tokensAfter} tokens of conversation (${Math.round(result.savedRatio * 100)}% saved).`,
      });
    } else if (result.error) {
      emit({ type: "warning", message: result.error });
    }
    return {
      status: result.status,
      tokensBefore: result.tokensBefore,
      tokensAfter: result.tokensAfter,
      ...(result.error ? { error: result.error } : {}),
    };
  }

  /**
   * After an overflow error: when the request was smaller than the window we assumed, the window
   * is smaller than we thought. Learn it (the size the error states, else the next tier down),
   * cache it in `context_length_cache.yaml`, and plan compression against it from now on. A
   * window set in config.yaml is the user's word and is kept.
   */
  /** After an overflow error: plan against a smaller window when one was learnt (see summarizer.ts). */
  private async learnContextLength(
    frozen: Frozen,
    failure: ClassifiedError,
    emit: (e: AgentEvent) => void,
  ): Promise<void> {
    const learnt = await learnContextLength({
      failure,
      configured: this.config.model.context_length,
      sentTokens: Math.max(this.lastPromptTokens, estimateTokens(this.history)),
      current: frozen.contextLength,
      model: frozen.model,
      baseUrl: frozen.baseUrl,
      store: fileContextLengthStore(this.home),
    });
    if (learnt === undefined) return;
    emit({
      type: "warning",
      message: `The provider's context window for ${frozen.model} is smaller than assumed: planning with ${learnt} tokens (was ${frozen.contextLength}).`,
    });
    frozen.contextLength = learnt;
  }

  private prepare(): Promise<Frozen> {
    this.frozen ??= this.freeze();
    return this.frozen;
  }

  private async freeze(): Promise<Frozen> {
    const env = this.options.env ?? process.env;
    let transport = this.options.transport;
    let model = this.options.model ?? this.config.model.default;
    let runtime: ResolvedRuntime | undefined;
    const routing = this.config["provider_routing"];
    const bedrock = this.config["bedrock"];
    const transportOptions: TransportOptions = {
      cacheTtl: this.config.prompt_caching.cache_ttl,
      stallTimeoutMs: Math.max(0, Number(this.config.agent.stream_stall_timeout ?? 60) || 0) * 1000,
      ...(routing && typeof routing === "object"
        ? { providerRouting: routing as Record<string, unknown> }
        : {}),
      env,
      ...(bedrock && typeof bedrock === "object" ? { bedrock: bedrock as Record<string, unknown> } : {}),
    };
    if (!transport) {
      runtime =
        this.options.resolved ??
        resolveRuntime({
          flags: {
            ...(this.options.model ? { model: this.options.model } : {}),
            ...(this.options.provider ? { provider: this.options.provider } : {}),
            ...(this.options.baseUrl ? { baseUrl: this.options.baseUrl } : {}),
          },
          config: this.options.apiKey
            ? { ...this.config, model: { ...this.config.model, api_key: this.options.apiKey } }
            : this.config,
          env,
        });
      transport = await createTransport(runtime, transportOptions);
      model = runtime.model;
    }
    const recovery = new ProviderRecovery({
      home: this.home,
      config: this.config,
      env,
      transportOptions,
      runtime,
      transport,
      model: model || "default",
      // A ready transport or an explicit key: there is no pool to rotate through.
      usePool: this.options.transport === undefined && this.options.apiKey === undefined,
    });
    await recovery.init();
    if (this.options.toolsReady) await this.options.toolsReady.catch(() => undefined);
    const session = await buildSessionPrompt({
      home: this.home,
      config: this.config,
      cwd: this.cwd,
      env,
      ...(this.options.toolsets ? { toolsets: this.options.toolsets } : {}),
      platform: this.options.platform ?? "cli",
      registry: this.registry,
      ...(model ? { model } : {}),
      ...(this.options.personality !== undefined ? { personality: this.options.personality } : {}),
      ...(this.options.skipContextFiles ? { skipContextFiles: true } : {}),
      ...(this.options.skipMemory ? { skipMemory: true } : {}),
    });
    // At the delegation depth limit the tool could only refuse, so it is not offered.
    const tools = mayDelegate(this.config, this.depth)
      ? session.tools
      : session.tools.filter((t) => t.function.name !== "delegate_task");
    const systemPrompt = this.options.systemPrompt ?? session.text;
    const warnings = this.options.systemPrompt === undefined ? session.warnings : [];
    const window = resolveContextLength({
      model: model || "default",
      config: this.config,
      runtime,
      store: fileContextLengthStore(this.home),
    });
    const contextLength = window.now;
    const auxChain = runtime
      ? resolveAuxiliaryChain("compression", { config: this.config, env, main: runtime })
      : [];
    const summaryModel = model || "default";
    const summarize = makeSummarizer({
      chain: auxChain,
      transport: () => recovery.transport,
      model: summaryModel,
    });
    const frozen: Frozen = {
      recovery,
      model: summaryModel,
      tools,
      systemPrompt,
      warnings,
      contextLength,
      baseUrl: runtime?.baseUrl,
      runtime,
      summarize,
    };
    // The endpoint's own word on the window arrives later; compression plans with it from then on.
    void window.stated?.then((tokens) => {
      if (tokens !== undefined) frozen.contextLength = tokens;
    });
    return frozen;
  }

  /** What every tool call of this turn shares; `frozen` enables delegation where allowed. */
  private toolBase(frozen: Frozen): ToolContextBase {
    const delegate = mayDelegate(this.config, this.depth)
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
      spawn: (options) => new AIAgent(options),
    };
  }

  private get depth(): number {
    return this.options.delegationDepth ?? 0;
  }

  private addUsage(add: Usage): void {
    if (add.inputTokens > 0) this.lastPromptTokens = add.inputTokens;
    this.totalUsage = {
      inputTokens: this.totalUsage.inputTokens + add.inputTokens,
      outputTokens: this.totalUsage.outputTokens + add.outputTokens,
      cacheReadTokens: (this.totalUsage.cacheReadTokens ?? 0) + (add.cacheReadTokens ?? 0),
      cacheWriteTokens: (this.totalUsage.cacheWriteTokens ?? 0) + (add.cacheWriteTokens ?? 0),
      reasoningTokens: (this.totalUsage.reasoningTokens ?? 0) + (add.reasoningTokens ?? 0),
    };
  }
}
