/**
 * The messaging gateway's heart: every platform adapter hands its messages here. The router
 * decides who may talk (allowlists, DM pairing), which conversation a message belongs to (Hermes's
 * session keys, `sessions/sessions.json`, reset policies), runs the conversation's agent (one
 * cached `ChatSession` per key, so the provider's prompt cache holds), handles input that arrives
 * while the agent works (`display.busy_input_mode`), dispatches slash commands through the shared
 * registry (`src/commands/`, adapted in `commands.ts`), asks for approvals in the chat, and
 * delivers the answer (see `reply.ts`).
 */
import type { ChatSession } from "../../agent/chat-session.js";
import { dispatchInput, looksLikeCommand } from "../../commands/index.js";
import { runtimeFooter, sessionFooterFacts } from "../../commands/runtime-footer.js";
import {
  type ChatSessionIndex,
  chatSessionIndex,
  type ResetPolicy,
  resetNotice,
  resetPolicyFrom,
  resetReason,
  SessionIndex,
} from "../../state/gateway/session-index.js";
import { SessionStoreError } from "../../state/types.js";
import { type Logger, silentLogger } from "../../util/log.js";
import { chatTier } from "../auth/admin.js";
import type {
  InboundAction,
  InboundMessage,
  MessageSource,
  OutboundTarget,
  PlatformAdapter,
} from "../platforms/types.js";
import { sessionKey } from "../session-key.js";
import { ChatApprovals, parseApprovalReply } from "./approvals.js";
import { whileBusy } from "./busy-input.js";
import { ChatToggles } from "./chat-toggles.js";
import {
  ChatQuestions,
  chatCommandContext,
  chatCommands,
  describeOutcome,
  messageQueue,
  setHomeChannel,
} from "./commands.js";
import { deliverAside } from "./deliver.js";
import {
  continuedInput,
  type DrainSettings,
  drainSettings,
  QUEUE_DROPPED_NOTICE,
  RESTART_INTERRUPTED,
  RESTART_INTERRUPTED_NOTICE,
  RESTARTING_NOTICE,
  settlesWithin,
} from "./drain.js";
import { batchInput, sharedConversation, transcribeVoice } from "./inbound-text.js";
import { refuseStranger } from "./pairing-offer.js";
import { nextBatch, resumeRedelivered, settle, settleAnswered, settledAfter } from "./receipts.js";
import { ReplyView, streamSettings, toolProgressLevel } from "./reply.js";
import { RouterAccess } from "./router-access.js";
import type { Conversation, OpenConversation, RouterOptions } from "./router-types.js";
import { TurnWatch, turnWatchSettings } from "./turn-watch.js";
import { voiceReplies } from "./voice-reply.js";

export type { BusyMode } from "./commands.js";
export type { OpenConversation, RouterOptions } from "./router-types.js";

const section = (value: unknown): Record<string, unknown> =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

const describeError = (error: unknown) => (error instanceof Error ? error.message : String(error));

export class MessageRouter {
  private readonly conversations = new Map<string, Conversation>();
  private readonly index: ChatSessionIndex;
  readonly approvals: ChatApprovals; // public for the control socket
  private readonly questions: ChatQuestions;
  private readonly running = new Set<Promise<void>>();
  private readonly print: (line: string) => void;
  private readonly logger: Logger;
  private readonly now: () => Date;
  private closing = false;
  /** A restart waits for running turns: new requests are turned away. */
  private restarting = false;
  private readonly drain: DrainSettings;
  /** Allowlists and pairing approvals (router-access.ts). */
  private readonly access: RouterAccess;
  /** `/verbose` and `/yolo` per chat, shared across instances when the options say so. */
  private readonly toggles: ChatToggles;

