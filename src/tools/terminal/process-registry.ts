/**
 * Background processes started by `terminal(background: true)`. Each runs as `bash -c` in its own
 * process group (so stopping it reaches everything it spawned), with a stdin pipe for `process
 * write` and merged stdout/stderr kept in a bounded tail buffer. One registry per process runtime;
 * entries belong to a task and are visible only to it.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import type { Socket } from "node:net";
import { constants } from "node:os";
import { spawnPtyProcess } from "../../environments/pty-process.js";
import type { EnvProcess } from "../../environments/types.js";
import { TailBuffer } from "../../util/output-buffer.js";
import { trySignal } from "../../util/process-tree.js";
import type { ToolContext } from "../types.js";

export type ProcessStatus = "running" | "exited" | "killed";

export interface BackgroundProcess {
  id: string;
  taskId: string;
  command: string;
  cwd: string;
  pid: number;
  startedAt: number;
  endedAt?: number;
  status: ProcessStatus;
  /** Exit status; for a process ended by a signal, 128 + the signal number. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  output: TailBuffer;
  /** Absolute output offset up to which `poll` has reported. */
  pollOffset: number;
  /** Resolves when the process has exited and its output has drained (or briefly after exit). */
  done: Promise<void>;
  /** Its stdin (typing into its terminal under a pty); null once closed or when it has none. */
  readonly stdin: NodeJS.WritableStream | null;
  /** Runs under a pseudo-terminal (`pty: true`). */
  pty: boolean;
  /** Set when Hermes stopped it: the process tool (the model knows) or shutdown (nobody listens). */
  stoppedBy?: "tool" | "shutdown";
  /** Told about its output and its end (notify_on_complete, watch_patterns: process-watch.ts). */
  observer?: ProcessObserver;
}

/** Hooks on a background process's output chunks and its end; must not throw. */
export interface ProcessObserver {
  output(text: string): void;
  /** Once, after it exited and its output drained. */
  ended(entry: BackgroundProcess): void;
  /** The model read its end through the process tool (wait, poll, log, kill): do not tell it again. */
  seen(): void;
  /** The entry is being dropped or Hermes shuts down: report nothing more. */
  stop(): void;
}

export interface StartOptions {
  taskId: string;
  command: string;
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
  /** Shell code run before the command in the same bash (e.g. restoring exported variables). */
  prelude?: string;
  /** Run under a pseudo-terminal of this size (programs that need a terminal). */
  pty?: { cols: number; rows: number };
  /** Builds the entry's observer once it exists (before any output can arrive). */
  observe?: (entry: BackgroundProcess) => ProcessObserver;
}

const MAX_OUTPUT_CHARS = 200_000;
const MAX_FINISHED = 50;
const DRAIN_MS = 200;

export class ProcessRegistry {
  private readonly entries = new Map<string, BackgroundProcess>();

  constructor(private readonly killGraceMs = 2000) {}

