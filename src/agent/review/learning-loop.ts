/**
 * The learning loop of one conversation (a `ChatSession`): it watches the current agent's events,
 * keeps the nudge counters, and starts a background review after a turn in which a nudge came due,
 * or over turns about to leave the context (compression, `/new`, a reset) that no review has read.
 * Reviews run one at a time, off the user's path: the caller never awaits one during a turn; a
 * one-shot run awaits `settle()` before exiting, bounded by `memory.review_budget_seconds`.
 *
 * Nothing here touches the running turn or the system prompt, so the prompt cache stays valid, and
 * what a review saves reaches the prompt only in the next session (the snapshot is frozen).
 */
import type { Message } from "../../ai/types.js";
import type { AgentEvent, AgentEventListener } from "../events.js";
import { NudgeCounters, type ReviewFocus } from "./nudges.js";
import type { ReviewTrigger } from "./prompt.js";
import { type ReviewHost, type ReviewOutcome, runReview, savedLine } from "./runner.js";
import type { ReviewSettings } from "./settings.js";

/** The part of an agent the loop watches. */
export interface WatchedAgent {
  readonly sessionId: string;
  readonly messages: readonly Message[];
  on(listener: AgentEventListener): () => void;
}

export interface LearningLoopOptions {
  settings: ReviewSettings;
  /** Where a review runs, read when it starts (the model may have changed since the turn). */
  host: () => ReviewHost;
  /**
   * Hold due reviews until `release()` (the gateway releases them once the reply is sent).
   * Default false: a review starts right after the turn's result is handed back.
   */
  hold?: boolean;
  /** One line for the user when a review saved something (only with `display.memory_notifications` on). */
  onLearned?: (line: string, outcome: ReviewOutcome) => void;
  /** Every finished review, for the log. */
  onOutcome?: (outcome: ReviewOutcome, request: { focus: ReviewFocus; trigger: ReviewTrigger }) => void;
  /** Tests inject the runner. */
  run?: typeof runReview;
}

interface Pending {
  focus: ReviewFocus;
  trigger: ReviewTrigger;
  messages: Message[];
  parentSessionId: string;
}

const STOPPED_CLEANLY = new Set(["completed", "max_turns", "guardrail"]);

export class LearningLoop {
  private readonly counters: NudgeCounters;
  private mirror: Message[] = [];
  private sessionId: string | undefined;
  private held: Pending[] = [];
  private tail: Promise<void> = Promise.resolve();
  private running = 0;
  private readonly abort = new AbortController();

  constructor(private readonly options: LearningLoopOptions) {
    this.counters = new NudgeCounters({
      memory: options.settings.memoryNudgeInterval,
      skills: options.settings.skillNudgeInterval,
    });
  }

  /** Reviews queued, held or running. */
  get pending(): number {
    return this.running + this.held.length;
  }

  /**
   * Watches `agent` from now on; returns the detach function. Counters start afresh when the
   * agent holds another session than the last one watched (a rebuilt agent of the same session,
   * after /undo or /model, keeps them).
   */
  attach(agent: WatchedAgent): () => void {
    if (agent.sessionId !== this.sessionId) {
      this.counters.markReviewed();
      this.sessionId = agent.sessionId;
    }
    this.mirror = [...agent.messages];
    return agent.on((event) => this.observe(agent, event));
  }

  private observe(agent: WatchedAgent, event: AgentEvent): void {
    switch (event.type) {
      case "session_start":
        this.counters.setTools({
          memory: event.tools.includes("memory"),
          skills: event.tools.includes("skill_manage"),
        });
        break;
      case "message":
        // Mirrors the agent's history, so the turns compression drops are still here to review.
        this.mirror.push(event.message);
        if (event.message.role === "user") this.counters.userTurn();
        else if (event.message.role === "assistant" && (event.message.tool_calls?.length ?? 0) > 0)
          this.counters.toolIteration();
        break;
      case "tool_start":
        if (!event.parentCallId) this.counters.toolUsed(event.name);
        break;
      case "compression":
        this.flushInternal("compression", event.sessionId);
        this.mirror = [...event.messages];
        this.sessionId = event.childSessionId;
        break;
      case "done": {
        if (!STOPPED_CLEANLY.has(event.reason)) break;
        const focus = this.counters.takeDue();
        if (focus)
          this.enqueue({
            focus,
            trigger: "nudge",
            messages: [...this.mirror],
            parentSessionId: agent.sessionId,
          });
        break;
      }
    }
  }

  /**
   * Turns are about to leave the context for good (`/new`, a reset): review them once when at
   * least `memory.flush_min_turns` user turns were never reviewed. Returns whether one was queued.
   */
  flush(trigger: Exclude<ReviewTrigger, "nudge" | "compression">): boolean {
    return this.sessionId !== undefined && this.flushInternal(trigger, this.sessionId);
  }

  private flushInternal(trigger: ReviewTrigger, parentSessionId: string): boolean {
    const focus = this.counters.flushFocus(this.options.settings.flushMinTurns);
    if (!focus) return false;
    this.enqueue({ focus, trigger, messages: [...this.mirror], parentSessionId });
    return true;
  }

  private enqueue(review: Pending): void {
    // The review reads everything up to here, so these turns need no flush later.
    this.counters.markReviewed();
    if (this.options.hold) this.held.push(review);
    else this.start(review);
  }

  /** Starts the reviews held until the reply was sent. */
  release(): void {
    for (const review of this.held.splice(0)) this.start(review);
  }

  private start(review: Pending): void {
    this.running++;
    const run = this.options.run ?? runReview;
    // setImmediate: the turn's result reaches its caller (and the user) before any review work.
    this.tail = this.tail
      .then(() => new Promise<void>((resolve) => setImmediate(resolve)))
      .then(async () => {
        const outcome = await run(this.options.host(), {
          ...review,
          budgetMs: this.options.settings.budgetMs,
          signal: this.abort.signal,
        });
        this.options.onOutcome?.(outcome, { focus: review.focus, trigger: review.trigger });
        const line = savedLine(outcome.saved);
        if (line && this.options.settings.notify) this.options.onLearned?.(line, outcome);
      })
      .catch(() => undefined)
      .finally(() => {
        this.running--;
      });
  }

  /**
   * Settles when every review started so far has finished, or after `timeoutMs` (then the
   * reviews still running are stopped). Held reviews are started first.
   */
  async settle(timeoutMs = this.options.settings.budgetMs): Promise<void> {
    this.release();
    if (this.running === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), timeoutMs);
    });
    const outcome = await Promise.race([this.tail.then(() => "done" as const), deadline]);
    clearTimeout(timer);
    if (outcome === "late") {
      this.abort.abort();
      await this.tail;
    }
  }
}
