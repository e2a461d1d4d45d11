/**
 * The ssh backend's settings and the reading of ssh's failures, as pure functions: which
 * `terminal.ssh_*` keys (or `TERMINAL_SSH_*` variables) say where to connect, and what a failed
 * connection's stderr means for the user (reason and fix).
 */

import { posix } from "node:path";
import { EnvironmentError } from "../types.js";

export interface SshSettings {
  host: string;
  user: string;
  port: number;
  /** Private key file (`-i`, only that key is offered); undefined: ssh's defaults and agent. */
  key?: string;
  /** The known_hosts file checked (and, with `acceptNewHostKey`, appended to on first use). */
  knownHostsFile: string;
  /** Trust an unknown host key on the first connection (never a changed one). */
  acceptNewHostKey: boolean;
  /** The user's ssh config (Host aliases, ProxyJump...), or undefined to use none. */
  sshConfigFile?: string;
  /** Remote directory to start in (absolute, or `~/...` under the remote home); undefined: the home. */
  workdir?: string;
  /** Seconds the shared connection stays up with nothing using it. */
  controlPersistSeconds: number;
  connectTimeoutSeconds: number;
  fileSync: { enabled: boolean; maxBytes: number };
}

type Env = Readonly<Record<string, string | undefined>>;

function pick(terminal: Record<string, unknown>, env: Env, key: string): unknown {
  const value = terminal[key];
  if (value !== undefined && value !== null && value !== "") return value;
  // The loader fills terminal.* from TERMINAL_* only for keys it knows; read them here too so the
  // backend's own keys work whatever the loader's table holds.
  const raw = env[`TERMINAL_${key.toUpperCase()}`];
  return raw === undefined || raw.trim() === "" ? undefined : raw.trim();
}

function bool(value: unknown, key: string, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value === "boolean") return value;
  const text = String(value).trim().toLowerCase();
  if (["1", "true", "yes", "on"].includes(text)) return true;
  if (["0", "false", "no", "off"].includes(text)) return false;
  throw new EnvironmentError(
    `terminal.${key} must be true or false, got ${JSON.stringify(value)}`,
    `Set terminal.${key} to true or false in config.yaml.`,
    "config",
  );
}

function number(value: unknown, key: string, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  const n = typeof value === "number" ? value : Number(String(value).trim());
  if (!Number.isFinite(n) || n < min || n > max) {
    throw new EnvironmentError(
      `terminal.${key} must be a number from ${min} to ${max}, got ${JSON.stringify(value)}`,
      `Fix terminal.${key} in config.yaml (or TERMINAL_${key.toUpperCase()}).`,
      "config",
    );
  }
  return n;
}

function expandHome(path: string, home: string | undefined): string {
  if (home && (path === "~" || path.startsWith("~/"))) return posix.join(home, path.slice(1));
  return path;
}

export interface SettingsInput {
  /** `config.terminal` (possibly absent). */
  terminal: Record<string, unknown>;
  processEnv: Env;
  /** The local user name, the default for `ssh_user`. */
  localUser: string;
  /** Whether a host file exists (the user's ~/.ssh/config; the key). */
  exists: (path: string) => boolean;
}

/**
 * Reads the ssh settings. Throws a config `EnvironmentError` for a missing host, a value that
 * would be read by ssh as an option (leading `-`), a bad port, or a key file that is not there.
 * Paths with `~` are taken from `HOME` (ssh itself would use the passwd entry; Hermes follows HOME
 * so a test or profile home is honoured).
 */
