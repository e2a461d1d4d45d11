/**
 * The docker/podman environment over the CLI. One container per hermes process, labelled with the
 * owner's pid, that pid's start time and HERMES_HOME, so the next start removes containers a
 * crashed run left behind (never a persistent one, never one whose owner still runs). With
 * `container_persistent` / `docker_persist_across_processes` one container per home and image
 * is kept and reused. Shells, background processes and files go through `docker exec`
 * (../remote-shell.ts, ../remote-process.ts, ../exec-files.ts).
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { onProcessExit } from "../../util/exit-reaper.js";
import { createExecFiles, downloadOver, uploadOver } from "../exec-files.js";
import { spawnRemote } from "../remote-process.js";
import { createRemoteShell, type RemoteShell } from "../remote-shell.js";
import type {
  EnvFiles,
  Environment,
  EnvMount,
  EnvProcess,
  ExecOptions,
  ExecResult,
  ShellChannel,
  SpawnOptions,
} from "../types.js";
import { EnvironmentError } from "../types.js";
import { cli, dockerChannel } from "./cli.js";
import type { DockerSettings } from "./settings.js";

export const LABEL = "hermes-agent";

/** A process's start time (clock ticks since boot), so a reused pid is not taken for the owner. */
export function processStart(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? "";
  } catch {
    return "";
  }
}

/** What `start` found wrong, as an error the user can act on. */
/** A label's value in `ps --format`: docker has a `.Label` method, podman a `.Labels` map. */
function labelTemplate(kind: "docker" | "podman", key: string): string {
  return kind === "podman" ? `{{index .Labels "${key}"}}` : `{{.Label "${key}"}}`;
}

export function cliFailure(settings: DockerSettings, stderr: string, missing: boolean): EnvironmentError {
  const name = settings.kind === "podman" ? "podman" : "docker";
  if (missing) {
    return new EnvironmentError(
      `The ${name} command (${settings.binary}) was not found.`,
      settings.kind === "podman"
        ? "Install podman (apt-get install podman), or set terminal.backend to another backend."
        : "Install Docker (apt-get install docker.io), set HERMES_DOCKER_BINARY to its path, or set terminal.backend to another backend.",
      "runtime",
    );
  }
  if (
    /Cannot connect to the Docker daemon|Is the docker daemon running|permission denied.*docker\.sock/i.test(
      stderr,
    )
  ) {
    return new EnvironmentError(
      `The Docker daemon is not reachable: ${stderr.trim().split("\n")[0]}`,
      /permission denied/i.test(stderr)
        ? "Add your user to the docker group (sudo usermod -aG docker $USER, then log in again)."
        : "Start it (sudo systemctl start docker, or dockerd as root), then try again.",
      "unreachable",
    );
  }
  if (/error setting rlimit/i.test(stderr)) {
    // Nested or unprivileged hosts cannot raise a container's limits above their own; podman asks for more by default.
    return new EnvironmentError(
      `${name} could not start the container: this host does not let it raise the container's resource limits (${stderr.trim().split("\n").pop() ?? ""})`,
      `Ask for limits the host allows in terminal.docker_extra_args, e.g. ["--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024"].`,
      "runtime",
    );
  }
  if (/container-init binary not found|catatonit/i.test(stderr)) {
    return new EnvironmentError(
      `${name} cannot run the container's init process: ${stderr.trim().split("\n").pop() ?? ""}`,
      "Install it (apt-get install catatonit), which podman uses for --init.",
      "runtime",
    );
  }
  return new EnvironmentError(
    `${name} failed: ${stderr.trim().slice(0, 500)}`,
    `Check that \`${settings.binary} info\` works.`,
    "runtime",
  );
}

export class DockerEnvironment implements Environment {
  readonly isolation = "isolated" as const;
  readonly mounts: readonly EnvMount[];
  readonly dockerSocket: boolean;
  /** Start-up warnings (a limit the storage driver cannot enforce), also printed to stderr. */
  readonly warnings: string[] = [];
  private containerId: string | undefined;
  private channel: ShellChannel | undefined;
  private starting: Promise<void> | undefined;
  private readonly shells = new Map<string, RemoteShell>();
  private readonly processes = new Set<EnvProcess>();
  private unhookExit: (() => void) | undefined;
  private filesImpl: EnvFiles | undefined;

  constructor(
    private readonly settings: DockerSettings,
    private readonly home: string,
    private readonly clientEnv: NodeJS.ProcessEnv,
  ) {
    this.mounts = settings.mounts;
    this.dockerSocket = settings.mounts.some((m) => /(^|\/)docker\.sock$/.test(m.hostPath));
  }

  get kind(): "docker" | "podman" {
    return this.settings.kind;
  }

  get workdir(): string {
    return this.settings.workdir;
  }

  /** The container's id once started. */
  get container(): string | undefined {
    return this.containerId;
  }

