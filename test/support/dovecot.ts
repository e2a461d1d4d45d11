/**
 * A real Dovecot IMAP server (Debian's dovecot-imapd) on a loopback port for the email platform's
 * tests: its own generated config, a passwd-file with the test users and their Maildirs in a temp
 * directory. Nothing outside that directory is read or written (no /etc/dovecot, no system
 * mailboxes). As root, mail is owned by `nobody` (Dovecot refuses mail access as uid 0); otherwise
 * everything runs as the current user. Plain-text logins without TLS are allowed because the
 * listener is loopback only.
 *
 * `deliver()` puts a message into a mailbox with IMAP APPEND as the test user itself, which is what
 * a mail server's local delivery amounts to for the IMAP client watching the box (a new message,
 * `EXISTS` pushed to IDLE clients).
 */
import { type ChildProcess, spawn } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { ImapFlow } from "imapflow";
import { freePort } from "./free-port.js";

export const DOVECOT = ["/usr/sbin/dovecot", "/usr/local/sbin/dovecot"].find((path) => existsSync(path));
/** Why the email tests skip here, or undefined when they can run. */
export const dovecotSkipReason = DOVECOT
  ? existsSync("/usr/lib/dovecot/imap")
    ? undefined
    : "dovecot-imapd is not installed (no /usr/lib/dovecot/imap): apt-get install dovecot-imapd"
  : "dovecot is not installed: apt-get install dovecot-imapd";

export interface MailUser {
  user: string;
  password: string;
}

export interface DovecotFixture {
  host: "127.0.0.1";
  port: number;
  dir: string;
  /** Appends a raw RFC 5322 message to `user`'s mailbox (INBOX by default). */
  deliver(account: MailUser, raw: string | Buffer, mailbox?: string): Promise<void>;
  /** Flags of every message in `user`'s INBOX, by UID. */
  flags(account: MailUser): Promise<Map<number, string[]>>;
  /** Kills the server and every connection at once; `start()` brings it back on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the server for good and removes its directory. */
  dispose(): Promise<void>;
  /** The server's log so far (for failure messages). */
  log(): string;
}

function config(dir: string, port: number, ids: { user: string; group: string; uid: number; gid: number }) {
  return `# Generated for one test file; nothing here touches the system's Dovecot.
base_dir = ${dir}/run
state_dir = ${dir}/state
instance_name = hermes-test-${port}
log_path = ${dir}/dovecot.log
info_log_path = ${dir}/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
default_internal_user = ${ids.user}
default_internal_group = ${ids.group}
default_login_user = ${ids.user}
first_valid_uid = ${ids.uid}
last_valid_uid = ${ids.uid}
first_valid_gid = ${ids.gid}
last_valid_gid = ${ids.gid}
mail_location = maildir:~/Maildir
mail_privileged_group =
imap_idle_notify_interval = 2 mins
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u ${dir}/users
}
userdb {
  driver = static
  args = uid=${ids.uid} gid=${ids.gid} home=${dir}/home/%u
}
service imap-login {
  chroot =
  inet_listener imap {
    address = 127.0.0.1
    port = ${port}
  }
  inet_listener imaps {
    port = 0
  }
}
service anvil {
  chroot =
}
service stats {
  unix_listener stats-reader {
    mode = 0666
  }
  unix_listener stats-writer {
    mode = 0666
  }
}
`;
}

