/**
 * Local processes: background commands (`spawn`: `bash -c` in its own process group, so a signal
 * reaches everything it started) and one-shot commands (`exec`, for probes and file operations).
 */
import { spawn } from "node:child_process";
import type { Socket } from "node:net";
import { constants } from "node:os";
import { PassThrough } from "node:stream";
import { trySignal } from "../../util/process-tree.js";
import { spawnPtyProcess } from "../pty-process.js";
import type { EnvProcess, ExecOptions, ExecResult, SpawnOptions } from "../types.js";

/**
 * Our pipes are sockets, and bash sources ~/.bashrc when its stdin is a socket and SHLVL is unset
 * (its rshd/sshd rule): a user's rc file (pyenv init waiting on a lock, a prompt) would run, or
 * hang, before every command. --norc keeps that out, as for the persistent shell.
 */
const BASH_FLAGS = ["--norc", "--noprofile"] as const;

/** Output can trail the exit; wait this long for it unless the pipes close sooner. */
const DRAIN_MS = 200;

function definedOnly(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  return out;
}

/**
 * Starts `command` with `bash -c` as the leader of a new process group. Resolves once it runs;
 * rejects when bash cannot be started. The child does not keep hermes alive: the caller stops it.
 */
export async function spawnLocal(
  command: string,
  options: SpawnOptions,
  baseEnv: Readonly<Record<string, string | undefined>>,
): Promise<EnvProcess> {
  if (options.pty) {
    return spawnPtyProcess(command, {
      cwd: options.cwd,
      env: { ...baseEnv, ...options.env },
      ...(options.prelude ? { prelude: options.prelude } : {}),
      ...options.pty,
    });
  }
  const env = definedOnly({ ...baseEnv, ...options.env });
  const child = spawn("bash", [...BASH_FLAGS, "-c", `${options.prelude ?? ""}${command}`], {
    cwd: options.cwd,
    env,
    detached: true,
    stdio: ["pipe", "pipe", "pipe"],
  });
  const started = await new Promise<Error | undefined>((resolve) => {
    child.once("spawn", () => resolve(undefined));
    child.once("error", (error) => resolve(error));
  });
  if (started || child.pid === undefined) {
    throw new Error(
      `Could not start bash for the background command in ${options.cwd}: ${started?.message ?? "no pid"}.`,
    );
  }
  child.on("error", () => undefined);
  child.unref();
  for (const stream of [child.stdin, child.stdout, child.stderr]) (stream as Socket | null)?.unref?.();
  child.stdin?.on("error", () => undefined); // EPIPE after the process closed its stdin
  const output = new PassThrough();
  let open = 2;
  for (const stream of [child.stdout, child.stderr]) {
    stream?.pipe(output, { end: false });
    stream?.once("close", () => {
      if (--open === 0) output.end();
    });
  }
  const pid = child.pid;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("exit", (code, signal) => {
      const result = { code: code ?? (signal ? 128 + (constants.signals[signal] ?? 0) : null), signal };
      // 'close' waits for the output unless a grandchild holds the pipes open.
      const timer = setTimeout(() => {
        output.end();
        resolve(result);
      }, DRAIN_MS);
      child.once("close", () => {
        clearTimeout(timer);
        resolve(result);
      });
    });
  });
  return {
    pid,
    get stdin() {
      const stdin = child.stdin;
      return stdin && !stdin.destroyed && !stdin.writableEnded ? stdin : null;
    },
    output,
    exited,
    async signal(sig) {
      trySignal(-pid, sig);
    },
  };
}

/**
 * Runs `command` with `bash -c` to completion in its own process group; a timeout or abort kills
 * the whole group. Never rejects for the command's own failure (see `exitCode`).
 */
export function execLocal(
  command: string,
  options: ExecOptions,
  baseEnv: Readonly<Record<string, string | undefined>>,
  defaultCwd: string,
): Promise<ExecResult> {
  return new Promise<ExecResult>((resolve, reject) => {
    const child = spawn("bash", [...BASH_FLAGS, "-c", command], {
      cwd: options.cwd ?? defaultCwd,
      env: definedOnly(baseEnv),
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    let err = "";
    let killed = false;
    const kill = (): void => {
      killed = true;
      if (child.pid !== undefined) trySignal(-child.pid, "SIGKILL");
    };
    const timer = options.timeoutMs === undefined ? undefined : setTimeout(kill, options.timeoutMs);
    options.signal?.addEventListener("abort", kill, { once: true });
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (text: string) => {
      if (err.length < 64_000) err += text;
    });
    child.stdin.on("error", () => undefined);
    child.stdin.end(options.stdin ?? "");
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(new Error(`Could not start bash: ${error.message}`));
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", kill);
      resolve({ stdout: Buffer.concat(out), stderr: err, exitCode: killed ? null : code });
    });
  });
}
