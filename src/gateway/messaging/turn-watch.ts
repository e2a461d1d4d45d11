/**
 * The inactivity heartbeat of a running chat turn, as upstream's gateway keeps it: every
 * `agent.gateway_notify_interval` seconds the chat gets a "still working" note (edited in place
 * where the platform can edit), and a turn that shows no activity (no model output, tool call,
 * tool result or command output) for `agent.gateway_timeout_warning` seconds is warned once; at
 * `agent.gateway_timeout` seconds of inactivity it is interrupted and the chat is told why.
 * The limits measure inactivity, not wall time: a turn that keeps calling tools may run for hours.
 * Time spent waiting for the user (an approval asked in the chat) is not inactivity, and no note
 * is sent meanwhile. `HERMES_AGENT_NOTIFY_INTERVAL`, `HERMES_AGENT_TIMEOUT_WARNING` and
 * `HERMES_AGENT_TIMEOUT` override the config keys, as upstream's do.
 */
import type { AgentEvent } from "../../agent/events.js";
import type { OutboundTarget, PlatformAdapter } from "../platforms/types.js";

const section = (value: unknown): Record<string, unknown> =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

const describeError = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** What the watch does; a null limit is off. */
export interface TurnWatchSettings {
  /** Between "still working" notes (ms). */
  notifyMs: number | null;
  /** Inactivity before the one warning (ms). */
  warningMs: number | null;
  /** Inactivity before the turn is stopped (ms). */
  timeoutMs: number | null;
  /** `display.long_running_notifications`: `generic` says only that work goes on, no step or tool. */
  notes: "detailed" | "generic";
  /** `display.busy_ack_detail`: the note names the step count (model calls of this turn). */
  stepDetail: boolean;
  maxSteps: number;
}

/** Seconds from the environment variable when it is set and a number, else from config; ≤ 0 is off. */
function limitMs(envValue: string | undefined, configValue: unknown, fallback: number): number | null {
  const parse = (v: unknown) => {
    if (v === undefined || v === null || (typeof v === "string" && v.trim() === "")) return undefined;
    const n = Number(v);
    return Number.isFinite(n) ? n : undefined;
  };
  const seconds = parse(envValue) ?? parse(configValue) ?? fallback;
  return seconds > 0 ? seconds * 1000 : null;
}

/** A display key for one platform: `display.platforms.<p>.<key>`, else `display.<key>`. */
function displaySetting(config: Record<string, unknown>, platform: string, key: string): unknown {
  const display = section(config["display"]);
  return section(section(display["platforms"])[platform])[key] ?? display[key];
}

/**
 * The watch's settings for a platform's chats (defaults as upstream: a note every 180 s, a
 * warning after 900 s and the stop after 1800 s without activity).
 */
export function turnWatchSettings(
  config: Record<string, unknown>,
  env: Readonly<Record<string, string | undefined>>,
  platform: string,
): TurnWatchSettings {
  const agent = section(config["agent"]);
  const mode = displaySetting(config, platform, "long_running_notifications");
  const off = mode === false || mode === "off" || mode === "false";
  const maxSteps = Number(agent["max_turns"]);
  return {
    notifyMs: off
      ? null
      : limitMs(env["HERMES_AGENT_NOTIFY_INTERVAL"], agent["gateway_notify_interval"], 180),
    warningMs: limitMs(env["HERMES_AGENT_TIMEOUT_WARNING"], agent["gateway_timeout_warning"], 900),
    timeoutMs: limitMs(env["HERMES_AGENT_TIMEOUT"], agent["gateway_timeout"], 1800),
    notes: mode === "generic" ? "generic" : "detailed",
    stepDetail: displaySetting(config, platform, "busy_ack_detail") !== false,
    maxSteps: Number.isFinite(maxSteps) && maxSteps > 0 ? maxSteps : 90,
  };
}

/** What the turn was last seen doing, for the notes. */
export interface TurnActivity {
  /** Model calls so far in this turn. */
  steps: number;
  /** The tool running now, if any. */
  tool?: string | undefined;
}

/** "45 s", "1 min", "12 min", "2 h 5 min". */
export function spokenDuration(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const rest = minutes % 60;
  return `${Math.floor(minutes / 60)} h${rest ? ` ${rest} min` : ""}`;
}

/** The "still working" note after `elapsedMs` of the turn. */
export function heartbeatText(
  elapsedMs: number,
  activity: TurnActivity,
  settings: TurnWatchSettings,
): string {
  if (settings.notes === "generic") return "⏳ Still working on it…";
  const parts: string[] = [];
  if (settings.stepDetail && activity.steps > 0) parts.push(`step ${activity.steps} of ${settings.maxSteps}`);
  if (activity.tool) parts.push(`running ${activity.tool}`);
  return `⏳ Still working (${spokenDuration(elapsedMs)} so far${parts.length ? `; ${parts.join(", ")}` : ""})`;
}

/** The one warning, after `warningMs` without activity, before the stop at `timeoutMs` (if any). */
export function warningText(warningMs: number, timeoutMs: number | null): string {
  const stop =
    timeoutMs !== null && timeoutMs > warningMs
      ? ` If nothing happens in the next ${spokenDuration(timeoutMs - warningMs)}, I'll stop this task.`
      : "";
  return `⚠️ No activity for ${spokenDuration(warningMs)}.${stop} You can wait, or send /stop to stop it now.`;
}

