import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export const HERMES_BIN = resolve(import.meta.dirname, "../../bin/hermes");

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A temporary HERMES_HOME and working directory for one end-to-end test. */
export function tempHome(configYaml?: string): { home: string; cwd: string } {
  const root = mkdtempSync(join(tmpdir(), "hermes-e2e-"));
  const home = join(root, "home");
  const cwd = join(root, "work");
  mkdirSync(home, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  if (configYaml !== undefined) writeFileSync(join(home, "config.yaml"), configYaml);
  return { home, cwd };
}

/** config.yaml pointing the CLI at a fake LLM server. */
export function fakeProviderConfig(url: string, extra = ""): string {
  return `model:\n  provider: custom\n  base_url: ${url}\n  default: fake-model\nagent:\n  api_max_retries: 0\n${extra}`;
}

export interface RunningHermes {
  /** The process to signal: `hermes` itself, or with `tty` the `script` holding its terminal. */
  child: ChildProcessWithoutNullStreams;
  /** The pid of the `hermes` process (with `tty`, the child of `script`; undefined until started). */
  hermesPid(): number | undefined;
  output: () => CliResult;
  exited: Promise<CliResult>;
}

/**
 * Starts the built `hermes` and hands back the running process (to signal or `kill -9` it) with
 * its output so far and a promise of how it ended. The caller ends it; nothing times out here.
 * `tty: true` runs it on a pseudo-terminal (util-linux `script`), so it streams text as a user
 * sees it; stdout and stderr then arrive together on `stdout`.
 */
export function spawnHermes(
  args: string[],
  options: { home: string; cwd: string; env?: Record<string, string>; tty?: boolean },
): RunningHermes {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: options.home,
    HERMES_HOME: options.home,
    NO_COLOR: "1",
    ...(options.env ?? {}),
  };
  const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;
  const child = options.tty
    ? spawn("script", ["-qfec", [process.execPath, HERMES_BIN, ...args].map(quote).join(" "), "/dev/null"], {
        cwd: options.cwd,
        env,
        stdio: "pipe",
      })
    : spawn(process.execPath, [HERMES_BIN, ...args], { cwd: options.cwd, env, stdio: "pipe" });
  const result: CliResult = { code: null, stdout: "", stderr: "" };
  child.stdout.on("data", (d: Buffer) => (result.stdout += d.toString("utf8")));
  child.stderr.on("data", (d: Buffer) => (result.stderr += d.toString("utf8")));
  // `script` passes its stdin to the terminal and may stop at its end: keep it open then.
  if (!options.tty) child.stdin.end();
  const hermesPid = () => {
    if (!options.tty) return child.pid;
    try {
      const pid = child.pid ?? 0;
      const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/);
      return children[0] ? Number(children[0]) : undefined;
    } catch {
      return undefined;
    }
  };
  const exited = new Promise<CliResult>((resolvePromise, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolvePromise({ ...result, code }));
  });
  return { child, hermesPid, output: () => ({ ...result }), exited };
}

/** Runs the built `hermes` as a subprocess (asynchronously, so an in-process fake server can answer). */
export function runHermes(
  args: string[],
  options: { home: string; cwd: string; env?: Record<string, string>; input?: string; timeoutMs?: number },
): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: options.home,
      HERMES_HOME: options.home,
      NO_COLOR: "1",
      ...(options.env ?? {}),
    };
    const child = spawn(process.execPath, [HERMES_BIN, ...args], { cwd: options.cwd, env, stdio: "pipe" });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`hermes ${args.join(" ")} timed out\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, options.timeoutMs ?? 20_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? "");
  });
}