  constructor(private readonly options: RouterOptions) {
    this.drain = drainSettings(options.config);
    this.access = new RouterAccess(options);
    const voice = voiceReplies(options);
    this.toggles = new ChatToggles(options.config, options.chatSettings, (line) => this.log(line), voice);
    this.print = options.log ?? (() => undefined);
    this.logger = options.logger ?? silentLogger;
    this.now = options.now ?? (() => new Date());
    this.index =
      options.index ?? chatSessionIndex(new SessionIndex(options.home, (m) => this.log(`sessions: ${m}`)));
    const timeout = Number(section(options.config["approvals"])["timeout"]);
    const ms = (Number.isFinite(timeout) && timeout > 0 ? timeout : 60) * 1000;
    this.approvals = new ChatApprovals(ms, options.observer);
    // A pick from a list (`/resume`) waits longer than a yes/no: the user reads the list first.
    this.questions = new ChatQuestions(5 * 60 * 1000);
  }

  /** A problem: one line on stderr, a WARNING in the logs (component `gateway` or `gateway.<platform>`). */
  private log(line: string, platform?: string, sessionId?: string): void {
    this.print(line);
    this.logFor(platform, sessionId).warning(line);
  }

  private logFor(platform: string | undefined, sessionId?: string): Logger {
    return this.logger.child({ component: platform ? `gateway.${platform}` : "gateway", sessionId });
  }

  /** The handlers to pass to `adapter.connect`. */
  handlersFor(adapter: PlatformAdapter) {
    return {
      onMessage: (m: InboundMessage) =>
        this.track(settledAfter(this.onMessage(adapter, m), m, this.conversations)),
      onAction: (action: InboundAction) => this.track(this.onAction(action)),
      onError: (message: string) => this.log(`${adapter.platform}: ${message}`, adapter.platform),
      authorized: (source: MessageSource) => {
        // Synchronous for the adapters: decided on the approved users last read, then read again.
        void this.access.approvedOn(source.platform).catch(() => undefined);
        return this.access.authorized(source).allowed;
      },
    };
  }

  private track(work: Promise<void>): void {
    const tracked = work.catch((error: unknown) => this.log(`gateway: ${describeError(error)}`));
    this.running.add(tracked);
    void tracked.finally(() => this.running.delete(tracked));
  }

  private keyFor(source: MessageSource): string {
    const config = this.options.config;
    return sessionKey(source, {
      groupSessionsPerUser: config["group_sessions_per_user"] !== false,
      threadSessionsPerUser: config["thread_sessions_per_user"] === true,
      profile: this.options.profile,
    });
  }

  private targetOf(source: MessageSource, replyTo?: string): OutboundTarget {
    return {
      chatId: source.chatId,
      ...(source.threadId ? { threadId: source.threadId } : {}),
      ...(replyTo ? { replyTo } : {}),
    };
  }

  private async say(adapter: PlatformAdapter, source: MessageSource, text: string): Promise<void> {
    try {
      await adapter.send(this.targetOf(source), text);
    } catch (error) {
      this.log(
        `${adapter.platform}: could not reply in ${source.chatId}: ${describeError(error)}`,
        adapter.platform,
      );
    }
  }

  private async onMessage(adapter: PlatformAdapter, message: InboundMessage): Promise<void> {
    const { source } = message;
    const relay = this.options.relay;
    if ((this.closing && !relay) || !source.userId) return; // a draining relay passes it on
    const key = this.keyFor(source);
    // Several instances: the message takes its place in its chat's routing order as it arrives.
    const ticket = relay?.enter?.(key);
    try {
      const decision = this.access.authorized(source, await this.access.approvedOn(source.platform));
      if (!decision.allowed) {
        const plog = this.logFor(source.platform);
        const { pairing } = this.options;
        return await refuseStranger(pairing, adapter, source, decision.pairing, this.print, plog);
      }
      // Several instances (`relay`): null when the message went to the instance running its chat.
      const admitted = relay ? await relay.admit(key, message, ticket) : () => undefined;
      if (admitted) await this.handle(adapter, message, key).finally(admitted);
    } finally {
      ticket?.done();
    }
  }

