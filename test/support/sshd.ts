/**
 * A real OpenSSH server on a loopback port for the ssh backend's tests: its own config, host key
 * and a throw-away user (created with useradd when running as root; otherwise the current user)
 * whose only authorised key is generated here. One per test file (`useSshd()` in ./sshd-per-file.ts).
 * Skipped, with the reason, only when openssh-server is not installed.
 */

import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { freePort } from "./free-port.js";

export const SSHD = ["/usr/sbin/sshd", "/usr/local/sbin/sshd"].find((path) => existsSync(path));
/** Why ssh tests skip here, or undefined when they can run. */
export const sshdSkipReason = SSHD
  ? existsSync("/usr/bin/ssh-keygen") || existsSync("/usr/local/bin/ssh-keygen")
    ? undefined
    : "ssh-keygen (openssh-client) is not installed"
  : "openssh-server is not installed (no sshd): apt-get install openssh-server";

export const TEST_USER = "hermes-ssh-test";

export interface SshdFixture {
  port: number;
  host: "127.0.0.1";
  user: string;
  /** Private key that logs in as `user`. */
  keyPath: string;
  /** A key the server does not accept. */
  wrongKeyPath: string;
  /** The known_hosts line for this server (`[127.0.0.1]:port ssh-ed25519 ...`). */
  knownHostsLine: string;
  /** The remote user's home. */
  home: string;
  dir: string;
  stop(): Promise<void>;
}

function keygen(path: string, comment: string): void {
  execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", path], {
    stdio: "ignore",
  });
}

/** Creates the throw-away user when root; returns its name and home. */
function ensureUser(): { user: string; home: string } {
  const me = userInfo();
  if (me.uid !== 0) return { user: me.username, home: me.homedir };
  try {
    execFileSync("id", ["-u", TEST_USER], { stdio: "ignore" });
  } catch {
    execFileSync("useradd", ["--create-home", "--shell", "/bin/bash", TEST_USER], { stdio: "ignore" });
  }
  // '*' is "no password" without counting as locked ('!'), which sshd refuses without PAM.
  execFileSync("usermod", ["-p", "*", TEST_USER], { stdio: "ignore" });
  const home =
    execFileSync("getent", ["passwd", TEST_USER], { encoding: "utf8" }).split(":")[5] ?? `/home/${TEST_USER}`;
  mkdirSync(home, { recursive: true });
  return { user: TEST_USER, home };
}

export async function startSshd(): Promise<SshdFixture> {
  if (!SSHD) throw new Error(sshdSkipReason);
  const dir = mkdtempSync(join(tmpdir(), "hermes-sshd-"));
  // sshd reads authorized_keys as the user: the directory must be reachable by everyone.
  chmodSync(dir, 0o755);
  const { user, home } = ensureUser();
  keygen(join(dir, "host_ed25519"), "hermes-test-host");
  keygen(join(dir, "client_ed25519"), "hermes-test-client");
  keygen(join(dir, "wrong_ed25519"), "hermes-test-wrong");
  writeFileSync(join(dir, "authorized_keys"), readFileSync(join(dir, "client_ed25519.pub")));
  chmodSync(join(dir, "authorized_keys"), 0o644);
  const root = process.getuid?.() === 0;
  if (root) mkdirSync("/run/sshd", { recursive: true, mode: 0o755 });
  const port = await freePort();
  const config = [
    `Port ${port}`,
    "ListenAddress 127.0.0.1",
    `HostKey ${join(dir, "host_ed25519")}`,
    `PidFile ${join(dir, "sshd.pid")}`,
    `AuthorizedKeysFile ${join(dir, "authorized_keys")}`,
    "PubkeyAuthentication yes",
    "PasswordAuthentication no",
    "KbdInteractiveAuthentication no",
    "UsePAM no",
    "StrictModes no",
    `AllowUsers ${user}`,
    "PermitRootLogin no",
    // Many parallel sessions in one test file (shells, execs) over one multiplexed connection.
    "MaxSessions 64",
    "MaxStartups 64",
    "Subsystem sftp internal-sftp",
    // INFO: "Server listening on ..." tells when it is ready.
    "LogLevel INFO",
  ];
  writeFileSync(join(dir, "sshd_config"), `${config.join("\n")}\n`);
  const child: ChildProcess = spawn(SSHD, ["-D", "-e", "-f", join(dir, "sshd_config")], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (chunk: string) => {
    if (stderr.length < 200_000) stderr += chunk;
  });
  await waitForListen(child, () => stderr);
  const hostPub = readFileSync(join(dir, "host_ed25519.pub"), "utf8")
    .trim()
    .split(/\s+/)
    .slice(0, 2)
    .join(" ");
  return {
    port,
    host: "127.0.0.1",
    user,
    keyPath: join(dir, "client_ed25519"),
    wrongKeyPath: join(dir, "wrong_ed25519"),
    knownHostsLine: `[127.0.0.1]:${port} ${hostPub}`,
    home,
    dir,
    async stop() {
      if (child.exitCode === null) {
        const closed = new Promise((resolve) => child.once("close", resolve));
        child.kill("SIGTERM");
        await closed;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Resolves once sshd logs that it listens; rejects if it exits first. */
function waitForListen(child: ChildProcess, stderr: () => string): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`sshd did not start listening within 15 s: ${stderr()}`)),
      15_000,
    );
    const onData = () => {
      if (!/Server listening on/.test(stderr())) return;
      clearTimeout(timer);
      child.stderr?.off("data", onData);
      resolve();
    };
    child.stderr?.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`sshd exited with ${code} before listening: ${stderr()}`));
    });
  });
}
