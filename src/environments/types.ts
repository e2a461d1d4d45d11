/**
 * The execution-environment contract: where the terminal, process and file tools act. The local
 * machine is one implementation; docker/podman, ssh, singularity, daytona and modal are others.
 * Tools reach the active environment only through this interface, so the model sees one
 * consistent filesystem and one set of processes whichever backend runs them.
 *
 * Layer: environments sit below tools and import only util and config.
 */

export type BackendKind = "local" | "docker" | "podman" | "ssh" | "singularity" | "daytona" | "modal";

export interface RunOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  /** Absolute directory (in the environment) for this one command; the shell's state is left unchanged. */
  workdir?: string;
  /**
   * Receives the command's output (stdout and stderr) as it arrives, for showing it live. The
   * result's `output` is unchanged by it. Backends without a live stream never call it.
   */
  onOutput?: (chunk: string) => void;
}

/** How a command was stopped (timeout or interrupt). */
export interface StopReport {
  /** Milliseconds from the start of the command to the stop. */
  afterMs: number;
  /** Something survived SIGTERM for the whole grace period and got SIGKILL. */
  killed: boolean;
  graceMs: number;
  /** Command lines of the processes that were running when it was stopped (may be empty). */
  running: string[];
}

export interface RunResult {
  output: string;
  /** Null when the shell had to be killed before reporting a status. */
  exitCode: number | null;
  /** The shell's cwd after the command (a path in the environment). */
  cwd: string;
  timedOut: boolean;
  interrupted: boolean;
  /** Set when the command was stopped: what ran, and how it ended. */
  stop?: StopReport;
  /** The shell exited or was killed during this command; the next call starts a fresh one. */
  shellExited: boolean;
  /** Output characters dropped from the middle to stay within the memory cap. */
  droppedChars: number;
}

/**
 * One task's persistent shell: cwd, variables, functions and aliases carry over between runs.
 * Runs are queued one at a time. Stopping a run (timeout, `signal`) stops the whole command line
 * and everything it started (its process groups inside the environment), SIGTERM then SIGKILL.
 */
export interface EnvShell {
  /** The cwd as of the last finished run (the start directory before any). */
  readonly cwd: string;
  run(command: string, options: RunOptions): Promise<RunResult>;
  /**
   * Shell code that gives a separate bash in the same environment this shell's exported
   * variables as of the last finished run, then enters `cwd`. Empty before the first run.
   */
  envPrelude(cwd: string): string;
  dispose(): Promise<void>;
}

export interface SpawnOptions {
  /** Directory in the environment. */
  cwd: string;
  /** Extra variables for this process (the environment's own base env applies first). */
  env?: Readonly<Record<string, string>>;
  /** Shell code run before the command in the same bash (see `EnvShell.envPrelude`). */
  prelude?: string;
  /** Run under a pseudo-terminal of this size (programs that need a terminal). */
  pty?: { cols: number; rows: number };
}

/** A background process started in the environment. */
export interface EnvProcess {
  /** Its pid inside the environment (the local pid for the local backend). */
  readonly pid: number;
  /** Writes to its stdin; null once stdin is closed. */
  readonly stdin: NodeJS.WritableStream | null;
  /** Its stdout and stderr, merged, as they arrive. */
  readonly output: NodeJS.ReadableStream;
  /** Resolves once it has exited and its output has drained; code is 128 + n for signal n. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Signals its whole process group inside the environment. Never throws. */
  signal(sig: NodeJS.Signals): Promise<void>;
}

export interface ExecOptions {
  cwd?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  stdin?: string | Uint8Array;
}

export interface ExecResult {
  stdout: Buffer;
  stderr: string;
  /** Null when it was killed (timeout, signal). */
  exitCode: number | null;
}

export type FileType = "file" | "dir" | "symlink" | "other";

export interface FileStat {
  type: FileType;
  size: number;
  mtimeMs: number;
  /** Permission bits (e.g. 0o644). */
  mode: number;
}

export interface DirEntry {
  name: string;
  type: FileType;
}

/** File access inside the environment, for read_file, write_file, patch and search_files. */
export interface EnvFiles {
  /** Undefined when nothing is there. Follows symlinks. */
  stat(path: string): Promise<FileStat | undefined>;
  /** The file's bytes; `maxBytes` reads at most that many from the start. */
  read(path: string, options?: { maxBytes?: number }): Promise<Buffer>;
  /** Creates parent directories; replaces the file's content (keeping its mode when it existed). */
  write(path: string, data: string | Uint8Array, options?: { mode?: number }): Promise<void>;
  list(dir: string): Promise<DirEntry[]>;
  mkdir(path: string): Promise<void>;
  remove(path: string): Promise<void>;
}

