/**
 * A ShellChannel that runs on this machine (bash via child_process), for testing code written
 * against the channel (exec-files, remote-shell) without a container or a remote host.
 * `busybox: true` puts a directory of busybox applet links first on PATH, so the commands the
 * code sends meet busybox's coreutils, as in a minimal image.
 */

import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ChannelProcess, ExecOptions, ExecResult, ShellChannel } from "../../src/environments/types.js";

const APPLETS = [
  "cat",
  "head",
  "stat",
  "mktemp",
  "mv",
  "rm",
  "mkdir",
  "chmod",
  "readlink",
  "tar",
  "ls",
  "dirname",
  "basename",
  "cp",
  "ln",
  "touch",
  "find",
  "sort",
  "wc",
  "grep",
  "sed",
  "printf",
  "id",
  "whoami",
  "sleep",
];

let busyboxDir: string | undefined;

/** A directory of links to busybox for the common applets, or undefined without busybox. */
export function busyboxPath(): string | undefined {
  if (busyboxDir) return busyboxDir;
  const bin = ["/usr/bin/busybox", "/bin/busybox"].find((path) => existsSync(path));
  if (!bin) return undefined;
  const dir = mkdtempSync(join(tmpdir(), "hermes-busybox-"));
  mkdirSync(dir, { recursive: true });
  for (const applet of APPLETS) symlinkSync(bin, join(dir, applet));
  busyboxDir = dir;
  return dir;
}

export interface LocalChannelOptions {
  busybox?: boolean;
  /** Counts every exec and open, for tests that assert how many round trips an operation takes. */
  onCall?: (kind: "exec" | "open", what: string) => void;
}

export function localChannel(options: LocalChannelOptions = {}): ShellChannel {
  const env: Record<string, string | undefined> = { ...process.env, LC_ALL: "C" };
  if (options.busybox) {
    const dir = busyboxPath();
    if (!dir) throw new Error("busybox is not installed");
    env.PATH = `${dir}:${process.env.PATH ?? "/usr/bin:/bin"}`;
  }
  return {
    open(argv, openOptions): ChannelProcess {
      options.onCall?.("open", argv.join(" "));
      const child = spawn(argv[0] ?? "bash", argv.slice(1), {
        env: { ...env, ...openOptions?.env },
        stdio: ["pipe", "pipe", "pipe"],
        detached: true,
      });
      const exited = new Promise<number | null>((resolve) => {
        child.on("error", () => resolve(127));
        child.on("close", (code) => resolve(code));
      });
      return {
        stdin: child.stdin,
        stdout: child.stdout,
        stderr: child.stderr,
        exited,
        close: () => {
          child.kill("SIGKILL");
        },
      };
    },
    exec(command: string, execOptions: ExecOptions = {}): Promise<ExecResult> {
      options.onCall?.("exec", command);
      return new Promise((resolve) => {
        const child = spawn("bash", ["-c", command], {
          cwd: execOptions.cwd,
          env,
          stdio: ["pipe", "pipe", "pipe"],
        });
        const out: Buffer[] = [];
        let err = "";
        child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
        child.stderr.on("data", (chunk: Buffer) => {
          err += chunk.toString("utf8");
        });
        const timer = execOptions.timeoutMs
          ? setTimeout(() => child.kill("SIGKILL"), execOptions.timeoutMs)
          : undefined;
        execOptions.signal?.addEventListener("abort", () => child.kill("SIGKILL"), { once: true });
        child.stdin.on("error", () => {});
        child.stdin.end(execOptions.stdin ?? "");
        child.on("close", (code) => {
          if (timer) clearTimeout(timer);
          resolve({ stdout: Buffer.concat(out), stderr: err, exitCode: code });
        });
      });
    },
  };
}
