/**
 * `hermes config show|get|set|path|env-path|edit|check`. Results go to stdout, warnings and errors
 * to stderr. Exit codes: 0 success, 1 the task failed (e.g. the editor failed), 2 usage or
 * configuration error.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { Document } from "yaml";
import { loadEnvFile } from "../../config/env-file.js";
import { envFileProblemAt } from "../../config/env-file-check.js";
import { ConfigError, ProfileNameError } from "../../config/errors.js";
import { configPath, envPath } from "../../config/home.js";
import { unknownTopLevelKeys } from "../../config/known-keys.js";
import { type LoadedConfig, loadConfig } from "../../config/load.js";
import { isSecretKey, maskSecret, redactSecrets } from "../../config/secrets.js";
import { CONFIG_TEMPLATE } from "../../config/template.js";
import { checkKey, checkValue, configTextProblems } from "../../config/validate.js";
import { getConfigValue, isEnvStyleKey, setConfigValue } from "../../config/write.js";
import { YAML_SCHEMA } from "../../config/yaml-doc.js";
import { atomicWriteFileSync } from "../../util/atomic-write.js";
import { defineCommand } from "../command.js";

export interface ConfigCommandOptions {
  home: string;
  env: Record<string, string | undefined>;
  json?: boolean;
  /** `set`: write a key Hermes does not know, or a word the key does not take. */
  force?: boolean;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

const ACTIONS = ["show", "get", "set", "path", "env-path", "edit", "check"] as const;

class UsageError extends Error {}

/** `hermes config [action] [args...]`; the actions report their own errors (`error: …`). */
export const configCommand = defineCommand({
  name: "config",
  description: "show or change config.yaml: show | get KEY | set KEY VALUE | path | env-path | edit | check",
  needs: "home",
  parse: (cmd) =>
    cmd
      .argument("[action]", "show, get, set, path, env-path, edit or check", "show")
      .argument("[args...]")
      .option("--json", "JSON output where it applies")
      .option("--force", "set: write a key or value Hermes does not know anyway"),
  run: (ctx, action: string, args: string[], flags: { json?: boolean; force?: boolean }) =>
    runConfigCommand(action, args, {
      home: ctx.home,
      env: ctx.io.env,
      ...(flags.json ? { json: true } : {}),
      ...(flags.force ? { force: true } : {}),
      stdout: ctx.io.stdout,
      stderr: ctx.io.stderr,
    }),
});

