/**
 * When the curator runs by itself: the gateway asks on its cron ticker (in-process), the CLI asks
 * after a chat command finished (and then starts a detached `hermes curator run --scheduled`).
 * Both go through {@link checkCuratorDue}, which also seeds the state on first sight, and the run
 * re-checks under the run lock, so two processes asking at once still make one run.
 */

import type { Env } from "../../ai/resolve.js";
import type { HermesConfig } from "../../config/defaults.js";
import { CuratorError } from "./archive.js";
import { curatorDue, type DueDecision } from "./lifecycle.js";
import { auxiliaryCuratorReviewer } from "./reviewer.js";
import { type CuratorRunResult, runCurator } from "./run.js";
import { curatorSettings } from "./settings.js";
import { readCuratorState, updateCuratorState } from "./state.js";

/**
 * Whether a scheduled run is due (see `curatorDue`). On first sight it records `last_run_at = now`
 * with a "deferred first run" summary, as Python Hermes does, so a fresh home is not curated at once.
 */
export async function checkCuratorDue(
  home: string,
  config: Readonly<Record<string, unknown>>,
  options: { now: Date; idleSeconds: number },
): Promise<DueDecision> {
  const settings = curatorSettings(config);
  if (!settings.enabled) return { due: false, reason: "disabled (curator.enabled is false)" };
  const decision = curatorDue(readCuratorState(home), settings, options.now, options.idleSeconds);
  if (!decision.due && decision.seed) {
    await updateCuratorState(home, (state) => {
      state.last_run_at ??= options.now.toISOString().replace("Z", "+00:00");
      state.last_run_summary ??=
        "deferred first run: the curator runs one interval from now; `hermes curator run --dry-run` previews it";
    });
  }
  return decision;
}

export interface ScheduledRunOptions {
  home: string;
  config: HermesConfig;
  env: Env;
  now?: () => Date;
  /** Seconds the agent has been idle; Infinity when the caller cannot tell. */
  idleSeconds?: number;
}

/**
 * Runs the curator when it is due; resolves undefined when it was not (or another process runs
 * it). Never throws for expected outcomes; an unexpected failure rejects for the caller to log.
 */
export async function runCuratorIfDue(options: ScheduledRunOptions): Promise<CuratorRunResult | undefined> {
  const now = (options.now ?? (() => new Date()))();
  const decision = await checkCuratorDue(options.home, options.config, {
    now,
    idleSeconds: options.idleSeconds ?? Number.POSITIVE_INFINITY,
  });
  if (!decision.due) return undefined;
  const review = auxiliaryCuratorReviewer(options.config, options.env, options.home);
  try {
    return await runCurator({
      home: options.home,
      config: options.config,
      trigger: "schedule",
      onlyIfDue: true,
      ...(review ? { review } : {}),
      ...(options.now ? { now: options.now } : {}),
    });
  } catch (error) {
    if (error instanceof CuratorError) return undefined;
    throw error;
  }
}

/**
 * A hook for the gateway's cron ticker: checks on every tick, runs at most one curator pass at a
 * time in this process, and reports a finished run through `log`. The check reads one small file.
 */
export function curatorTicker(
  options: Omit<ScheduledRunOptions, "idleSeconds"> & {
    log: (line: string) => void;
    /** Seconds since the gateway last handled a message (Infinity when unknown). */
    idleSeconds?: () => number;
  },
): () => void {
  let running = false;
  return () => {
    if (running) return;
    running = true;
    runCuratorIfDue({ ...options, idleSeconds: options.idleSeconds?.() ?? Number.POSITIVE_INFINITY })
      .then((result) => {
        if (result) options.log(`curator: ${result.summary} (report: ${result.reportDir})`);
      })
      .catch((error: unknown) =>
        options.log(`curator: run failed: ${error instanceof Error ? error.message : String(error)}`),
      )
      .finally(() => {
        running = false;
      });
  };
}
