/**
 * One multiplexed ssh connection to the remote host, and the `ShellChannel` over it.
 *
 * Every ssh invocation shares one ControlMaster socket in a private (0700) directory, so only the
 * first command pays for the handshake. `ControlMaster=auto` with `ControlPersist` means any
 * command finding no live master (never started, killed, network dropped) starts a new one and
 * continues: reconnecting needs no code of its own. BatchMode keeps ssh from ever prompting.
 * Host keys are checked against `knownHostsFile` with StrictHostKeyChecking=yes; `accept-new` is
 * used only for the first connection, and only when configured.
 */

import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { shq } from "../exec-files.js";
import { killExecScript, stoppableExecScript } from "../shell-protocol.js";
import type { ChannelProcess, ExecOptions, ExecResult, ShellChannel } from "../types.js";
import type { SshSettings } from "./settings.js";

type Env = Readonly<Record<string, string | undefined>>;

/** The ssh options every invocation shares. */
export function sshOptions(
  settings: SshSettings,
  controlPath: string,
  hostKeyPolicy: "yes" | "accept-new",
): string[] {
  const options = [
    "-F",
    settings.sshConfigFile ?? "/dev/null",
    "-o",
    `ControlPath=${controlPath}`,
    "-o",
    "ControlMaster=auto",
    "-o",
    `ControlPersist=${settings.controlPersistSeconds}`,
    "-o",
    "BatchMode=yes",
    "-o",
    `StrictHostKeyChecking=${hostKeyPolicy}`,
    "-o",
    `UserKnownHostsFile=${settings.knownHostsFile}`,
    "-o",
    `ConnectTimeout=${settings.connectTimeoutSeconds}`,
    // A dead network is noticed within ~45 s, so the next command reconnects instead of hanging.
    "-o",
    "ServerAliveInterval=15",
    "-o",
    "ServerAliveCountMax=3",
    // Only errors on stderr: "Warning: Permanently added..." must not reach a command's output.
    "-o",
    "LogLevel=ERROR",
    "-p",
    String(settings.port),
    "-l",
    settings.user,
  ];
  if (settings.key) options.push("-i", settings.key, "-o", "IdentitiesOnly=yes");
  return options;
}

/** The remote command line for `argv`, with `env` set for it (one string: ssh joins words with spaces). */
export function remoteCommand(argv: readonly string[], env?: Readonly<Record<string, string>>): string {
  const assignments = Object.entries(env ?? {}).map(([k, v]) => shq(`${k}=${v}`));
  const words = argv.map(shq);
  return assignments.length > 0 ? ["env", ...assignments, ...words].join(" ") : words.join(" ");
}

export interface SshConnectionOptions {
  settings: SshSettings;
  /** Path of the ControlMaster socket (inside a private directory). */
  controlPath: string;
  /** Environment of the local ssh processes (Hermes's secrets already stripped). */
  env: Env;
  /** Called with every ssh argv, for tests counting round trips. */
  onSpawn?: (argv: readonly string[]) => void;
}

export class SshConnection implements ShellChannel {
  private hostKeyPolicy: "yes" | "accept-new";

  constructor(private readonly options: SshConnectionOptions) {
    this.hostKeyPolicy = options.settings.acceptNewHostKey ? "accept-new" : "yes";
  }

  /** After the first successful connection the host key is known: from then on it must match. */
  markConnected(): void {
    this.hostKeyPolicy = "yes";
  }

  /** The full argv of `ssh ... host <remote>`; `mode` picks stdin and tty handling. */
  argv(
    remote: string | undefined,
    mode: { tty?: boolean; noStdin?: boolean; control?: string } = {},
  ): string[] {
    const { settings, controlPath } = this.options;
    const args = sshOptions(settings, controlPath, this.hostKeyPolicy);
    if (mode.control) args.push("-O", mode.control);
    else args.push(mode.tty ? "-tt" : "-T");
    if (mode.noStdin) args.push("-n");
    args.push("--", settings.host);
    if (remote !== undefined) args.push(remote);
    return args;
  }

  private spawnSsh(args: string[], stdio: "pipe" | "ignore-stdin"): ChildProcess {
    this.options.onSpawn?.(args);
    return spawn("ssh", args, {
      env: this.options.env as NodeJS.ProcessEnv,
      stdio: [stdio === "pipe" ? "pipe" : "ignore", "pipe", "pipe"],
    });
  }