  private async handle(adapter: PlatformAdapter, message: InboundMessage, key: string): Promise<void> {
    const { source } = message;
    const conv = this.conversation(key, source);
    const text = message.text.trim();
    const mlog = this.logFor(source.platform, conv.chat?.id);
    mlog.info("message in", {
      chat: source.chatId,
      thread: source.threadId,
      user: source.userId,
      type: source.chatType,
      chars: text.length,
      media: message.media?.length || undefined,
      busy: conv.busy || undefined,
    });
    if (mlog.enabled("DEBUG")) mlog.debug("message text", { chat: source.chatId, text });
    const about = { sessionKey: key, sessionId: conv.chat?.id, messageId: message.messageId };
    this.options.observer?.message("in", source, text, about);

    if (this.approvals.has(key)) {
      const answer = parseApprovalReply(text);
      if (answer) {
        mlog.info("approval answered in chat", { chat: source.chatId, user: source.userId, answer });
        this.approvals.answer(key, answer);
        return;
      }
    }
    if (this.questions.has(key)) {
      // A command cancels the question it would otherwise answer (and then runs).
      if (looksLikeCommand(text)) this.questions.cancel(key);
      else if (this.questions.answer(key, text)) return;
    }
    if (looksLikeCommand(text) && (await this.command(adapter, conv, message, text))) return;
    if (this.restarting) {
      await this.say(adapter, source, RESTARTING_NOTICE);
      return;
    }
    if (conv.busy) {
      await whileBusy(conv, message, this.options.config, (text) => this.say(adapter, source, text));
      return;
    }
    conv.queue.push(message);
    await this.pump(adapter, conv);
  }

  private conversation(key: string, source: MessageSource): Conversation {
    let conv = this.conversations.get(key);
    if (!conv) {
      conv = {
        key,
        platform: source.platform,
        source,
        busy: false,
        queue: [],
        lastActive: this.now(),
        fresh: false,
        stopped: false,
      };
      this.conversations.set(key, conv);
      this.evictIdle();
    }
    conv.source = source;
    return conv;
  }

  /** Closes the agents of the least recently active idle conversations beyond the cache size. */
  private evictIdle(): void {
    const max = this.options.maxCachedAgents ?? 256;
    if (this.conversations.size <= max) return;
    const idle = [...this.conversations.values()]
      .filter((c) => !c.busy && c.queue.length === 0 && !this.approvals.has(c.key))
      .sort((a, b) => a.lastActive.getTime() - b.lastActive.getTime());
    for (const conv of idle.slice(0, this.conversations.size - max)) {
      this.forget(conv.key);
      this.conversations.delete(conv.key);
    }
  }

  /**
   * Closes an idle conversation's cached agent (evicted, or another instance moved its session
   * on); the session stays in sessions.json and state.db, and the next message continues it.
   */
  forget(key: string): void {
    const conv = this.conversations.get(key);
    if (!conv?.chat || conv.busy || conv.queue.length > 0 || this.approvals.has(key)) return;
    void conv.chat.close("agent_evicted").catch(() => undefined);
    conv.chat = undefined;
  }

  /** A chat's cached agent and the session its key points at now (several instances compare them). */
  async cached(key: string): Promise<{ chat: ChatSession; current?: string } | undefined> {
    const chat = this.conversations.get(key)?.chat;
    return chat && { chat, current: (await this.index.get(key))?.session_id ?? chat.id };
  }

