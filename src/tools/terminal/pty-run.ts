/**
 * `terminal(pty: true)` in the foreground: the command runs in a terminal of its own (not the
 * task's persistent shell, which has none), started with the shell's exported variables and cwd.
 * Output is read as a person would see the screen's lines (escape sequences and redraws removed);
 * the timeout and an interrupt stop its whole process group, SIGTERM then SIGKILL.
 *
 * Written against `EnvProcess`, so any environment whose `spawn` honours `SpawnOptions.pty` runs
 * it the same way; `spawnTerminalProcess` is the one place that decides how it starts.
 */
import type { EnvProcess, RunResult as ShellRunResult } from "../../environments/types.js";
import { HeadTailBuffer } from "../../util/output-buffer.js";
import { cleanTerminalText } from "../../util/terminal-text.js";

/** The terminal size programs see: wide enough that few lines wrap. */
export const PTY_SIZE = { cols: 120, rows: 40 } as const;

/** What one foreground pty run keeps: the head and the tail (errors come last). */
const HEAD_CHARS = 200_000;
const TAIL_CHARS = 800_000;

export interface PtyRunOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  /** Between SIGTERM and SIGKILL (`terminal.daemon_term_grace_seconds`). */
  graceMs: number;
  /** The directory it ran in, reported back as the (unchanged) cwd. */
  cwd: string;
}

/**
 * Waits for `proc` to finish (or stops it on timeout or abort) and reports it as the persistent
 * shell would, except that `cwd` is always the one it started in: a pty command's `cd` and
 * variables end with it. Never rejects.
 */
export async function runInPty(proc: EnvProcess, options: PtyRunOptions): Promise<ShellRunResult> {
  const started = Date.now();
  const buffer = new HeadTailBuffer(HEAD_CHARS, TAIL_CHARS);
  proc.output.setEncoding?.("utf8");
  proc.output.on("data", (chunk: string | Buffer) => buffer.write(String(chunk)));
  let why: "timeout" | "interrupt" | undefined;
  let stopping: Promise<{ killed: boolean; afterMs: number }> | undefined;
  // Resolves when even SIGKILL did not end it within the grace period: report, do not hang.
  let gaveUp: (value: { code: null }) => void = () => undefined;
  const abandoned = new Promise<{ code: null }>((resolve) => {
    gaveUp = resolve;
  });
  const stop = (reason: "timeout" | "interrupt") => {
    if (stopping) return;
    why = reason;
    const afterMs = Date.now() - started;
    stopping = (async () => {
      await proc.signal("SIGTERM");
      if (await settlesWithin(proc.exited, options.graceMs)) return { killed: false, afterMs };
      await proc.signal("SIGKILL");
      if (!(await settlesWithin(proc.exited, options.graceMs))) gaveUp({ code: null });
      return { killed: true, afterMs };
    })();
  };
  const timer = setTimeout(() => stop("timeout"), options.timeoutMs);
  const onAbort = () => stop("interrupt");
  options.signal?.addEventListener("abort", onAbort, { once: true });
  if (options.signal?.aborted) onAbort();
  try {
    const { code } = await Promise.race([proc.exited, abandoned]);
    const stopped = stopping ? await stopping : undefined;
    const output = cleanTerminalText(buffer.toString((n) => `\n…[${n} characters omitted]…\n`));
    return {
      output,
      exitCode: code,
      cwd: options.cwd,
      timedOut: why === "timeout",
      interrupted: why === "interrupt",
      ...(stopped
        ? {
            stop: { afterMs: stopped.afterMs, killed: stopped.killed, graceMs: options.graceMs, running: [] },
          }
        : {}),
      shellExited: false,
      droppedChars: 0,
    };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
  }
}

async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