/** Told when the turn is stopped after `timeoutMs` without activity. */
export function timeoutText(timeoutMs: number, activity: TurnActivity, maxSteps: number): string {
  const where = activity.tool
    ? `It was stuck in the ${activity.tool} tool (step ${activity.steps} of ${maxSteps}).`
    : `It was waiting for the model (step ${activity.steps} of ${maxSteps}).`;
  return (
    `⏱️ I stopped this task: no activity for ${spokenDuration(timeoutMs)} (no model output and no tool progress). ` +
    `${where} Try again, or send /new to start fresh. To allow longer, set agent.gateway_timeout in ` +
    "config.yaml (seconds, 0 = no limit) and restart the gateway."
  );
}

export interface TurnWatchOptions {
  settings: TurnWatchSettings;
  /** Interrupts the turn; its partial answer is not delivered (the router reads `timedOut`). */
  stop: () => void;
  /** True while the turn waits for the user (an approval): no notes, and the inactivity clock rests. */
  waitingForUser?: () => boolean;
  /** A note could not be sent, or the turn was stopped; one line for the gateway's log. */
  log?: (line: string) => void;
  now?: () => number;
}

/**
 * Watches one running turn: feed it every event of the turn (`observe`), and `stop()` it when the
 * turn ends (the `done` event stops it too). Never throws; sends fail into `log`.
 */
export class TurnWatch {
  private readonly now: () => number;
  private readonly started: number;
  private lastActivity: number;
  private readonly activity: TurnActivity = { steps: 0 };
  private readonly running = new Map<string, string>();
  private warned = false;
  private stopped = false;
  /** The turn was stopped for inactivity. */
  timedOut = false;
  private noteId: string | undefined;
  private sending: Promise<unknown> = Promise.resolve();
  private readonly timers: ReturnType<typeof setInterval>[] = [];

  constructor(
    private readonly adapter: PlatformAdapter,
    private readonly target: OutboundTarget,
    private readonly options: TurnWatchOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.started = this.now();
    this.lastActivity = this.started;
    const { notifyMs, warningMs, timeoutMs } = options.settings;
    if (notifyMs !== null) this.timers.push(setInterval(() => this.heartbeat(), notifyMs));
    const limits = [warningMs, timeoutMs].filter((v): v is number => v !== null);
    if (limits.length > 0) {
      // Checked a few times per limit, so a limit is kept to within a tenth of itself (≤ 5 s).
      const tick = Math.min(5000, Math.max(20, Math.min(...limits) / 10));
      this.timers.push(setInterval(() => this.check(), tick));
    }
    for (const timer of this.timers) timer.unref?.();
  }

  /** Every event of the turn is activity; tool starts and ends say what it is doing. */
  observe(event: AgentEvent): void {
    if (this.stopped) return;
    this.lastActivity = this.now();
    this.warned = false;
    if (event.type === "turn_start") this.activity.steps = event.iteration;
    else if (event.type === "tool_start") this.running.set(event.callId, event.name);
    else if (event.type === "tool_end") this.running.delete(event.callId);
    else if (event.type === "done") this.stop();
    this.activity.tool = [...this.running.values()].at(-1);
  }

  /** Ends the watch: no more notes or checks. Idempotent. */
  stop(): void {
    this.stopped = true;
    for (const timer of this.timers) clearInterval(timer);
    this.timers.length = 0;
  }

  private waiting(): boolean {
    try {
      return this.options.waitingForUser?.() === true;
    } catch {
      return false;
    }
  }

  private heartbeat(): void {
    if (this.stopped || this.waiting()) return;
    const text = heartbeatText(this.now() - this.started, this.activity, this.options.settings);
    const { adapter, target } = this;
    // One note at a time, edited in place where the platform edits (no bubble per interval).
    this.sending = this.sending.then(async () => {
      if (this.stopped) return;
      try {
        if (this.noteId && adapter.capabilities.edit) {
          try {
            await adapter.edit(target, this.noteId, text);
            return;
          } catch {
            this.noteId = undefined; // deleted or too old to edit: a new note follows
          }
        }
        this.noteId = (await adapter.send(target, text)).messageId;
      } catch (error) {
        this.options.log?.(`could not send the "still working" note: ${describeError(error)}`);
      }
    });
  }

  private check(): void {
    if (this.stopped) return;
    const now = this.now();
    if (this.waiting()) {
      this.lastActivity = now;
      return;
    }
    const idle = now - this.lastActivity;
    const { warningMs, timeoutMs, maxSteps } = this.options.settings;
    if (timeoutMs !== null && idle >= timeoutMs) {
      this.timedOut = true;
      const text = timeoutText(timeoutMs, this.activity, maxSteps);
      this.stop();
      this.options.log?.(
        `turn stopped after ${spokenDuration(idle)} without activity (${this.activity.tool ?? "waiting for the model"})`,
      );
      this.options.stop();
      this.say(text);
    } else if (warningMs !== null && idle >= warningMs && !this.warned) {
      this.warned = true;
      this.say(warningText(warningMs, timeoutMs));
    }
  }

  private say(text: string): void {
    this.sending = this.sending.then(() =>
      this.adapter.send(this.target, text).catch((error: unknown) => {
        this.options.log?.(`could not tell the chat: ${describeError(error)}`);
      }),
    );
  }

  /** Until the notes and messages already begun are sent (for tests and orderly ends). */
  settled(): Promise<unknown> {
    return this.sending;
  }
}