  /**
   * Runs queued messages one turn at a time until the queue is empty, then a turn for notices that
   * ask for one (a background process ended, a background child finished) in the same chat.
   */
  private async pump(adapter: PlatformAdapter, conv: Conversation): Promise<void> {
    if (conv.busy) return;
    conv.busy = true;
    const held = this.options.relay ? await this.options.relay.hold(conv.key, conv.queue) : undefined;
    conv.busy = held !== null; // null: another instance runs this chat, and the queue went there
    if (!conv.busy) return;
    // Several instances: output waits for a valid claim; a claim lost stops the turn as /stop does.
    const fence = this.options.relay?.fence?.(conv.key, adapter, () => this.stopTurn(conv));
    const out = fence?.adapter ?? adapter;
    this.options.observer?.turn(conv.key, conv.source, true);
    try {
      await conv.commanding?.catch(() => undefined);
      const more = () => conv.queue.length > 0 || conv.chat?.pendingWake();
      while (more() && !this.closing && !this.restarting && !fence?.lost.aborted) {
        // An empty batch is a wake turn: the chat's notices are its message.
        const batch = nextBatch(conv.queue);
        conv.stopped = false;
        try {
          await this.turn(out, conv, batch).finally(() => settle(batch));
        } catch (error) {
          this.print(`${conv.platform}: turn failed in ${conv.key}: ${describeError(error)}`);
          this.logFor(conv.platform, conv.chat?.id).error("turn failed", {
            chat: conv.source.chatId,
            error: describeError(error),
          });
          await this.say(
            out,
            batch[batch.length - 1]?.source ?? conv.source,
            `⚠️ Something went wrong: ${describeError(error)}`,
          );
        }
      }
    } finally {
      conv.busy = false;
      held?.();
      this.options.observer?.turn(conv.key, conv.source, false);
    }
    if (fence?.lost.aborted) {
      // Its history here is stale (the holder runs it now): reopened from the store next time.
      void conv.chat?.close("claim_lost").catch(() => undefined);
      conv.chat = undefined;
      if (conv.queue.length > 0 && !this.closing) return this.pump(adapter, conv); // to the holder
    }
    if (this.restarting && conv.queue.length > 0 && !conv.cutOff) {
      const last = conv.queue[conv.queue.length - 1];
      settle(conv.queue.splice(0));
      await this.say(adapter, last?.source ?? conv.source, QUEUE_DROPPED_NOTICE);
    }
  }

  private inputOf(conv: Conversation, batch: readonly InboundMessage[]): Promise<string> {
    const { config, env, home } = this.options;
    const shared = batch.some((m) => m.source.chatType !== "dm") && sharedConversation(conv.source, config);
    return batchInput(batch, shared, (path) =>
      transcribeVoice(path, { config, env, home }, (l) => this.log(l)),
    );
  }

  private resetPolicy(platform: string): ResetPolicy {
    return resetPolicyFrom(this.options.config["session_reset"], platform);
  }

  /** The conversation's agent session: cached, continued from sessions.json, or new (reset policy). */
  private async ensureChat(
    adapter: PlatformAdapter,
    conv: Conversation,
    source: MessageSource,
  ): Promise<ChatSession> {
    const now = this.now();
    const policy = this.resetPolicy(conv.platform);
    if (conv.chat) {
      const reason = conv.fresh ? "new" : resetReason(conv.lastActive, now, policy);
      if (reason) {
        await conv.chat.newSession();
        await this.index.set(conv.key, conv.chat.id, source, now);
        if (reason !== "new") await this.say(adapter, source, resetNotice(reason, policy));
      }
      conv.fresh = false;
      return conv.chat;
    }
    conv.opening ??= this.openChat(adapter, conv, source).finally(() => {
      conv.opening = undefined;
    });
    return conv.opening;
  }

  private async openChat(
    adapter: PlatformAdapter,
    conv: Conversation,
    source: MessageSource,
  ): Promise<ChatSession> {
    const now = this.now();
    const policy = this.resetPolicy(conv.platform);
    const entry = await this.index.get(conv.key);
    let resume: string | undefined;
    if (entry && !conv.fresh) {
      const reason = resetReason(new Date(entry.updated_at), now, policy);
      if (reason) await this.say(adapter, source, resetNotice(reason, policy));
      else resume = entry.session_id;
    }
    conv.fresh = false;
    const request: OpenConversation = {
      platform: conv.platform,
      source,
      key: conv.key,
      toolState: {
        "cron.origin": {
          platform: source.platform,
          chat_id: source.chatId,
          ...(source.threadId ? { thread_id: source.threadId } : {}),
          ...(source.chatName ? { chat_name: source.chatName } : {}),
        },
      },
      onApproval: (approval, options) =>
        this.approvals.ask(
          conv.key,
          approval,
          { adapter, target: this.targetOf(conv.source), userId: conv.source.userId },
          options?.signal,
        ),
    };
    let chat: ChatSession;
    try {
      chat = await this.options.openSession(resume ? { ...request, resume } : request);
    } catch (error) {
      if (!(resume && error instanceof SessionStoreError)) throw error;
      this.log(
        `sessions: ${conv.key} pointed at a missing session ${resume}; starting a new one`,
        conv.platform,
      );
      chat = await this.options.openSession(request);
    }
    conv.chat = chat;
    // Unsubscribed by chat.close() (eviction, shutdown), which forgets its wake listeners.
    chat.onWake(() => {
      if (!conv.busy && !this.closing && conv.chat === chat) this.track(this.pump(adapter, conv));
    });
    await this.index.set(conv.key, chat.id, source, now);
    return chat;
  }

