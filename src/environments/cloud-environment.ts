/**
 * The `Environment` the sandbox backends share (daytona, modal, singularity): each brings its
 * sandbox up and hands back a `ShellChannel` plus file access; the persistent shells and the
 * background processes are the generic ones over that channel (./remote-shell.ts,
 * ./remote-process.ts). Isolation is always `isolated` with no host mounts: these sandboxes see
 * the host only through what is uploaded.
 *
 * `start` is idempotent and shared by concurrent callers; a failed start is forgotten so the next
 * call tries again. Everything else waits for the start (a tool may call before it).
 */

import { spawnRemote } from "./remote-process.js";
import { createRemoteShell, type RemoteShell } from "./remote-shell.js";
import type {
  BackendKind,
  EnvFiles,
  Environment,
  EnvProcess,
  EnvShell,
  ExecOptions,
  ExecResult,
  ShellChannel,
  SpawnOptions,
} from "./types.js";

/** What a backend hands over once its sandbox is up. */
export interface SandboxLink {
  channel: ShellChannel;
  files: EnvFiles;
  /** The default working directory inside the sandbox. */
  workdir: string;
  /** One line: what and where, e.g. "a Daytona sandbox 3f2a… (image python:3.11)". */
  description: string;
  upload(hostPath: string, envPath: string): Promise<void>;
  download(envPath: string, hostPath: string): Promise<void>;
  /** Ends the sandbox (or keeps it when configured to persist). Never throws. */
  down(): Promise<void>;
  /** Variables every shell and process starts with (forwarded on purpose; never Hermes's own). */
  env?: Readonly<Record<string, string>>;
}

export interface SandboxBackend {
  kind: BackendKind;
  /** Before start: what it will be (for the system prompt when asked early). */
  pendingDescription: string;
  /** The workdir to report before the sandbox is up. */
  pendingWorkdir: string;
  /** Brings the sandbox up; throws an `EnvironmentError` with the fix. */
  up(signal?: AbortSignal): Promise<SandboxLink>;
  /** Milliseconds between SIGTERM and SIGKILL (terminal.daemon_term_grace_seconds). */
  killGraceMs?: number;
}

export class SandboxEnvironment implements Environment {
  readonly isolation = "isolated" as const;
  readonly mounts = [];
  readonly dockerSocket = false;
  readonly files: EnvFiles;
  private link: SandboxLink | undefined;
  private starting: Promise<SandboxLink> | undefined;
  private readonly shells = new Map<string, RemoteShell>();
  private readonly processes = new Set<EnvProcess>();
  private stopped = false;

  constructor(private readonly backend: SandboxBackend) {
    this.files = this.lazyFiles();
  }

  get kind(): BackendKind {
    return this.backend.kind;
  }

  get workdir(): string {
    return this.link?.workdir ?? this.backend.pendingWorkdir;
  }

  describe(): string {
    return this.link?.description ?? this.backend.pendingDescription;
  }

  async start(signal?: AbortSignal): Promise<void> {
    await this.up(signal);
  }

  private up(signal?: AbortSignal): Promise<SandboxLink> {
    if (this.stopped) return Promise.reject(new Error(`The ${this.backend.kind} environment was stopped.`));
    if (this.link) return Promise.resolve(this.link);
    this.starting ??= this.backend.up(signal).then(
      (link) => {
        this.link = link;
        return link;
      },
      (error: unknown) => {
        this.starting = undefined;
        throw error;
      },
    );
    return this.starting;
  }

  /** The channel once up; shells and processes created before the start wait for it. */
  private get channel(): ShellChannel {
    const link = this.link;
    if (!link) throw new Error(`The ${this.backend.kind} environment is not started yet.`);
    return link.channel;
  }

  shell(taskId: string): EnvShell {
    const existing = this.shells.get(taskId);
    if (existing) return existing;
    // A shell asked for before the start: its first run brings the sandbox up.
    if (!this.link) return this.deferredShell(taskId);
    const shell = this.newShell(this.link);
    this.shells.set(taskId, shell);
    return shell;
  }

  private newShell(link: SandboxLink): RemoteShell {
    return createRemoteShell(link.channel, {
      cwd: link.workdir,
      ...(link.env ? { env: link.env } : {}),
      ...(this.backend.killGraceMs !== undefined ? { killGraceMs: this.backend.killGraceMs } : {}),
    });
  }

  private deferredShell(taskId: string): EnvShell {
    const ensure = async (): Promise<RemoteShell> => {
      const link = await this.up();
      let shell = this.shells.get(taskId);
      if (!shell) {
        shell = this.newShell(link);
        this.shells.set(taskId, shell);
      }
      return shell;
    };
    const shells = this.shells;
    const workdir = (): string => this.workdir;
    return {
      get cwd() {
        return shells.get(taskId)?.cwd ?? workdir();
      },
      run: async (command, options) => (await ensure()).run(command, options),
      envPrelude: (cwd) => shells.get(taskId)?.envPrelude(cwd) ?? "",
      dispose: async () => {
        await this.shells.get(taskId)?.dispose();
        this.shells.delete(taskId);
      },
    };
  }

  async spawn(command: string, options: SpawnOptions): Promise<EnvProcess> {
    const link = await this.up();
    const env = { ...(link.env ?? {}), ...(options.env ?? {}) };
    const proc = await spawnRemote(this.channel, command, {
      ...options,
      ...(Object.keys(env).length > 0 ? { env } : {}),
    });
    // SpawnOptions name no task: the process registry ends a task's processes (proc.signal);
    // stop() ends whatever is still running.
    this.processes.add(proc);
    void proc.exited.then(() => this.processes.delete(proc));
    return proc;
  }

  async exec(command: string, options?: ExecOptions): Promise<ExecResult> {
    await this.up(options?.signal);
    return this.channel.exec(command, options);
  }

  async upload(hostPath: string, envPath: string): Promise<void> {
    await (await this.up()).upload(hostPath, envPath);
  }

  async download(envPath: string, hostPath: string): Promise<void> {
    await (await this.up()).download(envPath, hostPath);
  }

  async releaseTask(taskId: string): Promise<void> {
    const shell = this.shells.get(taskId);
    this.shells.delete(taskId);
    await shell?.dispose();
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    const link = this.link ?? (await this.starting?.catch(() => undefined));
    const shells = [...this.shells.values()];
    this.shells.clear();
    await Promise.all(shells.map((shell) => shell.dispose().catch(() => undefined)));
    const procs = [...this.processes];
    await Promise.all(procs.map((proc) => proc.signal("SIGKILL")));
    await link?.down();
  }

  private lazyFiles(): EnvFiles {
    const files = async (): Promise<EnvFiles> => (await this.up()).files;
    return {
      stat: async (path) => (await files()).stat(path),
      read: async (path, options) => (await files()).read(path, options),
      write: async (path, data, options) => (await files()).write(path, data, options),
      list: async (dir) => (await files()).list(dir),
      mkdir: async (path) => (await files()).mkdir(path),
      remove: async (path) => (await files()).remove(path),
    };
  }
}