  describe(): string {
    const mounts = this.mounts.map((m) => `${m.hostPath} -> ${m.envPath}${m.readOnly ? " (read-only)" : ""}`);
    return `a ${this.settings.kind} container (image ${this.settings.image}${this.containerId ? `, container ${this.containerId.slice(0, 12)}` : ""}), isolated from the host${mounts.length ? `; host paths mounted: ${mounts.join(", ")}` : "; no host paths mounted"}`;
  }

  start(signal?: AbortSignal): Promise<void> {
    this.starting ??= this.bringUp(signal).catch((error: unknown) => {
      this.starting = undefined;
      throw error;
    });
    return this.starting;
  }

  private async bringUp(_signal?: AbortSignal): Promise<void> {
    const s = this.settings;
    const env = this.clientEnv;
    // podman names the storage fields differently (and its template engine rejects docker's names).
    const infoFormat =
      s.kind === "podman"
        ? "{{.Store.GraphDriverName}}|{{json .Store.GraphStatus}}"
        : "{{.Driver}}|{{json .DriverStatus}}";
    const info = await cli(s.binary, ["info", "--format", infoFormat], {
      env,
      timeoutMs: 30_000,
    });
    if (info.code !== 0) throw cliFailure(s, info.stderr, info.missing);
    await this.reapOrphans();
    const inspect = await cli(s.binary, ["image", "inspect", "--format", "{{.Id}}", s.image], { env });
    if (inspect.code !== 0) {
      const pull = await cli(s.binary, ["pull", s.image], { env, timeoutMs: 600_000 });
      if (pull.code !== 0) {
        throw new EnvironmentError(
          `The image ${s.image} is not present and could not be pulled: ${pull.stderr.trim().split("\n").pop() ?? ""}`,
          `Pull or build it (\`${s.binary} pull ${s.image}\`), or set terminal.docker_image to an image you have (\`${s.binary} images\`).`,
          "runtime",
        );
      }
    }
    if (s.persistent) {
      const found = await cli(
        s.binary,
        ["ps", "-aq", "--no-trunc", "--filter", `label=${LABEL}.persist=${s.persistKey}`],
        {
          env,
        },
      );
      const id = found.stdout.trim().split("\n")[0];
      if (id) {
        const started = await cli(s.binary, ["start", id], { env });
        if (started.code === 0) return this.attach(id);
      }
    }
    const [driver, status] = info.stdout.trim().split("|");
    const args = this.runArgs(driver ?? "", status ?? "");
    const run = await cli(s.binary, args, { env: { ...env, ...s.env }, timeoutMs: 120_000 });
    if (run.code !== 0) {
      // A container that was created but could not start stays behind (podman); remove it now.
      const name = args[args.indexOf("--name") + 1];
      if (args.includes("--name") && name && !run.missing)
        await cli(s.binary, ["rm", "-f", name], { env, timeoutMs: 30_000 });
      throw cliFailure(s, run.stderr, run.missing);
    }
    return this.attach(run.stdout.trim().split("\n").pop() ?? "");
  }

  private attach(id: string): void {
    this.containerId = id;
    this.channel = dockerChannel(this.settings.binary, id, this.clientEnv, this.settings.user);
    this.filesImpl = createExecFiles(this.channel);
    this.unhookExit?.();
    // At exit there is no time for a grace period: remove the container (or, when it persists,
    // kill what this process started in it) synchronously.
    this.unhookExit = onProcessExit(() => {
      if (this.settings.persistent) {
        for (const shell of this.shells.values()) {
          spawnSync(
            this.settings.binary,
            ["exec", id, "bash", "--noprofile", "--norc", "-c", shell.exitScript()],
            {
              env: this.clientEnv,
              stdio: "ignore",
              timeout: 10_000,
            },
          );
        }
      } else {
        spawnSync(this.settings.binary, ["rm", "-f", id], {
          env: this.clientEnv,
          stdio: "ignore",
          timeout: 30_000,
        });
      }
    });
  }

  /** `docker run` arguments; warns where a limit cannot be enforced. */
  runArgs(driver: string, driverStatus: string): string[] {
    const s = this.settings;
    const args = ["run", "-d", "--init"];
    const labels: Record<string, string> = {
      [LABEL]: "1",
      [`${LABEL}.home`]: this.home,
      [`${LABEL}.pid`]: String(process.pid),
      [`${LABEL}.start`]: processStart(process.pid),
    };
    if (s.persistent) labels[`${LABEL}.persist`] = s.persistKey;
    for (const [k, v] of Object.entries(labels)) args.push("--label", `${k}=${v}`);
    if (!s.persistent) args.push("--name", `hermes-${process.pid}-${randomBytes(4).toString("hex")}`);
    if (s.cpus !== undefined) args.push("--cpus", String(s.cpus));
    if (s.memoryMb !== undefined) args.push("--memory", `${Math.round(s.memoryMb)}m`);
    if (s.diskMb !== undefined) {
      // Only overlay2 on XFS mounted with pquota can cap a container's writable layer.
      // docker: [["Backing Filesystem","xfs"],...]; podman: {"Backing Filesystem":"xfs",...}.
      const xfs = /"Backing Filesystem"\s*[,:]\s*"xfs"/.test(driverStatus);
      if ((driver === "overlay2" || driver === "overlay") && xfs)
        args.push("--storage-opt", `size=${Math.round(s.diskMb)}m`);
      else {
        this.warn(
          `terminal.container_disk (${s.diskMb} MB) is not enforced: the ${driver || "unknown"} storage driver${xfs ? "" : " here is not on XFS"} cannot limit a container's disk (it needs overlay2 on XFS mounted with pquota).`,
        );
      }
    }
    for (const m of s.mounts) args.push("-v", `${m.hostPath}:${m.envPath}${m.readOnly ? ":ro" : ""}`);
    for (const name of Object.keys(s.env)) args.push("-e", name);
    if (s.user) args.push("--user", s.user);
    args.push("-w", s.workdir, ...s.extraArgs, s.image, "sleep", "2147483647");
    return args;
  }

