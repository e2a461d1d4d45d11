/**
 * The ssh backend's costs against a real sshd on 127.0.0.1 (test/support/sshd.ts): the first
 * command in a fresh ssh environment (start: connect, prepare the remote side, then the task's
 * persistent shell runs `true`) next to a fresh `ssh host true` with no shared connection; and the
 * per-command cost of the persistent shell once it is up next to `ssh host true` over the same kind
 * of multiplexed connection, made directly. Skipped (no rows) without openssh-server.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { sshOptions } from "../src/environments/ssh/connection.js";
import { createSshEnvironment } from "../src/environments/ssh/index.js";
import { resolveSshSettings } from "../src/environments/ssh/settings.js";
import type { BackendContext } from "../src/environments/types.js";
import { type SshdFixture, sshdSkipReason, startSshd } from "../test/support/sshd.js";
import type { BenchRow } from "./session-store.js";

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function time(argv: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn("ssh", argv, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolve(performance.now() - started) : reject(new Error(`ssh exited ${code}: ${stderr}`)),
    );
  });
}

function context(f: SshdFixture, home: string): BackendContext {
  const env = { HOME: home, PATH: process.env.PATH ?? "/usr/bin:/bin" };
  return {
    home: join(home, ".hermes"),
    cwd: home,
    processEnv: env,
    childEnv: env,
    config: {
      terminal: {
        ssh_host: f.host,
        ssh_port: f.port,
        ssh_user: f.user,
        ssh_key: f.keyPath,
        file_sync_enabled: false,
      },
    },
  };
}

export async function sshEnvironmentBench(runs = 9, commands = 30): Promise<BenchRow[]> {
  if (sshdSkipReason) {
    process.stderr.write(`ssh bench skipped: ${sshdSkipReason}\n`);
    return [];
  }
  process.stderr.write("ssh environment: first command and per-command overhead…\n");
  const f = await startSshd();
  const home = mkdtempSync(join(tmpdir(), "hermes-bench-ssh-"));
  mkdirSync(join(home, ".ssh"), { mode: 0o700 });
  writeFileSync(join(home, ".ssh", "known_hosts"), `${f.knownHostsLine}\n`);
  try {
    const ctx = context(f, home);
    const settings = resolveSshSettings({
      terminal: ctx.config.terminal as Record<string, unknown>,
      processEnv: ctx.processEnv,
      localUser: f.user,
      exists: existsSync,
    });
    const direct = (controlPath: string) => [
      ...sshOptions(settings, controlPath, "yes"),
      "-T",
      "-n",
      "--",
      f.host,
      "true",
    ];

    const fresh = async () => {
      const started = performance.now();
      const env = createSshEnvironment(ctx);
      await env.start();
      const result = await env.shell("bench").run("true", { timeoutMs: 30_000 });
      const elapsed = performance.now() - started;
      if (result.exitCode !== 0) throw new Error(`first command failed: ${result.output}`);
      await env.stop();
      return elapsed;
    };
    const freshSsh = async () => {
      const dir = mkdtempSync(join(tmpdir(), "hermes-bench-cm-"));
      try {
        // A new control path each time: no master to reuse, the full handshake is paid.
        const elapsed = await time(direct(join(dir, "cm")));
        await time([...sshOptions(settings, join(dir, "cm"), "yes"), "-O", "exit", "--", f.host]).catch(
          () => 0,
        );
        return elapsed;
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    };
    await fresh();
    await freshSsh();
    const firstValues: number[] = [];
    const firstBase: number[] = [];
    for (let i = 0; i < runs; i++) {
      firstValues.push(await fresh());
      firstBase.push(await freshSsh());
    }

    const env = createSshEnvironment(ctx);
    await env.start();
    const shell = env.shell("bench");
    await shell.run("true", { timeoutMs: 30_000 });
    const dir = mkdtempSync(join(tmpdir(), "hermes-bench-cm-"));
    const mux = direct(join(dir, "cm"));
    await time(mux); // starts this baseline's own master
    const perCommand: number[] = [];
    const perSsh: number[] = [];
    for (let i = 0; i < commands; i++) {
      const started = performance.now();
      await shell.run("true", { timeoutMs: 30_000 });
      perCommand.push(performance.now() - started);
      perSsh.push(await time(mux));
    }
    await env.stop();
    await time([...sshOptions(settings, join(dir, "cm"), "yes"), "-O", "exit", "--", f.host]).catch(() => 0);
    rmSync(dir, { recursive: true, force: true });

    return [
      {
        name: "ssh: first command in a fresh environment (connect, prepare, persistent shell runs `true`)",
        value: median(firstValues),
        unit: "ms",
        baseline: "fresh `ssh host true`",
        baselineValue: median(firstBase),
        target: "(for reference)",
        met: true,
      },
      {
        name: "ssh: per command in the persistent shell (`true`, connection up)",
        value: median(perCommand),
        unit: "ms",
        baseline: "`ssh host true` over a live ControlMaster",
        baselineValue: median(perSsh),
        target: "≤ 1.5× baseline",
        met: median(perCommand) <= median(perSsh) * 1.5,
      },
    ];
  } finally {
    await f.stop();
    rmSync(home, { recursive: true, force: true });
  }
}
