/**
 * `terminal.backend: ssh` through the built CLI against a real sshd on a loopback port, logging in
 * as a throw-away user. The hermes process runs as another user (root in CI), so a file owned by
 * the throw-away user and its `whoami` prove the tools ran over ssh, not on the host.
 */
import { execFileSync, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";
import { type SshdFixture, sshdSkipReason } from "../support/sshd.js";
import { useSshd } from "../support/sshd-per-file.js";

const llm = useFakeLlm();
const sshd = useSshd();

type ChatBody = { messages: Array<{ role: string; content: string | null }> };
const toolResults = (): string[] =>
  llm.chatRequests.flatMap((r) =>
    (r.body as ChatBody).messages.filter((m) => m.role === "tool").map((m) => String(m.content)),
  );
const lastToolResult = (): string => {
  const last = llm.chatRequests.at(-1);
  const tools = ((last?.body as ChatBody | undefined)?.messages ?? []).filter((m) => m.role === "tool");
  return String(tools.at(-1)?.content ?? "");
};

let counter = 0;
/** A directory on the "remote" side owned by the throw-away user. */
function remoteWork(f: SshdFixture): string {
  counter += 1;
  const dir = join(f.home, `e2e-${process.pid}-${counter}`);
  mkdirSync(dir, { recursive: true });
  if (process.getuid?.() === 0) execFileSync("chown", ["-R", `${f.user}:`, dir]);
  return dir;
}

/** HERMES_HOME (also HOME) with the ssh settings; known_hosts holds the server's key unless told. */
function setup(f: SshdFixture, options: { knownHosts?: boolean; extra?: string; cwd?: string } = {}) {
  const terminal = [
    "terminal:",
    "  backend: ssh",
    `  ssh_host: ${f.host}`,
    `  ssh_port: ${f.port}`,
    `  ssh_user: ${f.user}`,
    `  ssh_key: ${f.keyPath}`,
    "  file_sync_enabled: false",
    ...(options.cwd ? [`  cwd: ${options.cwd}`] : []),
    ...(options.extra ? [options.extra] : []),
  ].join("\n");
  const { home, cwd } = tempHome(fakeProviderConfig(llm.url, `${terminal}\n`));
  mkdirSync(join(home, ".ssh"), { recursive: true, mode: 0o700 });
  if (options.knownHosts !== false) writeFileSync(join(home, ".ssh", "known_hosts"), `${f.knownHostsLine}\n`);
  // The control socket's directory lands here, so the test can find the master to kill it.
  const tmp = mkdtempSync(join(tmpdir(), "hermes-e2e-ssh-tmp-"));
  return { home, cwd, env: { TMPDIR: tmp }, tmp };
}

/** The pid of the ControlMaster whose private socket directory hermes made under `tmp`. */
function masterPid(tmp: string): number | undefined {
  for (const name of readdirSync(tmp)) {
    if (!name.startsWith("hermes-ssh-")) continue;
    // `ssh -O check` answers "Master running (pid=N)" on stderr.
    const check = spawnSync("ssh", ["-o", `ControlPath=${join(tmp, name, "cm")}`, "-O", "check", "x"], {
      encoding: "utf8",
    });
    const match = /pid=(\d+)/.exec(check.stderr ?? "");
    if (check.status === 0 && match) return Number(match[1]);
  }
  return undefined;
}

describe.skipIf(sshdSkipReason)("terminal.backend: ssh", () => {
  it("writes, reads, patches and runs commands on the remote host as the remote user", async () => {
    const f = sshd.get();
    const work = remoteWork(f);
    const { home, cwd, env } = setup(f, { cwd: work });
    const notes = join(work, "notes.txt");
    llm.enqueue(
      reply().toolCall("write_file", { path: notes, content: "hello over ssh\n" }),
      reply().toolCall("read_file", { path: notes }),
      reply().toolCall("patch", { mode: "replace", path: notes, old_string: "hello", new_string: "goodbye" }),
      reply().toolCall("terminal", { command: "whoami; hostname; cat /etc/os-release; pwd; cat notes.txt" }),
      reply().text("Done over ssh."),
    );
    const result = await runHermes(["-z", "work on the remote box"], { home, cwd, env, timeoutMs: 90_000 });
    expect(result.stderr).toBe("");
    expect(result.stdout).toBe("Done over ssh.\n");
    expect(result.code).toBe(0);
    expect(readFileSync(notes, "utf8")).toBe("goodbye over ssh\n");
    // Written by the remote account, not by hermes's own user.
    const owner = execFileSync("stat", ["-c", "%U", notes], { encoding: "utf8" }).trim();
    expect(owner).toBe(f.user);
    const results = toolResults();
    expect(results.some((r) => r.includes("hello over ssh"))).toBe(true);
    const shell = lastToolResult();
    expect(shell).toContain(f.user);
    expect(shell).toContain(execFileSync("hostname", { encoding: "utf8" }).trim());
    expect(shell).toMatch(/PRETTY_NAME=/);
    expect(shell).toContain(work);
    expect(shell).toContain("goodbye over ssh");
    if (userInfo().uid === 0) expect(shell).not.toMatch(/^root$/m);
    // The system prompt names the real environment.
    const system = String((llm.chatRequests[0]?.body as ChatBody | undefined)?.messages[0]?.content ?? "");
    expect(system).toContain(`${f.user}@127.0.0.1:${f.port}`);
  });

  it("reconnects when the shared connection dies between commands, the shell's state intact", async () => {
    const f = sshd.get();
    const work = remoteWork(f);
    const { home, cwd, env, tmp } = setup(f);
    let killed: number | undefined;
    llm.respondWith((request) => {
      // Before answering the second model call (the first command has run): kill the master.
      if (killed === undefined && llm.chatRequests.length === 2) {
        killed = masterPid(tmp);
        if (killed) process.kill(killed, "SIGKILL");
      }
      void request;
      return undefined;
    });
    llm.enqueue(
      reply().toolCall("terminal", { command: `cd ${work} && export MARK=kept` }),
      reply().toolCall("terminal", { command: 'echo "state: $MARK $(pwd) $(whoami)"' }),
      reply().toolCall("terminal", { command: 'echo "state: $MARK $(pwd) $(whoami)"' }),
      reply().text("reconnected"),
    );
    try {
      const result = await runHermes(["-z", "keep going"], { home, cwd, env, timeoutMs: 90_000 });
      expect(result.code).toBe(0);
      expect(result.stdout).toBe("reconnected\n");
    } finally {
      llm.respondWith(undefined);
    }
    expect(killed).toBeGreaterThan(0);
    expect(lastToolResult()).toContain(`state: kept ${work} ${f.user}`);
  });

  it("refuses an unknown host key at start-up with exit 2 and the fix; accept-new trusts it on first use", async () => {
    const f = sshd.get();
    const refused = setup(f, { knownHosts: false });
    const result = await runHermes(["-z", "hello"], {
      home: refused.home,
      cwd: refused.cwd,
      env: refused.env,
      timeoutMs: 60_000,
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("host key");
    expect(result.stderr).toContain("ssh_accept_new_host_key");
    expect(llm.chatRequests.length).toBe(0);
    expect(existsSync(join(refused.home, ".ssh", "known_hosts"))).toBe(false);

    const trusting = setup(f, { knownHosts: false, extra: "  ssh_accept_new_host_key: true" });
    llm.enqueue(reply().toolCall("terminal", { command: "whoami" }), reply().text("trusted"));
    const ok = await runHermes(["-z", "hello"], {
      home: trusting.home,
      cwd: trusting.cwd,
      env: trusting.env,
      timeoutMs: 60_000,
    });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toBe("trusted\n");
    expect(lastToolResult()).toContain(f.user);
    const known = join(trusting.home, ".ssh", "known_hosts");
    expect(readFileSync(known, "utf8")).toContain(`[127.0.0.1]:${f.port}`);
    expect(statSync(known).isFile()).toBe(true);
  });
});
