import { existsSync, mkdtempSync, readFileSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ShellSession } from "../../../../src/environments/local/shell-session.js";
import { groupsAlive, listProcesses } from "../../../../src/util/process-tree.js";
import { isRunning, waitFor } from "./helpers.js";

const sessions: ShellSession[] = [];
const GRACE_MS = 300;

function session(): { s: ShellSession; dir: string } {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "hermes-stop-test-")));
  const s = new ShellSession({
    cwd: dir,
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
    killGraceMs: GRACE_MS,
  });
  sessions.push(s);
  return { s, dir };
}

afterEach(async () => {
  await Promise.all(sessions.splice(0).map((s) => s.dispose()));
});

/** Every process of the command's group gone (the result comes back only then; this double-checks). */
function groupGone(pidFile: string): boolean {
  const pgid = Number(readFileSync(pidFile, "utf8"));
  return !groupsAlive([pgid], listProcesses());
}

const lists = [
  ["a ; list", (x: string, p: string) => `echo $BASHPID > ${p}; sleep 5; touch ${x}`],
  ["an && list", (x: string, p: string) => `echo $BASHPID > ${p} && sleep 5 && touch ${x}`],
  ["a subshell then a command", (x: string, p: string) => `echo $BASHPID > ${p}; (sleep 5); touch ${x}`],
  [
    "a loop then a command",
    (x: string, p: string) => `echo $BASHPID > ${p}; for i in 1 2; do sleep 5; done; touch ${x}`,
  ],
] as const;

describe("stopping a command stops the whole command line", () => {
  for (const [name, make] of lists) {
    it(`timeout: ${name}`, async () => {
      const { s, dir } = session();
      const x = join(dir, "X");
      const pid = join(dir, "pid");
      const r = await s.run(make(x, pid), { timeoutMs: 300 });
      expect(r.timedOut).toBe(true);
      expect(r.exitCode).toBe(124);
      expect(r.stop?.running.join(" ")).toContain("sleep 5");
      expect(groupGone(pid)).toBe(true);
      // The shell is still usable and ran nothing more of the stopped line.
      expect((await s.run("echo ok", { timeoutMs: 5000 })).output).toBe("ok\n");
      expect(existsSync(x)).toBe(false);
    });
  }

  it("abort signal: sleep 5; touch X", async () => {
    const { s, dir } = session();
    const x = join(dir, "X");
    const started = join(dir, "started");
    const controller = new AbortController();
    const pending = s.run(`touch ${started}; sleep 5; touch ${x}`, {
      timeoutMs: 60_000,
      signal: controller.signal,
    });
    await waitFor(() => existsSync(started), 5000, "the command to start");
    controller.abort();
    const r = await pending;
    expect(r.interrupted).toBe(true);
    expect(r.exitCode).toBe(130);
    expect(r.stop?.killed).toBe(false);
    expect((await s.run("echo ok", { timeoutMs: 5000 })).output).toBe("ok\n");
    expect(existsSync(x)).toBe(false);
  });

  it("SIGKILLs what ignores SIGTERM after the grace period", async () => {
    const { s, dir } = session();
    const x = join(dir, "X");
    const pid = join(dir, "pid");
    const r = await s.run(`echo $BASHPID > ${pid}; trap '' TERM; sleep 5; touch ${x}`, { timeoutMs: 300 });
    expect(r.stop?.killed).toBe(true);
    expect(groupGone(pid)).toBe(true);
    expect(existsSync(x)).toBe(false);
  });

  it("a TERM trap that carries on does not get to run the rest", async () => {
    const { s, dir } = session();
    const x = join(dir, "X");
    const r = await s.run(`trap 'echo caught' TERM; sleep 5; touch ${x}`, { timeoutMs: 300 });
    expect(r.timedOut).toBe(true);
    expect((await s.run("echo ok", { timeoutMs: 5000 })).output).toBe("ok\n");
    expect(existsSync(x)).toBe(false);
  });

  it("keeps cwd, exports, variables and functions of finished calls; drops the stopped call's", async () => {
    const { s, dir } = session();
    await s.run("cd / && export KEEP=yes && plain=1 && greet() { echo hi; }", { timeoutMs: 5000 });
    const r = await s.run(`cd ${dir} && export KEEP=no; sleep 5`, { timeoutMs: 300 });
    expect(r.timedOut).toBe(true);
    expect(r.cwd).toBe("/");
    const after = await s.run('pwd; echo "$KEEP $plain"; greet; unset plain; unset -f greet', {
      timeoutMs: 5000,
    });
    expect(after.output).toBe("/\nyes 1\nhi\n");
    // biome-ignore lint/suspicious/noTemplateCurlyInString: bash parameter expansion, not JS
    const gone = await s.run('echo "${plain-unset}"; type greet >/dev/null 2>&1 || echo nofn', {
      timeoutMs: 5000,
    });
    expect(gone.output).toBe("unset\nnofn\n");
  });

  it("spares an & job from an earlier call; dispose stops it", async () => {
    const { s, dir } = session();
    const pidFile = join(dir, "bg.pid");
    await s.run(`sleep 100 >/dev/null 2>&1 & echo $! > ${pidFile}`, { timeoutMs: 5000 });
    const bg = Number(readFileSync(pidFile, "utf8"));
    expect((await s.run("sleep 50", { timeoutMs: 300 })).timedOut).toBe(true);
    expect(isRunning(bg)).toBe(true);
    await s.dispose();
    await waitFor(() => !isRunning(bg), 5000, "dispose to stop the & job");
  });

  it("stops & jobs the stopped command itself started", async () => {
    const { s, dir } = session();
    const pidFile = join(dir, "bg.pid");
    await s.run(`sleep 100 >/dev/null 2>&1 & echo $! > ${pidFile}; sleep 5`, { timeoutMs: 300 });
    expect(isRunning(Number(readFileSync(pidFile, "utf8")))).toBe(false);
  });
});
