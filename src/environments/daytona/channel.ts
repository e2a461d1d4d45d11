/**
 * The Daytona `ShellChannel`: how the generic remote shell reaches processes in a sandbox.
 *
 * `open` runs the program as an asynchronous command of its own toolbox session (the daemon's
 * `/process/session` API): stdin goes through `sendSessionCommandInput`, stdout and stderr come
 * back demultiplexed over the follow-logs WebSocket, and the exit code is read from the command
 * afterwards. Deleting the session (`close`) kills the session's shell.
 *
 * What the daemon allows, and so what this channel gives (said here because callers feel it):
 * - Output arrives a whole line at a time (the daemon labels each line), and a last line without a
 *   newline gets one. The persistent shell's sentinels end in a newline, so nothing waits.
 * - Input is text: the daemon appends a newline to each write that lacks one, so writes are sent
 *   a line at a time; there is no way to close stdin (EOF), only to end the session.
 *
 * `exec` runs one command through `/process/execute` (its own process group in the sandbox; the
 * daemon kills that group when the request's timeout passes). The API merges stdout and stderr
 * and has no stdin, so the wrapper sends stderr after a marker and stdin is uploaded to a file
 * first. An interrupt kills the command's process group through a second `/process/execute`.
 */
import { randomUUID } from "node:crypto";
import { PassThrough, Writable } from "node:stream";
import type { Sandbox } from "@daytonaio/sdk";
import { shq } from "../exec-files.js";
import type { ChannelProcess, ExecOptions, ExecResult, ShellChannel } from "../types.js";

/**
 * Quotes `text` as one word for both bash and the daemon's `/process/execute` splitter, which knows
 * quotes but not backslashes: so a `'` is closed, double-quoted and reopened (never `\'`).
 */
export function daemonQuote(text: string): string {
  return `'${text.replace(/'/g, `'"'"'`)}'`;
}

/** Seconds between the polite and the hard stop of an interrupted exec. */
const KILL_GRACE_MS = 2000;

/** The script `/process/execute` runs for `exec`: stderr after a marker, the group id in a file. */
export function execScript(id: string, stdinFile: string | undefined): { script: string; marker: string } {
  const marker = `__HERMES_STDERR_${id}__`;
  const err = `/tmp/.hermes-exec-${id}.err`;
  const pid = `/tmp/.hermes-exec-${id}.pid`;
  const input = stdinFile ? daemonQuote(stdinFile) : "/dev/null";
  const script = [
    `echo $$ > ${pid}`,
    `( eval "$1" ) < ${input} 2> ${err}`,
    "__r=$?",
    `printf '%s' ${daemonQuote(marker)}`,
    `cat ${err} 2>/dev/null`,
    `rm -f ${err} ${pid}${stdinFile ? ` ${daemonQuote(stdinFile)}` : ""}`,
    "exit $__r",
  ].join("; ");
  return { script, marker };
}

/** Splits `/process/execute`'s merged result at the last marker (pure). */
export function splitExecOutput(result: string, marker: string): { stdout: string; stderr: string } {
  const at = result.lastIndexOf(marker);
  if (at < 0) return { stdout: result, stderr: "" };
  return { stdout: result.slice(0, at), stderr: result.slice(at + marker.length) };
}

function statusOf(error: unknown): number | undefined {
  const code = (error as { statusCode?: unknown } | undefined)?.statusCode;
  return typeof code === "number" ? code : undefined;
}

export function createDaytonaChannel(sandbox: Sandbox): ShellChannel {
  const proc = sandbox.process;

  async function runExec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    const id = randomUUID().replace(/-/g, "");
    let stdinFile: string | undefined;
    if (options.stdin !== undefined) {
      stdinFile = `/tmp/.hermes-exec-${id}.in`;
      await sandbox.fs.uploadFile(Buffer.from(options.stdin), stdinFile);
    }
    const { script, marker } = execScript(id, stdinFile);
    const line = `bash -c ${daemonQuote(script)} hermes-exec ${daemonQuote(command)}`;
    const timeoutSec = options.timeoutMs ? Math.max(1, Math.ceil(options.timeoutMs / 1000)) : undefined;
    let interrupted = false;
    const onAbort = (): void => {
      interrupted = true;
      void killGroup(id);
    };
    if (options.signal?.aborted) return { stdout: Buffer.alloc(0), stderr: "interrupted", exitCode: null };
    options.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const response = await proc.executeCommand(line, options.cwd, undefined, timeoutSec);
      const { stdout, stderr } = splitExecOutput(response.result ?? "", marker);
      return {
        stdout: Buffer.from(stdout),
        stderr,
        exitCode: interrupted ? null : (response.exitCode ?? null),
      };
    } catch (error) {
      // 408: the daemon stopped the command's process tree when the timeout passed.
      if (statusOf(error) === 408) return { stdout: Buffer.alloc(0), stderr: "timed out", exitCode: null };
      throw error;
    } finally {
      options.signal?.removeEventListener("abort", onAbort);
    }
  }

  /** SIGTERM to the exec's process group, SIGKILL after the grace period. Never throws. */
  async function killGroup(id: string): Promise<void> {
    const pid = `/tmp/.hermes-exec-${id}.pid`;
    const kill = (sig: string): string =>
      `bash -c ${daemonQuote(`p=$(cat ${pid} 2>/dev/null) && [ -n "$p" ] && kill -${sig} -- -"$p" 2>/dev/null; true`)}`;
    try {
      await proc.executeCommand(kill("TERM"), undefined, undefined, 10);
      await new Promise((resolve) => setTimeout(resolve, KILL_GRACE_MS).unref());
      await proc.executeCommand(kill("KILL"), undefined, undefined, 10);
    } catch {
      // The sandbox may already be gone; the command ends with it.
    }
  }

  return {
    open(argv, options) {
      if (options?.tty) {
        // The toolbox session API has no pseudo-terminal of its own: util-linux `script` makes one
        // inside the sandbox, sized as asked (stdout and stderr merged, as on a terminal).
        const size = typeof options.tty === "object" ? options.tty : { cols: 120, rows: 40 };
        return openSessionProcess(sandbox, ptyArgv(argv, size), options.env);
      }
      return openSessionProcess(sandbox, argv, options?.env);
    },
    exec: runExec,
  };
}

