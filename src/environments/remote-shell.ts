/**
 * The persistent shell of a non-local environment, over a `ShellChannel` (docker exec, ssh, ...),
 * with the same semantics as the local ShellSession: one bash per task reading the protocol of
 * ./shell-protocol.ts from a pipe, state carried over, a sentinel per call, calls queued.
 *
 * Differences forced by distance: the state files live in a private directory inside the
 * environment, so the after-call bookkeeping (keep the state, note a call's `&` jobs) happens in
 * the shell and comes back on the sentinel line. Stopping a command runs `stopScript` there through
 * `channel.exec`: the interpreting subshell is killed at once, the command's process groups found
 * via /proc get SIGTERM, then SIGKILL after the grace period. A shell that does not answer after
 * that is killed the same way and rebuilt on the next call from the last finished call's state.
 * Background processes: `spawnRemote` in ./remote-process.ts.
 */
import { randomBytes } from "node:crypto";
import { HeadTailBuffer } from "../util/output-buffer.js";
import {
  commitScan,
  envPreludeScript,
  initScript,
  killScript,
  parseStopOutput,
  quote,
  type ShellStatePaths,
  sentinelMarker,
  showLive,
  statePaths,
  stopScript,
  streamLive,
  wrapCommand,
} from "./shell-protocol.js";
import type { ChannelProcess, EnvShell, RunOptions, RunResult, ShellChannel, StopReport } from "./types.js";

export interface RemoteShellOptions {
  /** Start directory in the environment. */
  cwd: string;
  /**
   * Private directory in the environment for this shell's state (created owner-only on start; it
   * holds exported secrets). Default: a fresh unguessable name under /tmp.
   */
  stateDir?: string;
  /** Variables for the shell, given to `channel.open`. */
  env?: Readonly<Record<string, string>>;
  /** Characters of output kept per call (head and tail). Default 1,000,000. */
  maxOutputChars?: number;
  /** Between SIGTERM and SIGKILL. Default 2000 ms. */
  killGraceMs?: number;
  /** An idle shell is ended after this long; the next call rebuilds it. */
  idleLifetimeMs?: number;
}

/** An EnvShell over a channel, plus what the backend needs when hermes exits. */
export interface RemoteShell extends EnvShell {
  /** Where its state lives in the environment. */
  readonly paths: ShellStatePaths;
  /**
   * A script that SIGKILLs the shell, its command and its `&` jobs, for a backend to run
   * synchronously at process exit (when there is no time for `dispose`).
   */
  exitScript(): string;
}

interface Pending {
  nonce: string;
  marker: string;
  buffer: HeadTailBuffer;
  scan: string;
  /** How much of `scan` was already passed to `onOutput`. */
  live: number;
  onOutput: ((chunk: string) => void) | undefined;
  startedAt: number;
  timedOut: boolean;
  interrupted: boolean;
  stopping?: Promise<StopReport>;
  timers: NodeJS.Timeout[];
  finish(exitCode: number | null, shellExited: boolean): void;
}

const SPARE_TAIL = 64;
const READY = "__HERMES_SHELL_";

export function createRemoteShell(channel: ShellChannel, options: RemoteShellOptions): RemoteShell {
  return new RemoteShellImpl(channel, options);
}

class RemoteShellImpl implements RemoteShell {
  readonly paths: ShellStatePaths;
  private proc: ChannelProcess | undefined;
  /** The shell's pid in the environment, from its ready line. */
  private shellPid: number | undefined;
  private preamble = "";
  private pending: Pending | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private currentCwd: string;
  private disposed = false;
  private finishedOnce = false;
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly jobGroups = new Set<number>();
  private readonly maxOutputChars: number;
  private readonly graceMs: number;

  constructor(
    private readonly channel: ShellChannel,
    private readonly options: RemoteShellOptions,
  ) {
    this.currentCwd = options.cwd;
    this.maxOutputChars = options.maxOutputChars ?? 1_000_000;
    this.graceMs = options.killGraceMs ?? 2000;
    this.paths = statePaths(options.stateDir ?? `/tmp/hermes-shell-${randomBytes(12).toString("hex")}`);
  }

  get cwd(): string {
    return this.currentCwd;
  }

  envPrelude(cwd: string): string {
    // The env file is written by every finished call; before the first there is nothing to give.
    return this.finishedOnce ? envPreludeScript(this.paths.envFile, cwd) : "";
  }

