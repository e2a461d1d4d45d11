/**
 * A local process under a pseudo-terminal (`SpawnOptions.pty`), for programs that refuse to run,
 * or behave differently, without one (REPLs, installers that prompt, full-screen tools). Built on
 * `@lydell/node-pty`, a native addon kept outside the bundle and loaded on first use, so hermes
 * starts without it and a missing build is one clear error when a pty is asked for.
 *
 * The child is a session leader (forkpty), so its pid is its process group: `signal` reaches
 * everything it started, as for the pipe-based background processes.
 */
import { createRequire } from "node:module";
import { constants } from "node:os";
import { PassThrough, Writable } from "node:stream";
import { trySignal } from "../util/process-tree.js";
import type { ChannelProcess, EnvProcess } from "./types.js";

/** The part of `@lydell/node-pty` used here. */
interface PtyModule {
  spawn(
    file: string,
    args: string[],
    options: {
      name: string;
      cols: number;
      rows: number;
      cwd: string;
      env: Record<string, string>;
    },
  ): PtyHandle;
}

interface PtyHandle {
  readonly pid: number;
  onData(listener: (data: string) => void): { dispose(): void };
  onExit(listener: (event: { exitCode: number; signal?: number }) => void): { dispose(): void };
  write(data: string): void;
}

export interface PtySpawnOptions {
  cwd: string;
  /** The whole environment of the process (already stripped of Hermes's secrets). */
  env: Readonly<Record<string, string | undefined>>;
  /** Shell code run before the command in the same bash. */
  prelude?: string;
  cols: number;
  rows: number;
}

let ptyModule: PtyModule | undefined;

/** Loads node-pty once; throws a message that says what to do when it cannot be loaded. */
function loadPty(): PtyModule {
  if (ptyModule) return ptyModule;
  try {
    ptyModule = createRequire(import.meta.url)("@lydell/node-pty") as PtyModule;
    return ptyModule;
  } catch (error) {
    const why = error instanceof Error ? error.message.split("\n")[0] : String(error);
    throw new Error(
      `pty=true needs the @lydell/node-pty package, which could not be loaded (${why}). Run the command without pty, or reinstall hermes so its optional native build for this platform is present.`,
    );
  }
}

const SIGNAL_NAMES = new Map<number, NodeJS.Signals>(
  Object.entries(constants.signals).map(([name, n]) => [n, name as NodeJS.Signals]),
);

/**
 * Starts `bash -c <prelude><command>` under a new pty. Output (the terminal's one stream, so
 * stdout and stderr merged, with the program's escape sequences and `\r\n` line ends) arrives on
 * `output`; `stdin` types into the terminal, and ending it sends Ctrl+D. Throws when node-pty
 * cannot be loaded or bash cannot be started.
 */
export function spawnPtyProcess(command: string, options: PtySpawnOptions): EnvProcess {
  const program = openPtyProgram(
    "bash",
    ["--noprofile", "--norc", "-c", `${options.prelude ?? ""}${command}`],
    options,
  );
  return {
    pid: program.pid,
    get stdin() {
      return program.stdin;
    },
    output: program.output,
    exited: program.exited,
    async signal(sig) {
      trySignal(-program.pid, sig);
    },
  };
}

/** A program running under a local pty: its pid (a process group), typed input, merged output. */
export interface PtyProgram {
  readonly pid: number;
  /** Null once it exited or stdin was ended (which sent Ctrl+D). */
  readonly stdin: NodeJS.WritableStream | null;
  readonly output: NodeJS.ReadableStream;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Kills it (SIGKILL to its process group). */
  kill(): void;
}

/**
 * Runs `file args` under a new local pty. Also how a backend gives a remote program a terminal
 * when its client insists on one of its own (`docker exec -t` refuses a pipe).
 */
export function openPtyProgram(
  file: string,
  args: string[],
  options: Omit<PtySpawnOptions, "prelude">,
): PtyProgram {
  const pty = loadPty();
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(options.env)) if (v !== undefined) env[k] = v;
  env.TERM ??= "xterm-256color";
  const handle = pty.spawn(file, args, {
    name: env.TERM,
    cols: options.cols,
    rows: options.rows,
    cwd: options.cwd,
    env,
  });
  const output = new PassThrough({ encoding: "utf8" });
  const dataSub = handle.onData((data) => output.write(data));
  let stdinOpen = true;
  const stdin = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      try {
        if (stdinOpen) handle.write(typeof chunk === "string" ? chunk : chunk.toString("utf8"));
        callback();
      } catch (error) {
        callback(error as Error);
      }
    },
    final(callback) {
      // A terminal has no EOF of its own: Ctrl+D at the start of a line is what a program reads as one.
      try {
        if (stdinOpen) handle.write("\x04");
      } catch {
        // The program already left.
      }
      stdinOpen = false;
      callback();
    },
  });
  stdin.on("error", () => undefined);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    const exitSub = handle.onExit(({ exitCode, signal }) => {
      stdinOpen = false;
      exitSub.dispose();
      dataSub.dispose();
      output.end();
      const name = signal ? (SIGNAL_NAMES.get(signal) ?? null) : null;
      resolve({ code: signal ? 128 + signal : exitCode, signal: name });
    });
  });
  return {
    pid: handle.pid,
    get stdin() {
      return stdinOpen ? stdin : null;
    },
    output,
    exited,
    kill: () => trySignal(-handle.pid, "SIGKILL"),
  };
}

/**
 * A local client program (`docker exec -t`, `apptainer exec`) under a new local pty, as a
 * `ChannelProcess`: whatever it runs in the environment gets that terminal (stderr is merged into
 * the terminal's output, so the channel's stderr is empty).
 */
export function ptyChannelProcess(
  file: string,
  args: string[],
  options: { env: Readonly<Record<string, string | undefined>>; cwd: string; cols: number; rows: number },
): ChannelProcess {
  const program = openPtyProgram(file, args, options);
  const stderr = new PassThrough();
  stderr.end();
  return {
    stdin: program.stdin ?? new PassThrough(),
    stdout: program.output,
    stderr,
    exited: program.exited.then(({ code }) => code),
    close: () => program.kill(),
  };
}
