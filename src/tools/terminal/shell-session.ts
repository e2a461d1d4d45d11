/**
 * One persistent bash per terminal task, so `cd`, `export` and shell variables carry over between
 * `terminal` calls. Commands run one at a time.
 *
 * Protocol: bash reads its script from a pipe (not a PTY). Each call sends the command as a quoted
 * string that the shell `eval`s with stdin from /dev/null and stderr merged into stdout, then prints
 * a sentinel line with a fresh nonce, the exit code and `$PWD`. Output is read until the sentinel.
 * `eval` keeps a syntax error in the command from reaching the protocol itself.
 *
 * Stopping a command (timeout or interrupt): the shell runs with job control (`set -m`), so each
 * foreground pipeline gets its own process group while builtins (`cd`, `export`) still run in the
 * shell. To stop a command we signal the process groups of the shell's descendants (SIGTERM, then
 * SIGKILL after a grace period), sparing jobs the user started with `&` in earlier calls (their
 * groups are recorded after every call). If the sentinel still does not arrive (the command is a
 * shell builtin loop such as `while :; do :; done`), the whole shell is killed; the next call starts
 * a fresh one in the last known cwd with the exported variables of the last finished call restored.
 * Shell functions, aliases and unexported variables do not survive such a restart.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import type { Socket } from "node:net";
import { constants, tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { HeadTailBuffer } from "../../util/output-buffer.js";
import { descendants, listProcesses, trySignal } from "../../util/process-tree.js";
import type { ToolContext } from "../types.js";

export interface ShellRunOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  /** Absolute directory to run this one command in; the persistent cwd is left unchanged. */
  workdir?: string;
}

export interface ShellRunResult {
  output: string;
  /** Null when the shell had to be killed before reporting a status. */
  exitCode: number | null;
  /** The shell's cwd after the command. */
  cwd: string;
  timedOut: boolean;
  interrupted: boolean;
  /** The shell exited or was killed during this command; the next call starts a fresh one. */
  shellExited: boolean;
  /** Output characters dropped from the middle to stay within the memory cap. */
  droppedChars: number;
}

export interface ShellSessionOptions {
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
  /** Characters of output kept per call (head and tail). Default 1,000,000. */
  maxOutputChars?: number;
  /** Between SIGTERM and SIGKILL, and between SIGKILL and killing the shell. Default 1000 ms. */
  killGraceMs?: number;
}

interface Pending {
  marker: string;
  buffer: HeadTailBuffer;
  scan: string;
  timedOut: boolean;
  interrupted: boolean;
  stopping: boolean;
  timers: NodeJS.Timeout[];
  finish(exitCode: number | null, shellExited: boolean): void;
}

const SPARE_TAIL = 64;

export class ShellSession {
  private proc: ChildProcess | undefined;
  private pending: Pending | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private currentCwd: string;
  private disposed = false;
  private readonly stateDir: string;
  private readonly envFile: string;
  private readonly jobsFile: string;
  private readonly maxOutputChars: number;
  private readonly graceMs: number;

  constructor(private readonly options: ShellSessionOptions) {
    this.currentCwd = options.cwd;
    this.maxOutputChars = options.maxOutputChars ?? 1_000_000;
    this.graceMs = options.killGraceMs ?? 1000;
    // mkdtemp creates the directory owner-only: the env file holds exported secrets.
    this.stateDir = mkdtempSync(join(tmpdir(), "hermes-shell-"));
    this.envFile = join(this.stateDir, "env.sh");
    this.jobsFile = join(this.stateDir, "jobs");
  }

  /** The shell's working directory as of the last finished call (the start cwd before any). */
  get cwd(): string {
    return this.currentCwd;
  }

  /**
   * Script that gives a separate bash (a background process) this shell's exported variables as
   * of the last finished call, then enters `cwd`. Empty before the first call.
   */
  envPrelude(cwd: string): string {
    if (!existsSync(this.envFile)) return "";
    return `builtin source ${quote(this.envFile)} >/dev/null 2>&1; builtin cd -- ${quote(cwd)} || exit\n`;
  }

  /** Runs `command` after any calls already queued. Rejects only when the session was disposed. */
  run(command: string, options: ShellRunOptions): Promise<ShellRunResult> {
    const next = this.queue.then(() => this.execute(command, options));
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Stops the running command, every process the shell started, and the shell. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    this.killShell();
    this.pending?.finish(null, true);
    rmSync(this.stateDir, { recursive: true, force: true });
  }

