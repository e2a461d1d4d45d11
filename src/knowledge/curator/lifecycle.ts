/**
 * The curator's decisions as pure functions of the usage records, the settings and the clock:
 * when a run is due, and which skills move between active, stale and archived. No I/O here; the
 * run (run.ts) reads the files, asks these, and applies the answer.
 */
import type { SkillUsageRecord } from "../skills/provenance.js";
import { isCuratorManaged, latestActivityAt, parseIsoTime } from "../skills/usage.js";
import type { CuratorSettings } from "./settings.js";
import type { CuratorState } from "./state.js";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export type DueDecision =
  | { due: true }
  /** `seed`: first sight of the curator; record `last_run_at = now` so the first run waits a full interval. */
  | { due: false; reason: string; seed?: boolean };

/**
 * Whether a scheduled run should start now. `idleSeconds` is how long the agent has been idle
 * (Infinity when unknown). As in Python Hermes, a home that never ran the curator is not curated at
 * once: the first sight seeds `last_run_at` and the first run comes one interval later
 * (`hermes curator run` runs at any time).
 */
export function curatorDue(
  state: CuratorState,
  settings: CuratorSettings,
  now: Date,
  idleSeconds: number,
): DueDecision {
  if (!settings.enabled) return { due: false, reason: "disabled (curator.enabled is false)" };
  if (state.paused) return { due: false, reason: "paused (hermes curator resume)" };
  const last = parseIsoTime(state.last_run_at);
  if (!last)
    return { due: false, reason: "first sight: the first run comes one interval from now", seed: true };
  const next = last.getTime() + settings.intervalHours * HOUR;
  if (now.getTime() < next) {
    return { due: false, reason: `next run after ${new Date(next).toISOString()}` };
  }
  if (idleSeconds < settings.minIdleHours * 3600) {
    return { due: false, reason: `waiting until the agent has been idle ${settings.minIdleHours} h` };
  }
  return { due: true };
}

/** A skill the curator looks at: its usage record and what protects it. */
export interface CuratorCandidate {
  name: string;
  record: SkillUsageRecord | undefined;
  /** Named by a cron job (a job that fires rarely must still find its skill). */
  cronReferenced?: boolean;
}

export type TransitionAction = "stale" | "archive" | "reactivate";

export interface Transition {
  name: string;
  action: TransitionAction;
  from: string;
  /** Days since the last activity (or creation). */
  idleDays: number;
}

export interface TransitionPlan {
  transitions: Transition[];
  /** Curator-managed skills looked at. */
  checked: number;
  /** Left alone and why: pinned, cron, not managed. */
  skipped: { name: string; why: "pinned" | "cron" | "unmanaged" }[];
}

/**
 * The state changes due at `now`. Only curator-managed skills (`created_by: agent`) are
 * considered; pinned ones and skills a cron job names are never moved. Activity is the newest
 * use/view/patch, else the creation time, else now (a record without any time is never aged).
 * Archived skills are not in `candidates` (they are no longer installed).
 */
export function planTransitions(
  candidates: readonly CuratorCandidate[],
  settings: Pick<CuratorSettings, "staleAfterDays" | "archiveAfterDays">,
  now: Date,
): TransitionPlan {
  const plan: TransitionPlan = { transitions: [], checked: 0, skipped: [] };
  const staleCutoff = now.getTime() - settings.staleAfterDays * DAY;
  const archiveCutoff = now.getTime() - settings.archiveAfterDays * DAY;
  for (const { name, record, cronReferenced } of candidates) {
    if (!isCuratorManaged(record)) {
      plan.skipped.push({ name, why: "unmanaged" });
      continue;
    }
    plan.checked++;
    if (record?.pinned === true) {
      plan.skipped.push({ name, why: "pinned" });
      continue;
    }
    if (cronReferenced) {
      plan.skipped.push({ name, why: "cron" });
      continue;
    }
    const anchor = latestActivityAt(record) ?? parseIsoTime(record?.created_at) ?? now;
    const at = anchor.getTime();
    const idleDays = Math.max(0, Math.floor((now.getTime() - at) / DAY));
    const state = typeof record?.state === "string" ? record.state : "active";
    if (at <= archiveCutoff && state !== "archived") {
      plan.transitions.push({ name, action: "archive", from: state, idleDays });
    } else if (at <= staleCutoff && state === "active") {
      plan.transitions.push({ name, action: "stale", from: state, idleDays });
    } else if (at > staleCutoff && state === "stale") {
      plan.transitions.push({ name, action: "reactivate", from: state, idleDays });
    }
  }
  return plan;
}

/** Counts in Python Hermes's `auto_transitions` shape. */
export function transitionCounts(plan: TransitionPlan): Record<string, number> {
  const count = (action: TransitionAction) => plan.transitions.filter((t) => t.action === action).length;
  return {
    checked: plan.checked,
    marked_stale: count("stale"),
    archived: count("archive"),
    reactivated: count("reactivate"),
  };
}