  run(command: string, options: RunOptions): Promise<RunResult> {
    const next = this.queue.then(() => this.execute(command, options));
    this.queue = next.catch(() => undefined);
    return next;
  }

  exitScript(): string {
    return `${killScript(this.shellPid, this.jobGroups)}command rm -rf -- ${quote(this.paths.stateDir)}\n`;
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    clearTimeout(this.idleTimer);
    const script = this.exitScript();
    const proc = this.proc;
    this.proc = undefined;
    this.pending?.finish(null, true);
    await this.channel.exec(script, { timeoutMs: 10_000 }).catch(() => undefined);
    proc?.close();
  }

  private execute(command: string, options: RunOptions): Promise<RunResult> {
    if (this.disposed) return Promise.reject(new Error("The terminal shell was shut down."));
    if (options.signal?.aborted) {
      return Promise.resolve(
        this.result("", null, {
          interrupted: true,
          stop: { afterMs: 0, killed: false, graceMs: this.graceMs, running: [] },
        }),
      );
    }
    clearTimeout(this.idleTimer);
    const proc = this.ensureShell();
    return new Promise<RunResult>((resolve) => {
      const nonce = randomBytes(8).toString("hex");
      const half = Math.floor(this.maxOutputChars / 2);
      const onAbort = (): void => {
        pending.interrupted = true;
        this.stopCommand();
      };
      let finished = false;
      const pending: Pending = {
        nonce,
        marker: sentinelMarker(nonce),
        buffer: new HeadTailBuffer(half, this.maxOutputChars - half),
        scan: "",
        live: 0,
        onOutput: options.onOutput,
        startedAt: Date.now(),
        timedOut: false,
        interrupted: false,
        timers: [],
        finish: (exitCode, shellExited) => {
          if (finished) return;
          finished = true;
          for (const t of pending.timers) clearTimeout(t);
          options.signal?.removeEventListener("abort", onAbort);
          pending.buffer.write(pending.scan);
          pending.scan = "";
          const deliver = (stop: StopReport | undefined): void => {
            if (this.pending === pending) this.pending = undefined;
            this.armIdle();
            const stoppedCode = pending.timedOut ? 124 : 130;
            resolve(
              this.result(pending.buffer.toString(), stop ? stoppedCode : exitCode, {
                timedOut: pending.timedOut,
                interrupted: pending.interrupted,
                shellExited,
                droppedChars: pending.buffer.droppedChars,
                ...(stop ? { stop } : {}),
              }),
            );
          };
          // A stopped command's result waits until everything it started is gone.
          if (pending.stopping) void pending.stopping.then(deliver);
          else deliver(undefined);
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
      proc.stdin.write(
        wrapCommand(command, {
          nonce,
          paths: this.paths,
          bookkeeping: true,
          ...(options.workdir ? { workdir: options.workdir } : {}),
        }),
      );
    });
  }

  private result(output: string, exitCode: number | null, extra: Partial<RunResult>): RunResult {
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

  private armIdle(): void {
    const idle = this.options.idleLifetimeMs;
    if (idle === undefined || idle <= 0 || this.disposed) return;
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      // Only the idle shell ends (its stdin closes, so bash exits); `&` jobs live on until dispose.
      if (!this.pending && this.proc) this.dropShell(false);
    }, idle);
    this.idleTimer.unref();
  }

  private ensureShell(): ChannelProcess {
    if (this.proc) return this.proc;
    const proc = this.channel.open(["bash", "--noprofile", "--norc"], {
      ...(this.options.env ? { env: this.options.env } : {}),
    });
    this.proc = proc;
    this.shellPid = undefined;
    this.preamble = "";
    proc.stdout.setEncoding("utf8");
    proc.stderr.setEncoding("utf8");
    let exited = false;
    let owner: Pending | undefined;
    const ours = (): boolean =>
      this.proc === proc || (exited && owner !== undefined && this.pending === owner);
    proc.stdout.on("data", (text: string) => {
      if (ours()) this.onStdout(text);
    });
    proc.stderr.on("data", (text: string) => {
      if (!ours() || !this.pending) return;
      this.pending.buffer.write(text);
      showLive(this.pending, text);
    });
    proc.stdin.on("error", () => undefined); // EPIPE when the shell died; the exit path reports it
    let stdoutEnded = false;
    proc.stdout.on("end", () => {
      stdoutEnded = true;
    });
    void proc.exited.then((code) => {
      if (this.proc !== proc) return;
      this.proc = undefined;
      exited = true;
      owner = this.pending;
      const done = (): void => {
        if (owner && this.pending === owner) owner.finish(code, true);
      };
      if (stdoutEnded) {
        done();
        return;
      }
      proc.stdout.once("end", done);
      setTimeout(done, 200).unref();
    });
    const dir = quote(this.paths.stateDir);
    // The state directory is made owner-only, and never trusted when someone else made it.
    const setup = [
      `[[ -d ${dir} && -O ${dir} && ! -L ${dir} ]] || command mkdir -m 700 -- ${dir} || builtin exit 97`,
      `builtin cd -- ${quote(this.currentCwd)} 2>/dev/null || builtin cd -- ${quote(this.options.cwd)} 2>/dev/null || builtin cd /`,
      initScript(this.paths, true).trimEnd(),
      `builtin printf '${READY}%s\\n' "$$"`,
      "",
    ].join("\n");
    proc.stdin.write(setup);
    return proc;
  }

  private onStdout(text: string): void {
    if (this.shellPid === undefined) {
      // The ready line (the shell's pid) comes before any call's output.
      this.preamble += text;
      const at = this.preamble.indexOf(READY);
      const end = at < 0 ? -1 : this.preamble.indexOf("\n", at);
      if (end < 0) return;
      this.shellPid = Number(this.preamble.slice(at + READY.length, end)) || 0;
      text = this.preamble.slice(end + 1);
      this.preamble = "";
    }
    const pending = this.pending;
    if (!pending) return; // output of an `&` job between calls has no reader
    pending.scan += text;
    const at = pending.scan.indexOf(pending.marker);
    if (at < 0) {
      // Whole lines cannot hold a partial sentinel (it starts on a line of its own): show them.
      streamLive(pending, pending.scan.lastIndexOf("\n") + 1);
      const keep = pending.marker.length + SPARE_TAIL;
      if (pending.scan.length > keep * 2) commitScan(pending, pending.scan.length - keep);
      return;
    }
    streamLive(pending, at);
    const lineEnd = pending.scan.indexOf("\n", at);
    if (lineEnd < 0) return;
    const fields = /^(\d+)_(\d+)_(.*)$/.exec(pending.scan.slice(at + pending.marker.length, lineEnd));
    const before = pending.scan.slice(0, at);
    pending.scan = before.endsWith("\n") ? before.slice(0, -1) : before;
    if (fields?.[3]) this.currentCwd = fields[3];
    const group = Number(fields?.[2] ?? 0);
    if (group > 1 && !pending.stopping) this.jobGroups.add(group);
    if (fields && !pending.stopping) this.finishedOnce = true;
    pending.finish(fields ? Number(fields[1]) : null, false);
  }

  /** See the module comment: runs `stopScript` in the environment, then waits for the sentinel. */
  private stopCommand(): void {
    const pending = this.pending;
    if (!pending || pending.stopping || !this.proc) return;
    const afterMs = Date.now() - pending.startedAt;
    const script = stopScript(this.paths, pending.nonce, this.graceMs);
    pending.stopping = this.channel.exec(script, { timeoutMs: this.graceMs * 3 + 10_000 }).then(
      (r) => ({ afterMs, graceMs: this.graceMs, ...parseStopOutput(r.stdout.toString("utf8")) }),
      () => ({ afterMs, graceMs: this.graceMs, killed: false, running: [] }),
    );
    // The sentinel normally follows at once; a shell that does not answer is replaced.
    void pending.stopping.then(() => {
      const t = setTimeout(() => {
        if (this.pending !== pending) return;
        this.dropShell(true);
        pending.finish(null, true);
      }, this.graceMs);
      pending.timers.push(t);
    });
  }

  /** Ends the shell: closing its stdin ends an idle bash; `kill` also SIGKILLs it and its command. */
  private dropShell(kill: boolean): void {
    const proc = this.proc;
    if (!proc) return;
    this.proc = undefined;
    if (kill) {
      const script = killScript(this.shellPid, []);
      void this.channel.exec(script, { timeoutMs: 10_000 }).catch(() => undefined);
    }
    proc.close();
  }
}
