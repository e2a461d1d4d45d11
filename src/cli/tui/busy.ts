/**
 * What happens to text typed while a turn runs (`display.busy_input_mode`, as in Python Hermes):
 * `interrupt` (default) stops the turn and sends the text next, `queue` runs it after the turn,
 * `steer` hands it to the running turn as a note the model sees with its next tool result.
 * Pure bookkeeping; the REPL performs the actions.
 */

export type BusyInputMode = "interrupt" | "queue" | "steer";

export const BUSY_INPUT_MODES: readonly BusyInputMode[] = ["interrupt", "queue", "steer"];

/** `value` as a busy-input mode; `interrupt` for anything unknown. */
export function parseBusyInputMode(value: unknown): BusyInputMode {
  const text = typeof value === "string" ? value.trim().toLowerCase() : "";
  return (BUSY_INPUT_MODES as readonly string[]).includes(text) ? (text as BusyInputMode) : "interrupt";
}

export interface BusyDecision {
  action: BusyInputMode;
  /** One line for the user saying what happened to their text. */
  notice: string;
}

/** Messages waiting for the running turn to end. */
export class PendingInputs {
  private interrupting: string[] = [];
  private queued: string[] = [];

  /**
   * Files `text` typed during a turn according to `mode`. For `interrupt` the caller stops the
   * turn; for `steer` it passes the text to the turn (nothing is kept here).
   */
  route(mode: BusyInputMode, text: string): BusyDecision {
    if (mode === "steer") return { action: "steer", notice: `↪ Steering the running turn: ${preview(text)}` };
    if (mode === "queue") {
      this.queued.push(text);
      return { action: "queue", notice: `⏳ Queued (${this.size} waiting): ${preview(text)}` };
    }
    this.interrupting.push(text);
    return { action: "interrupt", notice: "⏹ Interrupting the turn; your message goes next." };
  }

  /** `/queue TEXT`: runs after the turn (and after messages that interrupted it). */
  enqueue(text: string): number {
    this.queued.push(text);
    return this.size;
  }

  /**
   * The next message to send: messages typed to interrupt go first, merged into one (they answer
   * the same moment), then queued messages one at a time. Null when nothing waits.
   */
  next(): string | null {
    if (this.interrupting.length > 0) {
      const merged = this.interrupting.join("\n\n");
      this.interrupting = [];
      return merged;
    }
    return this.queued.shift() ?? null;
  }

  get size(): number {
    return this.interrupting.length + this.queued.length;
  }

  /** Everything waiting, in the order it will be sent. */
  list(): string[] {
    return [...(this.interrupting.length > 0 ? [this.interrupting.join("\n\n")] : []), ...this.queued];
  }

  /** Drops everything; returns how many messages were dropped. */
  clear(): number {
    const n = this.interrupting.length + this.queued.length;
    this.interrupting = [];
    this.queued = [];
    return n;
  }
}

function preview(text: string, max = 60): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
