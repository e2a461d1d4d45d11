/**
 * What the generic remote shell and background processes must do over any ShellChannel; run
 * against a local channel (remote-shell.test.ts) and inside a docker container (docker tests).
 * Everything is checked inside the environment, through the channel.
 */
import { afterEach, expect, it } from "vitest";
import { spawnRemote } from "../../../src/environments/remote-process.js";
import {
  createRemoteShell,
  type RemoteShell,
  type RemoteShellOptions,
} from "../../../src/environments/remote-shell.js";
import type { EnvProcess, ShellChannel } from "../../../src/environments/types.js";

const GRACE_MS = 300;

async function waitFor<T>(check: () => Promise<T>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function collect(stream: NodeJS.ReadableStream): Promise<string> {
  let text = "";
  for await (const chunk of stream) text += chunk.toString();
  return text;
}

/** Registers the cases; `setup` gives the channel and a scratch directory in the environment. */
export function remoteShellCases(setup: () => Promise<{ channel: ShellChannel; dir: string }>): void {
  const shells: RemoteShell[] = [];
  let channel: ShellChannel;
  let dir: string;

  afterEach(async () => {
    await Promise.all(shells.splice(0).map((s) => s.dispose()));
  });

  const shell = async (options: Partial<RemoteShellOptions> = {}): Promise<RemoteShell> => {
    ({ channel, dir } = await setup());
    const s = createRemoteShell(channel, { cwd: dir, killGraceMs: GRACE_MS, ...options });
    shells.push(s);
    return s;
  };
  const run = (s: RemoteShell, command: string, timeoutMs = 10_000) => s.run(command, { timeoutMs });
  const exists = async (path: string) => (await channel.exec(`test -e '${path}'`)).exitCode === 0;
  const alive = async (pid: number) =>
    (await channel.exec(`s=$(cat /proc/${pid}/stat 2>/dev/null) && [[ \${s##*) } != Z* ]]`)).exitCode === 0;
  const groupAlive = async (pgid: number) =>
    (
      await channel.exec(
        `for f in /proc/[0-9]*/stat; do read -r l <"$f" 2>/dev/null || continue; r=\${l##*) }; set -- $r; [[ $1 != Z && $3 == ${pgid} ]] && exit 0; done; exit 1`,
      )
    ).exitCode === 0;

  it("returns output and exit code exactly; output that looks like the protocol is just output", async () => {
    const s = await shell();
    expect((await run(s, "printf abc")).output).toBe("abc");
    expect((await run(s, "printf 'abc\\n\\n'; exit 3")).exitCode).toBe(3);
    expect((await run(s, `echo "it's" héllo; echo err >&2`)).output).toBe("it's héllo\nerr\n");
    const r = await run(s, "echo '__HERMES_DONE_0000_0_0_/fake'; echo '__HERMES_SHELL_1'; echo after");
    expect(r.output).toBe("__HERMES_DONE_0000_0_0_/fake\n__HERMES_SHELL_1\nafter\n");
  });

  it("carries cwd, exports, variables, functions and aliases over; unset is unset", async () => {
    const s = await shell();
    expect(s.envPrelude("/")).toBe("");
    const r = await run(
      s,
      "cd / && export KEEP=yes && plain=1 && greet() { echo hi; } && alias ll='echo aliased'",
    );
    expect(r.cwd).toBe("/");
    expect(s.cwd).toBe("/");
    expect((await run(s, 'pwd; echo "$KEEP $plain"; greet; alias ll')).output).toBe(
      "/\nyes 1\nhi\nalias ll='echo aliased'\n",
    );
    await run(s, "unset plain; unset -f greet");
    // biome-ignore lint/suspicious/noTemplateCurlyInString: bash parameter expansion
    expect((await run(s, 'echo "${plain-unset}"; type greet >/dev/null 2>&1 || echo nofn')).output).toBe(
      "unset\nnofn\n",
    );
    // A workdir applies to one command and leaves the state alone.
    const w = await s.run("pwd; cd /tmp; export KEEP=no", { timeoutMs: 5000, workdir: dir });
    expect(w.output).toBe(`${dir}\n`);
    expect((await run(s, 'pwd; echo "$KEEP"')).output).toBe("/\nyes\n");
    expect(s.envPrelude("/tmp")).toContain("source");
  });

  it("keeps its state files in a private directory inside the environment and removes it on dispose", async () => {
    const s = await shell();
    await run(s, "export SECRET_ONE=x");
    const mode = await channel.exec(`stat -c %a '${s.paths.stateDir}'`);
    expect(mode.stdout.toString().trim()).toBe("700");
    await s.dispose();
    expect(await exists(s.paths.stateDir)).toBe(false);
  });

  it("timeout stops the whole command line: nothing more of it runs, its group is gone", async () => {
    const s = await shell();
    const r = await run(s, `echo $BASHPID > ${dir}/pid; sleep 5; touch ${dir}/X`, 400);
    expect(r.timedOut).toBe(true);
    expect(r.exitCode).toBe(124);
    expect(r.stop?.running.join(" ")).toContain("sleep 5");
    const pgid = Number((await channel.exec(`cat ${dir}/pid`)).stdout.toString());
    expect(await groupAlive(pgid)).toBe(false);
    expect((await run(s, "echo ok")).output).toBe("ok\n");
    expect(await exists(`${dir}/X`)).toBe(false);
  });

  it("an interrupt stops the command; what ignores SIGTERM gets SIGKILL after the grace period", async () => {
    const s = await shell();
    const controller = new AbortController();
    const pending = s.run(`touch ${dir}/started; trap '' TERM; sleep 5; touch ${dir}/X`, {
      timeoutMs: 60_000,
      signal: controller.signal,
    });
    await waitFor(() => exists(`${dir}/started`), 10_000, "the command to start");
    controller.abort();
    const r = await pending;
    expect(r.interrupted).toBe(true);
    expect(r.exitCode).toBe(130);
    expect(r.stop?.killed).toBe(true);
    expect(await exists(`${dir}/X`)).toBe(false);
  });

  it("drops the stopped call's state and keeps the last finished one", async () => {
    const s = await shell();
    await run(s, "cd / && export KEEP=yes");
    const r = await run(s, `cd ${dir} && export KEEP=no; sleep 5`, 400);
    expect(r.timedOut).toBe(true);
    expect(r.cwd).toBe("/");
    expect((await run(s, 'pwd; echo "$KEEP"')).output).toBe("/\nyes\n");
  });

  it("spares an & job of an earlier call when a later one is stopped; dispose stops it", async () => {
    const s = await shell();
    await run(s, `sleep 100 >/dev/null 2>&1 & echo $! > ${dir}/bg.pid`);
    const bg = Number((await channel.exec(`cat ${dir}/bg.pid`)).stdout.toString());
    expect((await run(s, "sleep 50", 400)).timedOut).toBe(true);
    expect(await alive(bg)).toBe(true);
    await s.dispose();
    await waitFor(async () => !(await alive(bg)), 5000, "dispose to stop the & job");
  });

  it("a dead shell is rebuilt with the last state, in the last cwd", async () => {
    const s = await shell();
    await run(s, "cd / && export KEEP=yes && f() { echo fn; }");
    const r = await run(s, "kill -9 $$");
    expect(r.shellExited).toBe(true);
    expect(r.exitCode).toBe(137);
    expect((await run(s, 'pwd; echo "$KEEP"; f')).output).toBe("/\nyes\nfn\n");
  });

  it("an idle shell ends after its lifetime and the next call rebuilds it", async () => {
    const s = await shell({ idleLifetimeMs: 200 });
    const first = Number((await run(s, "cd / && echo $$")).output);
    await waitFor(async () => !(await alive(first)), 5000, "the idle shell to end");
    const r = await run(s, "pwd; echo $$");
    expect(r.output.startsWith("/\n")).toBe(true);
    expect(Number(r.output.split("\n")[1])).not.toBe(first);
  });

  it("refuses to run after dispose", async () => {
    const s = await shell();
    await s.dispose();
    await expect(run(s, "true")).rejects.toThrow(/shut down/);
  });

  it("spawnRemote: own process group, pid, output, env over the prelude, exit code, signal", async () => {
    const s = await shell();
    await run(s, "export FROM_SHELL=shell OVER=shell");
    const p: EnvProcess = await spawnRemote(
      channel,
      'echo "$FROM_SHELL $OVER $(pwd)"; echo err >&2; exit 4',
      {
        cwd: "/",
        prelude: s.envPrelude(dir),
        env: { OVER: "option" },
      },
    );
    expect(p.pid).toBeGreaterThan(1);
    const text = await collect(p.output);
    expect(text).toContain("shell option /\n");
    expect(text).toContain("err\n");
    expect((await p.exited).code).toBe(4);

    const q = await spawnRemote(channel, `echo $$ > ${dir}/q.pid; sleep 100 & wait`, { cwd: dir });
    const stat = await channel.exec(
      `cut -d' ' -f5 /proc/${q.pid}/stat 2>/dev/null || awk '{print $5}' /proc/${q.pid}/stat`,
    );
    expect(Number(stat.stdout.toString())).toBe(q.pid);
    await q.signal("SIGTERM");
    expect((await q.exited).code).toBe(143);
    expect(await groupAlive(q.pid)).toBe(false);
  });

  it("spawnRemote: stdin reaches the process; a bad cwd is an error", async () => {
    await shell();
    const p = await spawnRemote(channel, "read -r line; echo got:$line", { cwd: dir });
    p.stdin?.write("hello\n");
    expect(await collect(p.output)).toBe("got:hello\n");
    await expect(spawnRemote(channel, "true", { cwd: `${dir}/nope` })).rejects.toThrow(/did not start/);
  });
}
