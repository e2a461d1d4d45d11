import { describe, expect, it } from "vitest";
import {
  CronScheduleError,
  catchUpWindowFor,
  nextRunAfter,
  parseSchedule,
} from "../../../../src/knowledge/cron/schedule.js";
import { formatIso, parseTimestamp } from "../../../../src/knowledge/cron/time.js";

const NOW = Date.parse("2026-03-01T10:00:00Z");
const ctx = { now: NOW, timezone: "UTC" };

describe("parseSchedule", () => {
  it.each([
    ["30m", { kind: "once", run_at: "2026-03-01T10:30:00+00:00", display: "once in 30m" }],
    ["2h", { kind: "once", run_at: "2026-03-01T12:00:00+00:00", display: "once in 2h" }],
    ["1d", { kind: "once", run_at: "2026-03-02T10:00:00+00:00", display: "once in 1d" }],
    ["in 45 minutes", { kind: "once", run_at: "2026-03-01T10:45:00+00:00", display: "once in 45 minutes" }],
    ["every 30m", { kind: "interval", minutes: 30, display: "every 30m" }],
    ["every 2h", { kind: "interval", minutes: 120, display: "every 120m" }],
    ["Every 1d", { kind: "interval", minutes: 1440, display: "every 1440m" }],
    ["0 9 * * 1-5", { kind: "cron", expr: "0 9 * * 1-5", display: "0 9 * * 1-5" }],
    [
      "0 9 * * * Europe/Berlin",
      { kind: "cron", expr: "0 9 * * *", tz: "Europe/Berlin", display: "0 9 * * * Europe/Berlin" },
    ],
    [
      "CRON_TZ=America/New_York 30 2 * * *",
      {
        kind: "cron",
        expr: "30 2 * * *",
        tz: "America/New_York",
        display: "CRON_TZ=America/New_York 30 2 * * *",
      },
    ],
    [
      "2026-03-05T14:00",
      { kind: "once", run_at: "2026-03-05T14:00:00+00:00", display: "once at 2026-03-05 14:00" },
    ],
    [
      "2026-03-05T14:00:00+01:00",
      { kind: "once", run_at: "2026-03-05T13:00:00+00:00", display: "once at 2026-03-05 13:00" },
    ],
  ])("%s", (input, expected) => {
    expect(parseSchedule(input, ctx)).toEqual(expected);
  });

  it("reads a timestamp without an offset in the configured timezone", () => {
    const s = parseSchedule("2026-07-01T09:00", { now: NOW, timezone: "Europe/Berlin" });
    expect(s).toMatchObject({ kind: "once", run_at: "2026-07-01T09:00:00+02:00" });
  });

  it.each([
    ["", /empty/],
    ["tomorrow-ish", /Invalid schedule "tomorrow-ish".*"30m".*every 30m.*0 9 \* \* 1-5/],
    ["every fortnight", /Invalid schedule "every fortnight"/],
    ["every 0m", /Invalid schedule/],
    ["61 * * * *", /Invalid cron expression "61 \* \* \* \*"/],
    ["0 9 * * * Mars/Olympus", /unknown timezone "Mars\/Olympus"/],
    ["0 0 9 * * *", /expected 5 fields/],
    ["2026-02-30T10:00", /Invalid timestamp "2026-02-30T10:00"/],
    ["0m", /more than 0/],
  ])("rejects %j with a clear error", (input, message) => {
    expect(() => parseSchedule(input, ctx)).toThrow(CronScheduleError);
    expect(() => parseSchedule(input, ctx)).toThrow(message);
  });
});

describe("nextRunAfter", () => {
  const at = (iso: string) => Date.parse(iso);
  it.each([
    [
      "interval adds its period",
      { kind: "interval", minutes: 30, display: "" },
      "2026-03-01T10:00:00Z",
      "2026-03-01T10:30:00.000Z",
    ],
    [
      "cron in UTC",
      { kind: "cron", expr: "0 9 * * *", display: "" },
      "2026-03-01T10:00:00Z",
      "2026-03-02T09:00:00.000Z",
    ],
    [
      "cron weekdays skip the weekend",
      { kind: "cron", expr: "0 9 * * 1-5", display: "" },
      "2026-03-06T10:00:00Z",
      "2026-03-09T09:00:00.000Z",
    ],
    [
      "cron with its own zone",
      { kind: "cron", expr: "0 9 * * *", tz: "Europe/Berlin", display: "" },
      "2026-06-01T00:00:00Z",
      "2026-06-01T07:00:00.000Z",
    ],
    // 2026-03-08: New York springs forward at 02:00; 02:30 does not exist that day.
    [
      "DST gap runs after the jump",
      { kind: "cron", expr: "30 2 * * *", tz: "America/New_York", display: "" },
      "2026-03-08T05:00:00Z",
      "2026-03-08T07:00:00.000Z",
    ],
    // 2026-11-01: 01:30 happens twice in New York; it runs once.
    [
      "DST repeat runs once",
      { kind: "cron", expr: "30 1 * * *", tz: "America/New_York", display: "" },
      "2026-11-01T05:31:00Z",
      "2026-11-02T06:30:00.000Z",
    ],
    [
      "once returns its time",
      { kind: "once", run_at: "2026-03-05T14:00:00+00:00", display: "" },
      "2026-03-01T10:00:00Z",
      "2026-03-05T14:00:00.000Z",
    ],
  ] as const)("%s", (_name, schedule, after, expected) => {
    const next = nextRunAfter(schedule as never, at(after), "UTC");
    expect(next === null ? null : new Date(next).toISOString()).toBe(expected);
  });

  it("uses the configured zone for cron without one", () => {
    const next = nextRunAfter(
      { kind: "cron", expr: "0 9 * * *", display: "" },
      at("2026-01-09T20:00:00Z"),
      "Asia/Tokyo",
    );
    expect(new Date(next ?? 0).toISOString()).toBe("2026-01-10T00:00:00.000Z");
  });
});

describe("catchUpWindowFor", () => {
  it.each([
    [{ kind: "interval", minutes: 1, display: "" }, 120_000],
    [{ kind: "interval", minutes: 60, display: "" }, 1_800_000],
    [{ kind: "cron", expr: "0 9 * * *", display: "" }, 7_200_000],
    [{ kind: "once", run_at: "2026-03-05T14:00:00+00:00", display: "" }, 120_000],
  ] as const)("%j → %i ms", (schedule, expected) => {
    expect(catchUpWindowFor(schedule as never, NOW, "UTC")).toBe(expected);
  });
});

describe("time helpers", () => {
  it("formats with the zone's offset", () => {
    expect(formatIso(Date.parse("2026-07-01T07:00:00Z"), "Europe/Berlin")).toBe("2026-07-01T09:00:00+02:00");
    expect(formatIso(Date.parse("2026-01-01T07:00:00Z"), "America/New_York")).toBe(
      "2026-01-01T02:00:00-05:00",
    );
  });
  it("reads Python's microsecond timestamps", () => {
    expect(parseTimestamp("2026-01-01T10:00:00.123456+01:00", "UTC")).toBe(
      Date.parse("2026-01-01T09:00:00.123Z"),
    );
  });
});
