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
import { type PendingCall, SentinelShell } from "./sentinel-shell.js";
import {
  envPreludeScript,
  initScript,
  killScript,
  parseStopOutput,
  quote,
  type ShellStatePaths,
  statePaths,
  stopScript,
  wrapCommand,
} from "./shell-protocol.js";
import type { ChannelProcess, EnvShell, ShellChannel } from "./types.js";

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

const READY = "__HERMES_SHELL_";

export function createRemoteShell(channel: ShellChannel, options: RemoteShellOptions): RemoteShell {
  return new RemoteShellImpl(channel, options);
}

class RemoteShellImpl extends SentinelShell implements RemoteShell {
  readonly paths: ShellStatePaths;
  private proc: ChannelProcess | undefined;
  /** The shell's pid in the environment, from its ready line. */
  private shellPid: number | undefined;
  private preamble = "";
  private finishedOnce = false;

  constructor(
    private readonly channel: ShellChannel,
    private readonly options: RemoteShellOptions,
  ) {
    super(options);
    this.paths = statePaths(options.stateDir ?? `/tmp/hermes-shell-${randomBytes(12).toString("hex")}`);
  }

  envPrelude(cwd: string): string {
    // The env file is written by every finished call; before the first there is nothing to give.
    return this.finishedOnce ? envPreludeScript(this.paths.envFile, cwd) : "";
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

  /** The bookkeeping happened in the shell and came back on the sentinel line (`onSentinel`). */
  protected afterCall(): void {}

  protected endIdleShell(): void {
    // Its stdin closes, so bash exits.
    if (this.proc) this.dropShell(false);
  }

  protected writeCall(
    stdin: { write(text: string): unknown },
    command: string,
    nonce: string,
    workdir: string | undefined,
  ): void {
    stdin.write(
      wrapCommand(command, { nonce, paths: this.paths, bookkeeping: true, ...(workdir ? { workdir } : {}) }),
    );
  }

  protected onSentinel(pending: PendingCall, text: string): void {
    const fields = /^(\d+)_(\d+)_(.*)$/.exec(text);
    if (fields?.[3]) this.currentCwd = fields[3];
    const group = Number(fields?.[2] ?? 0);
    if (group > 1 && !pending.stopping) this.jobGroups.add(group);
    if (fields && !pending.stopping) this.finishedOnce = true;
    pending.finish(fields ? Number(fields[1]) : null, false);
  }

  protected ensureShell(): { write(text: string): unknown } {
    if (this.proc) return this.proc.stdin;
    const proc = this.channel.open(["bash", "--noprofile", "--norc"], {
      ...(this.options.env ? { env: this.options.env } : {}),
    });
    this.proc = proc;
    this.shellPid = undefined;
    this.preamble = "";
    proc.stdout.setEncoding("utf8");
    proc.stderr.setEncoding("utf8");
    const gone = this.wireStreams(
      proc,
      () => this.proc === proc,
      (text) => this.onStdout(text),
    );
    void proc.exited.then((code) => {
      if (this.proc !== proc) return;
      this.proc = undefined;
      gone(code);
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
    return proc.stdin;
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
    this.scanStdout(text);
  }

  /** See the module comment: runs `stopScript` in the environment, then waits for the sentinel. */
  protected stopCommand(): void {
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
