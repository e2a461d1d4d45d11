/**
 * The gateway as a service: a systemd unit (user, or system with `--system`) on Linux and a
 * launchd agent on macOS, with upstream's names (`hermes-gateway[-<profile>].service`,
 * `ai.hermes.gateway[-<profile>].plist`). The unit runs `hermes gateway run` for the home; stopping
 * it sends SIGTERM, on which the gateway lets running turns finish (TimeoutStopSec bounds that).
 * Rendering is pure; install/uninstall write the file and, where the service manager runs, enable
 * or disable it (without one, as in a container, they say the command to run).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { homedir, userInfo } from "node:os";
import { dirname, join } from "node:path";

export type ServiceKind = "systemd" | "launchd";

export interface ServiceSpec {
  /** HERMES_HOME the gateway serves. */
  home: string;
  /** `-p` profile, when not the default home. */
  profile?: string | undefined;
  /** Node and the CLI entry (`process.execPath`, `process.argv[1]`). */
  node: string;
  bin: string;
  /** PATH for the service (tools the agent runs must be found). */
  path: string;
  /** A system unit (`--system`): runs as `user` at boot. */
  system?: boolean;
  user?: string;
  /** Seconds systemd waits for running turns on stop/restart. */
  stopTimeoutS?: number;
}

/** `hermes-gateway` or `hermes-gateway-<profile>`. */
export function serviceName(profile: string | undefined): string {
  return profile && profile !== "default" ? `hermes-gateway-${profile}` : "hermes-gateway";
}

/** `ai.hermes.gateway` or `ai.hermes.gateway-<profile>`. */
export function launchdLabel(profile: string | undefined): string {
  return profile && profile !== "default" ? `ai.hermes.gateway-${profile}` : "ai.hermes.gateway";
}

function argv(spec: ServiceSpec): string[] {
  return [
    spec.node,
    spec.bin,
    ...(spec.profile && spec.profile !== "default" ? ["-p", spec.profile] : []),
    "gateway",
    "run",
  ];
}

/** systemd quoting for ExecStart/Environment: double quotes, with `\`, `"`, `%` and `$` escaped. */
function systemdQuote(word: string): string {
  return `"${word.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/%/g, "%%").replace(/\$/g, "$$$$")}"`;
}

/** The unit file's text. */
export function systemdUnit(spec: ServiceSpec): string {
  const lines = [
    "[Unit]",
    `Description=Hermes Agent Gateway${spec.profile && spec.profile !== "default" ? ` (${spec.profile})` : ""} - Messaging Platform Integration`,
    "After=network-online.target",
    "Wants=network-online.target",
    "StartLimitIntervalSec=600",
    "StartLimitBurst=5",
    "",
    "[Service]",
    "Type=simple",
    ...(spec.system && spec.user ? [`User=${spec.user}`] : []),
    `ExecStart=${argv(spec).map(systemdQuote).join(" ")}`,
    `WorkingDirectory=${spec.home}`,
    `Environment=${systemdQuote(`HERMES_HOME=${spec.home}`)}`,
    `Environment=${systemdQuote(`PATH=${spec.path}`)}`,
    "Restart=on-failure",
    "RestartSec=30",
    // SIGTERM to the gateway only: it finishes running turns, then stops what it started.
    "KillMode=mixed",
    "KillSignal=SIGTERM",
    `TimeoutStopSec=${spec.stopTimeoutS ?? 90}`,
    "StandardOutput=journal",
    "StandardError=journal",
    "",
    "[Install]",
    `WantedBy=${spec.system ? "multi-user.target" : "default.target"}`,
    "",
  ];
  return lines.join("\n");
}

