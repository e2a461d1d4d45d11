/**
 * Runs one script process in its own process group with bounded output capture, a timeout
 * (SIGTERM to the group, SIGKILL after a grace period) and prompt interruption (SIGKILL at once).
 * Whatever way the script ends, the whole group is killed afterwards, so nothing it started
 * outlives the run or holds its output pipes open.
 */
import { spawn } from "node:child_process";
import { OutputCapture } from "./output-capture.js";

export interface RunChildOptions {
  command: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  /** Between SIGTERM and SIGKILL on timeout (default 5000 ms). */
  killGraceMs?: number;
  /** Aborting kills the group at once. */
  signal?: AbortSignal;
  stdoutLimit: number;
  stderrLimit: number;
}

export interface ChildResult {
  /** Exit status; null when the process was ended by a signal or never started. */
  exitCode: number | null;
  /** The signal that ended it, if any. */
  exitSignal: NodeJS.Signals | null;
  /** Captured stdout and stderr; `result(limit)` renders them shorter when a budget needs it. */
  stdout: OutputCapture;
  stderr: OutputCapture;
  timedOut: boolean;
  interrupted: boolean;
  /** Set when the process could not be started (e.g. the interpreter is missing). */
  spawnError?: string;
  durationMs: number;
}

/** After the script exits, how long to wait for its pipes to close before giving up on them. */
const PIPE_DRAIN_MS = 2000;

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}

/** Runs the process to its end; never rejects (spawn failures come back in `spawnError`). */
export function runChild(options: RunChildOptions): Promise<ChildResult> {
  const started = Date.now();
  const stdout = new OutputCapture(options.stdoutLimit, "stdout");
  const stderr = new OutputCapture(options.stderrLimit, "stderr");
  let timedOut = false;
  let interrupted = false;

  return new Promise<ChildResult>((resolve) => {
    const child = spawn(options.command, [...options.args], {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const pid = child.pid;
    const timers: NodeJS.Timeout[] = [];
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let spawnError: string | undefined;
    let settled = false;

    const finish = (): void => {
      if (settled) return;
      settled = true;
      for (const timer of timers) clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      resolve({
        exitCode: exit?.code ?? null,
        exitSignal: exit?.signal ?? null,
        stdout,
        stderr,
        timedOut,
        interrupted,
        ...(spawnError === undefined ? {} : { spawnError }),
        durationMs: Date.now() - started,
      });
    };

    const onAbort = (): void => {
      if (exit || settled) return;
      interrupted = true;
      killGroup(pid, "SIGKILL");
    };

    child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
    child.on("error", (error) => {
      spawnError = error.message;
      finish();
    });
    child.on("exit", (code, signal) => {
      exit = { code, signal };
      for (const timer of timers) clearTimeout(timer);
      // Grandchildren (a forgotten subprocess, a shell pipeline) die with the script.
      killGroup(pid, "SIGKILL");
      const drain = setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
        finish();
      }, PIPE_DRAIN_MS);
      drain.unref();
      timers.push(drain);
    });
    child.on("close", finish);

    if (pid === undefined) return; // "error" follows
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener("abort", onAbort, { once: true });
    timers.push(
      setTimeout(() => {
        if (exit) return;
        timedOut = true;
        killGroup(pid, "SIGTERM");
        timers.push(setTimeout(() => killGroup(pid, "SIGKILL"), options.killGraceMs ?? 5000));
      }, options.timeoutMs),
    );
  });
}
