import { describe, expect, it } from "vitest";
import { remoteCommand, sshOptions } from "../../../src/environments/ssh/connection.js";
import {
  classifySshFailure,
  knownHostsName,
  resolveSshSettings,
  type SshSettings,
} from "../../../src/environments/ssh/settings.js";
import { EnvironmentError } from "../../../src/environments/types.js";

const base = { processEnv: { HOME: "/home/me" }, localUser: "me", exists: () => true };

function settings(terminal: Record<string, unknown>, env: Record<string, string> = {}): SshSettings {
  return resolveSshSettings({ ...base, terminal, processEnv: { HOME: "/home/me", ...env } });
}

function configError(fn: () => unknown): EnvironmentError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(EnvironmentError);
    return error as EnvironmentError;
  }
  throw new Error("expected an EnvironmentError");
}

describe("resolveSshSettings", () => {
  it("reads terminal.ssh_* with upstream's defaults", () => {
    expect(settings({ ssh_host: "box.example" })).toMatchObject({
      host: "box.example",
      user: "me",
      port: 22,
      knownHostsFile: "/home/me/.ssh/known_hosts",
      acceptNewHostKey: false,
      fileSync: { enabled: true, maxBytes: 100 * 1024 * 1024 },
    });
    expect(
      settings({ ssh_host: "h", ssh_user: "u", ssh_port: 2222, ssh_key: "~/.ssh/id", file_sync_max_mb: 1 }),
    ).toMatchObject({
      user: "u",
      port: 2222,
      key: "/home/me/.ssh/id",
      fileSync: { maxBytes: 1024 * 1024 },
    });
  });

  it("falls back to TERMINAL_SSH_* when config.yaml is silent, and config wins over them", () => {
    const env = {
      TERMINAL_SSH_HOST: "envhost",
      TERMINAL_SSH_USER: "envuser",
      TERMINAL_SSH_PORT: "2200",
      TERMINAL_SSH_ACCEPT_NEW_HOST_KEY: "true",
    };
    expect(settings({}, env)).toMatchObject({
      host: "envhost",
      user: "envuser",
      port: 2200,
      acceptNewHostKey: true,
    });
    expect(settings({ ssh_host: "cfg" }, env)).toMatchObject({ host: "cfg" });
  });

  it("takes only an absolute or ~/ terminal.cwd as the remote start directory", () => {
    expect(settings({ ssh_host: "h", cwd: "." }).workdir).toBeUndefined();
    expect(settings({ ssh_host: "h", cwd: "/srv/app" }).workdir).toBe("/srv/app");
    expect(settings({ ssh_host: "h", cwd: "~/work" }).workdir).toBe("~/work");
  });

  it("refuses a missing host with the keys to set", () => {
    const error = configError(() => settings({}));
    expect(error.reason).toBe("config");
    expect(error.fix).toContain("terminal.ssh_host");
  });

  it.each([
    ["ssh_host", "-oProxyCommand=touch /tmp/pwned"],
    ["ssh_host", "evil host"],
    ["ssh_host", "a@b"],
    ["ssh_user", "-lroot"],
    ["ssh_user", "me\nProxyCommand x"],
  ])("refuses %s %j that ssh would read as an option or another target", (key, value) => {
    const error = configError(() => settings({ ssh_host: "h", [key]: value }));
    expect(error.reason).toBe("config");
    expect(error.message).toContain(key);
  });

  it.each([0, 70000, "twenty", 22.5])("refuses port %j", (port) => {
    expect(configError(() => settings({ ssh_host: "h", ssh_port: port })).message).toContain("ssh_port");
  });

  it("refuses a key file that is not there, naming it", () => {
    const error = configError(() =>
      resolveSshSettings({
        ...base,
        terminal: { ssh_host: "h", ssh_key: "/nope/id" },
        exists: (p) => p !== "/nope/id",
      }),
    );
    expect(error.message).toContain("/nope/id");
  });

  it("refuses an accept-new value that is not a boolean", () => {
    expect(
      configError(() => settings({ ssh_host: "h", ssh_accept_new_host_key: "maybe" })).message,
    ).toContain("ssh_accept_new_host_key");
  });
});

describe("sshOptions", () => {
  const s = settings({ ssh_host: "h", ssh_port: 2222, ssh_key: "/k" });
  it("checks host keys strictly, never prompts, multiplexes and offers only the configured key", () => {
    const args = sshOptions(s, "/tmp/x/cm", "yes").join(" ");
    expect(args).toContain("StrictHostKeyChecking=yes");
    expect(args).toContain("BatchMode=yes");
    expect(args).toContain("ControlMaster=auto");
    expect(args).toContain("ControlPath=/tmp/x/cm");
    expect(args).toContain("UserKnownHostsFile=/home/me/.ssh/known_hosts");
    expect(args).toContain("-i /k -o IdentitiesOnly=yes");
    expect(args).toContain("-p 2222");
    expect(args).not.toContain("accept-new");
    expect(sshOptions(s, "/c", "accept-new").join(" ")).toContain("StrictHostKeyChecking=accept-new");
  });
});

describe("remoteCommand", () => {
  it("quotes every word and variable so the remote login shell sees them as written", () => {
    expect(remoteCommand(["bash", "-c", "echo 'a b'; $X"], { V: "x y'z" })).toBe(
      `env 'V=x y'\\''z' 'bash' '-c' 'echo '\\''a b'\\''; $X'`,
    );
  });
});

describe("classifySshFailure", () => {
  const s = settings({ ssh_host: "box", ssh_port: 2222, ssh_user: "ann" });
  it.each([
    ["Host key verification failed.", "config", "ssh_accept_new_host_key"],
    [
      "No ED25519 host key is known for [box]:2222 and you have requested strict checking.\nHost key verification failed.",
      "config",
      "ssh-keyscan -p 2222 box",
    ],
    [
      "@@@@@@@@@@@\n@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\n",
      "config",
      "ssh-keygen -R '[box]:2222'",
    ],
    ["ann@box: Permission denied (publickey).", "config", "ssh_key"],
    ["ssh: Could not resolve hostname box: Name or service not known", "config", "ssh_host"],
    ["ssh: connect to host box port 2222: Connection refused", "unreachable", "port 2222"],
    ["", "unreachable", "ssh -p 2222 ann@box true"],
  ])("%j -> %s with a fix", (stderr, reason, fix) => {
    const error = classifySshFailure(stderr, s);
    expect(error.reason).toBe(reason);
    expect(error.fix).toContain(fix);
    expect(error.message).toContain("box");
  });

  it("names [host]:port off port 22", () => {
    expect(knownHostsName(s)).toBe("[box]:2222");
    expect(knownHostsName({ host: "box", port: 22 })).toBe("box");
  });
});
