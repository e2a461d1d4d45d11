/**
 * The CLI's side of the curator schedule: after a chat command finished, record that the agent was
 * used and, when a run is due and the agent had been idle long enough before this command started,
 * start `hermes curator run --scheduled` as a detached process. Costs one small file read, and a
 * write (under the state's lock, fsynced) only when the recorded activity is a minute old or more.
 */
import type { HermesConfig } from "../config/defaults.js";
import { checkCuratorDue } from "../knowledge/curator/schedule.js";
import { curatorSettings } from "../knowledge/curator/settings.js";
import { readCuratorState, updateCuratorState } from "../knowledge/curator/state.js";
import { parseIsoTime } from "../knowledge/skills/usage.js";

/** How stale the recorded CLI activity may get before a command rewrites it. */
export const ACTIVITY_STAMP_RESOLUTION_MS = 60_000;

export interface CuratorTriggerOptions {
  home: string;
  config: HermesConfig;
  env: Record<string, string | undefined>;
  /** When this command started: idle time is measured up to it. */
  startedAt: Date;
  now?: Date;
  /** Starts the detached run (tests inject a recorder); returns its pid. */
  start?: (home: string) => number;
}

/**
 * Returns what happened: "started" (with the pid), or why not. Idle is the gap between the last
 * agent command of any Hermes CLI process and this one's start (unknown: counted as idle, as
 * Python Hermes counts a CLI start).
 */
export async function startCuratorIfDue(options: CuratorTriggerOptions): Promise<string> {
  if (!curatorSettings(options.config).enabled) return "disabled";
  const now = options.now ?? new Date();
  const previous = parseIsoTime(readCuratorState(options.home)._last_cli_activity_at);
  const idleSeconds = previous
    ? Math.max(0, (options.startedAt.getTime() - previous.getTime()) / 1000)
    : Number.POSITIVE_INFINITY;
  // Commands in quick succession (a script of one-shots) leave the stamp alone: the next command
  // then counts at most a minute more idle time, against a threshold measured in hours.
  const age = previous ? now.getTime() - previous.getTime() : Number.POSITIVE_INFINITY;
  if (!(age >= 0 && age < ACTIVITY_STAMP_RESOLUTION_MS)) {
    await updateCuratorState(options.home, (state) => {
      state._last_cli_activity_at = now.toISOString().replace("Z", "+00:00");
    });
  }
  const decision = await checkCuratorDue(options.home, options.config, { now, idleSeconds });
  if (!decision.due) return decision.reason;
  // The curator command's module (its verbs, archive and report code) is loaded only for a due run:
  // every one-shot passes here just before it exits.
  let start = options.start;
  if (!start) {
    const { startDetachedCuratorRun } = await import("./commands/curator.js");
    start = (home: string) => startDetachedCuratorRun(home, ["--scheduled"], options.env);
  }
  return `started (pid ${start(options.home)})`;
}
