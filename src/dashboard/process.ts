/**
 * The dashboard's own process record, `<home>/dashboard.json` (0600): pid, address and the URL to
 * open, so `hermes dashboard --status` and `--stop` find it. A record whose process is gone, or is
 * no longer a dashboard, counts as not running.
 *
 * The per-start token is never written here (nor anywhere on disk): the agent's terminal and file
 * tools run as the same user and can read any file of the home, and with the token they could use
 * the API to approve their own staged writes or change config.yaml past the approval guard.
 */
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { atomicWriteFileSync } from "../util/atomic-write.js";

export const DASHBOARD_KIND = "hermes-dashboard";

export interface DashboardRecord {
  kind: typeof DASHBOARD_KIND;
  pid: number;
  host: string;
  port: number;
  /** The dashboard's address, never with a token (see {@link withoutToken}). */
  url: string;
  /** How it signs people in: a token printed at start only, `dashboard.auth.token`, or a password. */
  auth?: "per-start" | "token" | "basic";
  started_at: string;
}

export const dashboardRecordPath = (home: string): string => join(home, "dashboard.json");

/** `url` without a `token` query parameter (a record an older version wrote may carry one). */
export function withoutToken(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.searchParams.has("token")) return url;
    parsed.searchParams.delete("token");
    return parsed.toString();
  } catch {
    return url.replace(/[?&]token=[^&#]*/g, "");
  }
}

/** Writes the record; a token in `url` is dropped, so no caller can put one on disk. */
export function writeDashboardRecord(home: string, record: DashboardRecord): void {
  const safe = { ...record, url: withoutToken(record.url) };
  atomicWriteFileSync(dashboardRecordPath(home), `${JSON.stringify(safe, null, 2)}\n`, { mode: 0o600 });
}

export function readDashboardRecord(home: string): DashboardRecord | null {
  try {
    const parsed = JSON.parse(readFileSync(dashboardRecordPath(home), "utf8")) as Partial<DashboardRecord>;
    if (parsed.kind !== DASHBOARD_KIND || !Number.isInteger(parsed.pid) || (parsed.pid ?? 0) <= 0)
      return null;
    return { ...(parsed as DashboardRecord), url: withoutToken(String(parsed.url ?? "")) };
  } catch {
    return null;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Whether `pid` still runs a dashboard (on Linux its command line says so; elsewhere: alive). */
function isDashboard(pid: number): boolean {
  if (!alive(pid)) return false;
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
    return cmdline.split("\0").includes("dashboard");
  } catch {
    return process.platform !== "linux";
  }
}

/** The running dashboard of this home, or null (a stale record is removed). */
export function runningDashboard(home: string): DashboardRecord | null {
  const record = readDashboardRecord(home);
  if (!record) return null;
  if (record.pid === process.pid || isDashboard(record.pid)) return record;
  rmSync(dashboardRecordPath(home), { force: true });
  return null;
}

/** Removes the record if it is this process's own. */
export function releaseDashboardRecord(home: string): void {
  if (readDashboardRecord(home)?.pid === process.pid) rmSync(dashboardRecordPath(home), { force: true });
}

/** Stops the home's dashboard: SIGTERM, then waits up to `waitMs` for it to exit. */
export async function stopDashboard(
  home: string,
  waitMs = 5000,
): Promise<"stopped" | "not_running" | "still_running"> {
  const record = runningDashboard(home);
  if (!record || record.pid === process.pid) return "not_running";
  try {
    process.kill(record.pid, "SIGTERM");
  } catch {
    return "not_running";
  }
  const deadline = Date.now() + waitMs;
  while (Date.now() < deadline) {
    if (!alive(record.pid)) {
      rmSync(dashboardRecordPath(home), { force: true });
      return "stopped";
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return "still_running";
}
