/**
 * The ssh backend: the terminal and file tools act on another machine over one multiplexed ssh
 * connection (./connection.ts). Persistent shells and background processes are the generic remote
 * ones over that channel; files go through bash on the far side (../exec-files.ts); what the agent
 * changed under the remote working directory is copied back on stop (./sync.ts).
 */

import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir, userInfo } from "node:os";
import { dirname, join, posix } from "node:path";
import { onProcessExit } from "../../util/exit-reaper.js";
import { createExecFiles, downloadOver, shq, uploadOver } from "../exec-files.js";
import { spawnRemote } from "../remote-process.js";
import { createRemoteShell, type RemoteShell } from "../remote-shell.js";
import {
  type BackendContext,
  type BackendModule,
  type DoctorCheck,
  type EnvFiles,
  type Environment,
  EnvironmentError,
  type EnvProcess,
  type EnvShell,
} from "../types.js";
import { SshConnection } from "./connection.js";
import { classifySshFailure, resolveSshSettings, type SshSettings, target } from "./settings.js";
import { beginSync, type SyncRecord, syncBack } from "./sync.js";

function settingsFor(ctx: BackendContext): SshSettings {
  const terminal = (ctx.config.terminal ?? {}) as Record<string, unknown>;
  let localUser = ctx.processEnv.USER ?? "";
  if (!localUser) {
    try {
      localUser = userInfo().username;
    } catch {
      localUser = "root";
    }
  }
  return resolveSshSettings({ terminal, processEnv: ctx.processEnv, localUser, exists: existsSync });
}

function seconds(value: unknown, fallback: number): number {
  const n = typeof value === "number" ? value : Number(value);
  return Number.isFinite(n) && n >= 0 ? n : fallback;
}

/** Environment of the local ssh client: the stripped child env (ssh-agent socket included). */
function clientEnv(ctx: BackendContext): Record<string, string | undefined> {
  return { ...ctx.childEnv, HOME: ctx.processEnv.HOME ?? ctx.childEnv.HOME };
}

export interface SshEnvironment extends Environment {
  /** The sync record of the last stop (undefined when nothing changed or sync is off). */
  readonly lastSync: SyncRecord | undefined;
  /** The ControlMaster's pid (tests kill it to simulate a dropped connection). */
  masterPid(): Promise<number | undefined>;
}

