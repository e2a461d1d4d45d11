/**
 * `ChatSession`: a conversation as the user sees it across `/new`, `/resume`, `/branch`, `/undo` and
 * `/model`. It owns the current `AIAgent` (replaced when the session changes), records it in the
 * session store, and keeps the session's system prompt byte-identical across resumes so a
 * provider's prompt cache keeps hitting.
 */

import { auxiliaryComplete, resolveAuxiliaryChain } from "../ai/auxiliary.js";
import { estimateUsageCost, type PricingOverrides, parsePricingOverrides } from "../ai/pricing.js";
import { type Message, messageText, type Usage } from "../ai/types.js";
import { addUsage } from "../ai/usage.js";
import { stripMemoryContext } from "../knowledge/memory/providers/context-block.js";
import { loadBundleMessage } from "../knowledge/skills/skill-bundles.js";
import { loadSkillMessage } from "../knowledge/skills/view.js";
import {
  type SessionRecord,
  type SessionSource,
  type SessionStore,
  SessionStoreError,
  type SessionSummary,
} from "../state/types.js";
import { createToolRuntime } from "../tools/runtime.js";
import type { AgentNotice, ToolRuntime } from "../tools/types.js";
import { newSessionId } from "../util/session-id.js";
import { type AgentRun, AIAgent, type CompressionReport } from "./agent.js";
import type { ChatSessionOptions, UsageReport } from "./chat-session-types.js";
import { agentEventLogger } from "./event-log.js";
import type { AgentEvent } from "./events.js";
import { loadRepairedConversation } from "./history-load.js";
import { type MemoryHook, openSessionMemory } from "./memory-provider-hook.js";
import { resolveModelSwitch } from "./model-switch.js";
import { NoticeQueue, type WakeListener } from "./notices.js";
import type { LearningLoop } from "./review/learning-loop.js";
import { sessionLearning } from "./review/session-learning.js";
import { sessionRecorder } from "./session-recorder.js";
import { emptyTally, knownStatus, undoInMemory, worseStatus } from "./session-tally.js";
import { cleanTitle, titlePrompt, uniqueTitle } from "./title.js";

export type { ChatSessionOptions, UsageReport } from "./chat-session-types.js";

interface AgentSeed {
  id: string;
  messages?: Message[];
  systemPrompt?: string;
  parentSessionId?: string;
  title?: string;
}

export class ChatSession {
  private options: ChatSessionOptions;
  private readonly store: SessionStore | null;
  private readonly source: SessionSource;
  private readonly userId: string | undefined;
  private readonly runtime: ToolRuntime;
  private current!: AIAgent;
  private detachRecorder: () => void = () => undefined;
  private wasResumed = false;
  private modelName: string;
  /** The frozen system prompt of the current session, once known. */
  private prompt: string | undefined;
  private tally = emptyTally();
  private pricing: PricingOverrides | undefined;
  /** The external memory provider (`memory.provider`), when one is configured and on. */
  private readonly memory: MemoryHook | undefined;
  /** The background title request of this ChatSession (one per process-session at most). */
  private titling: Promise<void> | undefined;
  private titleAbort: AbortController | undefined;
  /** Nudges, background reviews, the flush before turns leave the context (agent/review/). */
  private readonly learning: LearningLoop | undefined;
  /** Notices from tools, kept across `/new`, `/resume` and rebuilt agents (agent/notices.ts). */
  private readonly notices = new NoticeQueue();

  private constructor(options: ChatSessionOptions, store: SessionStore | null) {
    this.options = options;
    this.store = store;
    this.source = options.source ?? "cli";
    this.userId = options.userId;
    this.runtime = createToolRuntime();
    this.modelName = options.model ?? options.resolved?.model ?? options.config?.model.default ?? "default";
    // memory.provider: one hook for the whole conversation; its tools join the session's registry.
    const opened = openSessionMemory(options, this.userId, (message) => this.warn(message));
    this.memory = opened.hook;
    if (opened.registry) this.options = { ...this.options, registry: opened.registry };
    this.learning = sessionLearning(options, store, this);
  }

