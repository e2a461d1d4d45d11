/**
 * Instants and wall clocks in an IANA zone, as Python Hermes writes them: ISO 8601 with a numeric
 * offset (`2026-02-03T14:00:00+01:00`), which Python's `datetime.fromisoformat` reads on every
 * version (it rejects a trailing `Z` before 3.11).
 */

/** The zone of this machine, used when config.yaml sets no `timezone`. */
export function systemTimezone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}

/** Whether `tz` is a zone name this runtime knows (`Europe/Berlin`, `UTC`). */
export function isValidTimezone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function wallParts(ms: number, tz: string): number[] {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: tz,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(tz, f);
  }
  const get = (type: string, parts: Intl.DateTimeFormatPart[]) =>
    Number(parts.find((p) => p.type === type)?.value ?? 0);
  const parts = f.formatToParts(new Date(ms));
  return ["year", "month", "day", "hour", "minute", "second"].map((t) => get(t, parts));
}

/** The zone's UTC offset at instant `ms`, in ms (east positive). */
export function zoneOffsetMs(ms: number, tz: string): number {
  const [y = 1970, mo = 1, d = 1, h = 0, mi = 0, s = 0] = wallParts(ms, tz);
  const wall = Date.UTC(y, mo - 1, d, h, mi, s);
  return wall - (ms - (((ms % 1000) + 1000) % 1000));
}

/** `ms` as ISO 8601 in `tz` with its offset, seconds precision (`2026-02-03T14:00:00+01:00`). */
export function formatIso(ms: number, tz: string): string {
  const offset = zoneOffsetMs(ms, tz);
  const local = new Date(Math.floor(ms / 1000) * 1000 + offset).toISOString().slice(0, 19);
  const sign = offset < 0 ? "-" : "+";
  const abs = Math.abs(offset) / 60_000;
  const hh = String(Math.floor(abs / 60)).padStart(2, "0");
  const mm = String(Math.round(abs % 60)).padStart(2, "0");
  return `${local}${sign}${hh}:${mm}`;
}

/**
 * The instant when the wall clock in `tz` shows the given time. A time skipped by a DST jump maps
 * to the instant one offset-change later; a repeated time maps to its first occurrence.
 */
export function wallTimeToInstant(wall: number[], tz: string): number {
  const [y = 1970, mo = 1, d = 1, h = 0, mi = 0, s = 0] = wall;
  const asUtc = Date.UTC(y, mo - 1, d, h, mi, s);
  // The offsets a day before and after bracket any transition near this time.
  const before = asUtc - zoneOffsetMs(asUtc - 86_400_000, tz);
  const after = asUtc - zoneOffsetMs(asUtc + 86_400_000, tz);
  const valid = (c: number) => zoneOffsetMs(c, tz) === asUtc - c;
  if (valid(before) && valid(after)) return Math.min(before, after);
  if (valid(before)) return before;
  if (valid(after)) return after;
  return before; // in a DST gap: the old offset, i.e. the wall time after the jump
}

const HAS_OFFSET = /(?:[zZ]|[+-]\d{2}(?::?\d{2})?)$/;

/**
 * Parses an ISO timestamp. One without an offset is wall time in `tz`. Undefined when it is not a
 * timestamp.
 */
export function parseTimestamp(text: string, tz: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?)?(.*)$/.exec(text.trim());
  if (!m) return undefined;
  const rest = m[7] ?? "";
  if (rest !== "" && !HAS_OFFSET.test(rest)) return undefined;
  if (rest !== "" && m[4] === undefined) return undefined;
  const nums = [m[1], m[2], m[3], m[4], m[5], m[6]].map((v) => Number(v ?? 0));
  const [y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0] = nums;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59) return undefined;
  // Reject dates that roll over (2026-02-30).
  const probe = new Date(Date.UTC(y, mo - 1, d));
  if (probe.getUTCMonth() !== mo - 1 || probe.getUTCDate() !== d) return undefined;
  if (rest === "") return wallTimeToInstant(nums, tz);
  const ms = Date.parse(text.trim().replace(" ", "T"));
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * Reads a stored timestamp (`next_run_at`, `run_at`...). Python Hermes writes offsets; a legacy
 * value without one is read as this machine's wall time, as Python reads it. Undefined when absent
 * or unreadable.
 */
export function readStoredTime(value: unknown): number | undefined {
  if (typeof value !== "string" || value.trim() === "") return undefined;
  return parseTimestamp(value, systemTimezone());
}