/** Runs one `hermes config` action and returns the process exit code. Never throws. */
export async function runConfigCommand(
  action: string,
  args: string[],
  opts: ConfigCommandOptions,
): Promise<number> {
  const io = new Output(opts);
  try {
    switch (action === "" ? "show" : action) {
      case "show":
        return show(args, opts, io);
      case "get":
        return get(args, opts, io);
      case "set":
        return set(args, opts, io);
      case "path":
        noArgs("path", args);
        io.out(configPath(opts.home));
        return 0;
      case "env-path":
        noArgs("env-path", args);
        io.out(envPath(opts.home));
        return 0;
      case "edit":
        return edit(args, opts, io);
      case "check":
        return check(args, opts, io);
      default:
        throw new UsageError(
          `unknown config action ${JSON.stringify(action)}; use one of: ${ACTIONS.join(", ")}`,
        );
    }
  } catch (error) {
    if (error instanceof UsageError || error instanceof ConfigError || error instanceof ProfileNameError) {
      io.err(`error: ${error.message}`);
      return 2;
    }
    io.err(`error: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

class Output {
  constructor(private readonly opts: ConfigCommandOptions) {}
  out(text: string): void {
    this.opts.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
  }
  err(text: string): void {
    this.opts.stderr.write(text.endsWith("\n") ? text : `${text}\n`);
  }
  warn(text: string): void {
    this.err(`warning: ${text}`);
  }
}

function noArgs(action: string, args: string[]): void {
  if (args.length > 0) throw new UsageError(`usage: hermes config ${action} (takes no arguments)`);
}

/** Loads `.env` then config.yaml the way a real run does, printing load warnings. */
function load(
  opts: ConfigCommandOptions,
  io: Output,
): { loaded: LoadedConfig; env: Record<string, string | undefined> } {
  const { env } = loadEnvFile(opts.home, opts.env);
  const loaded = loadConfig({ home: opts.home, env });
  for (const warning of loaded.warnings) io.warn(warning);
  return { loaded, env };
}

function toYaml(value: unknown): string {
  return new Document(value, YAML_SCHEMA).toString({ lineWidth: 0, indentSeq: false });
}

function show(args: string[], opts: ConfigCommandOptions, io: Output): number {
  noArgs("show", args);
  const { loaded } = load(opts, io);
  const redacted = redactSecrets(loaded.config);
  if (opts.json) {
    io.out(JSON.stringify(redacted, null, 2));
    return 0;
  }
  const header = loaded.exists
    ? `# effective config: ${loaded.path} over the built-in defaults (secrets masked)`
    : `# no ${loaded.path}; built-in defaults (secrets masked)`;
  io.out(`${header}\n${toYaml(redacted)}`);
  return 0;
}

function get(args: string[], opts: ConfigCommandOptions, io: Output): number {
  const [key, ...rest] = args;
  if (key === undefined || rest.length > 0) throw new UsageError("usage: hermes config get KEY");
  if (isEnvStyleKey(key)) {
    const { env } = loadEnvFile(opts.home, opts.env);
    const value = env[key];
    if (value === undefined) {
      throw new UsageError(`${key} is not set in the environment or in ${envPath(opts.home)}`);
    }
    io.out(opts.json ? JSON.stringify(value) : value);
    return 0;
  }
  const { loaded } = load(opts, io);
  const value = getConfigValue(loaded.config, key);
  if (value === undefined) throw new UsageError(`unknown config key ${JSON.stringify(key)}`);
  if (opts.json) io.out(JSON.stringify(value, null, 2));
  else if (value !== null && typeof value === "object") io.out(toYaml(value));
  else io.out(value === null ? "null" : String(value));
  return 0;
}

function set(args: string[], opts: ConfigCommandOptions, io: Output): number {
  const [key, ...valueParts] = args;
  if (key === undefined || valueParts.length === 0)
    throw new UsageError("usage: hermes config set KEY VALUE");
  // Unquoted multi-word values arrive as several arguments.
  const raw = valueParts.join(" ");
  if (!isEnvStyleKey(key.trim())) {
    const problem = checkKey(key.trim()) ?? checkValue(key.trim(), raw);
    if (problem && !opts.force) {
      throw new UsageError(
        `${problem.message}. config.yaml was not changed; add --force to write it anyway.`,
      );
    }
    if (problem) io.warn(`${problem.message}; written anyway (--force)`);
  }
  const result = setConfigValue(opts.home, key, raw);
  if (result.target === "env") {
    io.out(`Saved ${result.key} to ${result.path}`);
  } else {
    const last = result.key.split(".").pop() ?? "";
    const shown = formatInline(result.value);
    io.out(`Set ${result.key} = ${isSecretKey(last) ? maskSecret(shown) : shown} in ${result.path}`);
  }
  if (result.hint) io.err(`hint: ${result.hint}`);
  const envProblem = result.target === "env" ? envFileProblemAt(opts.home) : undefined;
  if (envProblem) {
    io.warn(`${result.path}: ${envProblem}; a running gateway keeps its allowlists until it is fixed`);
  }
  if (result.target === "config") {
    try {
      loadConfig({ home: opts.home, env: loadEnvFile(opts.home, opts.env).env });
    } catch (error) {
      // The edit succeeded; another part of the file was already wrong.
      if (!(error instanceof ConfigError)) throw error;
      io.warn(`config.yaml still has a problem elsewhere: ${error.message}`);
    }
  }
  return 0;
}

function formatInline(value: unknown): string {
  if (typeof value === "string") return value;
  return JSON.stringify(value) ?? String(value);
}

function edit(args: string[], opts: ConfigCommandOptions, io: Output): number {
  noArgs("edit", args);
  const file = configPath(opts.home);
  if (!existsSync(file)) {
    mkdirSync(opts.home, { recursive: true });
    atomicWriteFileSync(file, CONFIG_TEMPLATE);
  }
  const editor = opts.env["VISUAL"] || opts.env["EDITOR"] || "vi";
  const result =
    process.platform === "win32"
      ? spawnSync(editor, [file], { stdio: "inherit", shell: true, env: opts.env })
      : // Through sh so an EDITOR with arguments (`code --wait`) works; the path travels as $1, never spliced into the script.
        spawnSync("/bin/sh", ["-c", `${editor} "$1"`, "sh", file], { stdio: "inherit", env: opts.env });
  if (result.error) {
    io.err(`error: could not start the editor ${JSON.stringify(editor)}: ${result.error.message}`);
    return 1;
  }
  if (result.status !== 0) {
    io.err(
      `error: the editor ${JSON.stringify(editor)} exited with status ${result.status ?? result.signal}`,
    );
    return 1;
  }
  return check([], opts, io);
}

/**
 * Loads the file as a run would (a broken or mistyped one is exit 2), then holds it to the strict
 * rules: an unknown key or a word a key does not take is reported and exits 1.
 */
function check(args: string[], opts: ConfigCommandOptions, io: Output): number {
  noArgs("check", args);
  const { loaded } = load(opts, io);
  const warnings: string[] = [];
  for (const { key, suggestion } of unknownTopLevelKeys(Object.keys(loaded.config))) {
    const hint = suggestion === undefined ? "" : ` (did you mean ${JSON.stringify(suggestion)}?)`;
    warnings.push(
      `${loaded.path}: unknown top-level key ${JSON.stringify(key)}${hint}; Hermes does not use it`,
    );
  }
  const strict = loaded.exists ? configTextProblems(readFileSync(loaded.path, "utf8"), loaded.path) : [];
  // Top-level keys were reported above, in the wording scripts already match.
  const deeper = strict.filter((p) => p.kind === "bad_value" || p.key.includes("."));
  for (const problem of deeper) {
    warnings.push(
      `${loaded.path}${problem.line === undefined ? "" : ` line ${problem.line}`}: ${problem.message}`,
    );
  }
  const failed = strict.length > 0;
  const permissions = envFileWarning(opts.home);
  if (permissions) warnings.push(permissions);
  for (const warning of warnings) io.warn(warning);
  if (opts.json) {
    io.out(
      JSON.stringify({
        ok: !failed,
        path: loaded.path,
        exists: loaded.exists,
        warnings: [...loaded.warnings, ...warnings],
        problems: strict.map(({ key, kind, message, line }) => ({ key, kind, message, line })),
      }),
    );
  } else if (failed) {
    const count = strict.length;
    io.out(
      `config.yaml has ${count} problem${count === 1 ? "" : "s"} (${loaded.path}): fix ${count === 1 ? "it" : "them"} with hermes config edit`,
    );
  } else if (loaded.exists) {
    io.out(`config.yaml OK (${loaded.path})`);
  } else {
    io.out(`config.yaml OK: none at ${loaded.path}, so the built-in defaults apply`);
  }
  return failed ? 1 : 0;
}

function envFileWarning(home: string): string | undefined {
  if (process.platform === "win32") return undefined;
  const path = envPath(home);
  try {
    const mode = statSync(path).mode & 0o777;
    if ((mode & 0o077) === 0) return undefined;
    return `${path} is readable by other users (mode ${mode.toString(8)}); run: chmod 600 ${path}`;
  } catch {
    return undefined;
  }
}
