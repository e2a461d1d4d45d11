/**
 * The ssh backend against a real sshd on a loopback port (test/support/sshd.ts), logging in as a
 * throw-away user: commands, persistent shells, files, background processes, host-key checking,
 * reconnection after the shared connection dies, and the sync back on stop.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { shq } from "../../../src/environments/exec-files.js";
import { createSshEnvironment, doctorSsh, type SshEnvironment } from "../../../src/environments/ssh/index.js";
import { type BackendContext, EnvironmentError } from "../../../src/environments/types.js";
import { type SshdFixture, sshdSkipReason } from "../../support/sshd.js";
import { useSshd } from "../../support/sshd-per-file.js";

const sshd = useSshd();
let root: string;
const started: SshEnvironment[] = [];

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "hermes-ssh-env-"));
});
afterEach(async () => {
  await Promise.all(started.splice(0).map((env) => env.stop().catch(() => {})));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

let counter = 0;

/** A fake HOME (with known_hosts holding the server's key unless told otherwise) and a HERMES_HOME. */
function context(
  f: SshdFixture,
  terminal: Record<string, unknown> = {},
  knownHosts: string | null = f.knownHostsLine,
): BackendContext & { fakeHome: string } {
  counter += 1;
  const fakeHome = join(root, `home-${counter}`);
  mkdirSync(join(fakeHome, ".ssh"), { recursive: true, mode: 0o700 });
  if (knownHosts !== null) writeFileSync(join(fakeHome, ".ssh", "known_hosts"), `${knownHosts}\n`);
  const hermesHome = join(fakeHome, ".hermes");
  mkdirSync(hermesHome, { recursive: true });
  const env = { HOME: fakeHome, PATH: process.env.PATH ?? "/usr/bin:/bin", USER: "nobody-local" };
  return {
    fakeHome,
    home: hermesHome,
    cwd: root,
    processEnv: env,
    childEnv: env,
    config: {
      terminal: {
        backend: "ssh",
        ssh_host: f.host,
        ssh_port: f.port,
        ssh_user: f.user,
        ssh_key: f.keyPath,
        file_sync_enabled: false,
        ...terminal,
      },
    },
  };
}

async function open(ctx: BackendContext, syncId?: string): Promise<SshEnvironment> {
  const env = createSshEnvironment(ctx, syncId ? { syncId } : {});
  started.push(env);
  await env.start();
  return env;
}

/** A fresh directory on the "remote" side owned by the test user. */
function remoteDir(f: SshdFixture, name: string): string {
  const dir = join(f.home, `${name}-${process.pid}-${counter}`);
  mkdirSync(dir, { recursive: true });
  if (process.getuid?.() === 0) execFileSync("chown", ["-R", `${f.user}:`, dir]);
  return dir;
}

async function startError(ctx: BackendContext): Promise<EnvironmentError> {
  const env = createSshEnvironment(ctx);
  started.push(env);
  const error = await env.start().catch((e: unknown) => e);
  expect(error).toBeInstanceOf(EnvironmentError);
  return error as EnvironmentError;
}

