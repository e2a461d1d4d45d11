/**
 * The Modal `ShellChannel`: every process is a `Sandbox.exec` (the task command router's
 * TaskExecStart, with stdout and stderr streamed back and stdin written through), so the generic
 * remote shell and background processes run on it unchanged. Modal's exec has stdin EOF (closing
 * stdin closes the process's stdin) and a server-side `timeoutMs`; the JS SDK has no call that
 * signals an exec, so stopping a command is done from inside the sandbox: `exec` runs the command
 * as a process group of its own (`set -m`) and writes its id to a file, and an interrupt kills that
 * group through a second exec. `close()` of an open channel process stops reading and closes its
 * stdin; what the process started is ended by the shell's own stop script.
 */
import { randomBytes } from "node:crypto";
import { PassThrough, Readable, Writable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import type { ContainerProcess, Sandbox } from "modal";
import type { ChannelProcess, ExecOptions, ExecResult, ShellChannel } from "../types.js";

const KILL_GRACE_MS = 2000;

function pipeWeb(source: unknown, target: PassThrough): Promise<void> {
  return new Promise((resolve) => {
    const readable = Readable.fromWeb(source as WebReadableStream<Uint8Array>);
    readable.on("data", (chunk: Buffer) => target.write(chunk));
    readable.on("error", () => resolve());
    readable.on("end", () => resolve());
  });
}

/** The script `exec` runs: the command in its own process group, its id in `pidFile` (pure). */
export function groupScript(pidFile: string): string {
  return [
    // Job control only while the command starts (its own group); off again so bash prints no
    // job notices ("[1]+ Done ...") on stderr.
    "set -m",
    `( eval "$1" ) & __p=$!`,
    "set +m",
    `echo "$__p" > ${pidFile}`,
    `wait "$__p"; __r=$?`,
    `rm -f ${pidFile}`,
    "exit $__r",
  ].join("\n");
}

export function createModalChannel(sandbox: Sandbox, killGraceMs = KILL_GRACE_MS): ShellChannel {
  function open(
    argv: readonly string[],
    options?: { tty?: boolean | { cols: number; rows: number }; env?: Readonly<Record<string, string>> },
  ): ChannelProcess {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let closed = false;
    // The SDK opens every pty at 24×80: a sized request sets its size first, inside the pty.
    const size = typeof options?.tty === "object" ? options.tty : undefined;
    const command = size
      ? [
          "bash",
          "-c",
          `stty rows ${size.rows} cols ${size.cols} 2>/dev/null; exec "$@"`,
          "hermes-pty",
          ...argv,
        ]
      : [...argv];
    const started: Promise<ContainerProcess<Uint8Array>> = sandbox.exec(command, {
      mode: "binary",
      stdout: "pipe",
      stderr: "pipe",
      ...(options?.env ? { env: { ...options.env } } : {}),
      ...(options?.tty ? { pty: true } : {}),
    });
    let writer: WritableStreamDefaultWriter<Uint8Array> | undefined;
    const getWriter = async (): Promise<WritableStreamDefaultWriter<Uint8Array>> => {
      writer ??= (await started).stdin.getWriter() as WritableStreamDefaultWriter<Uint8Array>;
      return writer;
    };
    let chain: Promise<unknown> = Promise.resolve();
    const stdin = new Writable({
      write(chunk: Buffer | string, _encoding, callback) {
        const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
        chain = chain
          .then(async () => (await getWriter()).write(new Uint8Array(bytes)))
          .catch(() => undefined);
        callback();
      },
      final(callback) {
        chain = chain.then(async () => (await getWriter()).close()).catch(() => undefined);
        callback();
      },
    });
    const exited = (async (): Promise<number | null> => {
      let proc: ContainerProcess<Uint8Array>;
      try {
        proc = await started;
      } catch (error) {
        stderr.write(`modal: could not start ${argv[0] ?? "the command"}: ${(error as Error).message}\n`);
        return null;
      }
      const drained = Promise.all([pipeWeb(proc.stdout, stdout), pipeWeb(proc.stderr, stderr)]);
      let code: number | null;
      try {
        code = await proc.wait();
      } catch {
        code = null;
      }
      await drained;
      return closed ? null : code;
    })().finally(() => {
      stdout.end();
      stderr.end();
    });
    return {
      stdin,
      stdout,
      stderr,
      exited,
      close() {
        if (closed) return;
        closed = true;
        stdin.end();
      },
    };
  }

  async function exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    const pidFile = `/tmp/.hermes-exec-${randomBytes(8).toString("hex")}.pid`;
    if (options.signal?.aborted) return { stdout: Buffer.alloc(0), stderr: "interrupted", exitCode: null };
    const proc = await sandbox.exec(["bash", "-c", groupScript(pidFile), "hermes-exec", command], {
      mode: "binary",
      stdout: "pipe",
      stderr: "pipe",
      ...(options.cwd ? { workdir: options.cwd } : {}),
    });
    let stopped = false;
    const stop = (): void => {
      if (stopped) return;
      stopped = true;
      void killGroup(pidFile);
    };
    const timer = options.timeoutMs ? setTimeout(stop, options.timeoutMs) : undefined;
    options.signal?.addEventListener("abort", stop, { once: true });
    const writer = proc.stdin.getWriter();
    try {
      if (options.stdin !== undefined) await writer.write(new Uint8Array(Buffer.from(options.stdin)));
      await writer.close();
    } catch {
      // The command may exit without reading its input.
    }
    const out = new PassThrough();
    const err = new PassThrough();
    const outChunks: Buffer[] = [];
    let errText = "";
    out.on("data", (chunk: Buffer) => outChunks.push(chunk));
    err.on("data", (chunk: Buffer) => {
      errText += chunk.toString("utf8");
    });
    const drained = Promise.all([pipeWeb(proc.stdout, out), pipeWeb(proc.stderr, err)]);
    let code: number | null;
    try {
      code = await proc.wait();
    } catch {
      code = null;
    } finally {
      if (timer) clearTimeout(timer);
      options.signal?.removeEventListener("abort", stop);
    }
    await drained;
    return { stdout: Buffer.concat(outChunks), stderr: errText, exitCode: stopped ? null : code };
  }

  /** SIGTERM, then SIGKILL after the grace period, to the exec's group. Never throws. */
  async function killGroup(pidFile: string): Promise<void> {
    const kill = (sig: string): Promise<unknown> =>
      sandbox
        .exec([
          "bash",
          "-c",
          `p=$(cat ${pidFile} 2>/dev/null) && [ -n "$p" ] && kill -${sig} -- -"$p" 2>/dev/null; true`,
        ])
        .then((p) => p.wait())
        .catch(() => undefined);
    await kill("TERM");
    await new Promise((resolve) => setTimeout(resolve, killGraceMs).unref());
    await kill("KILL");
  }

  return { open, exec };
}
