/**
 * The environment contract as tests: every backend runs this suite against its `Environment`
 * (`describeEnvironmentContract("docker", makeDocker)`), so the tools see the same behaviour
 * wherever commands run. Paths inside the environment come from `mktemp -d` there; host paths
 * from the test machine's tmpdir. Nothing here sleeps for a fixed time: it waits for the event.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Environment, EnvProcess } from "../../src/environments/types.js";

export interface ContractSubject {
  env: Environment;
  /** Extra cleanup after `env.stop()` (remove a container, stop a fake server). */
  cleanup?: () => Promise<void>;
}

export interface ContractOptions {
  /** Per-test timeout in ms (remote backends are slower). Default 30 s. */
  timeoutMs?: number;
  /** Skip the whole suite with this reason (runtime not installed here). */
  skip?: string;
}

function collect(proc: EnvProcess): () => string {
  let text = "";
  proc.output.on("data", (chunk: string | Buffer) => {
    text += String(chunk);
  });
  return () => text;
}

/** Waits until no process in `env` has `pattern` (a regex whose own text does not match itself) in its command line. */
async function gone(env: Environment, pattern: string, ms = 10_000): Promise<string> {
  const deadline = Date.now() + ms;
  for (;;) {
    const ps = await env.exec(`pgrep -f '${pattern}' || true`);
    const left = ps.stdout.toString().trim();
    if (left === "" || Date.now() > deadline) return left;
    await new Promise((r) => setTimeout(r, 50));
  }
}

