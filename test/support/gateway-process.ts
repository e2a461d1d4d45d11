/**
 * `hermes gateway run` as a child process for end-to-end tests: started in a temp home with extra
 * environment, ready once its "Gateway running" line appears, stopped with SIGTERM (SIGKILL after
 * a grace period).
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { HERMES_BIN } from "./cli.js";

export interface GatewayProcess {
  readonly child: ChildProcessWithoutNullStreams;
  /** The "Gateway running (pid …): services" line. */
  readonly line: string;
  /** Everything the gateway wrote on stderr so far. */
  stderr(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code once it has exited. */
  stop(graceMs?: number): Promise<number | null>;
}

/** Starts the gateway and resolves when its start line matches `ready` (rejects if it exits first). */
export async function startGatewayProcess(
  h: { home: string; cwd: string },
  env: Record<string, string>,
  ready: RegExp = /^Gateway running/,
): Promise<GatewayProcess> {
  const child = spawn(process.execPath, [HERMES_BIN, "gateway", "run"], {
    cwd: h.cwd,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: h.home,
      HERMES_HOME: h.home,
      NO_COLOR: "1",
      ...env,
    },
  });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const line = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      const match = out.split("\n").find((l) => ready.test(l));
      if (match) resolve(match);
    });
    void exited.then((code) =>
      reject(new Error(`gateway exited ${code}\nstdout: ${out}\nstderr: ${stderr}`)),
    );
  });
  return {
    child,
    line,
    stderr: () => stderr,
    async stop(graceMs = 15_000) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
        const code = await exited;
        clearTimeout(timer);
        return code;
      }
      return exited;
    },
  };
}