  private execute(command: string, options: ShellRunOptions): Promise<ShellRunResult> {
    if (this.disposed) return Promise.reject(new Error("The terminal shell was shut down."));
    if (options.signal?.aborted) {
      return Promise.resolve(this.result("", null, { interrupted: true }));
    }
    const proc = this.ensureShell();
    return new Promise<ShellRunResult>((resolve) => {
      const nonce = randomBytes(8).toString("hex");
      const half = Math.floor(this.maxOutputChars / 2);
      const onAbort = (): void => {
        pending.interrupted = true;
        this.stopCommand();
      };
      const pending: Pending = {
        marker: `__HERMES_DONE_${nonce}_`,
        buffer: new HeadTailBuffer(half, this.maxOutputChars - half),
        scan: "",
        timedOut: false,
        interrupted: false,
        stopping: false,
        timers: [],
        finish: (exitCode, shellExited) => {
          if (this.pending !== pending) return;
          this.pending = undefined;
          for (const t of pending.timers) clearTimeout(t);
          options.signal?.removeEventListener("abort", onAbort);
          pending.buffer.write(pending.scan);
          const output = pending.buffer.toString();
          resolve(
            this.result(output, exitCode, {
              timedOut: pending.timedOut,
              interrupted: pending.interrupted,
              shellExited,
              droppedChars: pending.buffer.droppedChars,
            }),
          );
        },
      };
      this.pending = pending;
      pending.timers.push(
        setTimeout(() => {
          pending.timedOut = true;
          this.stopCommand();
        }, options.timeoutMs),
      );
      options.signal?.addEventListener("abort", onAbort, { once: true });
      proc.stdin?.write(this.wrap(command, pending.marker, options.workdir));
    });
  }

  private result(output: string, exitCode: number | null, extra: Partial<ShellRunResult>): ShellRunResult {
    return {
      output,
      exitCode,
      cwd: this.currentCwd,
      timedOut: false,
      interrupted: false,
      shellExited: false,
      droppedChars: 0,
      ...extra,
    };
  }

  private wrap(command: string, marker: string, workdir: string | undefined): string {
    // `builtin` keeps user-defined functions named cd/eval/printf (rvm, nvm...) out of the protocol.
    const run = `builtin eval "$__hermes_cmd"`;
    const body = workdir ? `( builtin cd -- ${quote(workdir)} && ${run} )` : run;
    const save = `builtin export -p >${quote(this.envFile)} 2>/dev/null; builtin jobs -p >${quote(this.jobsFile)} 2>/dev/null`;
    return [
      `__hermes_cmd=${quote(command)}`,
      `{ ${body}\n} </dev/null 2>&1`,
      `__hermes_ec=$?; ${save}`,
      `builtin printf '\\n${marker}%s_%s\\n' "$__hermes_ec" "$PWD"`,
      "",
    ].join("\n");
  }

