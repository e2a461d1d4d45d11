/**
 * A cron job's `script`: a file in `<home>/scripts` run before (or instead of) the agent, its
 * stdout handed on. It goes through the terminal's guards, never copies of them:
 *
 * - where: the path must resolve, symlinks followed, to a regular file inside the real `scripts/`
 *   folder (a link that leads out is refused); the folder itself is on the protected-path list,
 *   so the agent cannot put a script there without the user;
 * - what: the file's text is read by the command analyser (shell scripts) or the interpreter-code
 *   analyser (Python, JavaScript), like a command the model typed; hardline findings refuse it,
 *   other findings go to the approval policy as the `cron` surface, so `approvals.cron_mode`
 *   decides (deny by default) and protected paths are always refused;
 * - how: the local environment's one-shot runner (its own process group; a timeout or an
 *   interrupt kills the group), the terminal's environment (secrets Hermes loaded from `.env`
 *   withheld), and the secret redactor over everything it prints.
 */
import { readFileSync, realpathSync, statSync } from "node:fs";
import { dirname, extname, join, relative, sep } from "node:path";
import { ApprovalPolicy, approvalSettings } from "../agent/approval-policy.js";
import type { HermesConfig } from "../config/defaults.js";
import { loadEnvFile } from "../config/env-file.js";
import { execLocal } from "../environments/local/process.js";
import { quote } from "../environments/local/shell-session.js";
import { CronScriptPathError, normalizeScriptPath, scriptsDirOf } from "../knowledge/cron/script-path.js";
import { findingsOf } from "../tools/approval/index.js";
import { analyseScript } from "../tools/approval/interpreters.js";
import { guardRoots } from "../tools/approval/protected-paths.js";
import type { AnalysisContext, Finding } from "../tools/approval/types.js";
import { terminalEnv } from "../util/env-scrub.js";
import { redactText } from "../util/redact.js";

/** Python Hermes's default, `cron.script_timeout_seconds`. */
export const DEFAULT_SCRIPT_TIMEOUT_S = 120;
/** Output beyond this is cut (it goes into a prompt or a chat message). */
const MAX_OUTPUT_CHARS = 50_000;

export type ScriptRunner = "bash" | "python" | "node";

/** How a script ran. `refused`: it never started (outside scripts/, missing, blocked, denied). */
export type CronScriptResult =
  | { status: "ok"; output: string }
  | { status: "failed"; error: string }
  | { status: "refused"; error: string };

/** `.sh`/`.bash` run with bash and `.js`/`.mjs`/`.cjs` with Node; anything else with python3, as upstream. */
export function scriptRunner(path: string): ScriptRunner {
  const ext = extname(path).toLowerCase();
  if (ext === ".sh" || ext === ".bash") return "bash";
  if (ext === ".js" || ext === ".mjs" || ext === ".cjs") return "node";
  return "python";
}

/**
 * The script's real path, or a refusal. Reads the file system: the file must exist, be a regular
 * file, and its real path (every symlink followed) must lie inside the real `scripts/` folder.
 */
export function resolveCronScript(
  home: string,
  script: string,
  userHome?: string,
): { path: string } | { error: string } {
  let rel: string;
  try {
    rel = normalizeScriptPath(home, script, userHome);
  } catch (error) {
    if (error instanceof CronScriptPathError) return { error: `Blocked: ${error.message}` };
    throw error;
  }
  const dir = scriptsDirOf(home);
  let realDir: string;
  let real: string;
  try {
    realDir = realpathSync(dir);
    real = realpathSync(join(dir, rel));
  } catch {
    return { error: `Script not found: ${join(dir, rel)}. Put the script there, or edit the job's script.` };
  }
  const inside = relative(realDir, real);
  if (!inside || inside.startsWith(`..${sep}`) || inside === "..") {
    return {
      error: `Blocked: script "${script}" leads outside ${dir} (to ${real}) through a symlink; cron runs only files that are in that folder.`,
    };
  }
  if (!statSync(real).isFile()) return { error: `Script path is not a file: ${real}.` };
  return { path: real };
}

/** The timeout: `HERMES_CRON_SCRIPT_TIMEOUT`, then `cron.script_timeout_seconds`, then 120 s. */
export function scriptTimeoutS(
  config: Readonly<Record<string, unknown>>,
  env: Readonly<Record<string, string | undefined>>,
): number {
  const fromEnv = Number(env["HERMES_CRON_SCRIPT_TIMEOUT"]?.trim() || Number.NaN);
  if (Number.isFinite(fromEnv) && fromEnv > 0) return fromEnv;
  const cron = config["cron"];
  const value =
    cron && typeof cron === "object"
      ? Number((cron as Record<string, unknown>)["script_timeout_seconds"])
      : NaN;
  return Number.isFinite(value) && value > 0 ? value : DEFAULT_SCRIPT_TIMEOUT_S;
}

/**
 * What the analysers find in the script's text, judged where it runs (`cwd`). A script the
 * analyser cannot read (binary, too long) is a finding itself: it needs approval like opaque code.
 */
export function scriptFindings(source: string, runner: ScriptRunner, where: AnalysisContext): Finding[] {
  if (source.includes("\0")) return [{ key: "opaque_code", reason: "is a binary file (opaque code)" }];
  const shell = (command: string) => findingsOf(command, where);
  if (runner === "bash") return shell(source);
  return analyseScript(runner, source, where, shell);
}

export interface RunCronScriptOptions {
  home: string;
  config: HermesConfig;
  env: Record<string, string | undefined>;
  /** The job's workdir (the script's cwd when it is a directory); default the script's folder. */
  workdir?: string | null;
  /** Stops the script (its whole process group). */
  signal?: AbortSignal;
}