  private async turn(adapter: PlatformAdapter, conv: Conversation, batch: InboundMessage[]): Promise<void> {
    const last = batch[batch.length - 1];
    const source = last?.source ?? conv.source;
    const typed = last ? await this.inputOf(conv, batch) : null;
    if (typed === "") return;
    // A turn cut off by the last restart: its mark is read once; the note goes only to that session.
    const marked = typed === null ? undefined : (await this.index.get(conv.key))?.session_id;
    const mark = typed === null ? undefined : await this.index.takeInterrupted(conv.key);
    // A wake turn continues the open chat as it is: reset rules wait for the user's next message.
    const chat = typed === null ? conv.chat : await this.ensureChat(adapter, conv, source);
    if (!chat || (await resumeRedelivered(chat, batch)) === "answered") return;
    const input =
      typed === null || chat.id !== marked
        ? typed
        : continuedInput(typed, mark, this.now(), this.drain.freshnessMs);
    if (conv.cutOff) return this.toldCutOff(adapter, conv, source);
    await this.toggles.refresh(conv, chat);
    if (conv.settings) chat.agent.yolo = conv.settings.yolo;
    const view = new ReplyView(adapter, this.targetOf(source), {
      stream: streamSettings(this.options.config, conv.platform),
      progress: conv.settings?.toolProgress ?? toolProgressLevel(this.options.config, conv.platform),
      onError: (m) => this.log(`${conv.platform}: ${m}`, conv.platform, chat.id),
      // In groups the answer replies to the message it answers, so it is clear whom it is for.
      ...(source.chatType !== "dm" && last?.messageId ? { replyTo: last.messageId } : {}),
      voice: voiceReplies(this.options).speaker(adapter, source, batch, this.targetOf(source)),
    });
    const run = input === null ? chat.wake() : chat.run(input);
    if (!run) return; // the notices were withdrawn meanwhile
    view.startTyping();
    const watch = new TurnWatch(adapter, this.targetOf(source), {
      settings: turnWatchSettings(this.options.config, this.options.env, conv.platform),
      stop: () => chat.interrupt(),
      waitingForUser: () => this.approvals.has(conv.key),
      log: (m) => this.log(`${conv.platform}: ${m}`, conv.platform, chat.id),
    });
    // Reactions on the message being answered (platforms with `processing`), in order.
    const started =
      last && adapter.processing ? adapter.processing(last, "started").catch(() => undefined) : undefined;
    const settle = (state: "succeeded" | "failed") => {
      if (started && last) void started.then(() => adapter.processing?.(last, state)).catch(() => undefined);
    };
    let result: Awaited<typeof run.result>;
    // Stopping may have begun while the session opened: the turn is cut off before it starts.
    if (conv.cutOff) chat.interrupt();
    try {
      for await (const event of run) {
        watch.observe(event);
        if (event.type === "text_delta") view.textDelta(event.text);
        else if (event.type === "stream_discarded") view.discard();
        else if (event.type === "retry") view.notice(`⏳ ${event.message}`);
        else if (event.type === "turn_start") view.turnStarted();
        else if (event.type === "tool_start" && !event.parentCallId) view.toolStarted(event.name, event.args);
      }
      result = await run.result;
    } catch (error) {
      watch.stop();
      await view.abandon();
      settle("failed");
      throw error;
    }
    conv.lastActive = this.now();
    if (chat.id !== (await this.index.get(conv.key))?.session_id)
      await this.index.set(conv.key, chat.id, source, conv.lastActive);
    else await this.index.touch(conv.key, conv.lastActive);

    if (conv.cutOff) {
      await view.abandon();
      settle("failed");
      return this.toldCutOff(adapter, conv, source);
    }
    if (result.reason === "interrupted" && (conv.stopped || watch.timedOut || conv.queue.length > 0)) {
      await view.abandon();
      return;
    }
    let answer = result.text;
    if (result.reason === "error") {
      const problem = `⚠️ ${result.error ?? "The model call failed."}`;
      answer = answer.trim() ? `${answer}\n\n${problem}` : problem;
    } else if (result.reason === "max_turns" && !answer.trim()) {
      answer = '⚠️ I hit the tool-call limit for one turn before finishing. Say "continue" to go on.';
    }
    const footer = runtimeFooter(this.options.config.display, conv.platform, () =>
      sessionFooterFacts(chat, process.env.HOME),
    );
    await settleAnswered(batch);
    await view.finish(answer, footer);
    this.options.observer?.message("out", source, answer, { sessionKey: conv.key, sessionId: chat.id });
    settle(result.reason === "error" ? "failed" : "succeeded");
    chat.releaseReviews(); // the learning loop's review runs after the reply, never before it
    this.logFor(conv.platform, chat.id).info("message out", {
      chat: source.chatId,
      thread: source.threadId,
      chars: answer.length,
      reason: result.reason,
      silent: !answer.trim() || undefined,
    });
  }

