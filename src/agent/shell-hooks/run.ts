/**
 * Runs one shell-hook command: no shell (the command is split into words as upstream does, so a
 * payload never meets shell expansion), the event's JSON on stdin, in its own process group so a
 * timeout or an interrupt kills the hook and everything it started.
 */
import { spawn } from "node:child_process";

/** Each stream keeps at most this much; a hook that prints more is cut (and told in `stderr`). */
const MAX_OUTPUT_BYTES = 1024 * 1024;
/** After the hook exits, how long a helper it left holding the pipes may keep the result waiting. */
const DRAIN_MS = 250;

export interface HookRun {
  /** The exit code; null when the hook was killed or never started. */
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** Why it did not run or finish: "command not found", an unparseable command, an interrupt. */
  error?: string;
  elapsedMs: number;
}

export interface RunHookOptions {
  env: Record<string, string | undefined>;
  cwd: string;
  timeoutMs: number;
  /** Aborting kills the hook's process group (the turn was interrupted). */
  signal?: AbortSignal;
}

/** Runs `command` with `stdin`; never rejects. */
export function runHookCommand(command: string, stdin: string, options: RunHookOptions): Promise<HookRun> {
  const started = Date.now();
  const done = (partial: Partial<HookRun>): HookRun => ({
    code: null,
    stdout: "",
    stderr: "",
    timedOut: false,
    elapsedMs: Date.now() - started,
    ...partial,
  });
  let argv: string[];
  try {
    argv = splitCommand(command, options.env["HOME"]);
  } catch (error) {
    return Promise.resolve(done({ error: `the command cannot be read: ${(error as Error).message}` }));
  }
  const [file, ...args] = argv;
  if (file === undefined) return Promise.resolve(done({ error: "the command is empty" }));
  if (options.signal?.aborted) return Promise.resolve(done({ error: "interrupted before it started" }));

  return new Promise((resolve) => {
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    });
    const out = collector();
    const err = collector();
    child.stdout.on("data", out.add);
    child.stderr.on("data", err.add);
    // A hook that never reads its stdin closes the pipe early: that is its business, not an error.
    child.stdin.on("error", () => undefined);
    child.stdin.end(stdin);

    let timedOut = false;
    let stopReason: string | undefined;
    let settled = false;
    let drain: NodeJS.Timeout | undefined;
    const killGroup = () => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // The group is gone already.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMs);
    const onAbort = () => {
      stopReason = "interrupted";
      killGroup();
    };
    options.signal?.addEventListener("abort", onAbort, { once: true });

    const finish = (partial: Partial<HookRun>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(drain);
      options.signal?.removeEventListener("abort", onAbort);
      child.stdout.destroy();
      child.stderr.destroy();
      resolve(done({ stdout: out.text(), stderr: err.text(), timedOut, ...partial }));
    };
    child.on("error", (error: NodeJS.ErrnoException) => {
      const why =
        error.code === "ENOENT"
          ? `command not found: ${file}`
          : error.code === "EACCES"
            ? `not executable: ${file} (chmod +x it, or name its interpreter in the command)`
            : error.message;
      finish({ error: why });
    });
    child.on("exit", (code) => {
      const result = {
        code: timedOut || stopReason ? null : code,
        ...(stopReason ? { error: stopReason } : {}),
      };
      // Output may still be in the pipes; a helper the hook left running may hold them forever.
      drain = setTimeout(() => finish(result), DRAIN_MS);
      child.on("close", () => finish(result));
    });
  });
}

function collector() {
  const chunks: Buffer[] = [];
  let size = 0;
  let cut = false;
  return {
    add: (chunk: Buffer) => {
      if (size >= MAX_OUTPUT_BYTES) {
        cut = true;
        return;
      }
      chunks.push(chunk);
      size += chunk.length;
    },
    text: () => {
      const text = Buffer.concat(chunks).subarray(0, MAX_OUTPUT_BYTES).toString("utf8");
      return cut ? `${text}\n[output cut at ${MAX_OUTPUT_BYTES} bytes]` : text;
    },
  };
}

/**
 * Splits a command line into words the way a POSIX shell reads quotes (single quotes literal,
 * double quotes with `\"`, `\\`, `\$` and `` \` ``, a backslash outside quotes escaping the next
 * character) without expanding anything but a leading `~` of an unquoted word. Throws on an
 * unterminated quote. Pure.
 */
export function splitCommand(command: string, home?: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let tildeOk = true;
  const push = () => {
    if (inWord) words.push(word);
    word = "";
    inWord = false;
    tildeOk = true;
  };
  for (let i = 0; i < command.length; i++) {
    const c = command[i] as string;
    if (c === " " || c === "\t" || c === "\n") {
      push();
      continue;
    }
    if (c === "~" && !inWord && tildeOk && home) {
      const next = command[i + 1];
      if (next === undefined || next === "/" || next === " " || next === "\t") {
        word += home;
        inWord = true;
        tildeOk = false;
        continue;
      }
    }
    tildeOk = false;
    inWord = true;
    if (c === "'") {
      const end = command.indexOf("'", i + 1);
      if (end < 0) throw new Error("a single quote is not closed");
      word += command.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < command.length && command[j] !== '"'; j++) {
        const d = command[j] as string;
        const n = command[j + 1];
        if (d === "\\" && n !== undefined && '"\\$`'.includes(n)) {
          word += n;
          j++;
        } else {
          word += d;
        }
      }
      if (j >= command.length) throw new Error("a double quote is not closed");
      i = j;
    } else if (c === "\\") {
      const n = command[i + 1];
      if (n !== undefined) {
        word += n;
        i++;
      }
    } else {
      word += c;
    }
  }
  push();
  return words;
}
