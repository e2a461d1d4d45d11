/**
 * One persistent bash per terminal task, so `cd`, variables, functions and aliases carry over
 * between `terminal` calls. Commands run one at a time.
 *
 * Protocol: bash reads its script from a pipe (not a PTY). Each call sends the command as a quoted
 * string and prints a sentinel line with a fresh nonce, the exit code and `$PWD`; output is read
 * until the sentinel. The command itself runs in a subshell `( eval "$cmd" )`: the shell has job
 * control on (`set -m`), so that subshell is a process group of its own holding the whole command
 * line — every list element, loop and pipeline it runs. At its end the subshell writes its state
 * (cwd, variables with their attributes, functions, aliases) to a file the shell then sources, and
 * variables or functions it unset are unset in the shell too. `eval` keeps a syntax error in the
 * command from reaching the protocol.
 *
 * Stopping a command (timeout, interrupt): the subshell interpreting the command line is killed at
 * once, so the rest of a `;`/`&&` list never runs; every process it started (its process group, and
 * any group below it made by a nested `set -m` or `setsid` that is still its descendant) gets
 * SIGTERM, then SIGKILL after the grace period. The result comes back once they are gone. State the
 * stopped command changed (a `cd` before the interrupted `sleep`) is dropped: the shell stays as the
 * last finished call left it. Jobs started with `&` in earlier calls were left in the group of a
 * subshell that has exited, so they are no longer below the shell and are spared; the session
 * remembers their groups and stops them on dispose and when hermes exits. If the sentinel still
 * does not come, the whole shell is killed and the next call starts a fresh one in the last known
 * cwd with the last finished call's state restored.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import type { Socket } from "node:net";
import { constants, tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { onProcessExit } from "../../util/exit-reaper.js";
import { commandLine, descendants, groupsAlive, listProcesses, trySignal } from "../../util/process-tree.js";
import { type PendingCall, SentinelShell } from "../sentinel-shell.js";
import { callFile, envPreludeScript, initScript, quote, statePaths, wrapCommand } from "../shell-protocol.js";
import type { RunOptions, RunResult, StopReport } from "../types.js";

/** The contract's names, kept for the callers and tests written against the local shell. */
export type ShellRunOptions = RunOptions;
export type ShellRunResult = RunResult;
export type { StopReport };

export interface ShellSessionOptions {
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
  /** Characters of output kept per call (head and tail). Default 1,000,000. */
  maxOutputChars?: number;
  /** Between SIGTERM and SIGKILL (`terminal.daemon_term_grace_seconds`). Default 2000 ms. */
  killGraceMs?: number;
  /** An idle shell is ended after this long (`terminal.lifetime_seconds`); the next call rebuilds it. */
  idleLifetimeMs?: number;
}

export class ShellSession extends SentinelShell {
  private proc: ChildProcess | undefined;
  private readonly stateDir: string;
  private readonly envFile: string;
  private readonly stateFile: string;
  private readonly unhookExit: () => void;

  constructor(private readonly options: ShellSessionOptions) {
    super(options);
    // mkdtemp creates the directory owner-only: the env and state files hold exported secrets.
    this.stateDir = mkdtempSync(join(tmpdir(), "hermes-shell-"));
    this.envFile = join(this.stateDir, "env.sh");
    this.stateFile = join(this.stateDir, "state.sh");
    this.unhookExit = onProcessExit(() => this.killEverything());
  }

  /**
   * Script that gives a separate bash (a background process) this shell's exported variables as
   * of the last finished call, then enters `cwd`. Empty before the first call.
   */
  envPrelude(cwd: string): string {
    if (!existsSync(this.envFile)) return "";
    return envPreludeScript(this.envFile, cwd);
  }

  /** Stops the running command, every process the shell started (`&` jobs included), and the shell. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    this.unhookExit();
    this.killEverything();
    this.pending?.finish(null, true);
    rmSync(this.stateDir, { recursive: true, force: true });
  }

  /** Records the call's `&` jobs and keeps the state it left (the start of a rebuilt shell). */
  protected afterCall(pending: PendingCall, stopped: boolean): void {
    const pidFile = callFile(this.stateDir, pending.nonce, "pid");
    const group = Number(readText(pidFile));
    rmSync(pidFile, { force: true });
    const state = callFile(this.stateDir, pending.nonce, "state");
    // The last finished call's full state is what a rebuilt shell starts from.
    if (!stopped && existsSync(`${state}.ok`)) renameSync(state, this.stateFile);
    rmSync(state, { force: true });
    rmSync(`${state}.ok`, { force: true });
    if (!stopped && group > 0 && groupsAlive([group])) this.jobGroups.add(group);
    for (const g of this.jobGroups) if (!groupsAlive([g])) this.jobGroups.delete(g);
  }