  /**
   * A slash command (or `/<skill>`, or an unknown `/word`) through the shared registry; false when
   * the text is a message after all. The conversation's agent is opened first: every command
   * reads or changes it.
   */
  private async command(
    adapter: PlatformAdapter,
    conv: Conversation,
    message: InboundMessage,
    text: string,
  ): Promise<boolean> {
    const source = message.source;
    if (chatCommands.parse(text, "chat").kind === "message") return false;
    // A running turn's agent is the one to act on; the reset rules apply when the turn is over.
    const chat = conv.busy && conv.chat ? conv.chat : await this.ensureChat(adapter, conv, source);
    const config = this.options.config;
    const { settings, before } = await this.toggles.forCommand(conv, chat);
    const { ctx, flush } = chatCommandContext({
      source,
      tier: chatTier(config, source),
      chat,
      busy: () => conv.busy,
      settings,
      queue: messageQueue(conv.queue, source),
      say: (reply) => this.say(adapter, source, reply),
      nextMessage: () => this.questions.wait(conv.key),
      send: (input) => {
        conv.queue.push({ source, text: input });
        if (!conv.busy) this.track(this.pump(adapter, conv));
      },
      stop: () => {
        conv.queue.length = 0;
        this.stopTurn(conv);
      },
      newSession: (title) => this.startOver(conv, source, title),
      sessionChanged: () => {
        if (conv.chat) {
          conv.chat.agent.yolo = settings.yolo;
          void this.index
            .set(conv.key, conv.chat.id, source, this.now())
            .catch((error) => this.log(`sessions: ${String(error)}`));
        }
      },
      actions: {
        answerApproval: (decision) => this.approvals.answer(conv.key, decision),
        setHome: () => setHomeChannel(this.options.home, this.options.env, source),
        restartGateway: () => {
          if (!this.options.restart) return null;
          // After this command's reply is out: the restart turns new requests away at once.
          setImmediate(() => this.options.restart?.());
          return Math.round(this.drain.afterTurnMs / 1000);
        },
      },
      toolsets: this.options.toolsets?.(conv.platform) ?? [],
      mcp: this.options.mcp,
      voice: voiceReplies(this.options).control(adapter, source),
      now: this.now,
    });
    // In a group, an unknown /word nobody addressed to this bot may be another bot's command.
    const quietUnknown = source.chatType !== "dm" && message.mentioned === false;
    const running = dispatchInput(chatCommands, text, ctx, { quietUnknown }).finally(flush);
    conv.commanding = running;
    const outcome = await running;
    const unshared = await this.toggles.save(conv, before);
    if (unshared) await this.say(adapter, source, `⚠️ This holds on this instance only: ${unshared}`);
    this.logFor(conv.platform, conv.chat?.id).info("command", {
      chat: source.chatId,
      ...describeOutcome(outcome),
    });
    return outcome.kind !== "message";
  }

