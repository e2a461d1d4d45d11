/**
 * Background processes in a non-local environment, over a `ShellChannel`. The command runs as a
 * job of a bash with job control on, so it is a process group of its own inside the environment
 * (and the terminal's foreground group under a pty); that job reports its pid on a header line
 * before anything else is printed, and the bash around it waits and exits with its status (128 + n
 * for signal n, whatever the channel would make of a signal). Signals go through `channel.exec`
 * to the whole group.
 */
import { PassThrough } from "node:stream";
import { quote } from "./shell-protocol.js";
import type { EnvProcess, ShellChannel, SpawnOptions } from "./types.js";

const HEADER = "__HERMES_PID_";

/** The script the channel runs for `spawnRemote` (pure; exported for tests). */
export function spawnScript(command: string, options: SpawnOptions): string {
  const names = Object.keys(options.env ?? {}).filter((k) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(k));
  const lines: string[] = [];
  // The caller's variables come through the channel's env and win over the prelude's.
  if (names.length > 0) lines.push(`__hermes_keep=$(builtin declare -p ${names.join(" ")} 2>/dev/null)`);
  if (options.prelude) lines.push(options.prelude.trimEnd());
  if (names.length > 0) lines.push(`builtin eval "$__hermes_keep"; builtin unset __hermes_keep`);
  lines.push(`builtin cd -- ${quote(options.cwd)} || builtin exit 1`);
  if (options.pty) {
    lines.push(`command stty cols ${options.pty.cols} rows ${options.pty.rows} 2>/dev/null`);
  }
  lines.push(
    "builtin set -m",
    `( builtin printf '${HEADER}%s\\n' "$BASHPID"; builtin exec bash -c ${quote(command)} 2>&1 )`,
    "builtin exit $?",
    "",
  );
  return lines.join("\n");
}

/** Starts `command` in the environment as its own process group; resolves once its pid is known. */
export function spawnRemote(
  channel: ShellChannel,
  command: string,
  options: SpawnOptions,
): Promise<EnvProcess> {
  const env: Record<string, string> = { ...(options.env ?? {}) };
  const proc = channel.open(["bash", "--noprofile", "--norc", "-c", spawnScript(command, options)], {
    ...(options.pty ? { tty: options.pty } : {}),
    ...(Object.keys(env).length > 0 ? { env } : {}),
  });
  const output = new PassThrough();
  let open = 2;
  let drainedNow: () => void = () => undefined;
  // Drained: both channel streams have ended (not: the reader has read everything).
  const drained = new Promise<void>((done) => {
    drainedNow = done;
  });
  const endOne = (): void => {
    open -= 1;
    if (open > 0) return;
    output.end();
    drainedNow();
  };
  let header = "";
  let early = "";
  let pid: number | undefined;
  let stdinOpen = true;
  proc.stdin.on("error", () => {
    stdinOpen = false;
  });
  proc.stdin.on("finish", () => {
    stdinOpen = false;
  });
  return new Promise<EnvProcess>((resolve, reject) => {
    const ready = (): void => {
      const group = pid as number;
      resolve({
        pid: group,
        get stdin() {
          return stdinOpen ? proc.stdin : null;
        },
        output,
        exited: Promise.all([proc.exited, drained]).then(([code]) => ({ code, signal: null })),
        signal: async (sig) => {
          await channel
            .exec(`builtin kill -s ${sig.replace(/^SIG/, "")} -- -${group} 2>/dev/null; true`, {
              timeoutMs: 10_000,
            })
            .catch(() => undefined);
        },
      });
    };
    proc.stdout.on("data", (chunk: Buffer | string) => {
      if (pid !== undefined) {
        output.write(chunk);
        return;
      }
      header += chunk.toString();
      const at = header.indexOf(HEADER);
      const end = at < 0 ? -1 : header.indexOf("\n", at);
      if (end < 0) return;
      pid = Number(header.slice(at + HEADER.length, end).replace(/\r$/, ""));
      // Anything before the header (a prelude's noise) and after it is the process's output.
      const rest = header.slice(0, at) + header.slice(end + 1);
      header = "";
      if (rest) output.write(rest);
      ready();
    });
    proc.stdout.on("end", () => {
      if (pid === undefined) {
        if (header) output.write(header);
        endOne();
        void proc.exited.then((code) => {
          const why = `${header}${early}`.trim().slice(0, 300);
          reject(new Error(`The background process did not start (exit ${code})${why ? `: ${why}` : "."}`));
        });
        return;
      }
      endOne();
    });
    proc.stderr.on("data", (chunk: Buffer | string) => {
      if (pid === undefined) early += chunk.toString();
      output.write(chunk);
    });
    proc.stderr.on("end", endOne);
  });
}