/** A host directory visible inside the environment. */
export interface EnvMount {
  hostPath: string;
  envPath: string;
  readOnly: boolean;
}

/**
 * What the command analyser needs to judge a command in this environment (issue: approval in an
 * environment). `host`: commands act on the user's machine. `isolated`: inside a sandbox whose
 * only contact with the host is `mounts`, the docker socket when `dockerSocket`, and the network.
 */
export interface EnvIsolation {
  isolation: "host" | "isolated";
  mounts: readonly EnvMount[];
  dockerSocket: boolean;
}

export interface Environment extends EnvIsolation {
  readonly kind: BackendKind;
  /** One plain line for the system prompt and status: where commands really run. */
  describe(): string;
  /** The default working directory inside the environment. */
  readonly workdir: string;
  /**
   * Brings the environment up (idempotent; concurrent calls share one start). Throws an
   * `EnvironmentError` saying what is wrong and how to fix it; never falls back to the host.
   */
  start(signal?: AbortSignal): Promise<void>;
  /** The task's persistent shell, created on first use. Each task id has its own. */
  shell(taskId: string): EnvShell;
  /** Starts a background process (`bash -c`), its own process group in the environment. */
  spawn(command: string, options: SpawnOptions): Promise<EnvProcess>;
  /** Runs one command without the persistent shell (file operations, search, probes). */
  exec(command: string, options?: ExecOptions): Promise<ExecResult>;
  readonly files: EnvFiles;
  /** Copies a host file or directory into the environment, and back. */
  upload(hostPath: string, envPath: string): Promise<void>;
  download(envPath: string, hostPath: string): Promise<void>;
  /** Ends the task's shell and the background processes it started there. */
  releaseTask(taskId: string): Promise<void>;
  /** Ends every shell and process; removes the sandbox unless it is configured to persist. */
  stop(): Promise<void>;
}

/** Why an environment could not be used; `fix` tells the user what to change. */
export class EnvironmentError extends Error {
  constructor(
    message: string,
    readonly fix: string,
    /** config: a wrong setting (exit 2); runtime: a missing program; unreachable: a host or API. */
    readonly reason: "config" | "runtime" | "unreachable",
  ) {
    super(message);
    this.name = "EnvironmentError";
  }
}

/** One `hermes doctor` line for a backend. */
export interface DoctorCheck {
  name: string;
  ok: boolean;
  detail: string;
  fix?: string;
}

export interface BackendContext {
  /** HERMES_HOME. */
  home: string;
  /** The working directory hermes was started in (host path). */
  cwd: string;
  /** Hermes's own process environment (API keys included): read settings from it, never pass it on. */
  processEnv: Readonly<Record<string, string | undefined>>;
  /** Environment for subprocesses, already stripped of Hermes's secrets. */
  childEnv: Readonly<Record<string, string | undefined>>;
  /** The whole effective config (typed `HermesConfig` by callers). */
  config: Readonly<Record<string, unknown>>;
}

/** What each backend module exports (loaded lazily by kind). */
export interface BackendModule {
  create(ctx: BackendContext): Environment;
  doctor(ctx: BackendContext): Promise<DoctorCheck[]>;
}

/** A process inside the environment whose stdio is piped back here (see `ShellChannel`). */
export interface ChannelProcess {
  readonly stdin: NodeJS.WritableStream;
  readonly stdout: NodeJS.ReadableStream;
  readonly stderr: NodeJS.ReadableStream;
  /** Resolves with its exit code (null when killed) once it has ended. */
  readonly exited: Promise<number | null>;
  /** Ends the channel: kills the local client or closes the remote stream. */
  close(): void;
}

/**
 * How a non-local backend reaches processes in its environment. The generic persistent shell and
 * background processes (src/environments/remote-shell.ts) and file access over commands
 * (src/environments/exec-files.ts) are built on it, so docker, podman, ssh, singularity, daytona
 * and modal differ only here.
 */
export interface ShellChannel {
  /**
   * Starts `argv` inside the environment with its stdio piped here, e.g. `docker exec -i CTR
   * bash --noprofile --norc`, or `ssh -S CTL host 'bash --noprofile --norc'`. `tty` asks for a
   * pseudo-terminal (docker exec -t, ssh -tt), of the given size when it names one.
   */
  open(
    argv: readonly string[],
    options?: { tty?: boolean | { cols: number; rows: number }; env?: Readonly<Record<string, string>> },
  ): ChannelProcess;
  /** Runs a short command to completion inside the environment (bash -c). */
  exec(command: string, options?: ExecOptions): Promise<ExecResult>;
}
