/**
 * Which log lines `hermes logs` shows. Pure: the clock comes in as a parameter.
 *
 * Two line formats share a home's logs folder: ours (util/log.ts, `2026-11-26T07:03:22.123Z INFO
 * <session|-> <component>: message`, UTC) and Python Hermes's (`2026-11-26 07:03:22,123 INFO
 * [session] component: message`, local time). Both are read. A line without a timestamp and level
 * (a Python traceback's continuation) belongs to the line above it and shares its fate.
 */
import { type LogLevel, parseLogLevel } from "./log.js";

const RANK: Record<LogLevel, number> = { DEBUG: 10, INFO: 20, WARNING: 30, ERROR: 40 };

export interface LogFilter {
  /** Least level shown. */
  level?: LogLevel;
  /** Lines with this text in them (a session id or part of one), as upstream matches it. */
  session?: string;
  /** Lines at or after this time (epoch ms). */
  sinceMs?: number;
  /** Lines whose component is this name or below it (`gateway` takes `gateway.telegram`). */
  component?: string;
}

export interface LineHead {
  timeMs: number;
  level: LogLevel;
  component: string;
}

const OURS = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z) (DEBUG|INFO|WARNING|ERROR) \S+ (\S+?):/;
const PYTHON =
  /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:[,.](\d+))? (DEBUG|INFO|WARNING|ERROR|CRITICAL)(?: \[[^\]]*\])? (\S+?):/;

/** The timestamp, level and component of a line that starts an event; undefined for other lines. */
export function parseLineHead(line: string): LineHead | undefined {
  const ours = OURS.exec(line);
  if (ours) {
    return {
      timeMs: Date.parse(ours[1] ?? ""),
      level: ours[2] as LogLevel,
      component: ours[3] ?? "",
    };
  }
  const py = PYTHON.exec(line);
  if (py) {
    // Python's logging writes local time without a zone.
    const timeMs = new Date(`${py[1]}T${py[2]}.${(py[3] ?? "0").padEnd(3, "0").slice(0, 3)}`).getTime();
    return { timeMs, level: parseLogLevel(py[4]) ?? "ERROR", component: py[5] ?? "" };
  }
  return undefined;
}

/** Whether an event line passes the filter; a line without a head never does on its own. */
export function matchesHead(line: string, head: LineHead | undefined, filter: LogFilter): boolean {
  if (filter.session !== undefined && !line.includes(filter.session)) return false;
  if (!head) return false;
  if (filter.level !== undefined && RANK[head.level] < RANK[filter.level]) return false;
  if (filter.sinceMs !== undefined && !(head.timeMs >= filter.sinceMs)) return false;
  if (filter.component !== undefined) {
    const c = filter.component;
    if (head.component !== c && !head.component.startsWith(`${c}.`)) return false;
  }
  return true;
}

/** Whether any filter is set (then `hermes logs` reads further back to find enough lines). */
export function hasFilter(filter: LogFilter): boolean {
  return Object.values(filter).some((v) => v !== undefined);
}

/**
 * A forward line filter for followed output: event lines are judged by `filter`, a continuation
 * line follows the verdict of the event line above it.
 */
export function lineFilter(filter: LogFilter): (line: string) => boolean {
  if (!hasFilter(filter)) return () => true;
  let last = false;
  return (line) => {
    const head = parseLineHead(line);
    if (!head) return last;
    last = matchesHead(line, head, filter);
    return last;
  };
}

/** Thrown for a `--since` or `--level` value that cannot be read; the message says the forms. */
export class LogArgumentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LogArgumentError";
  }
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/**
 * `--since`: a relative age (`90s`, `30m`, `2h`, `1d`, `1w`) before `nowMs`, or an absolute date
 * or time (`2026-11-26`, `2026-11-26T07:00`, ISO with a zone; without a zone it is local time).
 */
export function parseSince(text: string, nowMs: number): number {
  const value = text.trim().toLowerCase();
  const relative = /^(\d+)\s*([smhdw])$/.exec(value);
  if (relative) return nowMs - Number(relative[1]) * (UNIT_MS[relative[2] ?? "s"] ?? 1000);
  if (/^\d{4}-\d\d-\d\d([t ]\d\d:\d\d(:\d\d(\.\d+)?)?(z|[+-]\d\d:?\d\d)?)?$/.test(value)) {
    // A bare date is local midnight, as a user typing it means.
    const ms = new Date(
      /^\d{4}-\d\d-\d\d$/.test(value) ? `${value}T00:00` : value.replace(" ", "T").toUpperCase(),
    ).getTime();
    if (Number.isFinite(ms)) return ms;
  }
  throw new LogArgumentError(
    `--since expects an age like 30m, 2h, 1d (s m h d w) or a date like 2026-11-26 or 2026-11-26T07:00, got "${text}".`,
  );
}

/** `--level`: DEBUG, INFO, WARNING (WARN) or ERROR (CRITICAL), any case. */
export function parseLevelArgument(text: string): LogLevel {
  const level = parseLogLevel(text);
  if (!level) throw new LogArgumentError(`--level expects DEBUG, INFO, WARNING or ERROR, got "${text}".`);
  return level;
}
