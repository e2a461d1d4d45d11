/**
 * A cron job's schedule in words for the dashboard ("every day at 09:00", "every 2 hours",
 * "weekdays at 08:30 (Europe/Berlin)"). Common shapes of a five-field expression get a sentence;
 * anything else is shown as the expression itself, never guessed at.
 */
import type { CronSchedule } from "../knowledge/cron/types.js";

const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const DAY_NAMES: Readonly<Record<string, number>> = {
  sun: 0,
  mon: 1,
  tue: 2,
  wed: 3,
  thu: 4,
  fri: 5,
  sat: 6,
};

const plural = (n: number, unit: string): string => (n === 1 ? unit : `${n} ${unit}s`);

/** "every 90 minutes" → "every 1 h 30 min"; whole hours and days read as such. */
export function describeMinutes(minutes: number): string {
  if (minutes % 1440 === 0) return `every ${plural(minutes / 1440, "day")}`;
  if (minutes % 60 === 0) return `every ${plural(minutes / 60, "hour")}`;
  if (minutes > 60) return `every ${Math.floor(minutes / 60)} h ${minutes % 60} min`;
  return `every ${plural(minutes, "minute")}`;
}

const isNumber = (field: string): boolean => /^\d{1,2}$/.test(field);
const pad = (n: string): string => n.padStart(2, "0");

function dayOfWeek(field: string): string | undefined {
  const one = (v: string): number | undefined => {
    const lower = v.toLowerCase();
    if (lower in DAY_NAMES) return DAY_NAMES[lower];
    if (!/^\d$/.test(v)) return undefined;
    const n = Number(v);
    return n <= 7 ? n % 7 : undefined;
  };
  if (/^(1-5|mon-fri)$/i.test(field)) return "weekdays";
  if (/^(0,6|6,0|sat,sun|sun,sat|6-7)$/i.test(field)) return "weekends";
  const days = field.split(",").map(one);
  if (days.some((d) => d === undefined)) return undefined;
  return `every ${days.map((d) => DAYS[d as number]).join(", ")}`;
}

/** A sentence for a five-field expression, or undefined when it is not one of the common shapes. */
export function describeCronExpression(expr: string): string | undefined {
  const parts = expr.trim().split(/\s+/);
  if (parts.length !== 5) return undefined;
  const [minute = "", hour = "", dom = "", month = "", dow = ""] = parts;
  if (month !== "*") return undefined;
  const step = /^\*\/(\d+)$/.exec(minute);
  if (step && hour === "*" && dom === "*" && dow === "*") return describeMinutes(Number(step[1]));
  if (minute === "*" && hour === "*" && dom === "*" && dow === "*") return "every minute";
  if (isNumber(minute) && hour === "*" && dom === "*" && dow === "*") {
    return minute === "0" ? "every hour, on the hour" : `every hour at minute ${Number(minute)}`;
  }
  const hourStep = /^\*\/(\d+)$/.exec(hour);
  if (isNumber(minute) && hourStep && dom === "*" && dow === "*") {
    return `${describeMinutes(Number(hourStep[1]) * 60)} at minute ${Number(minute)}`;
  }
  if (!isNumber(minute) || !isNumber(hour)) return undefined;
  const at = `at ${pad(hour)}:${pad(minute)}`;
  if (dom === "*" && dow === "*") return `every day ${at}`;
  if (dom === "*") {
    const days = dayOfWeek(dow);
    return days ? `${days} ${at}` : undefined;
  }
  if (dow === "*" && isNumber(dom)) return `on day ${Number(dom)} of every month ${at}`;
  return undefined;
}

/** The schedule in words; a cron expression's own zone is named after it. */
export function describeSchedule(schedule: CronSchedule | undefined, display = ""): string {
  if (!schedule || typeof schedule !== "object") return display;
  if (schedule.kind === "interval") return describeMinutes(schedule.minutes);
  if (schedule.kind === "once") return `once, at ${schedule.run_at}`;
  const words = describeCronExpression(schedule.expr);
  const zone = schedule.tz ? ` (${schedule.tz})` : "";
  return words ? `${words}${zone}` : `cron "${schedule.expr}"${zone}`;
}