/** Runs a job's script; never throws for the script's own failure. */
export async function runCronScript(
  script: string,
  options: RunCronScriptOptions,
): Promise<CronScriptResult> {
  const { home, config, env } = options;
  const userHome = env["HOME"];
  const found = resolveCronScript(home, script, userHome);
  if ("error" in found) return { status: "refused", error: found.error };
  const path = found.path;
  const cwd = usableDir(options.workdir) ?? dirname(path);
  const runner = scriptRunner(path);
  const source = readFileSync(path, "utf8");
  const where: AnalysisContext = {
    cwd,
    home: userHome ?? dirname(home),
    hermesHome: home,
    roots: guardRoots(home, env),
  };
  const refusal = await approve(script, path, runner, source, where, config);
  if (refusal) return { status: "refused", error: refusal };

  const timeoutS = scriptTimeoutS(config as unknown as Record<string, unknown>, env);
  const program = runner === "bash" ? "bash" : runner === "node" ? quote(process.execPath) : "python3";
  const started = Date.now();
  const result = await execLocal(
    `exec ${program} ${quote(path)}`,
    { cwd, timeoutMs: timeoutS * 1000, ...(options.signal ? { signal: options.signal } : {}) },
    childEnv(home, config, env),
    cwd,
  );
  const stdout = clip(redactText(result.stdout.toString("utf8")).trim());
  const stderr = clip(redactText(result.stderr).trim());
  if (result.exitCode === null) {
    const why = options.signal?.aborted
      ? "was interrupted (the run was stopped)"
      : `timed out after ${timeoutS}s (cron.script_timeout_seconds)`;
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    return {
      status: "failed",
      error: [`Script ${script} ${why} and was killed after ${seconds}s.`, ...printed(stdout, stderr)].join(
        "\n",
      ),
    };
  }
  if (result.exitCode !== 0) {
    return {
      status: "failed",
      error: [`Script ${script} exited with code ${result.exitCode}.`, ...printed(stdout, stderr)].join("\n"),
    };
  }
  return { status: "ok", output: stdout };
}

/** Refusal text, or undefined when the script may run. */
async function approve(
  script: string,
  path: string,
  runner: ScriptRunner,
  source: string,
  where: AnalysisContext,
  config: HermesConfig,
): Promise<string | undefined> {
  const findings = scriptFindings(source, runner, where);
  if (findings.length === 0) return undefined;
  const reasons = [...new Set(findings.map((f) => f.reason))].join("; ");
  const hardline = findings.filter((f) => f.hardline);
  if (hardline.length > 0) {
    return `Blocked: script ${script} ${[...new Set(hardline.map((f) => f.reason))].join("; ")}. This is never run, with or without approval. Change the script.`;
  }
  const { settings } = approvalSettings(config, "cron");
  const policy = new ApprovalPolicy({ settings, yolo: false, allowlist: config.command_allowlist ?? [] });
  const protectedPath = findings.some((f) => f.protectedPath);
  const outcome = await policy.decide({
    command: `${runner === "bash" ? "bash" : runner === "node" ? "node" : "python3"} ${path}`,
    reason: `cron script ${script}: ${reasons}`,
    patternKey: (findings.find((f) => f.protectedPath) ?? (findings[0] as Finding)).key,
    ...(protectedPath ? { protectedPath: true } : {}),
  });
  if (outcome.decision !== "deny") return undefined;
  const fix = protectedPath
    ? "Scripts never change protected files unattended; change the script."
    : "Set approvals.cron_mode: approve in config.yaml to let cron run dangerous commands, or change the script.";
  return `Refused: script ${script} ${reasons}, and approvals.cron_mode does not allow it. It was not run. ${fix}`;
}

/** The terminal's environment rule: what Hermes loaded from `.env` stays out unless passed through. */
function childEnv(
  home: string,
  config: HermesConfig,
  env: Record<string, string | undefined>,
): Record<string, string | undefined> {
  let withheld: string[] = [];
  try {
    withheld = loadEnvFile(home, {}).loaded;
  } catch {
    // An unreadable .env loaded nothing into the environment either.
  }
  const passthrough = (config as unknown as { terminal?: { env_passthrough?: unknown } }).terminal
    ?.env_passthrough;
  return {
    ...terminalEnv(env, {
      withheld,
      passthrough: Array.isArray(passthrough) ? passthrough.map(String) : [],
    }),
    HERMES_HOME: home,
  };
}

function usableDir(dir: string | null | undefined): string | undefined {
  if (!dir?.trim()) return undefined;
  try {
    return statSync(dir).isDirectory() ? dir : undefined;
  } catch {
    return undefined;
  }
}

function clip(text: string): string {
  if (text.length <= MAX_OUTPUT_CHARS) return text;
  return `${text.slice(0, MAX_OUTPUT_CHARS)}\n[… ${text.length - MAX_OUTPUT_CHARS} more characters cut]`;
}

function printed(stdout: string, stderr: string): string[] {
  return [...(stderr ? [`stderr:\n${stderr}`] : []), ...(stdout ? [`stdout:\n${stdout}`] : [])];
}

/**
 * The wake gate of Python Hermes: when the last non-empty line of the output is a JSON object with
 * `"wakeAgent": false`, the agent is not woken (nothing is delivered). Anything else wakes it.
 */
export function wakesAgent(output: string): boolean {
  const last = output
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .pop();
  if (!last) return true;
  try {
    const gate: unknown = JSON.parse(last);
    return !(
      typeof gate === "object" &&
      gate !== null &&
      (gate as Record<string, unknown>)["wakeAgent"] === false
    );
  } catch {
    return true;
  }
}
