/**
 * The local backend: commands run on the user's machine as the user, through the persistent
 * `ShellSession` (one per task id), background processes and node:fs. No isolation: the command
 * analyser and the write guard judge everything as acting on the host.
 */
import { cp, mkdir } from "node:fs/promises";
import { hostname, userInfo } from "node:os";
import { dirname } from "node:path";
import type {
  EnvFiles,
  Environment,
  EnvMount,
  EnvProcess,
  EnvShell,
  ExecOptions,
  ExecResult,
  SpawnOptions,
} from "../types.js";
import { localFiles } from "./files.js";
import { execLocal, spawnLocal } from "./process.js";
import { ShellSession } from "./shell-session.js";

export interface LocalEnvironmentOptions {
  /** Where new task shells start and relative paths resolve (host path). */
  cwd: string;
  /** Environment of every command, already stripped of Hermes's secrets. */
  env: Readonly<Record<string, string | undefined>>;
  /** Between SIGTERM and SIGKILL when a command is stopped. */
  killGraceMs?: number;
  /** An idle task shell is ended after this long; its next run rebuilds it with its state. */
  idleLifetimeMs?: number;
}

export class LocalEnvironment implements Environment {
  readonly kind = "local" as const;
  readonly isolation = "host" as const;
  readonly mounts: readonly EnvMount[] = [];
  readonly dockerSocket = false;
  readonly files: EnvFiles = localFiles;
  private readonly shells = new Map<string, ShellSession>();
  private readonly processes = new Set<EnvProcess>();
  private stopped = false;

  constructor(private readonly options: LocalEnvironmentOptions) {}

  get workdir(): string {
    return this.options.cwd;
  }

  describe(): string {
    return localDescription(this.options.env);
  }

  async start(): Promise<void> {
    this.stopped = false;
  }

  shell(taskId: string): EnvShell {
    return this.shellFor(taskId);
  }

  /**
   * The task's shell; a new one starts in `start.cwd` with `start.env` (default: the environment's),
   * so an agent started elsewhere on the same runtime (a cron job's workdir) keeps its own directory.
   */
  shellFor(
    taskId: string,
    start: { cwd?: string; env?: Readonly<Record<string, string | undefined>> } = {},
  ): EnvShell {
    let shell = this.shells.get(taskId);
    if (!shell) {
      shell = new ShellSession({
        cwd: start.cwd ?? this.options.cwd,
        env: start.env ?? this.options.env,
        ...(this.options.killGraceMs === undefined ? {} : { killGraceMs: this.options.killGraceMs }),
        ...(this.options.idleLifetimeMs === undefined ? {} : { idleLifetimeMs: this.options.idleLifetimeMs }),
      });
      this.shells.set(taskId, shell);
    }
    return shell;
  }

  async spawn(command: string, options: SpawnOptions): Promise<EnvProcess> {
    if (this.stopped) throw new Error("The local environment was stopped.");
    const proc = await spawnLocal(command, options, this.options.env);
    this.processes.add(proc);
    void proc.exited.then(() => this.processes.delete(proc));
    return proc;
  }

  exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    return execLocal(command, options, this.options.env, this.options.cwd);
  }

  async upload(hostPath: string, envPath: string): Promise<void> {
    await copy(hostPath, envPath);
  }

  async download(envPath: string, hostPath: string): Promise<void> {
    await copy(envPath, hostPath);
  }

  async releaseTask(taskId: string): Promise<void> {
    const shell = this.shells.get(taskId);
    this.shells.delete(taskId);
    await shell?.dispose();
  }

  /** Ends every shell and every background process this environment started (SIGKILL to each group). */
  async stop(): Promise<void> {
    this.stopped = true;
    const shells = [...this.shells.values()];
    this.shells.clear();
    await Promise.all(shells.map((s) => s.dispose()));
    const procs = [...this.processes];
    this.processes.clear();
    await Promise.all(
      procs.map(async (p) => {
        await p.signal("SIGTERM");
        const gone = await Promise.race([
          p.exited.then(() => true),
          new Promise<false>((r) => setTimeout(() => r(false), this.options.killGraceMs ?? 2000).unref()),
        ]);
        // The leader may be gone while children it left in the group live on.
        await p.signal("SIGKILL");
        return gone;
      }),
    );
  }
}

/** The process's user name: it cannot change while the process runs, and asking reads /etc/passwd. */
let processUser: string | undefined;

/** "the local machine (user U, host H), no isolation". */
export function localDescription(env: Readonly<Record<string, string | undefined>> = process.env): string {
  let user = "";
  try {
    processUser ??= userInfo().username;
    user = processUser;
  } catch {
    user = env.USER ?? "";
  }
  return `the local machine (${user ? `user ${user}, ` : ""}host ${hostname()}), no isolation`;
}

async function copy(from: string, to: string): Promise<void> {
  if (from === to) return;
  await mkdir(dirname(to), { recursive: true });
  await cp(from, to, { recursive: true, force: true, preserveTimestamps: true });
}
