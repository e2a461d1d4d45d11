/**
 * Notices for the agent (`ToolContext.notify`): a background process ended or printed a watched
 * line, a background subagent finished. They wait here until the model's next turn starts, where
 * `take()` hands them over as one labelled block at the head of that turn's user message (stored
 * with it, so a crash loses a notice only where it would lose the user's message). A `wake`
 * notice also tells an idle surface (the REPL, a chat) to start that turn now.
 *
 * One queue per conversation (`ChatSession` passes it to each agent it builds), so notices from
 * work started before `/new` or `/model` still arrive.
 */
import type { Message } from "../ai/types.js";
import type { AgentNotice } from "../tools/types.js";

/** How many producers' notices wait at most; the oldest beyond it are dropped (and counted). */
const MAX_QUEUED = 20;
/** Characters of one notice the model reads; producers keep theirs shorter. */
const MAX_NOTICE_CHARS = 4000;

interface Queued {
  notice: AgentNotice;
  /** Earlier notices from the same producer that this one replaced. */
  replaced: number;
}

export type WakeListener = (notice: AgentNotice) => void;

export class NoticeQueue {
  private readonly queued = new Map<string, Queued>();
  private readonly listeners = new Set<WakeListener>();
  private dropped = 0;

  constructor(private readonly maxQueued = MAX_QUEUED) {}

  /**
   * Queues a notice, replacing one from the same producer (`source` and `id`) that is still
   * waiting: a process that matched twice and then exited is one notice, the latest. A `retract`
   * notice removes the waiting one (the model already read it through a tool). Never throws.
   */
  push(notice: AgentNotice): void {
    const key = `${notice.source}\u0000${notice.id}`;
    const earlier = this.queued.get(key);
    if (notice.retract) {
      this.queued.delete(key);
      return;
    }
    if (notice.text.trim() === "") return;
    this.queued.delete(key); // re-inserted last: the order is the order of the latest news
    this.queued.set(key, { notice, replaced: earlier ? earlier.replaced + 1 : 0 });
    while (this.queued.size > this.maxQueued) {
      const oldest = this.queued.keys().next().value as string;
      this.queued.delete(oldest);
      this.dropped++;
    }
    if (!notice.wake) return;
    for (const listener of [...this.listeners]) {
      try {
        listener(notice);
      } catch {
        // A surface that fails to wake still gets the notice at its next turn.
      }
    }
  }

  get size(): number {
    return this.queued.size;
  }

  /** A waiting notice asks an idle surface to run a turn for it. */
  get wakePending(): boolean {
    for (const { notice } of this.queued.values()) if (notice.wake) return true;
    return false;
  }

  /** The first waiting wake notice (what the surface says woke it), if any. */
  peekWake(): AgentNotice | undefined {
    for (const { notice } of this.queued.values()) if (notice.wake) return notice;
    return undefined;
  }

  /** Empties the queue into the block the model reads; undefined when nothing waits. */
  take(): string | undefined {
    if (this.queued.size === 0 && this.dropped === 0) return undefined;
    const entries = [...this.queued.values()];
    const dropped = this.dropped;
    this.queued.clear();
    this.dropped = 0;
    return formatNotices(entries, dropped);
  }

  /** Calls `listener` for each wake notice queued from now on; returns the unsubscribe function. */
  onWake(listener: WakeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Forgets the listeners (the conversation closed); notices still queue but wake no one. */
  close(): void {
    this.listeners.clear();
  }
}

/** The opening line of the block: tells the model this is not the user speaking. */
export const NOTICES_HEADER =
  "[Hermes notices: background work reported since your last turn; not written by the user]";

/** Pure: the block for `entries` (in order), noting replaced and dropped notices. */
export function formatNotices(entries: readonly Queued[], dropped = 0): string {
  const lines = [NOTICES_HEADER];
  for (const { notice, replaced } of entries) {
    const text = notice.text.trim();
    const clipped =
      text.length > MAX_NOTICE_CHARS ? `${text.slice(0, MAX_NOTICE_CHARS)}\n…[notice cut]` : text;
    const more = replaced > 0 ? ` (latest of ${replaced + 1} notices about it)` : "";
    lines.push(`- ${notice.source} ${notice.id}${more}: ${clipped}`);
  }
  if (dropped > 0) lines.push(`- ${dropped} older notices were dropped (too many at once).`);
  return lines.join("\n");
}

/** The user message's content with the notice block in front (a first text part for multimodal input). */
export function withNotices(block: string, content: Message["content"]): Message["content"] {
  if (content === null || content === "") return block;
  if (typeof content === "string") return `${block}\n\n${content}`;
  return [{ type: "text", text: block }, ...content];
}