export function describeEnvironmentContract(
  name: string,
  makeEnv: () => Promise<ContractSubject>,
  options: ContractOptions = {},
): void {
  const timeout = options.timeoutMs ?? 30_000;
  const suite = options.skip ? describe.skip : describe;
  suite(`environment contract: ${name}`, () => {
    let subject: ContractSubject;
    let env: Environment;
    /** A scratch directory inside the environment. */
    let scratch: string;
    let hostDir: string;
    let task = 0;
    const newTask = (): string => `contract-${++task}`;

    beforeAll(async () => {
      subject = await makeEnv();
      env = subject.env;
      await Promise.all([env.start(), env.start()]);
      const made = await env.exec("mktemp -d");
      expect(made.exitCode).toBe(0);
      scratch = made.stdout.toString("utf8").trim();
      hostDir = mkdtempSync(join(tmpdir(), "hermes-contract-"));
    }, timeout * 4);

    afterAll(async () => {
      await env?.exec(`rm -rf '${scratch}'`).catch(() => undefined);
      await env?.stop();
      await subject?.cleanup?.();
      rmSync(hostDir, { recursive: true, force: true });
    }, timeout * 2);

    it("describes where commands run and has a workdir", () => {
      expect(env.describe().length).toBeGreaterThan(5);
      expect(env.workdir.startsWith("/")).toBe(true);
      expect(["host", "isolated"]).toContain(env.isolation);
    });

    it(
      "keeps cd, variables and functions in one task's shell",
      async () => {
        const shell = env.shell(newTask());
        const first = await shell.run(`cd '${scratch}' && export CONTRACT_X=42 && f() { echo "f:$1"; }`, {
          timeoutMs: timeout,
        });
        expect(first.exitCode).toBe(0);
        expect(first.cwd).toBe(scratch);
        const second = await shell.run('pwd; echo "x=$CONTRACT_X"; f y', { timeoutMs: timeout });
        expect(second.output).toContain(scratch);
        expect(second.output).toContain("x=42");
        expect(second.output).toContain("f:y");
        expect(shell.cwd).toBe(scratch);
      },
      timeout,
    );

    it(
      "gives each task its own shell",
      async () => {
        const a = env.shell(newTask());
        const b = env.shell(newTask());
        await a.run(`cd '${scratch}'`, { timeoutMs: timeout });
        const there = await b.run("pwd", { timeoutMs: timeout });
        expect(there.output.trim()).not.toBe(scratch);
        expect(a.cwd).toBe(scratch);
      },
      timeout,
    );

    it(
      "reports exit codes and output, stderr included",
      async () => {
        const r = await env.shell(newTask()).run("echo out; echo err >&2; exit 3", { timeoutMs: timeout });
        expect(r.exitCode).toBe(3);
        expect(r.output).toContain("out");
        expect(r.output).toContain("err");
        expect(r.shellExited).toBe(false);
      },
      timeout,
    );

    it(
      "runs one command in a workdir without moving the shell",
      async () => {
        const shell = env.shell(newTask());
        const before = shell.cwd;
        const r = await shell.run("pwd", { timeoutMs: timeout, workdir: scratch });
        expect(r.output.trim()).toBe(scratch);
        expect(shell.cwd).toBe(before);
      },
      timeout,
    );

    it(
      "stops a command at its timeout, with everything it started",
      async () => {
        const shell = env.shell(newTask());
        const marker = `${scratch}/timeout-child`;
        const r = await shell.run(`(sleep 31.7; touch '${marker}') & sleep 31.7`, { timeoutMs: 1500 });
        expect(r.timedOut).toBe(true);
        expect(r.stop).toBeDefined();
        const after = await shell.run("echo still-here", { timeoutMs: timeout });
        expect(after.output).toContain("still-here");
        // The background child was in the stopped command's group: it must be gone.
        expect(await gone(env, "sleep 31[.]7")).toBe("");
      },
      timeout,
    );

    it(
      "stops a command when its signal aborts",
      async () => {
        const shell = env.shell(newTask());
        const controller = new AbortController();
        const running = shell.run("echo started; sleep 20", {
          timeoutMs: timeout,
          signal: controller.signal,
        });
        setTimeout(() => controller.abort(), 500);
        const r = await running;
        expect(r.interrupted).toBe(true);
        expect(r.output).toContain("started");
      },
      timeout,
    );

    it(
      "hands exported variables to a separate bash through envPrelude",
      async () => {
        const shell = env.shell(newTask());
        await shell.run("export PRELUDE_VAR=carried", { timeoutMs: timeout });
        const proc = await env.spawn('echo "v=$PRELUDE_VAR"; pwd', {
          cwd: scratch,
          prelude: shell.envPrelude(scratch),
        });
        const out = collect(proc);
        await proc.exited;
        expect(out()).toContain("v=carried");
        expect(out()).toContain(scratch);
      },
      timeout,
    );

    it(
      "spawns background processes with stdin, output and exit status",
      async () => {
        const proc = await env.spawn("read line; echo got:$line; exit 4", {
          cwd: scratch,
          env: { CONTRACT_E: "1" },
        });
        const out = collect(proc);
        expect(proc.pid).toBeGreaterThan(0);
        proc.stdin?.write("hello\n");
        const status = await proc.exited;
        expect(status.code).toBe(4);
        expect(out()).toContain("got:hello");
      },
      timeout,
    );

    it(
      "signals a background process's whole group",
      async () => {
        const proc = await env.spawn("sleep 41.3 & sleep 41.3; echo never", { cwd: scratch });
        const out = collect(proc);
        await proc.signal("SIGTERM");
        const status = await proc.exited;
        expect(status.code === null || status.code >= 128 || status.signal !== null).toBe(true);
        expect(await gone(env, "sleep 41[.]3")).toBe("");
        expect(out()).not.toContain("never");
      },
      timeout,
    );

    it(
      "exec returns stdout as bytes, stderr, exit code and takes stdin",
      async () => {
        const r = await env.exec("cat; echo e >&2; exit 2", { stdin: "in-bytes", cwd: scratch });
        expect(r.stdout.toString()).toBe("in-bytes");
        expect(r.stderr).toContain("e");
        expect(r.exitCode).toBe(2);
        const where = await env.exec("pwd", { cwd: scratch });
        expect(where.stdout.toString().trim()).toBe(scratch);
      },
      timeout,
    );

    it(
      "exec stops at its timeout",
      async () => {
        const started = Date.now();
        // A duration no other process uses names this command; the whole command line must end.
        const seconds = `20.${Math.floor(Math.random() * 1e6)}`;
        const r = await env.exec(`sleep ${seconds}; sleep ${seconds}`, { timeoutMs: 500 });
        expect(r.exitCode).toBeNull();
        expect(Date.now() - started).toBeLessThan(15_000);
        const ps = await env.exec(
          `for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' <"$f" 2>/dev/null; echo; done | grep -c "^sleep ${seconds}" || true`,
        );
        expect(ps.stdout.toString().trim()).toBe("0");
      },
      timeout,
    );

    it(
      "reads, writes, stats, lists and removes files",
      async () => {
        const dir = `${scratch}/files/deep`;
        const file = `${dir}/a.txt`;
        expect(await env.files.stat(file)).toBeUndefined();
        await env.files.write(file, "héllo\n");
        const st = await env.files.stat(file);
        expect(st?.type).toBe("file");
        expect(st?.size).toBe(Buffer.byteLength("héllo\n"));
        expect((await env.files.read(file)).toString("utf8")).toBe("héllo\n");
        expect((await env.files.read(file, { maxBytes: 2 })).length).toBe(2);
        await env.files.write(`${dir}/bin.dat`, new Uint8Array([0, 1, 2, 255]));
        expect([...(await env.files.read(`${dir}/bin.dat`))]).toEqual([0, 1, 2, 255]);
        await env.files.mkdir(`${dir}/sub`);
        const names = (await env.files.list(dir)).map((e) => `${e.name}:${e.type}`).sort();
        expect(names).toEqual(["a.txt:file", "bin.dat:file", "sub:dir"]);
        expect((await env.files.stat(dir))?.type).toBe("dir");
        await env.files.remove(file);
        expect(await env.files.stat(file)).toBeUndefined();
      },
      timeout,
    );

    it(
      "keeps a file's mode when it is rewritten, and sets one when asked",
      async () => {
        const file = `${scratch}/mode.sh`;
        await env.files.write(file, "#!/bin/sh\n", { mode: 0o755 });
        expect((await env.files.stat(file))?.mode).toBe(0o755);
        await env.files.write(file, "#!/bin/sh\necho hi\n");
        expect((await env.files.stat(file))?.mode).toBe(0o755);
      },
      timeout,
    );

    it(
      "uploads and downloads files and directories",
      async () => {
        writeFileSync(join(hostDir, "up.txt"), "from host");
        await env.upload(join(hostDir, "up.txt"), `${scratch}/sync/up.txt`);
        expect((await env.files.read(`${scratch}/sync/up.txt`)).toString()).toBe("from host");
        await env.files.write(`${scratch}/sync/dir/down.txt`, "from env");
        await env.download(`${scratch}/sync/dir`, join(hostDir, "back"));
        expect(readFileSync(join(hostDir, "back", "down.txt"), "utf8")).toBe("from env");
      },
      timeout,
    );

    it(
      "ends a released task's shell; the task's next shell starts fresh",
      async () => {
        const id = newTask();
        await env.shell(id).run(`cd '${scratch}' && export GONE=1`, { timeoutMs: timeout });
        await env.releaseTask(id);
        const r = await env.shell(id).run('echo "gone=$GONE"', { timeoutMs: timeout });
        expect(r.output).toContain("gone=");
        expect(r.output).not.toContain("gone=1");
      },
      timeout,
    );
  });
}
