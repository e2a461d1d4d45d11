/**
 * Session ids in the format Python Hermes writes (`20260801_142233_a1b2c3`: local date and time, then
 * six random hex digits), so ids sort by start time and look the same in a shared `state.db`.
 */
import { randomBytes } from "node:crypto";

export function newSessionId(now: Date = new Date()): string {
  const pad = (n: number) => String(n).padStart(2, "0");
  const date = `${now.getFullYear()}${pad(now.getMonth() + 1)}${pad(now.getDate())}`;
  const time = `${pad(now.getHours())}${pad(now.getMinutes())}${pad(now.getSeconds())}`;
  return `${date}_${time}_${randomBytes(3).toString("hex")}`;
}