  private warn(text: string): void {
    this.warnings.push(text);
    process.stderr.write(`hermes: warning: ${text}\n`);
  }

  /** Removes this home's non-persistent containers whose owner process is gone. */
  async reapOrphans(): Promise<string[]> {
    const s = this.settings;
    const list = await cli(
      s.binary,
      [
        "ps",
        "-a",
        "--filter",
        `label=${LABEL}=1`,
        "--format",
        [".home", ".pid", ".start", ".persist"]
          .map((key) => labelTemplate(s.kind, `${LABEL}${key}`))
          .reduce((format, field) => `${format}|${field}`, "{{.ID}}"),
      ],
      { env: this.clientEnv },
    );
    const dead: string[] = [];
    for (const line of list.stdout.split("\n")) {
      const [id, home, pid, start, persist] = line.split("|");
      if (!id || home !== this.home || persist) continue;
      const owner = Number(pid);
      if (owner > 0 && processStart(owner) === start && start !== "") continue;
      dead.push(id);
    }
    if (dead.length > 0)
      await cli(s.binary, ["rm", "-f", ...dead], { env: this.clientEnv, timeoutMs: 60_000 });
    return dead;
  }

  private ready(): ShellChannel {
    if (!this.channel) {
      throw new EnvironmentError(
        `The ${this.settings.kind} environment is not started.`,
        "Call start() first.",
        "runtime",
      );
    }
    return this.channel;
  }

  shell(taskId: string): RemoteShell {
    let shell = this.shells.get(taskId);
    if (!shell) {
      shell = createRemoteShell(this.ready(), {
        cwd: this.settings.workdir,
        killGraceMs: this.settings.graceMs,
        ...(this.settings.idleLifetimeMs === undefined
          ? {}
          : { idleLifetimeMs: this.settings.idleLifetimeMs }),
      });
      this.shells.set(taskId, shell);
    }
    return shell;
  }

  async spawn(command: string, options: SpawnOptions): Promise<EnvProcess> {
    await this.start();
    const proc = await spawnRemote(this.ready(), command, options);
    this.processes.add(proc);
    void proc.exited.then(() => this.processes.delete(proc));
    return proc;
  }

  async exec(command: string, options?: ExecOptions): Promise<ExecResult> {
    await this.start();
    return this.ready().exec(command, options);
  }

  /** File access starts the container first, like every other operation. */
  get files(): EnvFiles {
    const on = async <T>(fn: (files: EnvFiles) => Promise<T>): Promise<T> => {
      await this.start();
      if (!this.filesImpl) throw new Error(`The ${this.settings.kind} environment is not started.`);
      return fn(this.filesImpl);
    };
    return {
      stat: (p) => on((f) => f.stat(p)),
      read: (p, o) => on((f) => f.read(p, o)),
      write: (p, d, o) => on((f) => f.write(p, d, o)),
      list: (p) => on((f) => f.list(p)),
      mkdir: (p) => on((f) => f.mkdir(p)),
      remove: (p) => on((f) => f.remove(p)),
    };
  }

  async upload(hostPath: string, envPath: string): Promise<void> {
    await this.start();
    await uploadOver(this.ready(), hostPath, envPath);
  }

  async download(envPath: string, hostPath: string): Promise<void> {
    await this.start();
    await downloadOver(this.ready(), envPath, hostPath);
  }

  async releaseTask(taskId: string): Promise<void> {
    const shell = this.shells.get(taskId);
    this.shells.delete(taskId);
    await shell?.dispose();
  }

  async stop(): Promise<void> {
    const shells = [...this.shells.values()];
    this.shells.clear();
    const id = this.containerId;
    if (!id) return;
    if (this.settings.persistent) {
      await Promise.all(shells.map((sh) => sh.dispose()));
      await Promise.all([...this.processes].map((p) => p.signal("SIGKILL")));
    }
    this.processes.clear();
    this.unhookExit?.();
    this.unhookExit = undefined;
    this.containerId = undefined;
    this.channel = undefined;
    this.starting = undefined;
    if (!this.settings.persistent)
      await cli(this.settings.binary, ["rm", "-f", id], { env: this.clientEnv, timeoutMs: 60_000 });
  }
}