  /**
   * Opens a new session, or the one `resume`/`continueLast` names. Throws `SessionStoreError`
   * (`not_found`, `ambiguous`) when that session cannot be found; nothing is created then.
   */
  static async open(options: ChatSessionOptions): Promise<ChatSession> {
    const store = options.store ?? null;
    let target: SessionRecord | null = null;
    if (options.resume !== undefined || options.continueLast) {
      if (!store) {
        throw new SessionStoreError(
          "not_found",
          "Sessions are not being recorded, so there is none to resume.",
        );
      }
      if (options.resume !== undefined) {
        target = await store.resolveSession(options.resume);
      } else {
        const title = typeof options.continueLast === "string" ? options.continueLast : undefined;
        target = title
          ? await store.latestSession({ title })
          : await store.latestSession({ source: options.source ?? "cli" });
        if (!target) {
          throw new SessionStoreError(
            "not_found",
            title
              ? `No session titled "${title}" to continue. Try \`hermes sessions list\`.`
              : "No earlier session to continue. Start one with `hermes`.",
          );
        }
      }
    }
    const session = new ChatSession(options, store);
    if (target) {
      session.wasResumed = true;
      session.switchTo(await session.seedFrom(target));
    } else {
      session.switchTo({
        id: options.newSessionId ?? newSessionId(),
        ...(options.title ? { title: options.title } : {}),
      });
    }
    return session;
  }

  get agent(): AIAgent {
    return this.current;
  }

  get id(): string {
    return this.current.sessionId;
  }

  /** The stored title (null: none, or nothing recorded yet). */
  async currentTitle(): Promise<string | null> {
    return (await this.loadRecord())?.title ?? null;
  }

  get resumed(): boolean {
    return this.wasResumed;
  }

  get model(): string {
    return this.modelName;
  }

  get provider(): string {
    return (
      this.options.resolved?.provider ?? this.options.provider ?? this.options.config?.model.provider ?? ""
    );
  }

  /** The endpoint the model is called at (undefined without a resolved runtime). */
  get baseUrl(): string | undefined {
    return this.options.resolved?.baseUrl;
  }

  /** Process resources this conversation's tools share (shells, browsers), kept across `/new`. */
  get toolRuntime(): ToolRuntime {
    return this.runtime;
  }

  get running(): boolean {
    return this.current.running;
  }

  /** The stored row, or null when sessions are not recorded or nothing has been said yet. */
  async loadRecord(): Promise<SessionRecord | null> {
    return (await this.store?.getSession(this.id)) ?? null;
  }

  /** A turn for `input`: text, or text and image parts (images attached by the user). */
  run(input: string | Message["content"]): AgentRun {
    return this.current.run(input);
  }

  interrupt(): void {
    this.current.interrupt();
  }

  /**
   * Calls `listener` when a tool queues a `wake` notice (a background process ended or printed a
   * watched line, a background child finished): an idle surface then runs `wake()`. Returns the
   * unsubscribe function.
   */
  onWake(listener: WakeListener): () => void {
    return this.notices.onWake(listener);
  }

  /** The first queued notice that asks for a turn (a surface checks when its running turn ends). */
  pendingWake(): AgentNotice | undefined {
    return this.notices.peekWake();
  }

  /** A turn for the queued notices alone; undefined when none wait or a turn is running. */
  wake(): AgentRun | undefined {
    return this.current.wake();
  }

  steer(text: string): void {
    this.current.steer(text);
  }

  /** Ends the current session and starts an empty one. */
  async newSession(title?: string): Promise<void> {
    this.assertIdle("start a new session");
    if (title && (await this.titleTaken(title))) {
      throw new SessionStoreError("title_taken", `The title "${title}" is already used by another session.`);
    }
    await this.retire("new_session");
    this.wasResumed = false;
    this.prompt = undefined;
    this.switchTo({ id: newSessionId(), ...(title ? { title } : {}) });
  }

  /** Switches to a stored session; its history and system prompt come back exactly as saved. */
  async resume(ref: string): Promise<SessionRecord> {
    this.assertIdle("resume another session");
    const store = this.requireStore("resume a session");
    const target = await store.resolveSession(ref);
    if (target.id === this.id) return target;
    await this.retire("switched");
    this.wasResumed = true;
    this.switchTo(await this.seedFrom(target));
    return target;
  }