export function createSshEnvironment(ctx: BackendContext, options: { syncId?: string } = {}): SshEnvironment {
  let settings: SshSettings | undefined;
  let settingsError: unknown;
  try {
    settings = settingsFor(ctx);
  } catch (error) {
    settingsError = error;
  }
  const terminal = (ctx.config.terminal ?? {}) as Record<string, unknown>;
  const killGraceMs = seconds(terminal.daemon_term_grace_seconds, 2) * 1000;
  const idleLifetimeMs = seconds(terminal.lifetime_seconds, 300) * 1000;

  let connection: SshConnection | undefined;
  let controlDir: string | undefined;
  let remoteDir = "";
  let workdir = "";
  let starting: Promise<void> | undefined;
  let syncing = false;
  let lastSync: SyncRecord | undefined;
  let unhookExit: (() => void) | undefined;
  const shells = new Map<string, RemoteShell>();
  const processes = new Set<EnvProcess>();

  const need = (): { conn: SshConnection; s: SshSettings } => {
    if (!connection || !settings) {
      throw new EnvironmentError(
        "the ssh environment is used before it was started",
        "Call start() first (hermes does this at start-up).",
        "runtime",
      );
    }
    return { conn: connection, s: settings };
  };

  const channel = {
    open: (...args: Parameters<SshConnection["open"]>) => need().conn.open(...args),
    exec: (...args: Parameters<SshConnection["exec"]>) => need().conn.exec(...args),
  };
  const files: EnvFiles = createExecFiles(channel);

  async function doStart(signal?: AbortSignal): Promise<void> {
    if (settingsError || !settings) throw settingsError;
    const s = settings;
    if (spawnSync("ssh", ["-V"], { stdio: "ignore" }).error) {
      throw new EnvironmentError(
        "terminal.backend is ssh but the ssh client is not installed on this machine",
        "Install OpenSSH's client (apt install openssh-client, brew install openssh) so `ssh` is on PATH.",
        "runtime",
      );
    }
    // 0700 by mkdtemp: nobody else may reach the master's socket (it is a logged-in session).
    controlDir = await mkdtemp(join(tmpdir(), "hermes-ssh-"));
    if (s.acceptNewHostKey) await mkdir(dirname(s.knownHostsFile), { recursive: true, mode: 0o700 });
    const conn = new SshConnection({ settings: s, controlPath: join(controlDir, "cm"), env: clientEnv(ctx) });
    const probe = await conn.exec(
      `printf '%s\\n' "$HOME"; d=$(mktemp -d "\${TMPDIR:-/tmp}/hermes-ssh.XXXXXX") && chmod 700 "$d" && printf '%s\\n' "$d"`,
      { timeoutMs: (s.connectTimeoutSeconds + 20) * 1000, ...(signal ? { signal } : {}) },
    );
    if (probe.exitCode !== 0) {
      await rm(controlDir, { recursive: true, force: true });
      controlDir = undefined;
      if (probe.exitCode === 255 || probe.exitCode === null) {
        if (probe.exitCode === null && !probe.stderr.trim()) {
          throw new EnvironmentError(
            `connecting to ${target(s)} did not finish in time`,
            `Check that ${s.host}:${s.port} accepts ssh connections.`,
            "unreachable",
          );
        }
        throw classifySshFailure(probe.stderr, s);
      }
      throw new EnvironmentError(
        `logged in to ${target(s)} but could not prepare it (exit ${probe.exitCode}): ${probe.stderr.trim().slice(0, 300)}`,
        `The remote account needs bash and a writable /tmp (or $TMPDIR).`,
        "runtime",
      );
    }
    conn.markConnected();
    const [home = "", dir = ""] = probe.stdout.toString("utf8").split("\n");
    remoteDir = dir;
    conn.stateDir = dir;
    const wanted = s.workdir?.startsWith("~/") ? posix.join(home, s.workdir.slice(2)) : (s.workdir ?? home);
    const check = await conn.exec(`[ -d ${shq(wanted)} ]`);
    if (check.exitCode !== 0) {
      throw new EnvironmentError(
        `terminal.cwd ${wanted} does not exist on ${s.host}`,
        "Set terminal.cwd to an existing absolute directory on the remote host, or leave it unset to start in the remote home.",
        "config",
      );
    }
    workdir = wanted;
    connection = conn;
    unhookExit = onProcessExit(() => exitNow());
    if (s.fileSync.enabled) {
      await beginSync(conn, { workdir, stateDir: remoteDir }).catch(() => {
        // A tree that cannot be listed only loses the sync, never the session.
      });
    }
  }

  /** At process exit: kill every shell's command and jobs, then the master (synchronously). */
  function exitNow(): void {
    if (!connection) return;
    const scripts = [...shells.values()].map((shell) => shell.exitScript());
    if (scripts.length > 0) {
      spawnSync("ssh", connection.argv(`bash -c ${shq(scripts.join("\n"))}`, { noStdin: true }), {
        stdio: "ignore",
        timeout: 5000,
      });
    }
    spawnSync("ssh", connection.argv(undefined, { control: "exit" }), { stdio: "ignore", timeout: 5000 });
  }

  const env: SshEnvironment = {
    kind: "ssh",
    isolation: "isolated",
    mounts: [],
    dockerSocket: false,
    describe() {
      if (!settings) return "ssh (not configured)";
      return `a remote machine over ssh, ${target(settings)}${workdir ? `, starting in ${workdir}` : ""}: commands and files are on that host, not on this one`;
    },
    get workdir() {
      return workdir;
    },
    get lastSync() {
      return lastSync;
    },
    start(signal) {
      starting ??= doStart(signal).catch((error: unknown) => {
        starting = undefined;
        throw error;
      });
      return starting;
    },
    shell(taskId): EnvShell {
      let shell = shells.get(taskId);
      if (!shell) {
        const { conn } = need();
        shell = createRemoteShell(conn, {
          cwd: workdir,
          stateDir: posix.join(
            remoteDir,
            `shell-${shells.size}-${taskId.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 40)}`,
          ),
          killGraceMs,
          idleLifetimeMs,
        });
        shells.set(taskId, shell);
      }
      return shell;
    },
    async spawn(command, options) {
      const proc = await spawnRemote(need().conn, command, options);
      processes.add(proc);
      void proc.exited.then(() => processes.delete(proc));
      return proc;
    },
    exec(command, options) {
      return need().conn.exec(command, options);
    },
    files,
    upload(hostPath, envPath) {
      return uploadOver(need().conn, hostPath, envPath);
    },
    download(envPath, hostPath) {
      return downloadOver(need().conn, envPath, hostPath);
    },
    async releaseTask(taskId) {
      const shell = shells.get(taskId);
      shells.delete(taskId);
      await shell?.dispose();
    },
    masterPid() {
      return connection ? connection.masterPid() : Promise.resolve(undefined);
    },
    async stop() {
      if (starting) await starting.catch(() => {});
      const conn = connection;
      const s = settings;
      if (!conn || !s) return;
      if (s.fileSync.enabled && !syncing) {
        syncing = true;
        const id = options.syncId ?? `ssh-${s.host}-${new Date().toISOString().replace(/[:.]/g, "-")}`;
        lastSync = await syncBack(conn, {
          workdir,
          stateDir: remoteDir,
          maxBytes: s.fileSync.maxBytes,
          dest: join(ctx.home, "cache", "remote-syncs", id.replace(/[^A-Za-z0-9_.-]/g, "_")),
          backend: "ssh",
          target: target(s),
        }).catch(() => undefined);
      }
      await Promise.all([...shells.values()].map((shell) => shell.dispose().catch(() => {})));
      shells.clear();
      await Promise.all([...processes].map((proc) => proc.signal("SIGKILL")));
      if (remoteDir) await conn.exec(`rm -rf -- ${shq(remoteDir)}`, { timeoutMs: 10_000 }).catch(() => {});
      await conn.control("exit").catch(() => {});
      unhookExit?.();
      connection = undefined;
      starting = undefined;
      if (controlDir) await rm(controlDir, { recursive: true, force: true });
      controlDir = undefined;
    },
  };
  return env;
}

