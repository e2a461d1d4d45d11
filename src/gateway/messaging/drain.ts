/**
 * What a gateway restart (or stop) says and does to the conversations it cuts off, as upstream
 * does it: running turns get `agent.restart_drain_timeout` seconds once stopping begins (a restart
 * first waits `agent.restart_after_turn_timeout` for them to end on their own); a turn still
 * running then is interrupted, its chat is told, and its entry in `sessions/sessions.json` is
 * marked `resume_pending`. The next message continues the same session, with a note to the model
 * that its last turn was cut off, when the cut is younger than `agent.gateway_auto_continue_freshness`.
 * Pure text and arithmetic; the router does the sending.
 */
import type { HermesConfig } from "../../config/defaults.js";

/** The reason recorded on a conversation its turn was cut off by a restart or stop. */
export const RESTART_INTERRUPTED = "restart_interrupted";

/** Told in a chat whose running turn a restart or stop interrupted. */
export const RESTART_INTERRUPTED_NOTICE =
  "⚠️ The gateway is restarting, so I had to stop in the middle of your request. " +
  "Send me a message when I'm back (\"go on\" will do) and I'll continue where I stopped.";

/** Told in a chat whose message arrives while a restart waits for running turns. */
export const RESTARTING_NOTICE =
  "🔄 I'm restarting right now and can't take new requests. Send that again in a minute.";

/** Told in a chat whose queued messages a restart will not get to. */
export const QUEUE_DROPPED_NOTICE =
  "🔄 I'm restarting, so I won't get to the message(s) you sent while I was busy. Send them again in a minute.";

/** The note put before the user's next message in a conversation whose turn was cut off. */
export const CONTINUE_NOTE =
  "[System note: your previous turn in this conversation was cut off by a gateway restart before " +
  "you finished, and the user was told. If the message below asks you to go on, continue that " +
  "work from where the conversation shows it stopped; otherwise answer the message as usual.]";

const section = (value: unknown): Record<string, unknown> =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

function seconds(value: unknown, fallback: number): number {
  const n = typeof value === "string" && value.trim() === "" ? Number.NaN : Number(value);
  return value !== null && value !== undefined && Number.isFinite(n) && n >= 0 ? n : fallback;
}

export interface DrainSettings {
  /** Once stopping begins: how long running turns may go on before they are interrupted (ms). */
  drainMs: number;
  /** A restart first waits this long for running turns to end on their own (ms). */
  afterTurnMs: number;
  /** A cut-off turn is continued by the next message only this soon after the cut (ms; 0: always). */
  freshnessMs: number;
}

/** `agent.restart_drain_timeout` (0), `agent.restart_after_turn_timeout` (1800), `agent.gateway_auto_continue_freshness` (3600). */
export function drainSettings(config: Pick<HermesConfig, "agent">): DrainSettings {
  const agent = section(config.agent);
  return {
    drainMs: seconds(agent["restart_drain_timeout"], 0) * 1000,
    afterTurnMs: seconds(agent["restart_after_turn_timeout"], 1800) * 1000,
    freshnessMs: seconds(agent["gateway_auto_continue_freshness"], 3600) * 1000,
  };
}

/**
 * The text a conversation's next turn sends: the user's input behind the continue note when its
 * last turn was cut off recently enough (`mark`, from `SessionIndex.takeInterrupted`), else the
 * input as it is.
 */
export function continuedInput(
  input: string,
  mark: { reason: string; at: Date } | undefined,
  now: Date,
  freshnessMs: number,
): string {
  if (!mark || mark.reason !== RESTART_INTERRUPTED) return input;
  const age = now.getTime() - mark.at.getTime();
  if (freshnessMs > 0 && !(age >= 0 && age <= freshnessMs)) return input;
  return `${CONTINUE_NOTE}\n\n${input}`;
}

/** Resolves true when `work` settles within `ms`, false when the time runs out first. */
export async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  if (!Number.isFinite(ms)) {
    await work;
    return true;
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), Math.max(0, ms));
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
