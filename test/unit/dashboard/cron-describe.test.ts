/**
 * Cron schedules in words for the dashboard: common five-field shapes read as sentences, intervals
 * in the largest whole unit, and anything unusual falls back to the expression itself.
 */
import { describe, expect, it } from "vitest";
import {
  describeCronExpression,
  describeMinutes,
  describeSchedule,
} from "../../../src/dashboard/cron-describe.js";
import { parseSchedule } from "../../../src/knowledge/cron/schedule.js";

describe("describeSchedule", () => {
  it.each([
    ["0 9 * * *", "every day at 09:00"],
    ["30 7 * * 1-5", "weekdays at 07:30"],
    ["0 10 * * sat,sun", "weekends at 10:00"],
    ["15 18 * * 1", "every Monday at 18:15"],
    ["0 8 * * 1,3,5", "every Monday, Wednesday, Friday at 08:00"],
    ["0 8 * * 7", "every Sunday at 08:00"],
    ["0 6 1 * *", "on day 1 of every month at 06:00"],
    ["*/15 * * * *", "every 15 minutes"],
    ["0 * * * *", "every hour, on the hour"],
    ["5 * * * *", "every hour at minute 5"],
    ["0 */6 * * *", "every 6 hours at minute 0"],
    ["* * * * *", "every minute"],
  ])("%s reads as %s", (expr, words) => {
    expect(describeCronExpression(expr)).toBe(words);
  });

  it("leaves unusual expressions as they are, naming their zone", () => {
    for (const expr of ["0 9 * 1 *", "0 9-17 * * *", "0 9 1 * 1", "0 9 * * 9", "1 2 3"]) {
      expect(describeCronExpression(expr)).toBeUndefined();
    }
    const schedule = parseSchedule("0 9-17 * * * Europe/Berlin", { now: Date.now(), timezone: "UTC" });
    expect(describeSchedule(schedule)).toBe('cron "0 9-17 * * *" (Europe/Berlin)');
    const daily = parseSchedule("0 9 * * * Europe/Berlin", { now: Date.now(), timezone: "UTC" });
    expect(describeSchedule(daily)).toBe("every day at 09:00 (Europe/Berlin)");
  });

  it("reads intervals and one-shots from the parser's records", () => {
    expect(describeMinutes(1)).toBe("every minute");
    expect(describeMinutes(45)).toBe("every 45 minutes");
    expect(describeMinutes(90)).toBe("every 1 h 30 min");
    expect(describeMinutes(120)).toBe("every 2 hours");
    expect(describeMinutes(1440)).toBe("every day");
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(describeSchedule(parseSchedule("every 2h", { now, timezone: "UTC" }))).toBe("every 2 hours");
    expect(describeSchedule(parseSchedule("30m", { now, timezone: "UTC" }))).toMatch(
      /^once, at 2026-01-01T00:30/,
    );
    expect(describeSchedule(undefined, "legacy text")).toBe("legacy text");
  });
});
