/**
 * Background processes started by `terminal(background: true)`, in the active environment
 * (`Environment.spawn`: `bash -c` in its own process group there, so stopping it reaches everything
 * it spawned), with a stdin pipe for `process write` and merged stdout/stderr kept in a bounded
 * tail buffer. One registry per process runtime; entries belong to a task and are visible only to
 * it; releasing the task stops its processes.
 */
import { randomBytes } from "node:crypto";
import type { Environment, EnvProcess } from "../../environments/types.js";
import { TailBuffer } from "../../util/output-buffer.js";
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
  proc: EnvProcess;
}

export interface StartOptions {
  taskId: string;
  command: string;
  cwd: string;
  /** Shell code run before the command in the same bash (e.g. restoring exported variables). */
  prelude?: string;
}

const MAX_OUTPUT_CHARS = 200_000;
const MAX_FINISHED = 50;

export class ProcessRegistry {
  private readonly entries = new Map<string, BackgroundProcess>();

  constructor(private readonly killGraceMs = 2000) {}

  /** Starts `command` in `env`; throws when it cannot be started there. */
  async start(env: Environment, options: StartOptions): Promise<BackgroundProcess> {
    const proc = await env.spawn(options.command, {
      cwd: options.cwd,
      ...(options.prelude ? { prelude: options.prelude } : {}),
    });
    const output = new TailBuffer(MAX_OUTPUT_CHARS);
    proc.output.setEncoding?.("utf8");
    proc.output.on("data", (chunk: string | Buffer) => output.write(String(chunk)));
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
        entry.signal = signal;
        entry.exitCode = code;
        entry.status = signal ? "killed" : "exited";
      }),
      proc,
    };
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

  /** SIGTERM to the process group, then SIGKILL if it is still running after the grace period. */
  async kill(entry: BackgroundProcess): Promise<void> {
    await entry.proc.signal("SIGTERM");
    if (entry.status === "running" && !(await this.wait(entry, this.killGraceMs))) {
      await entry.proc.signal("SIGKILL");
      await this.wait(entry, this.killGraceMs);
    }
    // The leader may be gone while children it left in the group live on.
    await entry.proc.signal("SIGKILL");
  }

  /** Stops the task's processes and forgets them (a finished subagent's background work). */
  async releaseTask(taskId: string): Promise<void> {
    const mine = this.list(taskId);
    await Promise.all(mine.map((e) => this.kill(e)));
    for (const e of mine) this.entries.delete(e.id);
  }

  /** Stops every process of every task. */
  async dispose(): Promise<void> {
    await Promise.all([...this.entries.values()].map((e) => this.kill(e)));
    this.entries.clear();
  }

  /** Drops the oldest finished entries beyond the cap so a long-lived gateway does not grow. */
  private prune(): void {
    const finished = [...this.entries.values()].filter((e) => e.status !== "running");
    for (const e of finished.slice(0, Math.max(0, finished.length - MAX_FINISHED + 1))) {
      this.entries.delete(e.id);
    }
  }
}

/**
 * The process-wide registry, created on first use and stopped when the runtime is disposed; the
 * task's processes are stopped when the task is released.
 */
export function getProcessRegistry(ctx: Pick<ToolContext, "runtime" | "taskId">): ProcessRegistry {
  const registry = ctx.runtime.get("terminal:processes", () => {
    const created = new ProcessRegistry();
    ctx.runtime.onDispose(() => created.dispose());
    return created;
  });
  const tasks = ctx.runtime.get("terminal|process-tasks", () => new Set<string>());
  if (!tasks.has(ctx.taskId)) {
    tasks.add(ctx.taskId);
    const taskId = ctx.taskId;
    ctx.runtime.onTaskRelease(taskId, async () => {
      tasks.delete(taskId);
      await registry.releaseTask(taskId);
    });
  }
  return registry;
}
