/**
 * Custom command providers (`tts.providers.<name>` / `stt.providers.<name>` with `type: command`,
 * upstream's shape). The template is split into words here and run without a shell: a template field
 * value (a path, a voice name) always becomes part of one word and is never read as shell syntax,
 * so text that looks like `$(rm -rf ~)` or `; curl ...` stays text. The pieces of shell that
 * upstream's examples use are understood directly: quotes, backslashes, `~/`, `$VAR`, and
 * `< file` / `> file` redirections (piper reads its text on stdin). Pipes, `;`, `&` and command
 * substitution need a real shell: the user writes a script and names it instead.
 */
import { spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { homedir } from "node:os";
import type { Env } from "../shared.js";

export interface CommandPlan {
  argv: string[];
  stdinFile?: string;
  stdoutFile?: string;
}

type Token = { kind: "word"; text: string } | { kind: "<" | ">" };

const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;

/**
 * The argv and redirections of `template` with `{name}` fields from `values` filled in
 * (`{{`/`}}` are literal braces). Throws a message naming what needs a shell.
 */
export function planCommand(
  template: string,
  values: Readonly<Record<string, string>>,
  env: Env,
): CommandPlan {
  const tokens: Token[] = [];
  let cur = "";
  let started = false;
  let quote: "'" | '"' | undefined;
  const flush = () => {
    if (started) tokens.push({ kind: "word", text: cur });
    cur = "";
    started = false;
  };
  const needsShell = (what: string): never => {
    throw new Error(
      `the command uses ${what}, which needs a shell; Hermes runs custom commands without one, so put the pipeline in a script and name the script in command.`,
    );
  };
  const variable = (i: number): number => {
    const rest = template.slice(i + 1);
    const braced = /^\{([A-Za-z_][A-Za-z0-9_]*)\}/.exec(rest);
    const bare = NAME.exec(rest);
    if (braced) {
      cur += env[braced[1] ?? ""] ?? "";
      return i + braced[0].length;
    }
    if (bare) {
      cur += env[bare[0]] ?? "";
      return i + bare[0].length;
    }
    if (rest.startsWith("(")) needsShell("$( ) command substitution");
    cur += "$";
    return i;
  };
  for (let i = 0; i < template.length; i++) {
    const ch = template[i] ?? "";
    const next = template[i + 1] ?? "";
    if ((ch === "{" && next === "{") || (ch === "}" && next === "}")) {
      cur += ch;
      started = true;
      i++;
      continue;
    }
    if (ch === "{" && template[i - 1] !== "$") {
      const m = /^\{([a-z_]+)\}/.exec(template.slice(i));
      const name = m?.[1];
      if (m && name !== undefined && Object.hasOwn(values, name)) {
        cur += values[name];
        started = true;
        i += m[0].length - 1;
        continue;
      }
    }
    if (quote === "'") {
      if (ch === "'") quote = undefined;
      else cur += ch;
      continue;
    }
    if (quote === '"') {
      if (ch === '"') quote = undefined;
      else if (ch === "\\" && /["\\$`]/.test(next)) {
        cur += next;
        i++;
      } else if (ch === "$") i = variable(i);
      else if (ch === "`") needsShell("` ` command substitution");
      else cur += ch;
      continue;
    }
    if (ch === "'" || ch === '"') {
      quote = ch;
      started = true;
    } else if (ch === "\\") {
      cur += next;
      started = true;
      i++;
    } else if (/\s/.test(ch)) flush();
    else if (ch === "<" || ch === ">") {
      flush();
      if (next === ">" || next === "&" || next === "(") needsShell(`"${ch}${next}"`);
      tokens.push({ kind: ch });
    } else if ("|;&`()".includes(ch)) needsShell(`"${ch}"`);
    else if (ch === "$") {
      started = true;
      i = variable(i);
    } else if (ch === "~" && !started && (next === "/" || next === "" || /\s/.test(next))) {
      cur += env["HOME"] ?? homedir();
      started = true;
    } else {
      cur += ch;
      started = true;
    }
  }
  if (quote) throw new Error(`the command has an unclosed ${quote} quote.`);
  flush();
  const plan: CommandPlan = { argv: [] };
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    if (token?.kind === "word") {
      plan.argv.push(token.text);
      continue;
    }
    const target = tokens[i + 1];
    if (target?.kind !== "word") throw new Error(`the command has "${token?.kind}" without a file after it.`);
    if (token?.kind === "<") plan.stdinFile = target.text;
    else plan.stdoutFile = target.text;
    i++;
  }
  if (plan.argv.length === 0) throw new Error("the command is empty.");
  return plan;
}

export interface RunOptions {
  env: Env;
  /** Killed when it prints nothing for this long (a slow but talkative engine survives). */
  idleTimeoutMs: number;
  signal?: AbortSignal | undefined;
  /** Written to stdin when the plan has no `<` redirection. */
  input?: string;
  cwd?: string;
}

const MAX_CAPTURE = 1024 * 1024;

/** Runs a planned command (no shell, its own process group); resolves with stdout, rejects naming the failure. */
export function runPlan(plan: CommandPlan, options: RunOptions): Promise<string> {
  const [program, ...args] = plan.argv;
  const name = (program ?? "").split("/").pop();
  return new Promise<string>((resolve, reject) => {
    const fds: number[] = [];
    let stdin: "pipe" | number = "pipe";
    let stdout: "pipe" | number = "pipe";
    try {
      if (plan.stdinFile) stdin = fds[fds.push(openSync(plan.stdinFile, "r")) - 1] ?? "pipe";
      if (plan.stdoutFile) stdout = fds[fds.push(openSync(plan.stdoutFile, "w")) - 1] ?? "pipe";
    } catch (error) {
      for (const fd of fds) closeSync(fd);
      reject(new Error(`cannot open a redirection file: ${(error as Error).message}`));
      return;
    }
    const child = spawn(program ?? "", args, {
      env: options.env as NodeJS.ProcessEnv,
      stdio: [stdin, stdout, "pipe"],
      detached: process.platform !== "win32",
      ...(options.cwd ? { cwd: options.cwd } : {}),
    });
    for (const fd of fds) closeSync(fd);
    let out = "";
    let err = "";
    let why: string | undefined;
    const kill = (reason: string) => {
      why ??= reason;
      const pid = child.pid;
      if (pid === undefined) return;
      try {
        process.kill(process.platform === "win32" ? pid : -pid, "SIGTERM");
      } catch {
        // already gone
      }
      setTimeout(() => {
        try {
          process.kill(process.platform === "win32" ? pid : -pid, "SIGKILL");
        } catch {
          // already gone
        }
      }, 2000).unref();
    };
    let idle = setTimeout(
      () => kill(`printed nothing for ${options.idleTimeoutMs / 1000} s`),
      options.idleTimeoutMs,
    );
    const activity = () => {
      clearTimeout(idle);
      idle = setTimeout(
        () => kill(`printed nothing for ${options.idleTimeoutMs / 1000} s`),
        options.idleTimeoutMs,
      );
    };
    const onAbort = () => kill("was interrupted");
    if (options.signal?.aborted) onAbort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    child.stdout?.on("data", (chunk: Buffer) => {
      activity();
      if (out.length < MAX_CAPTURE) out += chunk.toString("utf8");
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      activity();
      err = (err + chunk.toString("utf8")).slice(-4000);
    });
    child.stdin?.on("error", () => {});
    if (child.stdin) child.stdin.end(options.input ?? "");
    child.on("error", (error: NodeJS.ErrnoException) => {
      clearTimeout(idle);
      options.signal?.removeEventListener("abort", onAbort);
      reject(
        new Error(
          error.code === "ENOENT"
            ? `program "${program}" was not found`
            : `${name} could not start: ${error.message}`,
        ),
      );
    });
    child.on("close", (code, signal) => {
      clearTimeout(idle);
      options.signal?.removeEventListener("abort", onAbort);
      const tail = err.trim().split("\n").slice(-3).join(" ").slice(0, 400);
      if (why) reject(new Error(`${name} ${why}${tail ? `: ${tail}` : ""}`));
      else if (code !== 0)
        reject(
          new Error(
            `${name} failed (${code === null ? `signal ${signal}` : `exit ${code}`})${tail ? `: ${tail}` : ""}`,
          ),
        );
      else resolve(out);
    });
  });
}

/** A provider's `timeout` / `timeout_seconds` in ms, else the default. */
export function commandTimeoutMs(config: Record<string, unknown>, fallbackSeconds: number): number {
  const raw = Number(config["timeout"] ?? config["timeout_seconds"]);
  return (Number.isFinite(raw) && raw > 0 ? raw : fallbackSeconds) * 1000;
}

/** `env_passthrough` names (variables the command may see despite the key scrub). */
export function passthroughNames(config: Record<string, unknown>): string[] {
  const raw = config["env_passthrough"];
  return Array.isArray(raw) ? raw.map((v) => String(v).trim()).filter(Boolean) : [];
}

/** The `<section>.providers.<name>` block when it declares a command provider. */
export function commandProviderConfig(
  section: Record<string, unknown>,
  name: string,
): Record<string, unknown> | undefined {
  const providers = section["providers"];
  let block: unknown =
    providers && typeof providers === "object" && !Array.isArray(providers)
      ? (providers as Record<string, unknown>)[name]
      : undefined;
  block ??= section[name];
  if (!block || typeof block !== "object" || Array.isArray(block)) return undefined;
  const cfg = block as Record<string, unknown>;
  const type = typeof cfg["type"] === "string" ? cfg["type"].trim().toLowerCase() : "";
  if (type && type !== "command") return undefined;
  return typeof cfg["command"] === "string" && cfg["command"].trim() ? cfg : undefined;
}
