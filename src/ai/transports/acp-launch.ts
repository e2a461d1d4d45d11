/**
 * How the `copilot-acp` provider starts its agent: which program, with which arguments, found where
 * on PATH, and with which environment. The names follow Python Hermes: HERMES_COPILOT_ACP_COMMAND
 * (or COPILOT_CLI_PATH) for the program, default `copilot`; HERMES_COPILOT_ACP_ARGS for its
 * arguments, default `--acp --stdio`. Pure apart from the PATH lookup (stat calls).
 */
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import { isSecretEnvName } from "../../config/known-secrets.js";
import { scrubEnv } from "../../util/env-scrub.js";
import { NoProviderError } from "../no-provider.js";

type Env = Readonly<Record<string, string | undefined>>;

/** The agent process to start: a program and its arguments. */
export interface AcpLaunch {
  command: string;
  args: readonly string[];
}

export const COPILOT_ACP_DEFAULT_COMMAND = "copilot";
export const COPILOT_ACP_DEFAULT_ARGS: readonly string[] = ["--acp", "--stdio"];

/**
 * The variable the Copilot CLI reads its own GitHub token from. It is the one credential the child
 * keeps: it is how that CLI logs in when its stored login is not used. GH_TOKEN and GITHUB_TOKEN
 * are withheld, as Python Hermes withholds them from every helper process.
 */
export const COPILOT_CLI_TOKEN_ENV = "COPILOT_GITHUB_TOKEN";

/** The program and arguments from the environment (`.env` merged under the process's own). */
export function copilotAcpLaunch(env: Env): AcpLaunch {
  const command =
    env["HERMES_COPILOT_ACP_COMMAND"]?.trim() ||
    env["COPILOT_CLI_PATH"]?.trim() ||
    COPILOT_ACP_DEFAULT_COMMAND;
  const raw = env["HERMES_COPILOT_ACP_ARGS"]?.trim() ?? "";
  const args = raw ? splitArgs(raw) : [...COPILOT_ACP_DEFAULT_ARGS];
  return { command, args };
}

/**
 * Splits an argument string as a POSIX shell would without expanding anything: single quotes,
 * double quotes (with `\"` and `\\` inside), backslash escapes, whitespace between words.
 */
export function splitArgs(text: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word += c;
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === "\\" && (text[i + 1] === '"' || text[i + 1] === "\\")) word += text[++i];
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === "\\" && i + 1 < text.length) {
      word += text[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

/**
 * The executable `command` names: itself when it contains a slash (relative to `cwd`), else the
 * first executable file of that name on `PATH`. Undefined when there is none.
 */
export function findOnPath(command: string, env: Env, cwd = process.cwd()): string | undefined {
  const executable = (path: string) => {
    try {
      accessSync(path, constants.X_OK);
      return statSync(path).isFile();
    } catch {
      return false;
    }
  };
  if (command.includes("/")) {
    const path = isAbsolute(command) ? command : join(cwd, command);
    return executable(path) ? path : undefined;
  }
  for (const dir of (env["PATH"] ?? "").split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, command);
    if (executable(candidate)) return candidate;
  }
  return undefined;
}

/**
 * The agent's environment: Hermes's environment without its secrets. Every variable whose name
 * says it holds a secret (keys, tokens, passwords: `config/known-secrets.ts`) and every provider
 * key and platform token of the helper-process list (`util/env-scrub.ts`) is dropped, except the
 * Copilot CLI's own token. PATH, HOME, XDG directories, locale and proxies stay, so the CLI finds
 * its stored login (`~/.copilot`) and its network. Pure.
 */
export function acpChildEnv(env: Env): Record<string, string> {
  const scrubbed = scrubEnv(env, [COPILOT_CLI_TOKEN_ENV]);
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(scrubbed)) {
    if (value === undefined) continue;
    if (name !== COPILOT_CLI_TOKEN_ENV && isSecretEnvName(name)) continue;
    // A value starting with "()" is an exported shell function: code, not configuration.
    if (value.startsWith("()")) continue;
    out[name] = value;
  }
  return out;
}

/**
 * The Copilot CLI to start for the `copilot-acp` provider, found on PATH; a `NoProviderError`
 * (a configuration error) when it is not there.
 */
export function copilotAcpRuntimeLaunch(env: Env): AcpLaunch {
  const launch = copilotAcpLaunch(env);
  const found = findOnPath(launch.command, env);
  if (!found) {
    throw new NoProviderError(
      `Provider copilot-acp needs the GitHub Copilot CLI, and "${launch.command}" is not on PATH.\n` +
        "Install it (npm install -g @github/copilot), log in once by running copilot, " +
        "or set HERMES_COPILOT_ACP_COMMAND to its path.",
    );
  }
  return { command: found, args: launch.args };
}