/** Starts Dovecot with `users` (each gets an empty Maildir). Rejects with its log when it fails. */
export async function startDovecot(users: readonly MailUser[]): Promise<DovecotFixture> {
  if (!DOVECOT) throw new Error(dovecotSkipReason);
  const dir = mkdtempSync(join(tmpdir(), "hermes-dovecot-"));
  chmodSync(dir, 0o755);
  const me = userInfo();
  const root = me.uid === 0;
  // Dovecot will not give mail access to uid 0, so as root the mailboxes belong to nobody.
  const ids = root
    ? { user: "nobody", group: "nogroup", uid: 65534, gid: 65534 }
    : { user: me.username, group: me.username, uid: me.uid, gid: me.gid };
  if (!root) {
    const { execFileSync } = await import("node:child_process");
    ids.group = execFileSync("id", ["-gn"], { encoding: "utf8" }).trim();
  }
  for (const sub of ["run", "state", "home"]) mkdirSync(join(dir, sub));
  for (const account of users) {
    const home = join(dir, "home", account.user);
    for (const sub of ["", "Maildir", "Maildir/cur", "Maildir/new", "Maildir/tmp"]) {
      mkdirSync(join(home, sub), { recursive: true });
      if (root) chownSync(join(home, sub), ids.uid, ids.gid);
    }
    if (root) chownSync(home, ids.uid, ids.gid);
  }
  writeFileSync(
    join(dir, "users"),
    `${users.map((u) => `${u.user}:{PLAIN}${u.password}::::::`).join("\n")}\n`,
  );
  const port = await freePort();
  const confPath = join(dir, "dovecot.conf");
  writeFileSync(confPath, config(dir, port, ids));
  const logPath = join(dir, "dovecot.log");
  const log = () => (existsSync(logPath) ? readFileSync(logPath, "utf8") : "");

  let child: ChildProcess | undefined;
  const start = async () => {
    let stderr = "";
    // Its own process group, so stop() can end the master and every imap process at once.
    const proc = spawn(DOVECOT, ["-F", "-c", confPath], {
      stdio: ["ignore", "ignore", "pipe"],
      detached: true,
    });
    proc.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
    child = proc;
    const exited = new Promise<never>((_, reject) =>
      proc.once("exit", (code) => reject(new Error(`dovecot exited ${code}: ${stderr}\n${log()}`))),
    );
    // Ready when the listener accepts and greets; polled against the port (not a fixed sleep).
    await Promise.race([exited, waitForGreeting(port)]);
    proc.removeAllListeners("exit");
  };
  const stop = async () => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
    // SIGKILL to the whole group: every client connection drops at once, as when a server dies or
    // the network goes (a SIGTERM'd master may leave IDLE sessions open for a while).
    try {
      process.kill(-(proc.pid ?? 0), "SIGKILL");
    } catch {
      proc.kill("SIGKILL");
    }
    await gone;
  };
  await start();

  const client = async (account: MailUser) => {
    const imap = new ImapFlow({
      host: "127.0.0.1",
      port,
      secure: false,
      doSTARTTLS: false,
      auth: { user: account.user, pass: account.password },
      logger: false,
    });
    await imap.connect();
    return imap;
  };

  return {
    host: "127.0.0.1",
    port,
    dir,
    log,
    start,
    stop,
    async deliver(account, raw, mailbox = "INBOX") {
      const imap = await client(account);
      try {
        await imap.append(mailbox, raw);
      } finally {
        await imap.logout().catch(() => undefined);
      }
    },
    async flags(account) {
      const imap = await client(account);
      const out = new Map<number, string[]>();
      try {
        await imap.mailboxOpen("INBOX", { readOnly: true });
        for await (const msg of imap.fetch("1:*", { uid: true, flags: true }, { uid: false })) {
          out.set(msg.uid, [...(msg.flags ?? [])]);
        }
      } catch {
        // An empty mailbox has no 1:* range.
      } finally {
        await imap.logout().catch(() => undefined);
      }
      return out;
    },
    async dispose() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitForGreeting(port: number): Promise<void> {
  const { connect } = await import("node:net");
  const deadline = Date.now() + 15_000;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1");
      socket.once("data", (d) => {
        socket.destroy();
        resolve(d.toString().startsWith("* OK"));
      });
      socket.once("error", () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`dovecot did not greet on 127.0.0.1:${port} within 15 s`);
    await new Promise((r) => setTimeout(r, 25)); // poll the port until the greeting arrives
  }
}
