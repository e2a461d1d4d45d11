/**
 * The Apptainer/Singularity `ShellChannel`: every process is `apptainer exec instance://NAME ...`,
 * a local client joined to the running instance, so its stdio is the client's. The client runs in
 * a process group of its own on the host; stopping a command signals that group (the command's
 * processes inside the instance are host processes below the client). Apptainer has no `-t`; a
 * pty request runs the client under a local pty, whose terminal the program inherits.
 */
import { spawn } from "node:child_process";
import { tmpdir } from "node:os";
import { ptyChannelProcess } from "../pty-process.js";
import type { ChannelProcess, ExecOptions, ExecResult, ShellChannel } from "../types.js";

export interface ApptainerTarget {
  /** `apptainer` or `singularity`, resolved on PATH. */
  executable: string;
  instance: string;
  /** Environment for the local client (Hermes's secrets already stripped). */
  clientEnv: Readonly<Record<string, string | undefined>>;
}

/** argv of `exec` in the instance (pure). `--env` needs Apptainer ≥ 1.0 / SingularityCE ≥ 3.6. */
export function execArgv(
  target: ApptainerTarget,
  argv: readonly string[],
  options: { cwd?: string; env?: Readonly<Record<string, string>> } = {},
): string[] {
  const out = ["exec"];
  if (options.cwd) out.push("--pwd", options.cwd);
  for (const [key, value] of Object.entries(options.env ?? {})) out.push("--env", `${key}=${value}`);
  out.push(`instance://${target.instance}`, ...argv);
  return out;
}

function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (!pid) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

export function createApptainerChannel(target: ApptainerTarget, killGraceMs = 2000): ShellChannel {
  const env = { ...target.clientEnv } as NodeJS.ProcessEnv;

  function open(
    argv: readonly string[],
    options?: { tty?: boolean | { cols: number; rows: number }; env?: Readonly<Record<string, string>> },
  ): ChannelProcess {
    if (options?.tty) {
      // Apptainer's exec has no -t, but the program it starts keeps the client's own stdio: a
      // client under a local pty gives it that terminal.
      const size = typeof options.tty === "object" ? options.tty : { cols: 120, rows: 40 };
      return ptyChannelProcess(
        target.executable,
        execArgv(target, argv, options.env ? { env: options.env } : {}),
        {
          env: target.clientEnv,
          cwd: tmpdir(),
          ...size,
        },
      );
    }
    const child = spawn(target.executable, execArgv(target, argv, options?.env ? { env: options.env } : {}), {
      env,
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
    });
    child.stdin.on("error", () => undefined);
    const exited = new Promise<number | null>((resolve) => {
      child.on("error", (error) => {
        child.stderr.emit("data", Buffer.from(`${target.executable}: ${error.message}\n`));
        resolve(127);
      });
      child.on("close", (code) => resolve(code));
    });
    return {
      stdin: child.stdin,
      stdout: child.stdout,
      stderr: child.stderr,
      exited,
      close() {
        signalGroup(child.pid, "SIGKILL");
      },
    };
  }

  async function exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    const child = spawn(
      target.executable,
      execArgv(target, ["bash", "-c", command], options.cwd ? { cwd: options.cwd } : {}),
      { env, detached: true, stdio: ["pipe", "pipe", "pipe"] },
    );
    const out: Buffer[] = [];
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      if (err.length < 1_000_000) err += chunk;
    });
    child.stdin.on("error", () => undefined);
    child.stdin.end(options.stdin === undefined ? undefined : Buffer.from(options.stdin));
    let stopped = false;
    const stop = (): void => {
      if (stopped) return;
      stopped = true;
      signalGroup(child.pid, "SIGTERM");
      setTimeout(() => signalGroup(child.pid, "SIGKILL"), killGraceMs).unref();
    };
    const timer = options.timeoutMs ? setTimeout(stop, options.timeoutMs) : undefined;
    if (options.signal?.aborted) stop();
    options.signal?.addEventListener("abort", stop, { once: true });
    const code = await new Promise<number | null>((resolve) => {
      child.on("error", (error) => {
        err += `${target.executable}: ${error.message}\n`;
        resolve(127);
      });
      child.on("close", (c) => resolve(c));
    });
    if (timer) clearTimeout(timer);
    options.signal?.removeEventListener("abort", stop);
    return { stdout: Buffer.concat(out), stderr: err, exitCode: stopped ? null : code };
  }

  return { open, exec };
}