/** `argv` on a new pseudo-terminal inside the sandbox, or a clear failure where `script` is missing. */
export function ptyArgv(argv: readonly string[], size: { cols: number; rows: number }): string[] {
  const inner = `stty rows ${size.rows} cols ${size.cols} 2>/dev/null; exec ${argv.map(shq).join(" ")}`;
  const missing =
    "hermes: this sandbox has no 'script' (util-linux) to give the process a terminal; add util-linux to the image or run it without pty";
  return [
    "bash",
    "-c",
    `command -v script >/dev/null 2>&1 || { echo ${shq(missing)} >&2; exit 127; }; exec script -qfec ${shq(inner)} /dev/null`,
  ];
}

function openSessionProcess(
  sandbox: Sandbox,
  argv: readonly string[],
  env: Readonly<Record<string, string>> | undefined,
): ChannelProcess {
  const proc = sandbox.process;
  const sessionId = `hermes-${randomUUID()}`;
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let closed = false;
  let pending = "";
  // Writes go out one after another, in order, once the command exists.
  let sendChain: Promise<unknown>;

  const envPart =
    env && Object.keys(env).length > 0
      ? `env ${Object.entries(env)
          .map(([k, v]) => daemonQuote(`${k}=${v}`))
          .join(" ")} `
      : "";
  const command = `${envPart}${argv.map(daemonQuote).join(" ")}`;

  const started = (async () => {
    await proc.createSession(sessionId);
    const response = await proc.executeSessionCommand(sessionId, {
      command,
      runAsync: true,
      suppressInputEcho: true,
    });
    return response.cmdId;
  })();
  sendChain = started;

  const send = (data: string): void => {
    sendChain = sendChain
      .then(async () => {
        if (closed) return;
        const cmdId = await started;
        // The command's input FIFO appears only once the session shell has run the daemon's
        // wrapper, a moment after the exec call returns: the daemon answers 500 until then.
        for (let attempt = 0; ; attempt++) {
          try {
            await proc.sendSessionCommandInput(sessionId, cmdId, data);
            return;
          } catch (error) {
            if (statusOf(error) !== 500 || attempt >= 40 || closed) throw error;
            await new Promise((resolve) => setTimeout(resolve, Math.min(25 * (attempt + 1), 250)));
          }
        }
      })
      .catch(() => {
        // 410 Gone: the command has ended; what it did not read is lost, as with a closed pipe.
      });
  };

  const stdin = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      pending += typeof chunk === "string" ? chunk : chunk.toString("utf8");
      const cut = pending.lastIndexOf("\n");
      if (cut >= 0) {
        send(pending.slice(0, cut + 1));
        pending = pending.slice(cut + 1);
      }
      callback();
    },
    final(callback) {
      if (pending) send(pending);
      pending = "";
      callback();
    },
  });

  const exited = (async (): Promise<number | null> => {
    let cmdId: string;
    try {
      cmdId = await started;
    } catch (error) {
      stderr.write(`daytona: could not start ${argv[0] ?? "the command"}: ${(error as Error).message}\n`);
      return null;
    }
    try {
      await proc.getSessionCommandLogs(
        sessionId,
        cmdId,
        (chunk) => stdout.write(chunk),
        (chunk) => stderr.write(chunk),
      );
    } catch {
      // The log stream ends with an error when the session is deleted under it.
    }
    let code: number | null = null;
    if (!closed) {
      try {
        code = (await proc.getSessionCommand(sessionId, cmdId)).exitCode ?? null;
      } catch {
        code = null;
      }
    }
    return code;
  })().finally(() => {
    stdout.end();
    stderr.end();
    void proc.deleteSession(sessionId).catch(() => undefined);
  });

  return {
    stdin,
    stdout,
    stderr,
    exited,
    close() {
      if (closed) return;
      closed = true;
      void started.then(() => proc.deleteSession(sessionId)).catch(() => undefined);
    },
  };
}
