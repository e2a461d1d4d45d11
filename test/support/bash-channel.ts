/**
 * A ShellChannel that runs everything on this machine (bash via child_process): the generic remote
 * shell and process code tested without any container or host in between.
 */
import { spawn } from "node:child_process";
import { constants } from "node:os";
import type { ChannelProcess, ExecOptions, ExecResult, ShellChannel } from "../../src/environments/types.js";

export function bashChannel(
  baseEnv: Readonly<Record<string, string | undefined>> = process.env,
): ShellChannel {
  const env = (extra?: Readonly<Record<string, string>>): NodeJS.ProcessEnv => {
    const out: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(baseEnv)) if (v !== undefined && k !== "BASH_ENV") out[k] = v;
    return { ...out, ...extra };
  };
  return {
    open(argv, options): ChannelProcess {
      const [file, ...args] = argv;
      const child = spawn(file as string, args, { env: env(options?.env), stdio: ["pipe", "pipe", "pipe"] });
      const exited = new Promise<number | null>((resolve) => {
        // Like `docker exec`: a process killed by signal n reports 128 + n.
        child.on("close", (code, signal) =>
          resolve(code ?? (signal ? 128 + (constants.signals[signal] ?? 0) : null)),
        );
        child.on("error", () => resolve(null));
      });
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
        // --norc: bash sources ~/.bashrc for -c when stdin is a socket (as node pipes are) and SHLVL < 2.
        const child = spawn("bash", ["--noprofile", "--norc", "-c", command], {
          env: env(),
          stdio: ["pipe", "pipe", "pipe"],
          ...(options.cwd ? { cwd: options.cwd } : {}),
          ...(options.signal ? { signal: options.signal } : {}),
          ...(options.timeoutMs ? { timeout: options.timeoutMs } : {}),
        });
        const out: Buffer[] = [];
        let err = "";
        child.stdout.on("data", (b: Buffer) => out.push(b));
        child.stderr.on("data", (b: Buffer) => {
          err += b.toString();
        });
        child.on("error", () => undefined);
        // EPIPE when the command exits before reading its stdin; the close event reports the run.
        child.stdin.on("error", () => undefined);
        child.on("close", (code) => resolve({ stdout: Buffer.concat(out), stderr: err, exitCode: code }));
        child.stdin.end(options.stdin ?? "");
      });
    },
  };
}