describe.skipIf(sshdSkipReason)("ssh environment", () => {
  it("runs commands on the remote account and says where it runs", async () => {
    const f = sshd.get();
    const env = await open(context(f));
    const result = await env.exec("whoami; pwd");
    expect(result.stdout.toString()).toBe(`${f.user}\n${f.home}\n`);
    expect(env.workdir).toBe(f.home);
    expect(env.describe()).toContain(`${f.user}@127.0.0.1:${f.port}`);
    expect(env.isolation).toBe("isolated");
    expect(env.mounts).toEqual([]);
    expect(await env.masterPid()).toBeGreaterThan(0);
  });

  it("keeps a persistent shell per task: cwd and variables carry over, tasks do not share them", async () => {
    const f = sshd.get();
    const env = await open(context(f));
    const work = remoteDir(f, "shell");
    const a = env.shell("task-a");
    await a.run(`cd ${work} && export GREETING='hi there'`, { timeoutMs: 20_000 });
    const again = await a.run('echo "$GREETING from $(pwd) as $(whoami)"', { timeoutMs: 20_000 });
    expect(again.output.trim()).toBe(`hi there from ${work} as ${f.user}`);
    expect(again.cwd).toBe(work);
    const b = await env.shell("task-b").run('echo "[$GREETING]" "$(pwd)"', { timeoutMs: 20_000 });
    expect(b.output.trim()).toBe(`[] ${f.home}`);
  });

  it("stops a command at its timeout, whole process group included", async () => {
    const f = sshd.get();
    const env = await open(context(f, { daemon_term_grace_seconds: 0.5 }));
    const result = await env.shell("t").run("sleep 30 & sleep 31; echo never", { timeoutMs: 1500 });
    expect(result.timedOut).toBe(true);
    expect(result.output).not.toContain("never");
    const left = await env.exec("pgrep -u \"$(id -u)\" -f 'sleep 3[01]' || true");
    expect(left.stdout.toString().trim()).toBe("");
  });

  it("an exec stopped at its timeout ends on the remote host too", async () => {
    const f = sshd.get();
    const env = await open(context(f));
    const result = await env.exec("sleep 33.3; echo never", { timeoutMs: 800 });
    expect(result.exitCode).toBeNull();
    expect(result.stdout.toString()).toBe("");
    // The kill travels over a second ssh session: wait for its effect, not for a fixed time.
    const deadline = Date.now() + 10_000;
    let left = "x";
    while (left && Date.now() < deadline) {
      left = (await env.exec("pgrep -f 'sleep 33[.]3' || true")).stdout.toString().trim();
    }
    expect(left).toBe("");
  });

  it("reads, writes, lists and syncs files on the remote side, awkward names included", async () => {
    const f = sshd.get();
    const env = await open(context(f));
    const work = remoteDir(f, "files");
    const name = join(work, "dir with space", "it's\nodd.txt");
    await env.files.write(name, "remote content\n");
    expect(readFileSync(name, "utf8")).toBe("remote content\n");
    expect((await env.files.read(name)).toString()).toBe("remote content\n");
    expect(await env.files.stat(name)).toMatchObject({ type: "file", size: 15 });
    expect((await env.files.list(join(work, "dir with space"))).map((e) => e.name)).toEqual([
      "it's\nodd.txt",
    ]);
    const owner = await env.exec(`stat -c %U ${shq(name)}`);
    expect(owner.stdout.toString().trim()).toBe(f.user);
    await expect(env.files.read(join(work, "missing"))).rejects.toMatchObject({ code: "ENOENT" });

    const hostDir = join(root, `upload-${counter}`);
    mkdirSync(join(hostDir, "sub"), { recursive: true });
    writeFileSync(join(hostDir, "sub", "a.bin"), Buffer.from([0, 1, 2, 255]));
    await env.upload(hostDir, join(work, "uploaded"));
    expect(readFileSync(join(work, "uploaded", "sub", "a.bin"))).toEqual(Buffer.from([0, 1, 2, 255]));
    await env.download(join(work, "uploaded"), join(root, `downloaded-${counter}`));
    expect(readFileSync(join(root, `downloaded-${counter}`, "sub", "a.bin"))).toEqual(
      Buffer.from([0, 1, 2, 255]),
    );
  });

  it("starts background processes on the remote host, with a pty when asked", async () => {
    const f = sshd.get();
    const env = await open(context(f));
    const proc = await env.spawn("echo started; tty; stty size; whoami", {
      cwd: f.home,
      pty: { cols: 91, rows: 27 },
    });
    let output = "";
    proc.output.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    expect((await proc.exited).code).toBe(0);
    expect(output).toContain("started");
    expect(output).toMatch(/\/dev\/pts\/\d+/);
    expect(output).toContain("27 91");
    expect(output).toContain(f.user);

    const sleeper = await env.spawn("sleep 60", { cwd: f.home });
    sleeper.output.resume();
    await sleeper.signal("SIGTERM");
    expect((await sleeper.exited).code).not.toBe(0);
  });

  it("reconnects after the shared connection is killed; the shell comes back with its state", async () => {
    const f = sshd.get();
    const env = await open(context(f));
    const work = remoteDir(f, "reconnect");
    const shell = env.shell("main");
    await shell.run(`cd ${work}; export KEPT=yes`, { timeoutMs: 20_000 });
    const first = await env.masterPid();
    expect(first).toBeGreaterThan(0);
    process.kill(first ?? 0, "SIGKILL");
    // The shell's own ssh client died with the master: the run reports it and a rebuilt one follows.
    let after = await shell.run('echo "$KEPT $(pwd)"', { timeoutMs: 20_000 });
    if (after.shellExited) after = await shell.run('echo "$KEPT $(pwd)"', { timeoutMs: 20_000 });
    expect(after.output.trim()).toBe(`yes ${work}`);
    expect((await env.exec("whoami")).stdout.toString().trim()).toBe(f.user);
    const second = await env.masterPid();
    expect(second).toBeGreaterThan(0);
    expect(second).not.toBe(first);
  });

  it("refuses an unknown host key, naming the fix, and leaves known_hosts alone", async () => {
    const f = sshd.get();
    const ctx = context(f, {}, null);
    const error = await startError(ctx);
    expect(error.reason).toBe("config");
    expect(error.message).toContain("not in");
    expect(error.fix).toContain("ssh_accept_new_host_key");
    expect(error.fix).toContain(`ssh-keyscan -p ${f.port} 127.0.0.1`);
    expect(existsSync(join(ctx.fakeHome, ".ssh", "known_hosts"))).toBe(false);
  });

  it("with ssh_accept_new_host_key trusts the key on first use and records it", async () => {
    const f = sshd.get();
    const ctx = context(f, { ssh_accept_new_host_key: true }, null);
    const env = await open(ctx);
    expect((await env.exec("whoami")).stdout.toString().trim()).toBe(f.user);
    const known = readFileSync(join(ctx.fakeHome, ".ssh", "known_hosts"), "utf8");
    expect(known).toContain(`[127.0.0.1]:${f.port}`);
  });

  it("accept-new applies to the first connection only: a reconnect never trusts a key it does not know", async () => {
    const f = sshd.get();
    const ctx = context(f, { ssh_accept_new_host_key: true }, null);
    const env = await open(ctx);
    // Forget the key the first connection recorded, then drop the connection.
    writeFileSync(join(ctx.fakeHome, ".ssh", "known_hosts"), "");
    process.kill((await env.masterPid()) ?? 0, "SIGKILL");
    const result = await env.exec("whoami");
    expect(result.exitCode).toBe(255);
    expect(result.stderr).toMatch(/Host key verification failed|host key is known/i);
    expect(readFileSync(join(ctx.fakeHome, ".ssh", "known_hosts"), "utf8")).toBe("");
  });

  it("refuses a changed host key even with ssh_accept_new_host_key", async () => {
    const f = sshd.get();
    const otherKey = readFileSync(`${f.wrongKeyPath}.pub`, "utf8").trim().split(/\s+/).slice(0, 2).join(" ");
    const error = await startError(
      context(f, { ssh_accept_new_host_key: true }, `[127.0.0.1]:${f.port} ${otherKey}`),
    );
    expect(error.reason).toBe("config");
    expect(error.message).toContain("has changed");
    expect(error.fix).toContain("ssh-keygen -R");
  });

  it("a key the server does not accept is a config error about the login", async () => {
    const f = sshd.get();
    const error = await startError(context(f, { ssh_key: f.wrongKeyPath }));
    expect(error.reason).toBe("config");
    expect(error.message).toContain("refused the login");
    expect(error.fix).toContain("authorized_keys");
  });

  it("an unreachable port is 'unreachable' with the host and port in the fix", async () => {
    const f = sshd.get();
    const { createServer } = await import("node:net");
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, "127.0.0.1", () => {
        const address = server.address();
        server.close(() => resolve(typeof address === "object" && address ? address.port : 1));
      });
    });
    const error = await startError(context(f, { ssh_port: port }, null));
    expect(error.reason).toBe("unreachable");
    expect(error.fix).toContain(`port ${port}`);
  });

  it("on stop copies what changed under the working directory to cache/remote-syncs and lists deletions", async () => {
    const f = sshd.get();
    const work = remoteDir(f, "sync");
    writeFileSync(join(work, "keep.txt"), "unchanged");
    writeFileSync(join(work, "doomed.txt"), "bye");
    if (process.getuid?.() === 0) execFileSync("chown", ["-R", `${f.user}:`, work]);
    const ctx = context(f, { file_sync_enabled: true, file_sync_max_mb: 0.001, cwd: work });
    const env = await open(ctx, "session-42");
    expect(env.workdir).toBe(work);
    await env.files.write(join(work, "out", "result.txt"), "made remotely");
    await env.exec(`rm doomed.txt && head -c 5000 /dev/zero > big.bin`, { cwd: work });
    await env.stop();
    const dest = join(ctx.home, "cache", "remote-syncs", "session-42");
    expect(readFileSync(join(dest, "out", "result.txt"), "utf8")).toBe("made remotely");
    expect(existsSync(join(dest, "keep.txt"))).toBe(false);
    expect(existsSync(join(dest, "big.bin"))).toBe(false);
    const record = JSON.parse(readFileSync(join(dest, ".hermes-sync.json"), "utf8"));
    expect(record).toMatchObject({
      backend: "ssh",
      changed: ["out/result.txt"],
      deleted: ["doomed.txt"],
      skipped: ["big.bin"],
      deletionsComplete: true,
    });
    expect(env.lastSync?.changed).toEqual(["out/result.txt"]);
  });

  it("stop ends the connection and removes its private socket directory", async () => {
    const f = sshd.get();
    const env = await open(context(f));
    const pid = await env.masterPid();
    expect(pid).toBeGreaterThan(0);
    await env.stop();
    expect(await env.masterPid()).toBeUndefined();
  });

  it("doctor reports the client, the settings and a reachable host; an unknown key fails with its fix", async () => {
    const f = sshd.get();
    const good = await doctorSsh(context(f));
    expect(good.map((c) => [c.name, c.ok])).toEqual([
      ["ssh client", true],
      ["ssh settings", true],
      ["ssh host", true],
    ]);
    const unknown = await doctorSsh(context(f, {}, null));
    const host = unknown.find((c) => c.name === "ssh host");
    expect(host?.ok).toBe(false);
    expect(host?.fix).toContain("ssh-keyscan");
    const noHost = await doctorSsh(context(f, { ssh_host: "" }));
    expect(noHost.find((c) => c.name === "ssh settings")).toMatchObject({ ok: false });
  });
});