export function resolveSshSettings(input: SettingsInput): SshSettings {
  const { terminal, processEnv: env } = input;
  const home = env.HOME;
  const host = String(pick(terminal, env, "ssh_host") ?? "").trim();
  if (!host) {
    throw new EnvironmentError(
      "terminal.backend is ssh but no host is set",
      "Set terminal.ssh_host (and ssh_user, ssh_port, ssh_key) in config.yaml, or TERMINAL_SSH_HOST.",
      "config",
    );
  }
  const user = String(pick(terminal, env, "ssh_user") ?? input.localUser).trim();
  for (const [key, value] of [
    ["ssh_host", host],
    ["ssh_user", user],
  ] as const) {
    // A leading dash would reach ssh as an option (`-oProxyCommand=...`); whitespace or '@' would
    // change what it connects to.
    if (value.startsWith("-") || /[\s@]/.test(value) || value === "") {
      throw new EnvironmentError(
        `terminal.${key} ${JSON.stringify(value)} is not a valid ${key === "ssh_host" ? "host name" : "user name"}`,
        `Set terminal.${key} to a plain ${key === "ssh_host" ? "host name or address" : "user name"} (no spaces, '@' or leading '-').`,
        "config",
      );
    }
  }
  const port = number(pick(terminal, env, "ssh_port"), "ssh_port", 22, 1, 65535);
  if (!Number.isInteger(port)) {
    throw new EnvironmentError(
      `terminal.ssh_port must be a whole number, got ${port}`,
      "Fix terminal.ssh_port in config.yaml.",
      "config",
    );
  }
  const keyRaw = pick(terminal, env, "ssh_key");
  const key = keyRaw === undefined ? undefined : expandHome(String(keyRaw).trim(), home);
  if (key !== undefined && !input.exists(key)) {
    throw new EnvironmentError(
      `terminal.ssh_key ${key} does not exist`,
      "Point terminal.ssh_key at your private key file (e.g. ~/.ssh/id_ed25519), or remove it to use ssh's default keys and agent.",
      "config",
    );
  }
  const knownRaw = pick(terminal, env, "ssh_known_hosts");
  const knownHostsFile =
    knownRaw === undefined
      ? posix.join(home ?? "/", ".ssh", "known_hosts")
      : expandHome(String(knownRaw).trim(), home);
  const userConfig = home ? posix.join(home, ".ssh", "config") : undefined;
  const cwd = String(pick(terminal, env, "cwd") ?? "").trim();
  // terminal.cwd is a host path for the local backend ("." = where hermes started); on a remote
  // machine only an absolute path (or ~/...) means something, the rest starts in the home.
  const workdir = cwd.startsWith("/") || cwd.startsWith("~/") ? cwd : undefined;
  return {
    host,
    user,
    port,
    ...(key === undefined ? {} : { key }),
    knownHostsFile,
    acceptNewHostKey: bool(pick(terminal, env, "ssh_accept_new_host_key"), "ssh_accept_new_host_key", false),
    ...(userConfig && input.exists(userConfig) ? { sshConfigFile: userConfig } : {}),
    ...(workdir === undefined ? {} : { workdir }),
    controlPersistSeconds: number(
      pick(terminal, env, "ssh_control_persist"),
      "ssh_control_persist",
      300,
      1,
      86_400,
    ),
    connectTimeoutSeconds: number(
      pick(terminal, env, "ssh_connect_timeout"),
      "ssh_connect_timeout",
      10,
      1,
      600,
    ),
    fileSync: {
      enabled: bool(pick(terminal, env, "file_sync_enabled"), "file_sync_enabled", true),
      maxBytes: Math.round(
        number(pick(terminal, env, "file_sync_max_mb"), "file_sync_max_mb", 100, 0, 1_000_000) * 1024 * 1024,
      ),
    },
  };
}

/** `user@host:port`, as the prompt and errors name the target. */
export function target(settings: Pick<SshSettings, "user" | "host" | "port">): string {
  return `${settings.user}@${settings.host}:${settings.port}`;
}

/** The known_hosts name ssh uses for this host (`[host]:port` off port 22). */
export function knownHostsName(settings: Pick<SshSettings, "host" | "port">): string {
  return settings.port === 22 ? settings.host : `[${settings.host}]:${settings.port}`;
}

/**
 * What a failed connection means. `stderr` is ssh's (LogLevel=ERROR); the result names the target,
 * quotes ssh's own words and says what to change.
 */
export function classifySshFailure(stderr: string, settings: SshSettings): EnvironmentError {
  const where = target(settings);
  const said = stderr
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line && !/^@+$/.test(line))
    .slice(0, 3)
    .join(" ")
    .slice(0, 300);
  const quoted = said ? ` (ssh: ${said})` : "";
  if (/REMOTE HOST IDENTIFICATION HAS CHANGED|Host key for .* has changed/i.test(stderr)) {
    return new EnvironmentError(
      `the host key of ${where} has changed since it was recorded in ${settings.knownHostsFile}; refusing to connect${quoted}`,
      `If the change is expected (the host was reinstalled), remove the old key with \`ssh-keygen -R '${knownHostsName(settings)}' -f ${settings.knownHostsFile}\`, check the new fingerprint, and try again.`,
      "config",
    );
  }
  if (/Host key verification failed|No .*host key is known|host key is not known/i.test(stderr)) {
    return new EnvironmentError(
      `the host key of ${where} is not in ${settings.knownHostsFile}; refusing to connect to an unknown host${quoted}`,
      `Check the host's fingerprint and add it: \`ssh-keyscan -p ${settings.port} ${settings.host} >> ${settings.knownHostsFile}\` (or connect once with \`ssh -p ${settings.port} ${settings.user}@${settings.host}\`), or set terminal.ssh_accept_new_host_key: true to trust it on first connection.`,
      "config",
    );
  }
  if (
    /Permission denied|Too many authentication failures|no mutual signature|Authentication failed/i.test(
      stderr,
    )
  ) {
    return new EnvironmentError(
      `${where} refused the login${quoted}`,
      `Check terminal.ssh_user and terminal.ssh_key: the key's public half must be in ~/.ssh/authorized_keys of ${settings.user} on ${settings.host}, and the key must not need a passphrase (or be loaded in ssh-agent).`,
      "config",
    );
  }
  if (/Could not resolve hostname|Name or service not known|nodename nor servname/i.test(stderr)) {
    return new EnvironmentError(
      `cannot resolve the host name ${settings.host}${quoted}`,
      "Check terminal.ssh_host (a typo?) and this machine's DNS.",
      "config",
    );
  }
  return new EnvironmentError(
    `cannot reach ${where} over ssh${quoted || " (no message from ssh)"}`,
    `Check that ${settings.host} is up and sshd listens on port ${settings.port} (terminal.ssh_port), and that this machine can reach it (\`ssh -p ${settings.port} ${settings.user}@${settings.host} true\`).`,
    "unreachable",
  );
}
