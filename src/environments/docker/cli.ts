/**
 * The docker (or podman) CLI: one-shot commands, and the `ShellChannel` into a running container
 * (`docker exec -i`). Values of variables passed with `-e NAME` come from the client's own
 * environment, so they never appear on a command line where `ps` would show them.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { ptyChannelProcess } from "../pty-process.js";
import { killExecScript, stoppableExecScript } from "../shell-protocol.js";
import type { ChannelProcess, ExecOptions, ExecResult, ShellChannel } from "../types.js";

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The binary could not be started (not installed). */
  missing: boolean;
}

/** Runs `binary args` to completion. */
export function cli(
  binary: string,
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; timeoutMs?: number; input?: string } = {},
): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(binary, args, {
      stdio: ["pipe", "pipe", "pipe"],
      ...(options.env ? { env: options.env } : {}),
      ...(options.timeoutMs ? { timeout: options.timeoutMs } : {}),
    });
    let stdout = "";
    let stderr = "";
    let missing = false;
    child.stdout.on("data", (b: Buffer) => {
      stdout += b.toString();
    });
    child.stderr.on("data", (b: Buffer) => {
      stderr += b.toString();
    });
    child.stdin.on("error", () => undefined);
    child.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code === "ENOENT") missing = true;
      stderr += err.message;
    });
    child.on("close", (code) => resolve({ code, stdout, stderr, missing }));
    child.stdin.end(options.input ?? "");
  });
}

/** A channel into container `id` (bash must be in the image). */
export function dockerChannel(
  binary: string,
  id: string,
  clientEnv: NodeJS.ProcessEnv,
  user?: string,
): ShellChannel {
  const base = (env: Readonly<Record<string, string>> | undefined, tty: boolean, cwd?: string): string[] => [
    "exec",
    "-i",
    ...(tty ? ["-t"] : []),
    ...(user ? ["-u", user] : []),
    ...(cwd ? ["-w", cwd] : []),
    ...Object.keys(env ?? {}).flatMap((k) => ["-e", k]),
    id,
  ];
  return {
    open(argv, options): ChannelProcess {
      // `docker exec -t` insists that its own stdin is a terminal: give the client a local pty.
      if (options?.tty) {
        const size = typeof options.tty === "object" ? options.tty : { cols: 120, rows: 40 };
        return ptyChannelProcess(binary, [...base(options.env, true), ...argv], {
          env: { ...clientEnv, ...options.env },
          cwd: tmpdir(),
          ...size,
        });
      }
      const child = spawn(binary, [...base(options?.env, false), ...argv], {
        env: { ...clientEnv, ...options?.env },
        stdio: ["pipe", "pipe", "pipe"],
      });
      const exited = new Promise<number | null>((resolve) => {
        child.on("error", () => resolve(127));
        child.on("close", (code) => resolve(code));
      });
      child.stdin.on("error", () => undefined);
      return {
        stdin: child.stdin,
        stdout: child.stdout,
        stderr: child.stderr,
        exited,
        close: () => {
          child.stdin.destroy();
          child.kill("SIGKILL");
        },
      };
    },
    exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
      return new Promise((resolve) => {
        // Killing the client leaves the command running in the container: a stoppable exec leaves
        // its pid in a file there, and a second exec ends it and what it started.
        const stoppable = options.timeoutMs !== undefined || options.signal !== undefined;
        const pidFile = `/tmp/.hermes-exec-${randomBytes(8).toString("hex")}`;
        const script = stoppable ? stoppableExecScript(pidFile, command) : command;
        const bash = (text: string): string[] => ["bash", "--noprofile", "--norc", "-c", text];
        const child = spawn(binary, [...base(undefined, false, options.cwd), ...bash(script)], {
          env: clientEnv,
          stdio: ["pipe", "pipe", "pipe"],
        });
        // The docker client exits 0 when it is sent SIGTERM, so a stopped exec is marked here.
        let stopped = false;
        let ended: Promise<unknown> = Promise.resolve();
        const stop = (): void => {
          if (stopped) return;
          stopped = true;
          child.kill("SIGKILL");
          ended = cli(binary, [...base(undefined, false), ...bash(killExecScript(pidFile))], {
            env: clientEnv,
            timeoutMs: 15_000,
          });
        };
        const timer = options.timeoutMs ? setTimeout(stop, options.timeoutMs) : undefined;
        if (options.signal?.aborted) stop();
        options.signal?.addEventListener("abort", stop, { once: true });
        const out: Buffer[] = [];
        let err = "";
        child.stdout.on("data", (b: Buffer) => out.push(b));
        child.stderr.on("data", (b: Buffer) => {
          err += b.toString();
        });
        child.stdin.on("error", () => undefined);
        child.on("error", (e) => {
          err += e.message;
        });
        child.on("close", (code, signal) => {
          clearTimeout(timer);
          options.signal?.removeEventListener("abort", stop);
          const result = {
            stdout: Buffer.concat(out),
            stderr: err,
            exitCode: stopped || signal ? null : code,
          };
          // A stopped exec's result waits until the command is gone inside the container too.
          void ended.then(() => resolve(result));
        });
        child.stdin.end(options.stdin ?? "");
      });
    },
  };
}
