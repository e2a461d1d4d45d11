/**
 * The learning loop's configuration, read defensively from config.yaml with Python Hermes's keys
 * and defaults: `memory.nudge_interval` (user turns, 10), `skills.creation_nudge_interval` (tool
 * iterations, 15), `memory.flush_min_turns` (6), `memory.review_budget_seconds` (60),
 * `display.memory_notifications` (on). A value that is not a number keeps the default; 0 or less
 * switches that nudge (or the flush) off, as upstream does.
 */
import type { HermesConfig } from "../../config/defaults.js";

export interface ReviewSettings {
  /** User turns between memory reviews; 0: never. */
  memoryNudgeInterval: number;
  /** Tool iterations between skill reviews; 0: never. */
  skillNudgeInterval: number;
  /** Unreviewed user turns that make a flush worth running before they leave the context; 0: never. */
  flushMinTurns: number;
  /** The whole review's wall-clock budget in ms (every request of it together). */
  budgetMs: number;
  /** Show one line when a review saved something (`display.memory_notifications`). */
  notify: boolean;
}

export const REVIEW_DEFAULTS = {
  nudge_interval: 10,
  creation_nudge_interval: 15,
  flush_min_turns: 6,
  review_budget_seconds: 60,
} as const;

function section(config: HermesConfig, key: string): Record<string, unknown> {
  const raw = config[key];
  return raw !== null && typeof raw === "object" ? (raw as Record<string, unknown>) : {};
}

function count(value: unknown, fallback: number): number {
  const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  if (typeof n !== "number" || !Number.isFinite(n)) return fallback;
  return Math.max(0, Math.floor(n));
}

/** Python Hermes writes booleans and "on"/"off" strings here; anything else keeps notifications on. */
function onOff(value: unknown): boolean {
  if (value === false) return false;
  if (typeof value === "string") return !["off", "false", "no", "0"].includes(value.trim().toLowerCase());
  return true;
}

export function reviewSettings(config: HermesConfig): ReviewSettings {
  const memory = section(config, "memory");
  const skills = section(config, "skills");
  const display = section(config, "display");
  const budget = count(memory["review_budget_seconds"], REVIEW_DEFAULTS.review_budget_seconds);
  return {
    memoryNudgeInterval: count(memory["nudge_interval"], REVIEW_DEFAULTS.nudge_interval),
    skillNudgeInterval: count(skills["creation_nudge_interval"], REVIEW_DEFAULTS.creation_nudge_interval),
    flushMinTurns: count(memory["flush_min_turns"], REVIEW_DEFAULTS.flush_min_turns),
    budgetMs: (budget > 0 ? budget : REVIEW_DEFAULTS.review_budget_seconds) * 1000,
    notify: onOff(display["memory_notifications"]),
  };
}