  /** Forks the conversation so far into a new session whose parent is this one. */
  async branch(name?: string): Promise<SessionRecord> {
    this.assertIdle("branch");
    const store = this.requireStore("branch a session");
    if (!(await store.getSession(this.id))) {
      throw new SessionStoreError("invalid", "Nothing to branch yet: say something first.");
    }
    const fork = await store.branchSession(
      this.id,
      name ? { title: name, source: this.source } : { source: this.source },
    );
    if (fork.systemPrompt === null && this.prompt !== undefined) {
      await store.updateSession(fork.id, { systemPrompt: this.prompt });
    }
    await this.retire("branched");
    this.switchTo(await this.seedFrom((await store.getSession(fork.id)) ?? fork));
    return (await store.getSession(fork.id)) ?? fork;
  }

  /** Takes back the last `turns` user turns (default 1). */
  async undo(turns = 1): Promise<{ removed: number; userText: string | null }> {
    this.assertIdle("undo");
    const n = Math.max(1, Math.floor(turns));
    let result: { removed: number; userText: string | null };
    let messages: Message[];
    if (this.store && (await this.store.getSession(this.id))) {
      result = await this.store.undoTurns(this.id, n);
      messages = await this.loadConversation(this.store, this.id);
    } else {
      const cut = undoInMemory(this.current.messages, n);
      result = { removed: cut.removed, userText: cut.userText };
      messages = cut.messages;
    }
    if (result.removed > 0) await this.rebuild({ messages });
    return result;
  }

  /** Undoes the last turn and returns its user text for the caller to send again (null: none). */
  async retryText(): Promise<string | null> {
    const { removed, userText } = await this.undo(1);
    return removed > 0 ? userText : null;
  }

  /** Sets or clears the title; throws `title_taken` when another session has it. */
  async setTitle(title: string | null): Promise<SessionRecord> {
    const store = this.requireStore("title a session");
    if (!(await store.getSession(this.id))) {
      // Nothing said yet: create the row now so the title is kept; the recorder fills in the
      // system prompt when the first turn freezes it.
      return store.createSession({
        id: this.id,
        source: this.source,
        ...(this.userId ? { userId: this.userId } : {}),
        model: this.modelName,
        cwd: this.current.cwd,
        ...(title ? { title } : {}),
      });
    }
    return store.setTitle(this.id, title);
  }

  /** The personality overlay asked for this session (undefined: `display.personality`). */
  get personality(): string | undefined {
    return this.options.personality;
  }

  /**
   * Applies a personality overlay now: the system prompt is rebuilt (one deliberate prompt-cache
   * miss) and saved with the session, so a resume keeps it; the conversation is kept.
   */
  async setPersonality(name: string): Promise<void> {
    this.assertIdle("change the personality");
    this.options = { ...this.options, personality: name };
    await this.refreshPrompt();
  }

  /** The toolsets this conversation offers (undefined: `config.toolsets`). */
  get toolsets(): readonly string[] | undefined {
    return this.options.toolsets;
  }

  /**
   * Other toolsets from the next turn on (`/tools enable|disable`); the conversation is kept. The
   * tool list and the system prompt (its tool guidance and skills index follow the tools) are
   * rebuilt and saved with the session, so a resume keeps them: like a personality change, one
   * deliberate prompt-cache miss, since the tool schemas are part of the cached prefix.
   */
  async setToolsets(toolsets: readonly string[]): Promise<void> {
    this.assertIdle("change the tools");
    this.options = { ...this.options, toolsets: [...toolsets] };
    await this.refreshPrompt();
  }

  /** A fresh agent whose system prompt is built anew and recorded on the session. */
  private async refreshPrompt(): Promise<void> {
    this.prompt = undefined;
    await this.rebuild({ messages: [...this.current.messages] });
    const prompt = await this.current.systemPrompt();
    this.prompt = prompt;
    if (this.store && (await this.store.getSession(this.id))) {
      await this.store.updateSession(this.id, { systemPrompt: prompt });
    }
  }