/** `hermes doctor` lines: ssh client present, settings valid, host reachable with a known key. */
export async function doctorSsh(ctx: BackendContext): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [];
  const version = spawnSync("ssh", ["-V"], { encoding: "utf8" });
  if (version.error) {
    checks.push({
      name: "ssh client",
      ok: false,
      detail: "ssh is not on PATH",
      fix: "Install OpenSSH's client (apt install openssh-client).",
    });
    return checks;
  }
  checks.push({ name: "ssh client", ok: true, detail: (version.stderr || version.stdout).trim() });
  let settings: SshSettings;
  try {
    settings = settingsFor(ctx);
  } catch (error) {
    const e = error as EnvironmentError;
    checks.push({ name: "ssh settings", ok: false, detail: e.message, fix: e.fix });
    return checks;
  }
  checks.push({ name: "ssh settings", ok: true, detail: target(settings) });
  // A throw-away connection that never writes known_hosts: doctor reports, it does not trust.
  const dir = await mkdtemp(join(tmpdir(), "hermes-ssh-doctor-"));
  try {
    const conn = new SshConnection({
      settings: { ...settings, acceptNewHostKey: false },
      controlPath: join(dir, "cm"),
      env: clientEnv(ctx),
    });
    const probe = await conn.exec(
      "command -v bash >/dev/null || { echo 'bash is not installed' >&2; exit 3; }",
      {
        timeoutMs: (settings.connectTimeoutSeconds + 10) * 1000,
      },
    );
    if (probe.exitCode === 0) {
      checks.push({
        name: "ssh host",
        ok: true,
        detail: `${target(settings)} reachable, host key known, login works`,
      });
    } else if (probe.exitCode === 3) {
      checks.push({
        name: "ssh host",
        ok: false,
        detail: `${target(settings)}: bash is not installed there`,
        fix: "Install bash on the remote host.",
      });
    } else {
      const e = classifySshFailure(probe.stderr, settings);
      const unknownKey = settings.acceptNewHostKey && /not in .*known_hosts|unknown host/.test(e.message);
      checks.push({
        name: "ssh host",
        ok: unknownKey,
        detail: unknownKey
          ? `${target(settings)}: host key not yet known; it will be trusted on first connection (ssh_accept_new_host_key)`
          : e.message,
        ...(unknownKey ? {} : { fix: e.fix }),
      });
    }
    await conn.control("exit").catch(() => {});
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return checks;
}

const backend: BackendModule = {
  create: (ctx) => createSshEnvironment(ctx),
  doctor: doctorSsh,
};

export default backend;
export const create = backend.create;
export const doctor = backend.doctor;
