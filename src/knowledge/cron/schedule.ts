/**
 * Schedule strings to schedules, and pure next-run math with an injected time. Accepted forms
 * (Python Hermes's, see `cron/jobs.py`):
 *
 * - `30m`, `2h`, `1d`, `in 30m`: once, that long after now
 * - `every 30m`, `every 2h`: a recurring interval
 * - `0 9 * * 1-5`: a five-field cron expression, read in the configured timezone; a zone can be
 *   named after it (`0 9 * * 1-5 Europe/Berlin`) or before it (`CRON_TZ=Europe/Berlin 0 9 * * *`)
 * - `2026-02-03T14:00`, `2026-02-03T14:00:00+01:00`: once at that time (no offset: the
 *   configured timezone)
 */
import { createRequire } from "node:module";
import { formatIso, isValidTimezone, parseTimestamp, readStoredTime } from "./time.js";
import type { CronSchedule } from "./types.js";

/** A schedule string that does not parse; the message names the input and the accepted forms. */
export class CronScheduleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CronScheduleError";
  }
}

export const SCHEDULE_FORMS =
  'Use one of: "30m" / "2h" / "1d" (once, after that delay), "every 30m" / "every 2h" (repeating), ' +
  'a cron expression such as "0 9 * * 1-5" (optionally followed by a timezone like Europe/Berlin), ' +
  'or a time such as "2026-02-03T14:00" (once).';

export interface ScheduleContext {
  /** Now, in ms since the epoch (delays count from it). */
  now: number;
  /** IANA zone for cron expressions and timestamps without an offset (config `timezone`). */
  timezone: string;
}

const UNITS: Record<string, number> = { m: 1, h: 60, d: 1440 };
const DURATION = /^(\d*)\s*(m|min|mins|minute|minutes|h|hr|hrs|hour|hours|d|day|days)$/i;

/** Minutes in a duration such as `30m`, `2h`, `1 day`, `hour`; undefined when it is not one. */
export function parseDurationMinutes(text: string): number | undefined {
  const m = DURATION.exec(text.trim());
  if (!m) return undefined;
  const value = m[1] ? Number(m[1]) : 1;
  const unit = UNITS[(m[2] ?? "m")[0]?.toLowerCase() ?? "m"] ?? 1;
  return value * unit;
}

