/**
 * What the local ShellSession and the remote shell (docker, ssh, cloud) share: calls queued one at
 * a time, each written to a bash that reads ./shell-protocol.ts from a pipe and answered by a
 * sentinel line; output kept head and tail and shown live up to the sentinel; a timeout or an
 * abort stopping the command (how is the subclass's business) and the result waiting until what
 * the command started is gone; the shell's last output after it exits still belonging to the call
 * that was running then.
 *
 * A subclass starts the shell (`ensureShell`, wiring its streams with `wireStreams`), writes a call
 * (`writeCall`), stops one (`stopCommand`), reads the sentinel's fields (`onSentinel`, which ends
 * the call with `pending.finish`) and does its bookkeeping after each call (`afterCall`).
 */
import { randomBytes } from "node:crypto";
import { HeadTailBuffer } from "../util/output-buffer.js";
import { commitScan, sentinelMarker, showLive, streamLive } from "./shell-protocol.js";
import type { EnvShell, RunOptions, RunResult, StopReport } from "./types.js";

/** One running call. */
export interface PendingCall {
  nonce: string;
  marker: string;
  buffer: HeadTailBuffer;
  /** stdout not yet committed to `buffer` (it may end in part of the sentinel). */
  scan: string;
  /** How much of `scan` was already passed to `onOutput`. */
  live: number;
  onOutput: ((chunk: string) => void) | undefined;
  startedAt: number;
  timedOut: boolean;
  interrupted: boolean;
  /** Resolves when everything the stopped command started is gone. */
  stopping?: Promise<StopReport>;
  timers: NodeJS.Timeout[];
  finish(exitCode: number | null, shellExited: boolean): void;
}

export interface SentinelShellOptions {
  /** Start directory. */
  cwd: string;
  /** Characters of output kept per call (head and tail). Default 1,000,000. */
  maxOutputChars?: number;
  /** Between SIGTERM and SIGKILL. Default 2000 ms. */
  killGraceMs?: number;
  /** An idle shell is ended after this long; the next call rebuilds it. */
  idleLifetimeMs?: number;
}

/** The pipes of a running shell, local child process or channel process alike. */
export interface ShellStreams {
  stdin: NodeJS.WritableStream & { on(event: "error", listener: () => void): unknown };
  stdout: NodeJS.ReadableStream;
  stderr: NodeJS.ReadableStream;
}

/** Kept free after the last sentinel-less line so a sentinel split across chunks is still found. */
const SPARE_TAIL = 64;

export abstract class SentinelShell implements EnvShell {
  protected pending: PendingCall | undefined;
  protected currentCwd: string;
  protected disposed = false;
  protected idleTimer: NodeJS.Timeout | undefined;
  /** Process groups of finished calls that left `&` jobs running. */
  protected readonly jobGroups = new Set<number>();
  protected readonly maxOutputChars: number;
  protected readonly graceMs: number;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(protected readonly shellOptions: SentinelShellOptions) {
    this.currentCwd = shellOptions.cwd;
    this.maxOutputChars = shellOptions.maxOutputChars ?? 1_000_000;
    this.graceMs = shellOptions.killGraceMs ?? 2000;
  }

  /** The shell's working directory as of the last finished call (the start cwd before any). */
  get cwd(): string {
    return this.currentCwd;
  }

  abstract envPrelude(cwd: string): string;
  abstract dispose(): Promise<void>;

  /** Starts the shell when there is none, and returns where a call is written. */
  protected abstract ensureShell(): { write(text: string): unknown };
  /** Writes the call's script (`wrapCommand` with its nonce and workdir). */
  protected abstract writeCall(
    stdin: { write(text: string): unknown },
    command: string,
    nonce: string,
    workdir: string | undefined,
  ): void;
  /** Stops the running call's command; sets `pending.stopping`. */
  protected abstract stopCommand(): void;
  /** Reads the sentinel line's fields (after the marker) and ends the call. */
  protected abstract onSentinel(pending: PendingCall, fields: string): void;
  /** Bookkeeping once a call's result is known (`stopped`: timed out, interrupted or shell gone). */
  protected abstract afterCall(pending: PendingCall, stopped: boolean): void;
  /** Ends an idle shell (the next call rebuilds it). */
  protected abstract endIdleShell(): void;

  /** Runs `command` after any calls already queued. Rejects only when the shell was disposed. */
  run(command: string, options: RunOptions): Promise<RunResult> {
    const next = this.queue.then(() => this.execute(command, options));
    this.queue = next.catch(() => undefined);
    return next;
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
    const stdin = this.ensureShell();
    return new Promise<RunResult>((resolve) => {
      const nonce = randomBytes(8).toString("hex");
      const half = Math.floor(this.maxOutputChars / 2);
      const onAbort = (): void => {
        pending.interrupted = true;
        this.stopCommand();
      };
      let finished = false;
      const pending: PendingCall = {
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
            this.afterCall(pending, stop !== undefined || shellExited);
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
      this.writeCall(stdin, command, nonce, options.workdir);
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
    const idle = this.shellOptions.idleLifetimeMs;
    if (idle === undefined || idle <= 0 || this.disposed) return;
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      // Only the idle shell ends; `&` jobs live on until dispose, and the next call rebuilds it.
      if (!this.pending) this.endIdleShell();
    }, idle);
    this.idleTimer.unref();
  }

  /**
   * Wires a new shell's pipes: stdout is scanned for the sentinel (through `onStdout`, which a
   * subclass may use to read a ready line first), stderr goes to the call as it comes. Returns
   * what the subclass calls when the shell exited: the call running then ends once the shell's
   * last output drained (or 200 ms passed, for an `&` job that inherited the pipe).
   */
  protected wireStreams(
    streams: ShellStreams,
    isCurrent: () => boolean,
    onStdout: (text: string) => void = (text) => this.scanStdout(text),
  ): (exitCode: number | null) => void {
    let exited = false;
    let owner: PendingCall | undefined;
    // After the shell exits, its last output still belongs to the call that was running then.
    const ours = (): boolean => isCurrent() || (exited && owner !== undefined && this.pending === owner);
    streams.stdout.on("data", (text: string) => {
      if (ours()) onStdout(text);
    });
    streams.stderr.on("data", (text: string) => {
      if (!ours() || !this.pending) return;
      this.pending.buffer.write(text);
      showLive(this.pending, text);
    });
    streams.stdin.on("error", () => undefined); // EPIPE when the shell died; the exit path reports it
    let stdoutEnded = false;
    streams.stdout.on("end", () => {
      stdoutEnded = true;
    });
    return (exitCode) => {
      exited = true;
      owner = this.pending;
      const done = (): void => {
        if (owner && this.pending === owner) owner.finish(exitCode, true);
      };
      if (stdoutEnded) {
        done();
        return;
      }
      streams.stdout.once("end", done);
      setTimeout(done, 200).unref();
    };
  }

  /** Adds stdout to the running call, showing whole lines live, until its sentinel line arrives. */
  protected scanStdout(text: string): void {
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
    if (lineEnd < 0) return; // the rest of the sentinel line is still on its way
    const fields = pending.scan.slice(at + pending.marker.length, lineEnd);
    // The sentinel's printf starts with a newline of its own; drop it from the output.
    const before = pending.scan.slice(0, at);
    pending.scan = before.endsWith("\n") ? before.slice(0, -1) : before;
    this.onSentinel(pending, fields);
  }
}