  /** Spawns `command`; throws when bash (or the pty for `pty`) cannot be started. */
  start(options: StartOptions): BackgroundProcess {
    if (options.pty) return this.startPty(options, options.pty);
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(options.env)) if (v !== undefined) env[k] = v;
    const child = spawn("bash", ["-c", `${options.prelude ?? ""}${options.command}`], {
      cwd: options.cwd,
      env,
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
    });
    child.on("error", () => undefined); // reported below through the missing pid
    if (child.pid === undefined) {
      throw new Error(`Could not start bash for the background command in ${options.cwd}.`);
    }
    // Background work must not keep the host process alive; runtime disposal stops it.
    child.unref();
    for (const stream of [child.stdin, child.stdout, child.stderr]) (stream as Socket | null)?.unref?.();
    const output = new TailBuffer(MAX_OUTPUT_CHARS);
    for (const stream of [child.stdout, child.stderr]) {
      stream?.setEncoding("utf8");
      stream?.on("data", (text: string) => {
        output.write(text);
        entry.observer?.output(text);
      });
    }
    child.stdin?.on("error", () => undefined); // EPIPE after the process closed its stdin
    let markDone: () => void = () => undefined;
    const entry: BackgroundProcess = {
      id: `proc_${randomBytes(4).toString("hex")}`,
      taskId: options.taskId,
      command: options.command,
      cwd: options.cwd,
      pid: child.pid,
      startedAt: Date.now(),
      status: "running",
      exitCode: null,
      signal: null,
      output,
      pollOffset: 0,
      done: new Promise<void>((resolve) => {
        markDone = resolve;
      }),
      get stdin() {
        return child.stdin;
      },
      pty: false,
    };
    if (options.observe) entry.observer = options.observe(entry);
    void entry.done.then(() => entry.observer?.ended(entry));
    child.on("exit", (code, signal) => {
      entry.endedAt = Date.now();
      entry.signal = signal;
      entry.exitCode = code ?? (signal ? 128 + (constants.signals[signal] ?? 0) : null);
      entry.status = signal ? "killed" : "exited";
      // Output can trail 'exit'; 'close' waits for it unless a grandchild holds the pipes open.
      const timer = setTimeout(markDone, DRAIN_MS);
      child.once("close", () => {
        clearTimeout(timer);
        markDone();
      });
    });
    this.prune();
    this.entries.set(entry.id, entry);
    return entry;
  }

  get(id: string, taskId: string): BackgroundProcess | undefined {
    const entry = this.entries.get(id);
    return entry?.taskId === taskId ? entry : undefined;
  }

  /** The task's processes, oldest first. */
  list(taskId: string): BackgroundProcess[] {
    return [...this.entries.values()].filter((e) => e.taskId === taskId);
  }

  /**
   * Waits until the process exits, `timeoutMs` passes or `signal` aborts. True when it exited.
   */
  async wait(entry: BackgroundProcess, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    if (entry.status !== "running") {
      await entry.done;
      return true;
    }
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const stop = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
      onAbort = () => resolve(false);
      signal?.addEventListener("abort", onAbort, { once: true });
      if (signal?.aborted) resolve(false);
    });
    try {
      return await Promise.race([entry.done.then(() => true as const), stop]);
    } finally {
      clearTimeout(timer);
      if (onAbort) signal?.removeEventListener("abort", onAbort);
    }
  }

  /**
   * SIGTERM to the process group, then SIGKILL if it is still running after the grace period.
   * `by` says who stopped it, for its observer: the process tool's caller reads the outcome itself.
   */
  async kill(entry: BackgroundProcess, by: "tool" | "shutdown" = "tool"): Promise<void> {
    if (entry.status === "running") entry.stoppedBy ??= by;
    trySignal(-entry.pid, "SIGTERM");
    if (entry.status === "running" && !(await this.wait(entry, this.killGraceMs))) {
      trySignal(-entry.pid, "SIGKILL");
      await this.wait(entry, this.killGraceMs);
    }
    // The leader may be gone while children it left in the group live on.
    trySignal(-entry.pid, "SIGKILL");
  }

  /** Stops every process of every task. */
  async dispose(): Promise<void> {
    for (const e of this.entries.values()) e.observer?.stop();
    await Promise.all([...this.entries.values()].map((e) => this.kill(e, "shutdown")));
    this.entries.clear();
  }

  /** Drops the oldest finished entries beyond the cap so a long-lived gateway does not grow. */
  private prune(): void {
    const finished = [...this.entries.values()].filter((e) => e.status !== "running");
    for (const e of finished.slice(0, Math.max(0, finished.length - MAX_FINISHED + 1))) {
      e.observer?.stop();
      this.entries.delete(e.id);
    }
  }

  /** `start` under a pseudo-terminal: the same entry, fed from the pty's one output stream. */
  private startPty(options: StartOptions, size: { cols: number; rows: number }): BackgroundProcess {
    const proc: EnvProcess = spawnPtyProcess(options.command, {
      cwd: options.cwd,
      env: options.env,
      ...(options.prelude ? { prelude: options.prelude } : {}),
      ...size,
    });
    const output = new TailBuffer(MAX_OUTPUT_CHARS);
    proc.output.on("data", (chunk: string | Buffer) => {
      const text = String(chunk);
      output.write(text);
      entry.observer?.output(text);
    });
    const entry: BackgroundProcess = {
      id: `proc_${randomBytes(4).toString("hex")}`,
      taskId: options.taskId,
      command: options.command,
      cwd: options.cwd,
      pid: proc.pid,
      startedAt: Date.now(),
      status: "running",
      exitCode: null,
      signal: null,
      output,
      pollOffset: 0,
      done: proc.exited.then(({ code, signal }) => {
        entry.endedAt = Date.now();
        entry.exitCode = code;
        entry.signal = signal;
        entry.status = signal ? "killed" : "exited";
      }),
      get stdin() {
        return proc.stdin;
      },
      pty: true,
    };
    if (options.observe) entry.observer = options.observe(entry);
    void entry.done.then(() => entry.observer?.ended(entry));
    this.prune();
    this.entries.set(entry.id, entry);
    return entry;
  }
}

/** The process-wide registry, created on first use and stopped when the runtime is disposed. */
export function getProcessRegistry(ctx: Pick<ToolContext, "runtime">): ProcessRegistry {
  return ctx.runtime.get("terminal:processes", () => {
    const registry = new ProcessRegistry();
    ctx.runtime.onDispose(() => registry.dispose());
    return registry;
  });
}