  open(
    argv: readonly string[],
    options?: { tty?: boolean | { cols: number; rows: number }; env?: Readonly<Record<string, string>> },
  ): ChannelProcess {
    // `ssh -tt` from a pipe sends no window size: a sized request sets it inside the remote pty.
    const size = typeof options?.tty === "object" ? options.tty : undefined;
    const command = size
      ? `stty rows ${size.rows} cols ${size.cols} 2>/dev/null; exec ${remoteCommand(argv, options?.env)}`
      : remoteCommand(argv, options?.env);
    const child = this.spawnSsh(this.argv(command, { tty: Boolean(options?.tty) }), "pipe");
    const exited = new Promise<number | null>((resolve) => {
      child.on("error", () => resolve(255));
      child.on("close", (code) => resolve(code));
    });
    // A remote side that ended must not turn a late write into an uncaught EPIPE.
    child.stdin?.on("error", () => {});
    if (!child.stdin || !child.stdout || !child.stderr) throw new Error("ssh was started without pipes");
    return {
      stdin: child.stdin,
      stdout: child.stdout,
      stderr: child.stderr,
      exited,
      close: () => {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      },
    };
  }

  /** Private remote directory for exec's pid files (set once the environment has one). */
  stateDir: string | undefined;

  exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    let script = options.cwd ? `cd ${shq(options.cwd)} || exit 1\n${command}` : command;
    // The master holds the far end of our pipes, so killing the local client does not end the
    // remote command: a stoppable exec leaves its pid where a second exec can find and kill it.
    const stoppable =
      this.stateDir !== undefined && (options.timeoutMs !== undefined || options.signal !== undefined);
    const pidFile = stoppable ? `${this.stateDir}/exec.${randomBytes(8).toString("hex")}` : "";
    if (stoppable) script = stoppableExecScript(pidFile, script);
    const hasStdin = options.stdin !== undefined;
    const child = this.spawnSsh(
      this.argv(`bash -c ${shq(script)}`, { noStdin: !hasStdin }),
      hasStdin ? "pipe" : "ignore-stdin",
    );
    const onKill = stoppable ? () => this.killRemote(pidFile) : undefined;
    return collectResult(child, options, onKill);
  }

  /** Ends a stopped exec on the far side: it and everything it started. */
  private async killRemote(pidFile: string): Promise<void> {
    const child = this.spawnSsh(
      this.argv(`bash -c ${shq(killExecScript(pidFile))}`, { noStdin: true }),
      "ignore-stdin",
    );
    await collectResult(child, { timeoutMs: 10_000 });
  }

  /** Runs `ssh -O <command>` against the master (check, exit); resolves with its exit code and stderr. */
  control(command: "check" | "exit"): Promise<{ code: number | null; stderr: string }> {
    const child = this.spawnSsh(this.argv(undefined, { control: command }), "ignore-stdin");
    return collectResult(child, { timeoutMs: 10_000 }).then((r) => ({ code: r.exitCode, stderr: r.stderr }));
  }

  /** The master's pid, or undefined when none is running. */
  async masterPid(): Promise<number | undefined> {
    const { code, stderr } = await this.control("check");
    const match = /pid=(\d+)/.exec(stderr);
    return code === 0 && match ? Number(match[1]) : undefined;
  }
}

/**
 * Gathers a local ssh client's output. When it is killed (timeout, abort) the result comes at its
 * exit without waiting for the pipes, which the master may hold open, once `onKill` has ended the far side.
 */
function collectResult(
  child: ChildProcess,
  options: ExecOptions,
  onKill?: () => Promise<void>,
): Promise<ExecResult> {
  return new Promise((resolve) => {
    const out: Buffer[] = [];
    let err = "";
    child.stdout?.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => {
      if (err.length < 64_000) err += chunk;
    });
    let killed = false;
    let farEnd: Promise<void> = Promise.resolve();
    const kill = () => {
      if (killed) return;
      killed = true;
      child.kill("SIGKILL");
      if (onKill) farEnd = onKill().catch(() => undefined);
    };
    const timer = options.timeoutMs ? setTimeout(kill, options.timeoutMs) : undefined;
    if (options.signal?.aborted) kill();
    options.signal?.addEventListener("abort", kill, { once: true });
    if (child.stdin) {
      child.stdin.on("error", () => {});
      child.stdin.end(options.stdin ?? "");
    }
    let settled = false;
    const finish = (code: number | null) => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      options.signal?.removeEventListener("abort", kill);
      const result = { stdout: Buffer.concat(out), stderr: err, exitCode: killed ? null : code };
      // A stopped exec's result waits until the far side has ended it too.
      void farEnd.then(() => resolve(result));
    };
    child.on("error", (error) => {
      err += error.message;
      finish(255);
    });
    child.on("close", (code) => finish(code));
    child.on("exit", (code) => {
      if (killed) finish(code);
    });
  });
}