  private ensureShell(): ChildProcess {
    if (this.proc) return this.proc;
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(this.options.env)) if (v !== undefined) env[k] = v;
    // A non-interactive bash sources $BASH_ENV at start; --norc is meant to keep start-up clean.
    delete env.BASH_ENV;
    const cwd = [this.currentCwd, this.options.cwd].find(isDirectory) ?? tmpdir();
    this.currentCwd = cwd;
    const proc = spawn("bash", ["--noprofile", "--norc"], {
      cwd,
      env,
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.proc = proc;
    // Idle shells must not keep the process alive; a running call holds its own timer.
    proc.unref();
    for (const stream of [proc.stdin, proc.stdout, proc.stderr]) (stream as Socket | null)?.unref?.();
    proc.stdout?.setEncoding("utf8");
    proc.stderr?.setEncoding("utf8");
    // After the shell exits, its last output still belongs to the call that was running then.
    let exited = false;
    let owner: Pending | undefined;
    const ours = (): boolean =>
      this.proc === proc || (exited && owner !== undefined && this.pending === owner);
    proc.stdout?.on("data", (text: string) => {
      if (ours()) this.onStdout(text);
    });
    proc.stderr?.on("data", (text: string) => {
      if (ours()) this.pending?.buffer.write(text);
    });
    proc.stdin?.on("error", () => undefined); // EPIPE when the shell died; the exit handler reports it
    let stdoutEnded = false;
    proc.stdout?.on("end", () => {
      stdoutEnded = true;
    });
    const onGone = (code: number | null, signal: NodeJS.Signals | null): void => {
      if (this.proc !== proc) return;
      this.proc = undefined;
      exited = true;
      owner = this.pending;
      const exitCode = code ?? (signal ? 128 + (constants.signals[signal] ?? 0) : null);
      const done = (): void => {
        if (owner && this.pending === owner) owner.finish(exitCode, true);
      };
      // 'exit' can come before the last output: wait for stdout to drain, but not for an `&` job
      // that inherited the pipe and keeps it open.
      if (stdoutEnded) {
        done();
        return;
      }
      proc.stdout?.once("end", done);
      setTimeout(done, 200).unref();
    };
    proc.on("exit", onGone);
    proc.on("error", (err) => {
      this.pending?.buffer.write(`Failed to start bash: ${err.message}\n`);
      onGone(null, null);
    });
    const init = ["builtin set -m 2>/dev/null"];
    if (existsSync(this.envFile)) init.push(`builtin source ${quote(this.envFile)} >/dev/null 2>&1`);
    proc.stdin?.write(`${init.join("\n")}\n`);
    return proc;
  }

  private onStdout(text: string): void {
    const pending = this.pending;
    if (!pending) return; // output of an `&` job between calls has no reader
    pending.scan += text;
    const at = pending.scan.indexOf(pending.marker);
    if (at < 0) {
      const keep = pending.marker.length + SPARE_TAIL;
      if (pending.scan.length > keep * 2) {
        pending.buffer.write(pending.scan.slice(0, -keep));
        pending.scan = pending.scan.slice(-keep);
      }
      return;
    }
    const lineEnd = pending.scan.indexOf("\n", at);
    if (lineEnd < 0) return; // the rest of the sentinel line is still on its way
    const fields = /^(\d+)_(.*)$/.exec(pending.scan.slice(at + pending.marker.length, lineEnd));
    // The sentinel's printf starts with a newline of its own; drop it from the output.
    const before = pending.scan.slice(0, at);
    pending.scan = before.endsWith("\n") ? before.slice(0, -1) : before;
    if (fields?.[2]) this.currentCwd = fields[2];
    pending.finish(fields ? Number(fields[1]) : null, false);
  }

  /** Signals the running command's processes, escalating to killing the shell. */
  private stopCommand(): void {
    const pending = this.pending;
    if (!pending || pending.stopping) return;
    pending.stopping = true;
    const later = (fn: () => void): void => {
      pending.timers.push(
        setTimeout(() => {
          if (this.pending === pending) fn();
        }, this.graceMs),
      );
    };
    this.signalCommand("SIGTERM");
    later(() => {
      this.signalCommand("SIGKILL");
      later(() => {
        this.killShell();
        pending.finish(null, true);
      });
    });
  }

  /** Signals the descendants of the shell started by the current command (not earlier `&` jobs). */
  private signalCommand(signal: NodeJS.Signals): void {
    const shellPid = this.proc?.pid;
    if (shellPid === undefined) return;
    const spared = new Set(readPids(this.jobsFile));
    const groups = new Set<number>();
    for (const p of descendants(shellPid, listProcesses(), spared)) {
      // Command substitutions run in the shell's own group: signal those one by one.
      if (p.pgid === shellPid || p.pgid <= 0) trySignal(p.pid, signal);
      else groups.add(p.pgid);
    }
    for (const pgid of groups) trySignal(-pgid, signal);
  }

  private killShell(): void {
    const proc = this.proc;
    if (!proc?.pid) return;
    const groups = new Set<number>([proc.pid]);
    for (const p of descendants(proc.pid)) {
      if (p.pgid > 0) groups.add(p.pgid);
      trySignal(p.pid, "SIGKILL");
    }
    for (const pgid of groups) trySignal(-pgid, "SIGKILL");
    trySignal(proc.pid, "SIGKILL");
    this.proc = undefined;
  }
}

/** Quotes `text` as one bash word. */
export function quote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

function readPids(file: string): number[] {
  try {
    return readFileSync(file, "utf8")
      .split(/\s+/)
      .filter((s) => /^\d+$/.test(s))
      .map(Number);
  } catch {
    return [];
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The task's shell (shared with its subagents), created lazily; bash itself starts on the first run. */
export function getShellSession(ctx: Pick<ToolContext, "runtime" | "taskId" | "cwd" | "env">): ShellSession {
  return ctx.runtime.get(`terminal:shell:${ctx.taskId}`, () => {
    const session = new ShellSession({ cwd: ctx.cwd, env: ctx.env });
    ctx.runtime.onDispose(() => session.dispose());
    return session;
  });
}

/** Whether `bash` is on the PATH of `env` (the terminal tools are offered only then). */
export function bashAvailable(env: Readonly<Record<string, string | undefined>>): boolean {
  return (env.PATH ?? "").split(delimiter).some((dir) => dir !== "" && existsSync(join(dir, "bash")));
}