  /**
   * `/new`: drops what waits (queued messages, approvals, a question), stops a running turn and
   * starts a fresh session, now or, while the stopped turn winds down, with the next message.
   */
  private async startOver(conv: Conversation, source: MessageSource, title?: string): Promise<void> {
    conv.queue.length = 0;
    this.questions.cancel(conv.key);
    this.stopTurn(conv);
    conv.fresh = true;
    if (conv.chat && !conv.busy) {
      await conv.chat.newSession(title);
      conv.fresh = false;
      if (conv.settings) conv.chat.agent.yolo = conv.settings.yolo;
      await this.index.set(conv.key, conv.chat.id, source, this.now());
    }
  }

  /** `/stop`, `/new`, a claim lost: approvals refused, a running turn interrupted (its answer not sent). */
  private stopTurn(conv: Conversation): void {
    this.approvals.denyAll(conv.key);
    if (!conv.busy) return;
    conv.stopped = true;
    conv.chat?.interrupt();
  }

  private async onAction(action: InboundAction): Promise<void> {
    const { source } = action;
    const decision = this.access.authorized(source, await this.access.approvedOn(source.platform));
    if (!decision.allowed) {
      await action.acknowledge?.("You are not allowed to do that.").catch(() => undefined);
      return;
    }
    const key = this.keyFor(source);
    const answered =
      this.approvals.answerAction(key, action.data, source.userId) ||
      this.approvals.answerById(action.data, source.userId);
    if (!answered && (await this.options.relay?.forwardAction(key, source.platform, action))) return;
    await action
      .acknowledge?.(answered ? undefined : "This button is no longer active.")
      .catch(() => undefined);
  }

  /** Sends text without the agent (cron output, webhooks): see `deliverAside`. */
  deliver(platform: string, target: { chatId?: string; threadId?: string }, text: string): Promise<void> {
    return deliverAside(this.options, this.logFor(platform), platform, target, text);
  }

  /** Tells a chat its turn was cut off by stopping, and marks the conversation to continue (drain.ts). */
  private async toldCutOff(
    adapter: PlatformAdapter,
    conv: Conversation,
    source: MessageSource,
  ): Promise<void> {
    conv.queue.length = 0;
    await this.index.markInterrupted(conv.key, RESTART_INTERRUPTED, this.now());
    this.logFor(conv.platform, conv.chat?.id).info("turn cut off by stopping", { chat: source.chatId });
    await this.say(adapter, source, RESTART_INTERRUPTED_NOTICE);
  }

  /** Until every running turn, and the work they queue, has settled. */
  private async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  /**
   * The first phase of a restart: new requests are turned away (approval answers and commands
   * still work), queued messages are dropped with a notice, and running turns may finish. Resolves
   * true when they all finished within `ms` (default `agent.restart_after_turn_timeout`).
   */
  async quiesce(ms: number = this.drain.afterTurnMs): Promise<boolean> {
    this.restarting = true;
    return settlesWithin(this.settled(), ms);
  }

  /**
   * Stops taking messages and waits for running turns, up to `drainMs` (default
   * `agent.restart_drain_timeout`; Infinity waits for them); turns still running then are
   * interrupted, and their chats told and marked to continue. Then pending approvals are refused
   * and every agent is closed.
   */
  async stop(options: { drainMs?: number } = {}): Promise<void> {
    this.closing = true;
    this.questions.cancel();
    const drainMs = options.drainMs ?? this.drain.drainMs;
    if (!(await settlesWithin(this.settled(), drainMs))) {
      for (const conv of this.conversations.values()) {
        if (!conv.busy) continue;
        conv.cutOff = true;
        conv.chat?.interrupt();
      }
    }
    // An approval left waiting is refused, so the turn waiting on it can end.
    this.approvals.denyAll();
    await this.settled();
    for (const conv of this.conversations.values()) {
      await conv.chat?.close("gateway_shutdown").catch(() => undefined);
    }
    this.conversations.clear();
  }
}
