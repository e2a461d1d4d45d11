/**
 * The gateway's identity files in HERMES_HOME: `gateway.lock` (held with flock for as long as the
 * gateway runs, so two gateways never share a home) and `gateway.pid` (a JSON record of who holds
 * it, as Python Hermes writes it: pid, kind, hermes_home, start_time, argv, started_at). Status and
 * stop read the record and check that the process is still the one that wrote it (its start time),
 * so a recycled PID is never signalled.
 */
import { closeSync, openSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { atomicWriteFileSync } from "../util/atomic-write.js";

export const GATEWAY_KIND = "hermes-gateway";

export interface GatewayRecord {
  pid: number;
  kind: string;
  hermes_home: string;
  /** Field 22 of /proc/<pid>/stat (clock ticks since boot); null where /proc is missing. */
  start_time: number | null;
  argv: string[];
  started_at: string;
}

export function pidPath(home: string): string {
  return join(home, "gateway.pid");
}

function lockPath(home: string): string {
  return join(home, "gateway.lock");
}

/** A process's start-time fingerprint, or null when it does not exist (or /proc is missing). */
export function processStartTime(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const state = fields[0];
    if (state === "Z") return null;
    const value = Number(fields[19]);
    return Number.isFinite(value) ? value : null;
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

/** The record in `gateway.pid`, or null when there is none or it does not parse. */
export function readGatewayRecord(home: string): GatewayRecord | null {
  try {
    const data = JSON.parse(readFileSync(pidPath(home), "utf8")) as Partial<GatewayRecord> | number;
    // Very old files hold just the number.
    if (typeof data === "number") {
      return { pid: data, kind: GATEWAY_KIND, hermes_home: home, start_time: null, argv: [], started_at: "" };
    }
    if (typeof data?.pid !== "number") return null;
    return {
      pid: data.pid,
      kind: typeof data.kind === "string" ? data.kind : GATEWAY_KIND,
      hermes_home: typeof data.hermes_home === "string" ? data.hermes_home : home,
      start_time: typeof data.start_time === "number" ? data.start_time : null,
      argv: Array.isArray(data.argv) ? data.argv.map(String) : [],
      started_at: typeof data.started_at === "string" ? data.started_at : "",
    };
  } catch {
    return null;
  }
}

/**
 * The running gateway of this home, or null. A record whose process is gone, or whose PID now
 * belongs to another process (start time differs), is stale.
 */
export function runningGateway(home: string): GatewayRecord | null {
  const record = readGatewayRecord(home);
  if (!record || !alive(record.pid)) return null;
  if (resolve(record.hermes_home) !== resolve(home)) return null;
  if (record.start_time !== null) {
    // Null: gone, or a zombie nobody has reaped yet; a different value: the PID was reused.
    if (processStartTime(record.pid) !== record.start_time) return null;
  }
  return record;
}

/** Thrown when another gateway already runs on this home. */
export class GatewayRunningError extends Error {
  readonly pid: number | undefined;
  constructor(home: string, pid: number | undefined) {
    super(
      `A gateway is already running for ${home}${pid ? ` (pid ${pid})` : ""}.\n` +
        "Stop it with: hermes gateway stop",
    );
    this.name = "GatewayRunningError";
    this.pid = pid;
  }
}

type FsExt = { flockSync(fd: number, flags: "exnb" | "un"): void };

/**
 * Takes the home's gateway lock and writes `gateway.pid`; returns the release function (drops the
 * lock, removes the record). Throws `GatewayRunningError` when another process holds the lock.
 */
export function claimGateway(home: string, argv: readonly string[]): () => void {
  const require = createRequire(import.meta.url);
  const fsExt = require("fs-ext") as FsExt;
  const fd = openSync(lockPath(home), "a", 0o600);
  try {
    fsExt.flockSync(fd, "exnb");
  } catch {
    closeSync(fd);
    throw new GatewayRunningError(home, readGatewayRecord(home)?.pid);
  }
  const record: GatewayRecord = {
    pid: process.pid,
    kind: GATEWAY_KIND,
    hermes_home: resolve(home),
    start_time: processStartTime(process.pid),
    argv: [...argv],
    started_at: new Date().toISOString(),
  };
  atomicWriteFileSync(pidPath(home), `${JSON.stringify(record)}\n`, { mode: 0o600 });
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (readGatewayRecord(home)?.pid === process.pid) rmSync(pidPath(home), { force: true });
    try {
      fsExt.flockSync(fd, "un");
    } catch {
      // Closing the descriptor drops the lock anyway.
    }
    closeSync(fd);
  };
}
