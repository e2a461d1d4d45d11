/**
 * execute_code: the model writes a Python (or JavaScript) script that calls tools through a
 * generated `hermes_tools` module; only what the script prints comes back. The script runs on the
 * agent host (never the terminal backend) in `ctx.cwd`, in its own process group, with a scrubbed
 * environment; its tool calls travel over a Unix socket in a private temp folder and run through
 * `ctx.callTool`, the agent's normal path (validation, approvals, task and terminal state). What it
 * does directly (files, commands, downloaded code) is analysed first (script-guard.ts).
 */
import { accessSync, constants, statSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { type TUnsafe, Type } from "@sinclair/typebox";
import { defineTool, type ToolContext } from "../types.js";
import { buildChildEnv } from "./child-env.js";
import description from "./execute-code.md";
import { startRpcServer } from "./rpc-server.js";
import { type ChildResult, runChild } from "./run-child.js";
import { guardScript } from "./script-guard.js";
import { javascriptStub, pythonStub, SANDBOX_ALLOWED_TOOLS } from "./stubs.js";

/** Bytes of stdout and stderr kept (head and tail) before a truncation notice. */
export const STDOUT_LIMIT = 50 * 1024;
export const STDERR_LIMIT = 10 * 1024;
const DEFAULT_TIMEOUT_S = 300;
const DEFAULT_MAX_TOOL_CALLS = 50;
const DEFAULT_RESULT_BYTES = 50_000;

type Language = "python" | "javascript";

const parameters = Type.Object({
  code: Type.String({ description: "The script." }),
  language: Type.Optional(
    Type.Unsafe<Language>({ type: "string", enum: ["python", "javascript"] }) as TUnsafe<Language>,
  ),
});

/** What the model reads back. */
export interface ExecuteCodeResult {
  status: "success" | "error" | "timeout" | "interrupted";
  /** The script's stdout (cut to head and tail with a notice when too long). */
  output: string;
  /** The script's stderr, present only when non-empty. */
  errors?: string;
  /** null when the script was ended by a signal or never started. */
  exit_code: number | null;
  tool_calls_made: number;
  duration_seconds: number;
  /** Why the run ended early (timeout, interrupt, no interpreter). */
  message?: string;
}

export const executeCodeTool = defineTool({
  name: "execute_code",
  toolset: "code_execution",
  description,
  parameters,
  emoji: "🐍",
  // Needs Unix domain sockets; node (which runs Hermes) is always there for JavaScript.
  check: () => process.platform !== "win32",
  handler: (args, ctx) => executeCode(args.code, args.language, ctx),
});

/** The tools a script may call in this session: the sandbox allow-list ∩ the session's tools. */
export function sandboxToolNames(ctx: Pick<ToolContext, "enabledTools" | "callTool">): string[] {
  if (!ctx.callTool) return [];
  const enabled = ctx.enabledTools;
  return SANDBOX_ALLOWED_TOOLS.filter((name) => enabled === undefined || enabled.includes(name));
}

async function executeCode(
  code: string,
  requested: Language | undefined,
  ctx: ToolContext,
): Promise<ExecuteCodeResult> {
  const started = Date.now();
  const ended = (status: ExecuteCodeResult["status"], message: string): ExecuteCodeResult => ({
    status,
    output: "",
    exit_code: null,
    tool_calls_made: 0,
    duration_seconds: seconds(Date.now() - started),
    message,
  });
  if (ctx.signal.aborted) return ended("interrupted", "Interrupted by the user before the script started.");
  if (code.trim() === "") throw new Error("code is empty: pass the script to run.");
  const python = findExecutable("python3", ctx.env.PATH);
  const language = requested ?? (python ? "python" : "javascript");
  if (language === "python" && !python) {
    throw new Error(
      'python3 was not found on PATH, so a Python script cannot run here. Use language "javascript" (Node) instead.',
    );
  }
  // What the script does directly (open(), os.system, child_process) is judged before it runs.
  await guardScript(code, language, ctx);
  const limits = codeExecutionConfig(ctx.config);
  const allowed = sandboxToolNames(ctx);
  const callTool = ctx.callTool;

  const dir = await mkdtemp(join(tempBase(), "hermes-exec-"));
  try {
    await chmod(dir, 0o700);
    const script = join(dir, language === "python" ? "script.py" : "script.mjs");
    await writeModules(dir, allowed);
    await writeFile(script, code, { mode: 0o600 });
    const socketPath = join(dir, "rpc.sock");
    // Nested calls still running when the script ends (timeout, crash) are stopped with it.
    const scriptDone = new AbortController();
    const server = await startRpcServer({
      socketPath,
      allowed,
      maxToolCalls: limits.maxToolCalls,
      dispatch: (tool, toolArgs) => {
        if (!callTool) throw new Error("nested tool calls are not available in this context");
        return callTool(tool, toolArgs, { signal: scriptDone.signal });
      },
      onCall: (tool, n) => ctx.progress(`${tool} (call ${n})`),
    });
    let child: ChildResult;
    try {
      child = await runChild({
        command: language === "python" ? (python as string) : process.execPath,
        args: [script],
        cwd: ctx.cwd,
        env: buildChildEnv(ctx.env, { socketPath, moduleDir: dir }),
        timeoutMs: limits.timeoutS * 1000,
        signal: ctx.signal,
        stdoutLimit: STDOUT_LIMIT,
        stderrLimit: STDERR_LIMIT,
      });
    } finally {
      scriptDone.abort();
      await server.close();
    }
    const calls = server.callsMade;
    const result = fitToBudget(
      (out, err) => toResult(child, out, err, calls, limits.timeoutS, language),
      limits.resultBytes,
    );
    // A script that failed or timed out counts for the tool-loop guardrails like a failed command.
    if (result.status === "error" || result.status === "timeout") ctx.reportFailure?.(result.status);
    return result;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Socket paths are limited to ~104 bytes (macOS); a very long TMPDIR falls back to /tmp. */
function tempBase(): string {
  const base = tmpdir();
  return join(base, "hermes-exec-XXXXXX", "rpc.sock").length > 100 ? "/tmp" : base;
}

/**
 * Writes `hermes_tools.py` and `hermes_tools.mjs`, plus a tiny `node_modules/hermes_tools`
 * package so `import ... from "hermes_tools"` resolves as well as the relative path.
 */
async function writeModules(dir: string, allowed: readonly string[]): Promise<void> {
  await writeFile(join(dir, "hermes_tools.py"), pythonStub(allowed), { mode: 0o600 });
  await writeFile(join(dir, "hermes_tools.mjs"), javascriptStub(allowed), { mode: 0o600 });
  const pkg = join(dir, "node_modules", "hermes_tools");
  await mkdir(pkg, { recursive: true });
  await writeFile(
    join(pkg, "package.json"),
    JSON.stringify({ name: "hermes_tools", type: "module", exports: "./index.mjs" }),
  );
  await writeFile(join(pkg, "index.mjs"), 'export * from "../../hermes_tools.mjs";\n');
}

function toResult(
  child: ChildResult,
  stdoutLimit: number,
  stderrLimit: number,
  calls: number,
  timeoutS: number,
  language: Language,
): ExecuteCodeResult {
  const output = child.stdout.result(stdoutLimit).text.replace(/\n$/, "");
  const errors = child.stderr.result(stderrLimit).text.replace(/\n$/, "");
  let status: ExecuteCodeResult["status"] = "success";
  let message: string | undefined;
  if (child.interrupted) {
    status = "interrupted";
    message = "Interrupted by the user: the script and everything it started were killed.";
  } else if (child.timedOut) {
    status = "timeout";
    message = `The script timed out after ${timeoutS} s and was killed with everything it started. Do less per run, or raise code_execution.timeout.`;
  } else if (child.spawnError !== undefined) {
    status = "error";
    const interpreter = language === "python" ? "python3" : "node";
    message = `Could not start ${interpreter}: ${child.spawnError}.`;
  } else if (child.exitCode !== 0) {
    status = "error";
    if (child.exitCode === null) message = `The script was killed by ${child.exitSignal ?? "a signal"}.`;
  }
  return {
    status,
    output,
    ...(errors === "" ? {} : { errors }),
    exit_code: child.exitCode,
    tool_calls_made: calls,
    duration_seconds: seconds(child.durationMs),
    ...(message === undefined ? {} : { message }),
  };
}

/**
 * Renders the result with stdout and stderr cut further (head and tail, the notice counting every
 * byte left out) until its JSON fits in `maxBytes`, so the registry's own cap never has to cut the
 * JSON in the middle. Ordinary output fits at the capture limits at once.
 */
export function fitToBudget(
  render: (stdoutLimit: number, stderrLimit: number) => ExecuteCodeResult,
  maxBytes: number,
): ExecuteCodeResult {
  let stdoutLimit = STDOUT_LIMIT;
  let stderrLimit = STDERR_LIMIT;
  let result = render(stdoutLimit, stderrLimit);
  for (let attempt = 0; attempt < 12; attempt++) {
    const excess = Buffer.byteLength(JSON.stringify(result), "utf8") - maxBytes;
    if (excess <= 0) break;
    // A raw byte removed saves at least one byte of JSON; the margin covers the notice.
    const cut = Math.ceil(excess * 1.1) + 256;
    if ((result.errors?.length ?? 0) > result.output.length) stderrLimit = Math.max(0, stderrLimit - cut);
    else stdoutLimit = Math.max(0, stdoutLimit - cut);
    result = render(stdoutLimit, stderrLimit);
  }
  return result;
}

function seconds(ms: number): number {
  return Math.round(ms / 10) / 100;
}

interface CodeExecutionLimits {
  timeoutS: number;
  maxToolCalls: number;
  resultBytes: number;
}

function codeExecutionConfig(config: Readonly<Record<string, unknown>>): CodeExecutionLimits {
  return {
    timeoutS: positive(config, ["code_execution", "timeout"]) ?? DEFAULT_TIMEOUT_S,
    maxToolCalls: nonNegative(config, ["code_execution", "max_tool_calls"]) ?? DEFAULT_MAX_TOOL_CALLS,
    resultBytes: positive(config, ["limits", "tool_output", "max_bytes"]) ?? DEFAULT_RESULT_BYTES,
  };
}

function lookup(config: Readonly<Record<string, unknown>>, path: readonly string[]): unknown {
  let value: unknown = config;
  for (const key of path) {
    value = typeof value === "object" && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  }
  return value;
}

function positive(config: Readonly<Record<string, unknown>>, path: readonly string[]): number | undefined {
  const value = lookup(config, path);
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : undefined;
}

function nonNegative(config: Readonly<Record<string, unknown>>, path: readonly string[]): number | undefined {
  const value = lookup(config, path);
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.floor(value) : undefined;
}

/** The first executable file called `name` on `pathVar`, or undefined. */
export function findExecutable(name: string, pathVar: string | undefined): string | undefined {
  for (const dir of (pathVar ?? "").split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, name);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}