const CRON_FIELD = /^[A-Za-z\d*\-,/?LW#]+$/;

/**
 * Parses a schedule string. Throws `CronScheduleError` naming the input and the accepted forms;
 * never anything else.
 */
export function parseSchedule(input: string, ctx: ScheduleContext): CronSchedule {
  const text = String(input ?? "").trim();
  if (!text) throw new CronScheduleError(`The schedule is empty. ${SCHEDULE_FORMS}`);
  const lower = text.toLowerCase();

  if (lower.startsWith("every ")) {
    const minutes = parseDurationMinutes(text.slice(6));
    if (minutes === undefined || minutes <= 0) {
      throw new CronScheduleError(
        `Invalid schedule "${text}": "every" takes a duration such as "every 30m" or "every 2h". ${SCHEDULE_FORMS}`,
      );
    }
    return { kind: "interval", minutes, display: `every ${minutes}m` };
  }

  const delayText = lower.startsWith("in ") ? text.slice(3).trim() : text;
  const delay = parseDurationMinutes(delayText);
  if (delay !== undefined) {
    if (delay <= 0) throw new CronScheduleError(`Invalid schedule "${text}": the delay must be more than 0.`);
    return {
      kind: "once",
      run_at: formatIso(ctx.now + delay * 60_000, ctx.timezone),
      display: `once in ${delayText}`,
    };
  }

  const cron = cronParts(text);
  if (cron) {
    const tz = cron.tz ?? undefined;
    if (tz !== undefined && !isValidTimezone(tz)) {
      throw new CronScheduleError(
        `Invalid schedule "${text}": unknown timezone "${tz}" (use an IANA name such as Europe/Berlin or UTC).`,
      );
    }
    const problem = cronProblem(cron.expr, tz ?? ctx.timezone);
    if (problem)
      throw new CronScheduleError(`Invalid cron expression "${cron.expr}": ${problem}. ${SCHEDULE_FORMS}`);
    return { kind: "cron", expr: cron.expr, display: text, ...(tz ? { tz } : {}) };
  }

  if (/^\d{4}-\d{2}-\d{2}/.test(text)) {
    const at = parseTimestamp(text, ctx.timezone);
    if (at === undefined) {
      throw new CronScheduleError(
        `Invalid timestamp "${text}": use ISO 8601 such as "2026-02-03T14:00" or "2026-02-03T14:00:00+01:00".`,
      );
    }
    const runAt = formatIso(at, ctx.timezone);
    return { kind: "once", run_at: runAt, display: `once at ${runAt.slice(0, 16).replace("T", " ")}` };
  }

  throw new CronScheduleError(`Invalid schedule "${text}". ${SCHEDULE_FORMS}`);
}

function cronParts(text: string): { expr: string; tz?: string } | undefined {
  let parts = text.split(/\s+/);
  let tz: string | undefined;
  const prefix = /^CRON_TZ=(.+)$/i.exec(parts[0] ?? "");
  if (prefix) {
    tz = prefix[1];
    parts = parts.slice(1);
  } else if (parts.length === 6 && !CRON_FIELD.test(parts[5] ?? "")) {
    tz = parts[5];
    parts = parts.slice(0, 5);
  } else if (parts.length === 6 && /\//.test(parts[5] ?? "") && /^[A-Za-z]/.test(parts[5] ?? "")) {
    tz = parts[5];
    parts = parts.slice(0, 5);
  } else if (parts.length === 6 && /^(UTC|GMT)$/i.test(parts[5] ?? "")) {
    tz = (parts[5] ?? "UTC").toUpperCase();
    parts = parts.slice(0, 5);
  }
  if (parts.length < 5 || !parts.slice(0, 5).every((p) => CRON_FIELD.test(p))) return undefined;
  if (parts.length !== 5) {
    // Six or seven fields look like cron with seconds or years, which Hermes jobs do not use.
    return parts.length <= 7 ? { expr: parts.join(" "), ...(tz ? { tz } : {}) } : undefined;
  }
  return { expr: parts.join(" "), ...(tz ? { tz } : {}) };
}

interface CronerInstance {
  nextRun(prev?: Date): Date | null;
  stop(): void;
}
type CronerCtor = new (pattern: string, options: Record<string, unknown>) => CronerInstance;

let cronerCtor: CronerCtor | undefined;

function croner(expr: string, tz: string): CronerInstance {
  if (!cronerCtor) {
    const require = createRequire(import.meta.url);
    cronerCtor = (require("croner") as { Cron: CronerCtor }).Cron;
  }
  return new cronerCtor(expr, { timezone: tz, paused: true, mode: "5-part" });
}

/** Why croner rejects the expression, or undefined when it is valid. */
function cronProblem(expr: string, tz: string): string | undefined {
  if (expr.split(/\s+/).length !== 5) {
    return "expected 5 fields (minute hour day-of-month month day-of-week)";
  }
  try {
    croner(expr, tz).stop();
    return undefined;
  } catch (error) {
    return (error instanceof Error ? error.message : String(error)).replace(/^CronPattern: /, "");
  }
}

/**
 * The first run of `schedule` strictly after `after` (ms), or null when there is none (a once
 * schedule whose time is unreadable, a cron expression with no future match). `once` returns its
 * run time whatever `after` is: whether it already ran is the job's business, not the schedule's.
 * `timezone` is the configured zone, used for cron expressions without their own.
 */
export function nextRunAfter(schedule: CronSchedule, after: number, timezone: string): number | null {
  switch (schedule.kind) {
    case "once":
      return readStoredTime(schedule.run_at) ?? null;
    case "interval": {
      const minutes = Number(schedule.minutes);
      return Number.isFinite(minutes) && minutes > 0 ? after + minutes * 60_000 : null;
    }
    case "cron": {
      try {
        const job = croner(schedule.expr, schedule.tz ?? timezone);
        const next = job.nextRun(new Date(after));
        job.stop();
        return next ? next.getTime() : null;
      } catch {
        return null;
      }
    }
    default:
      return null;
  }
}

const MIN_WINDOW_MS = 120_000;
const MAX_WINDOW_MS = 7_200_000;

/**
 * How late a run may start and still count (Hermes's grace): half the period, clamped to
 * 2 minutes – 2 hours; 2 minutes for one-shots. A run missed by more is skipped.
 */
export function catchUpWindowFor(schedule: CronSchedule, at: number, timezone: string): number {
  let period: number | undefined;
  if (schedule.kind === "interval") period = Number(schedule.minutes) * 60_000;
  else if (schedule.kind === "cron") {
    const first = nextRunAfter(schedule, at, timezone);
    const second = first === null ? null : nextRunAfter(schedule, first, timezone);
    if (first !== null && second !== null) period = second - first;
  }
  if (!period || !Number.isFinite(period)) return MIN_WINDOW_MS;
  return Math.max(MIN_WINDOW_MS, Math.min(Math.floor(period / 2), MAX_WINDOW_MS));
}

/** Whether a stored `schedule` value has a shape this code can run. */
export function isCronSchedule(value: unknown): value is CronSchedule {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  if (v["kind"] === "once") return typeof v["run_at"] === "string";
  if (v["kind"] === "interval") return typeof v["minutes"] === "number";
  if (v["kind"] === "cron") return typeof v["expr"] === "string";
  return false;
}