  protected endIdleShell(): void {
    if (this.proc) this.killShell();
  }

  protected writeCall(
    stdin: { write(text: string): unknown },
    command: string,
    nonce: string,
    workdir: string | undefined,
  ): void {
    stdin.write(
      wrapCommand(command, { nonce, paths: statePaths(this.stateDir), ...(workdir ? { workdir } : {}) }),
    );
  }

  protected onSentinel(pending: PendingCall, text: string): void {
    const fields = /^(\d+)_(.*)$/.exec(text);
    if (fields?.[2]) this.currentCwd = fields[2];
    pending.finish(fields ? Number(fields[1]) : null, false);
  }

  protected ensureShell(): { write(text: string): unknown } {
    if (this.proc?.stdin) return this.proc.stdin;
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
    for (const stream of [proc.stdin, proc.stdout, proc.stderr]) (stream as Socket).unref?.();
    proc.stdout.setEncoding("utf8");
    proc.stderr.setEncoding("utf8");
    const gone = this.wireStreams(proc, () => this.proc === proc);
    const onGone = (code: number | null, signal: NodeJS.Signals | null): void => {
      if (this.proc !== proc) return;
      this.proc = undefined;
      gone(code ?? (signal ? 128 + (constants.signals[signal] ?? 0) : null));
    };
    proc.on("exit", onGone);
    proc.on("error", (err) => {
      this.pending?.buffer.write(`Failed to start bash: ${err.message}\n`);
      onGone(null, null);
    });
    proc.stdin.write(initScript(statePaths(this.stateDir)));
    return proc.stdin;
  }

  /**
   * Stops the running command: the subshell interpreting its command line gets SIGKILL at once (so
   * nothing more of it runs), everything it started gets SIGTERM, then SIGKILL after the grace
   * period. If the shell does not report back after that, it is killed and rebuilt on the next call.
   */
  protected stopCommand(): void {
    const pending = this.pending;
    const shellPid = this.proc?.pid;
    if (!pending || pending.stopping || shellPid === undefined) return;
    const afterMs = Date.now() - pending.startedAt;
    const tree = descendants(shellPid, listProcesses());
    // The shell's direct children are the subshells running this call's command line.
    const interpreters = tree.filter((p) => p.ppid === shellPid).map((p) => p.pid);
    const groups = new Set<number>(interpreters);
    const loose: number[] = [];
    for (const p of tree) {
      if (p.pgid > 0 && p.pgid !== shellPid) groups.add(p.pgid);
      else loose.push(p.pid); // in the shell's own group: signal one by one
    }
    const running = tree
      .filter((p) => !interpreters.includes(p.pid))
      .map((p) => commandLine(p.pid))
      .filter((c) => c !== "")
      .slice(0, 5)
      .map((c) => (c.length > 80 ? `${c.slice(0, 77)}...` : c));
    for (const pid of interpreters) trySignal(pid, "SIGKILL");
    const signal = (sig: NodeJS.Signals): void => {
      for (const g of groups) trySignal(-g, sig);
      for (const pid of loose) trySignal(pid, sig);
    };
    const alive = (): boolean => {
      const table = listProcesses();
      return groupsAlive(groups, table) || table.some((p) => loose.includes(p.pid) && p.state !== "Z");
    };
    pending.stopping = (async (): Promise<StopReport> => {
      signal("SIGTERM");
      let killed = false;
      if (!(await waitUntil(() => !alive(), this.graceMs))) {
        killed = true;
        signal("SIGKILL");
        await waitUntil(() => !alive(), this.graceMs);
      }
      return { afterMs, killed, graceMs: this.graceMs, running };
    })();
    // The sentinel normally follows at once; a shell that does not answer is replaced.
    void pending.stopping.then(() => {
      const t = setTimeout(() => {
        if (this.pending !== pending) return;
        this.killShell();
        pending.finish(null, true);
      }, this.graceMs);
      pending.timers.push(t);
    });
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

  /** Synchronous: the shell, its command, and the `&` jobs of earlier calls. */
  private killEverything(): void {
    clearTimeout(this.idleTimer);
    this.killShell();
    for (const g of this.jobGroups) trySignal(-g, "SIGKILL");
    this.jobGroups.clear();
  }
}

export { quote };

function readText(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}

/** Polls `done` every 25 ms until it holds (true) or `ms` pass (false). */
async function waitUntil(done: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (done()) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Whether `bash` is on the PATH of `env` (the terminal tools are offered only then). */
export function bashAvailable(env: Readonly<Record<string, string | undefined>>): boolean {
  return (env.PATH ?? "").split(delimiter).some((dir) => dir !== "" && existsSync(join(dir, "bash")));
}
