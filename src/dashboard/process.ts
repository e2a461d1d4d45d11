/**
 * The dashboard's own process record, `<home>/dashboard.json` (0600): pid, address and the URL to
 * open (with the per-start token), so `hermes dashboard --status` and `--stop` find it. A record
 * whose process is gone, or is no longer a dashboard, counts as not running.
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
  /** What to open: the API index, with `?token=` when the token is per start. */
  url: string;
  started_at: string;
}

export const dashboardRecordPath = (home: string): string => join(home, "dashboard.json");

export function writeDashboardRecord(home: string, record: DashboardRecord): void {
  atomicWriteFileSync(dashboardRecordPath(home), `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
}

export function readDashboardRecord(home: string): DashboardRecord | null {
  try {
    const parsed = JSON.parse(readFileSync(dashboardRecordPath(home), "utf8")) as Partial<DashboardRecord>;
    if (parsed.kind !== DASHBOARD_KIND || !Number.isInteger(parsed.pid) || (parsed.pid ?? 0) <= 0)
      return null;
    return parsed as DashboardRecord;
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