function xml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** The launchd property list's text. */
export function launchdPlist(spec: ServiceSpec): string {
  const logs = join(spec.home, "logs");
  const strings = (items: string[]) => items.map((s) => `    <string>${xml(s)}</string>`).join("\n");
  return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>Label</key>
  <string>${xml(launchdLabel(spec.profile))}</string>
  <key>ProgramArguments</key>
  <array>
${strings(argv(spec))}
  </array>
  <key>EnvironmentVariables</key>
  <dict>
    <key>HERMES_HOME</key>
    <string>${xml(spec.home)}</string>
    <key>PATH</key>
    <string>${xml(spec.path)}</string>
  </dict>
  <key>WorkingDirectory</key>
  <string>${xml(spec.home)}</string>
  <key>RunAtLoad</key>
  <true/>
  <key>KeepAlive</key>
  <dict>
    <key>SuccessfulExit</key>
    <false/>
  </dict>
  <key>ExitTimeOut</key>
  <integer>${spec.stopTimeoutS ?? 90}</integer>
  <key>StandardOutPath</key>
  <string>${xml(join(logs, "gateway-output.log"))}</string>
  <key>StandardErrorPath</key>
  <string>${xml(join(logs, "gateway-output.log"))}</string>
</dict>
</plist>
`;
}

/** Where the service file goes. */
export function serviceFilePath(
  kind: ServiceKind,
  options: {
    profile?: string | undefined;
    system?: boolean;
    env: Readonly<Record<string, string | undefined>>;
  },
): string {
  const userHome = options.env["HOME"] || homedir();
  if (kind === "launchd") {
    const dir = options.system ? "/Library/LaunchDaemons" : join(userHome, "Library", "LaunchAgents");
    return join(dir, `${launchdLabel(options.profile)}.plist`);
  }
  if (options.system) return join("/etc/systemd/system", `${serviceName(options.profile)}.service`);
  const config = options.env["XDG_CONFIG_HOME"] || join(userHome, ".config");
  return join(config, "systemd", "user", `${serviceName(options.profile)}.service`);
}

/** The service manager of this machine: launchd on macOS, systemd elsewhere. */
export function serviceKind(platform: NodeJS.Platform = process.platform): ServiceKind {
  return platform === "darwin" ? "launchd" : "systemd";
}

/** Whether systemd runs as the init system here (not in most containers). */
export function systemdRunning(): boolean {
  return existsSync("/run/systemd/system");
}

export interface ServiceResult {
  path: string;
  /** What was done with the service manager, or the commands the user should run. */
  notes: string[];
}

function manage(kind: ServiceKind, system: boolean, args: string[]): void {
  if (kind === "systemd")
    execFileSync("systemctl", [...(system ? [] : ["--user"]), ...args], { stdio: "pipe" });
  else execFileSync("launchctl", args, { stdio: "pipe" });
}

/** Writes the service file and enables it where the manager runs. */
export function installService(
  kind: ServiceKind,
  spec: ServiceSpec,
  env: Record<string, string | undefined>,
): ServiceResult {
  const system = spec.system === true;
  if (system && typeof process.getuid === "function" && process.getuid() !== 0) {
    throw new Error(
      "--system installs a unit for the whole machine: run it as root (sudo hermes gateway install --system).",
    );
  }
  const path = serviceFilePath(kind, { profile: spec.profile, system, env });
  mkdirSync(dirname(path), { recursive: true });
  mkdirSync(join(spec.home, "logs"), { recursive: true, mode: 0o700 });
  writeFileSync(
    path,
    kind === "systemd"
      ? systemdUnit({ ...spec, user: spec.user ?? userInfo().username })
      : launchdPlist(spec),
    { mode: 0o644 },
  );
  const notes: string[] = [];
  const scope = system ? "" : " --user";
  const name = kind === "systemd" ? `${serviceName(spec.profile)}.service` : launchdLabel(spec.profile);
  if (kind === "systemd" && !systemdRunning()) {
    notes.push(
      `systemd is not running here; once it is: systemctl${scope} daemon-reload && systemctl${scope} enable --now ${name}`,
    );
    if (!system)
      notes.push(`To keep it running after you log out: loginctl enable-linger ${userInfo().username}`);
    return { path, notes };
  }
  try {
    if (kind === "systemd") {
      manage(kind, system, ["daemon-reload"]);
      manage(kind, system, ["enable", "--now", name]);
      notes.push(`Enabled and started ${name} (systemctl${scope} status ${name}).`);
    } else {
      manage(kind, system, ["load", "-w", path]);
      notes.push(`Loaded ${name} (launchctl list ${name}).`);
    }
  } catch (error) {
    notes.push(
      `The file is written, but the service manager refused: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`,
    );
  }
  return { path, notes };
}

/** Stops and disables the service where the manager runs, then removes the file. */
export function uninstallService(
  kind: ServiceKind,
  options: { profile?: string | undefined; system?: boolean; env: Record<string, string | undefined> },
): ServiceResult | undefined {
  const system = options.system === true;
  const path = serviceFilePath(kind, { profile: options.profile, system, env: options.env });
  if (!existsSync(path)) return undefined;
  const notes: string[] = [];
  const name = kind === "systemd" ? `${serviceName(options.profile)}.service` : launchdLabel(options.profile);
  if (kind === "launchd" || systemdRunning()) {
    try {
      if (kind === "systemd") manage(kind, system, ["disable", "--now", name]);
      else manage(kind, system, ["unload", "-w", path]);
      notes.push(`Stopped and disabled ${name}.`);
    } catch (error) {
      notes.push(
        `Could not stop ${name}: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`,
      );
    }
  }
  rmSync(path, { force: true });
  if (kind === "systemd" && systemdRunning()) {
    try {
      manage(kind, system, ["daemon-reload"]);
    } catch {
      // The unit is gone; a stale reload only delays systemd noticing.
    }
  }
  return { path, notes };
}

/** Whether the service manager runs this service now (false when it cannot be asked). */
export function serviceActive(kind: ServiceKind, profile: string | undefined, system: boolean): boolean {
  try {
    if (kind === "systemd") {
      if (!systemdRunning()) return false;
      manage(kind, system, ["is-active", "--quiet", `${serviceName(profile)}.service`]);
      return true;
    }
    manage(kind, system, ["list", launchdLabel(profile)]);
    return true;
  } catch {
    return false;
  }
}

/** Restarts through the service manager. */
export function restartService(kind: ServiceKind, profile: string | undefined, system: boolean): void {
  if (kind === "systemd") manage(kind, system, ["restart", `${serviceName(profile)}.service`]);
  else manage(kind, system, ["kickstart", "-k", `gui/${process.getuid?.() ?? 0}/${launchdLabel(profile)}`]);
}