  /**
   * The user message `/<skill-name> [request]` sends: the skill's instructions followed by the
   * request, or undefined when no enabled skill has that name. It travels as a user message, never
   * in the system prompt, so the prompt cache is untouched.
   */
  async skillMessage(name: string, request = ""): Promise<string | undefined> {
    const agent = this.current;
    const options = {
      ...(this.options.env ? { env: this.options.env } : {}),
      ...(request.trim() ? { instruction: request.trim() } : {}),
    };
    // A skill of that name wins; otherwise a bundle (skill-bundles/<name>.yaml) loads several.
    return (
      (await loadSkillMessage(agent.home, name, agent.config.skills, options)) ??
      loadBundleMessage(agent.home, name, agent.config.skills, options)
    );
  }

  /**
   * Compresses the conversation now (`/compress [focus]`). The record in state.db keeps every
   * message; the model sees the summary from the next turn on.
   */
  compress(focus?: string): Promise<CompressionReport> {
    this.assertIdle("compress the conversation");
    return this.current.compress(focus ? { focus } : {});
  }

  /**
   * Another model from the next turn on (`/model`: id, `provider:model` or alias; model-switch.ts);
   * history and system prompt stay. Recorded on the session at once (`sessions.model`), or by the
   * first turn when the session has no row yet.
   */
  async setModel(model: string, options: { baseUrl?: string } = {}): Promise<void> {
    this.assertIdle("change the model");
    const next = resolveModelSwitch(model, {
      ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}),
      config: this.current.config,
      resolved: this.options.resolved,
      env: this.options.env ?? process.env,
      home: this.current.home,
    });
    if (next.resolved) this.options = { ...this.options, resolved: next.resolved };
    this.modelName = next.model;
    await this.rebuild({ messages: [...this.current.messages] });
    try {
      // A session with no message yet has no row: the first turn writes it with this model.
      if (this.store && (await this.store.getSession(this.id))) {
        await this.store.updateSession(this.id, { model: this.modelName });
      }
    } catch (error) {
      this.warn(
        `the model switch was not recorded: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }

  async listSessions(limit = 20): Promise<SessionSummary[]> {
    // Subagent sessions belong to their parent; `hermes sessions list --all` shows them.
    return (await this.store?.listSessions({ limit, excludeSources: ["subagent"] })) ?? [];
  }

  /** The model and how full its context is: what a reply's footer shows, known without the store. */
  contextReport(): Pick<UsageReport, "model" | "contextTokens" | "contextLength"> {
    return {
      model: this.modelName,
      contextTokens: this.tally.lastContext,
      // The configured window, else the one the agent plans with (the catalog or the endpoint).
      contextLength: this.options.config?.model.context_length ?? this.agent.contextLength ?? null,
    };
  }

  async usageReport(): Promise<UsageReport> {
    const row = await this.loadRecord();
    const status = row ? knownStatus(row.costStatus) : this.tally.costStatus;
    const usage: Usage = row
      ? {
          inputTokens: row.inputTokens,
          outputTokens: row.outputTokens,
          cacheReadTokens: row.cacheReadTokens,
          cacheWriteTokens: row.cacheWriteTokens,
          reasoningTokens: row.reasoningTokens,
        }
      : { ...this.tally.usage };
    return {
      ...this.contextReport(),
      usage,
      apiCalls: row ? row.apiCallCount : this.tally.apiCalls,
      costUsd: row ? (row.actualCostUsd ?? row.estimatedCostUsd) : this.tally.costUsd,
      costStatus: status,
    };
  }

  /** Ends the session (kept in the store) and releases shells and background processes. */
  async close(reason = "user_exit"): Promise<void> {
    this.notices.close();
    this.titleAbort?.abort();
    await this.titling;
    await this.retire(reason);
    // A running review is waited for (at most memory.review_budget_seconds), not lost.
    await this.learning?.settle();
    // A one-shot run must not exit before its turn reached the provider (bounded wait).
    await this.memory?.close();
    await this.runtime.dispose();
  }

  private async seedFrom(record: SessionRecord): Promise<AgentSeed> {
    const store = this.requireStore("resume a session");
    // A session that was never ended needs no write (the API server opens one per request).
    if (record.endedAt !== null || record.endReason !== null) await store.reopenSession(record.id);
    return {
      id: record.id,
      messages: await this.loadConversation(store, record.id),
      ...(record.systemPrompt !== null ? { systemPrompt: record.systemPrompt } : {}),
    };
  }

  private loadConversation(store: SessionStore, id: string): Promise<Message[]> {
    return loadRepairedConversation(store, id, {
      ...(this.options.logger ? { logger: this.options.logger } : {}),
      ...(this.options.onWarning ? { onWarning: this.options.onWarning } : {}),
    });
  }

  private switchTo(seed: AgentSeed): void {
    this.prompt = seed.systemPrompt;
    this.tally = emptyTally();
    const {
      store: _store,
      source: _source,
      memory: _memory,
      resume: _r,
      continueLast: _c,
      title: _t,
      newSessionId: _n,
      onWarning: warn,
      logger,
      ...agentOptions
    } = this.options;
    const onWarning = warn || logger ? (message: string) => this.warn(message) : undefined;
    const resolved = agentOptions.resolved ? { ...agentOptions.resolved, model: this.modelName } : undefined;
    this.current = new AIAgent({
      ...agentOptions,
      ...(resolved ? { resolved } : {}),
      ...(this.options.transport || !resolved ? { model: this.modelName } : {}),
      runtime: this.runtime,
      notices: this.notices,
      ...(this.memory ? { memory: this.memory } : {}),
      sessionId: seed.id,
      ...(seed.messages ? { messages: seed.messages } : {}),
      ...(seed.systemPrompt !== undefined ? { systemPrompt: seed.systemPrompt } : {}),
      ...(this.store ? { sessionStore: this.store } : {}),
    });
    const pricing = this.pricingOverrides(onWarning);
    const listeners: Array<() => void> = [this.current.on((event) => this.observe(event))];
    if (this.learning) listeners.push(this.learning.attach(this.current));
    if (logger) {
      listeners.push(
        this.current.on(agentEventLogger(logger, { sessionId: seed.id, provider: this.provider })),
      );
    }
    if (this.store) {
      listeners.push(
        this.current.on(
          sessionRecorder({
            store: this.store,
            source: this.source,
            ...(this.userId ? { userId: this.userId } : {}),
            cwd: this.current.cwd,
            ...(seed.title ? { title: seed.title } : {}),
            ...(seed.parentSessionId ? { parentSessionId: seed.parentSessionId } : {}),
            ...(resolved ? { billingProvider: resolved.provider, billingBaseUrl: resolved.baseUrl } : {}),
            pricing,
            ...(onWarning ? { onError: onWarning } : {}),
          }),
        ),
      );
    }
    this.detachRecorder = () => {
      for (const off of listeners) off();
    };
  }

  /** A fresh agent for the same session (after undo or a model change). */
  private async rebuild(seed: { messages: Message[] }): Promise<void> {
    const id = this.id;
    const systemPrompt = this.prompt;
    const tally = this.tally;
    this.detachRecorder();
    await this.current.close();
    this.switchTo({ id, messages: seed.messages, ...(systemPrompt !== undefined ? { systemPrompt } : {}) });
    this.tally = tally;
  }

  /** Starts background reviews held until the reply was sent (`holdReviews`). */
  releaseReviews(): void {
    this.learning?.release();
  }

  /** Settles when a title being generated in the background is stored (or given up). */
  titleSettled(): Promise<void> {
    return this.titling ?? Promise.resolve();
  }

  /** Starts title generation after a completed first exchange, when asked for and possible. */
  private maybeTitle(answer: string): void {
    const resolved = this.options.resolved;
    const store = this.store;
    if (!this.options.autoTitle || !resolved || !store || this.titling || this.wasResumed) return;
    if (!answer.trim()) return;
    const users = this.current.messages.filter((m) => m.role === "user");
    const first = users[0];
    if (users.length !== 1 || !first) return;
    const id = this.id;
    const controller = new AbortController();
    this.titleAbort = controller;
    const config = this.current.config;
    const env = this.options.env ?? process.env;
    this.titling = (async () => {
      try {
        if ((await store.getSession(id))?.title) return;
        const chain = resolveAuxiliaryChain("title_generation", {
          config,
          env,
          main: resolved,
          home: this.current.home,
        });
        const asked = stripMemoryContext(messageText(first));
        const { text } = await auxiliaryComplete(chain, titlePrompt(asked, answer), {
          signal: controller.signal,
          maxTokens: 40,
        });
        const title = cleanTitle(text);
        if (!title || (await store.getSession(id))?.title) return;
        await store.setTitle(id, await uniqueTitle(title, (t) => this.titleTaken(t)));
      } catch {
        // Best effort: the session stays untitled, as when no model can be reached.
      }
    })();
  }

  private observe(event: AgentEvent): void {
    if (event.type === "done" && event.reason === "completed") {
      this.maybeTitle(event.text);
    } else if (event.type === "session_start") {
      this.prompt = event.systemPrompt;
      this.modelName = event.model;
    } else if (event.type === "turn_start") {
      this.tally.apiCalls++;
    } else if (event.type === "usage") {
      const u = event.usage;
      this.tally.usage = addUsage(this.tally.usage, u);
      this.tally.lastContext = u.inputTokens + u.outputTokens;
      const resolved = this.options.resolved;
      const cost = estimateUsageCost(
        u,
        event.billing
          ? { ...event.billing, overrides: this.pricing }
          : {
              model: this.modelName,
              provider: resolved?.provider,
              baseUrl: resolved?.baseUrl,
              overrides: this.pricing,
            },
      );
      if (cost.usd !== null) this.tally.costUsd = (this.tally.costUsd ?? 0) + cost.usd;
      this.tally.costStatus = worseStatus(this.tally.costStatus, cost.status);
    }
  }

  /** config.yaml `pricing:`, parsed once; entries that cannot be read are reported, never fatal. */
  private pricingOverrides(onWarning: ((message: string) => void) | undefined): PricingOverrides {
    if (this.pricing === undefined) {
      const { overrides, problems } = parsePricingOverrides(this.current.config["pricing"]);
      this.pricing = overrides;
      for (const problem of problems) onWarning?.(`${problem} That price is ignored.`);
    }
    return this.pricing;
  }

  /** A recording problem: to the surface (`onWarning`) and the log. */
  private warn(message: string): void {
    // Also called while the constructor opens the memory provider, before any agent exists.
    const sessionId = (this.current as AIAgent | undefined)?.sessionId;
    this.options.logger?.child({ component: "agent", ...(sessionId ? { sessionId } : {}) }).warning(message);
    this.options.onWarning?.(message);
  }

  private async retire(reason: string): Promise<void> {
    // `/new` and the gateway's resets drop the conversation from the context: review it first.
    if (reason === "new_session") this.learning?.flush("new_session");
    this.detachRecorder();
    this.detachRecorder = () => undefined;
    // A session nobody spoke in never started (no "session start" line): nothing to end.
    if (this.current.messages.length > 0) {
      this.options.logger?.child({ component: "agent", sessionId: this.id }).info("session end", {
        reason,
        model: this.modelName,
        messages: this.current.messages.length,
      });
    }
    if (this.store) {
      // What the recorder is still writing (a turn cut short) lands before the session is ended.
      await this.current.listenersSettled();
      try {
        await this.store.endSession(this.id, reason);
      } catch (error) {
        // A session whose turn never started has no row: nothing to end (asked by the write itself
        // rather than a read before it, one statement fewer per API request).
        if (!(error instanceof SessionStoreError && error.code === "not_found"))
          this.warn(`Could not mark the session ended: ${String(error)}`);
      }
    }
    await this.current.close();
  }

  private async titleTaken(title: string): Promise<boolean> {
    try {
      return (await this.store?.resolveSession(title))?.title === title;
    } catch {
      return false;
    }
  }

  private assertIdle(what: string): void {
    if (this.current.running) {
      throw new SessionStoreError("invalid", `A turn is running; stop it (/stop) before you ${what}.`);
    }
  }

  private requireStore(what: string): SessionStore {
    if (!this.store)
      throw new SessionStoreError("invalid", `Sessions are not being recorded, so you cannot ${what}.`);
    return this.store;
  }
}
