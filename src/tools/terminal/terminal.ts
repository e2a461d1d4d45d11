/** terminal: run a command in the task's persistent shell, or start it in the background. */
import { homedir } from "node:os";
import { Type } from "@sinclair/typebox";
import type { Environment, RunResult } from "../../environments/types.js";
import { resolvePath } from "../../util/abs-path.js";
import { withAdvice } from "../approval/denial.js";
import { analyseInEnvironment } from "../approval/environment.js";
import { guardRoots } from "../approval/protected-paths.js";
import type { AnalysisContext } from "../approval/types.js";
import { environmentHome, taskShell, terminalAvailable } from "../environment.js";
import { defineTool, type ToolContext } from "../types.js";
import { type BackgroundProcess, getProcessRegistry, type ProcessObserver } from "./process-registry.js";
import { ProcessWatch, validatePatterns, type WatchSettings } from "./process-watch.js";
import { PTY_SIZE, runInPty } from "./pty-run.js";
import description from "./terminal.md";

const DEFAULT_TIMEOUT_S = 180;

const parameters = Type.Object({
  command: Type.String({ description: "The bash command to run." }),
  background: Type.Optional(
    Type.Boolean({ description: "Run in the background; returns a session_id for the process tool." }),
  ),
  timeout: Type.Optional(
    Type.Integer({
      minimum: 1,
      description: `Seconds before it is killed (default ${DEFAULT_TIMEOUT_S}); raise for long builds.`,
    }),
  ),
  workdir: Type.Optional(
    Type.String({
      description: "Directory for this command only (the shell stays where it is).",
    }),
  ),
  pty: Type.Optional(Type.Boolean({ description: "Give it a terminal (programs that need one)." })),
  notify_on_complete: Type.Optional(
    Type.Boolean({
      description: "Background only: you are told when it ends; no polling needed.",
    }),
  ),
  watch_patterns: Type.Optional(
    Type.Array(Type.String(), {
      description: "Background only: you are told when a line contains one of these texts.",
    }),
  ),
});

export const terminalTool = defineTool({
  name: "terminal",
  toolset: "terminal",
  description,
  parameters,
  emoji: "💻",
  check: terminalAvailable,
  async handler(args, ctx) {
    const command = args.command;
    if (command.trim() === "") throw new Error("command is empty: pass the shell command to run.");
    const { env, shell } = await taskShell(ctx);
    const workdir =
      args.workdir === undefined ? undefined : await resolveWorkdir(env, args.workdir, shell.cwd);
    const watch = watchSettings(args, ctx);
    const actx = analysisContext(ctx, workdir ?? shell.cwd, await environmentHome(ctx, env));
    await approveOrThrow(command, ctx, actx, env);
    if (args.background) {
      const cwd = workdir ?? shell.cwd;
      const notify = ctx.notify;
      const proc = await getProcessRegistry(ctx).start(env, {
        taskId: ctx.taskId,
        command,
        cwd,
        prelude: shell.envPrelude(cwd),
        ...(args.pty ? { pty: PTY_SIZE } : {}),
        ...(watch && notify ? { observe: (entry) => watchObserver(entry, watch, notify) } : {}),
      });
      return {
        session_id: proc.id,
        pid: proc.pid,
        status: "running",
        ...(watch?.notifyOnComplete ? { notify_on_complete: true } : {}),
        ...(watch && watch.patterns.length > 0 ? { watching: watch.patterns } : {}),
      };
    }
    const timeoutS = args.timeout ?? configNumber(ctx.config, ["terminal", "timeout"]) ?? DEFAULT_TIMEOUT_S;
    if (args.pty) {
      const cwd = workdir ?? shell.cwd;
      const graceS = configNumber(ctx.config, ["terminal", "daemon_term_grace_seconds"]) ?? 2;
      const proc = await env.spawn(command, { cwd, prelude: shell.envPrelude(cwd), pty: PTY_SIZE });
      const result = await runInPty(proc, {
        timeoutMs: timeoutS * 1000,
        signal: ctx.signal,
        graceMs: graceS * 1000,
        cwd,
      });
      const failure = runFailure(result);
      if (failure) ctx.reportFailure?.(failure);
      return formatResult(result, cwd, timeoutS, outputLimits(ctx.config));
    }
    const cwdBefore = shell.cwd;
    const result = await shell.run(command, {
      timeoutMs: timeoutS * 1000,
      signal: ctx.signal,
      ...(workdir === undefined ? {} : { workdir }),
      ...(ctx.output ? { onOutput: ctx.output } : {}),
    });
    const failure = runFailure(result);
    if (failure) ctx.reportFailure?.(failure);
    return formatResult(result, cwdBefore, timeoutS, outputLimits(ctx.config));
  },
});

/**
 * `notify_on_complete` and `watch_patterns` as checked settings, or undefined when neither is
 * asked for. Throws what the model should fix (foreground use, bad patterns, no one to tell).
 */
function watchSettings(
  args: { background?: boolean; notify_on_complete?: boolean; watch_patterns?: string[] },
  ctx: ToolContext,
): WatchSettings | undefined {
  const patterns = args.watch_patterns ?? [];
  if (!args.notify_on_complete && patterns.length === 0) return undefined;
  if (!args.background) {
    throw new Error(
      "notify_on_complete and watch_patterns apply to background=true only (a foreground command's result already says how it ended). It was not run.",
    );
  }
  if (!ctx.notify) {
    throw new Error(
      "notify_on_complete and watch_patterns cannot be delivered here (nothing passes notices to you in this context). It was not run. Start it without them and check it with the process tool (wait, poll).",
    );
  }
  return { notifyOnComplete: args.notify_on_complete === true, patterns: validatePatterns(patterns) };
}

/** Connects a background process to its watch: output chunks in, one exit report out. */
function watchObserver(
  entry: BackgroundProcess,
  settings: WatchSettings,
  notify: NonNullable<ToolContext["notify"]>,
): ProcessObserver {
  const watch = new ProcessWatch(
    { id: entry.id, command: entry.command, startedAt: entry.startedAt },
    settings,
    { notify },
  );
  return {
    output: (text) => watch.output(text),
    ended: (e) =>
      watch.exited({
        exitCode: e.exitCode,
        signal: e.signal,
        endedAt: e.endedAt ?? Date.now(),
        output: e.output.toString(),
        stoppedBy: e.stoppedBy,
      }),
    seen: () => watch.seen(),
    stop: () => watch.stop(),
  };
}

/**
 * Where the command runs, for the analyser: relative paths and `~`/`$HOME` in the environment
 * (`home`: its $HOME), `$HERMES_HOME`, and the host's protected roots.
 */
export function analysisContext(
  ctx: ToolContext,
  cwd: string,
  home = ctx.env.HOME ?? homedir(),
): AnalysisContext {
  return { cwd, home, hermesHome: ctx.home, roots: guardRoots(ctx.home, ctx.env) };
}

/**
 * Refuses hardline commands and asks the user about dangerous ones, judged by where `env` runs
 * them (see approval/environment.ts); throws what the model should read.
 */
async function approveOrThrow(
  command: string,
  ctx: ToolContext,
  actx: AnalysisContext,
  env: Environment,
): Promise<void> {
  const check = analyseInEnvironment(command, actx, env);
  if (!check.dangerous) return;
  const reason = check.reason ?? "dangerous command";
  if (check.hardline) {
    throw new Error(
      `Blocked: ${reason}. This command is never allowed, with or without approval (--yolo included). It was not run. Do not retry it or a variant of it (another spelling, a script, an interpreter, an encoded payload); tell the user if it is really needed.`,
    );
  }
  const advice = check.protectedPath
    ? "Only the user can change protected files (Hermes's config, memory, skills, cron, state.db; shell start-up files, SSH and credential files; /etc). Do not retry it through another command, a script or an interpreter; tell the user what you wanted to change and why."
    : "Do not retry it or a rephrasing of it; ask the user, or choose a safer command.";
  const decision = await ctx
    .requestApproval({
      command,
      reason,
      patternKey: check.patternKey ?? "dangerous",
      ...(check.protectedPath ? { protectedPath: true } : {}),
    })
    .catch((error: unknown) => {
      // The policy's denial already says not to retry; what protected files are is worth adding.
      throw withAdvice(error, check.protectedPath ? advice : "");
    });
  if (decision === "deny") {
    throw new Error(
      `Command denied by the user or the non-interactive approval policy: ${reason}. It was not run. ${advice}`,
    );
  }
}

async function resolveWorkdir(env: Environment, workdir: string, shellCwd: string): Promise<string> {
  const abs = resolvePath(workdir, shellCwd);
  let isDir = false;
  try {
    isDir = (await env.files.stat(abs))?.type === "dir";
  } catch {
    // reported below
  }
  if (!isDir) {
    throw new Error(
      `workdir ${workdir} (${abs}) is not an existing directory. Create it first or pick another one.`,
    );
  }
  return abs;
}

interface OutputLimits {
  maxChars: number;
  maxLines: number;
}

/** Output first, then one status line in brackets. */
export function formatResult(
  r: RunResult,
  cwdBefore: string,
  timeoutS: number,
  limits: OutputLimits,
): string {
  const output = clipHeadTail(r.output.replace(/\n+$/, ""), limits, r.droppedChars);
  const code = r.exitCode ?? (r.timedOut ? 124 : r.interrupted ? 130 : -1);
  const notes: string[] = [];
  if (r.stop || r.timedOut || r.interrupted) notes.push(stopNote(r, timeoutS));
  notes.push(`exit code ${code}`);
  if (r.cwd !== cwdBefore) notes.push(`cwd now ${r.cwd}`);
  if (r.shellExited) notes.push(`the shell exited; the next command starts a new one in ${r.cwd}`);
  return `${output === "" ? "(no output)" : output}\n[${notes.join("; ")}]`;
}

/** What ran and what was stopped, in words the model (and the user reading along) can act on. */
function stopNote(r: RunResult, timeoutS: number): string {
  const stop = r.stop;
  const why = r.timedOut ? `timed out after ${timeoutS}s` : "interrupted by the user";
  if (!stop) return `${why}; it was stopped`;
  if (stop.afterMs === 0 && !r.timedOut) return `${why} before it started; nothing ran`;
  const seconds = (ms: number): string => `${Number((ms / 1000).toFixed(1))} s`;
  const how = stop.killed
    ? `SIGTERM; SIGKILL after ${seconds(stop.graceMs)} because something ignored SIGTERM`
    : "SIGTERM";
  const running = stop.running.length > 0 ? ` It was running: ${stop.running.join("; ")}.` : "";
  const when = r.timedOut ? "" : ` after ${seconds(stop.afterMs)}`;
  return `${why}${when}: the command and everything it started were stopped (${how}); the rest of the command line did not run, and its changes to cwd and variables were not kept.${running} Output above is what it printed before it was stopped`;
}

/**
 * Why a finished foreground command counts as a failure for the tool-loop guardrails, or
 * undefined when it succeeded. A user interrupt is not the model's failure: the turn ends anyway.
 */
export function runFailure(r: Pick<RunResult, "exitCode" | "timedOut" | "interrupted">): string | undefined {
  if (r.timedOut) return "timed out";
  if (r.interrupted) return undefined;
  if (r.exitCode === 0) return undefined;
  return r.exitCode === null ? "ended without an exit code" : `exit code ${r.exitCode}`;
}

/** Keeps the head (40%) and tail (60%) by lines and characters: errors and summaries come last. */
export function clipHeadTail(text: string, { maxChars, maxLines }: OutputLimits, alreadyDropped = 0): string {
  const lines = text.split("\n");
  if (text.length <= maxChars && lines.length <= maxLines) return text;
  const headLines = Math.floor(maxLines * 0.4);
  let head = text;
  let tail = "";
  if (lines.length > maxLines) {
    head = lines.slice(0, headLines).join("\n");
    tail = lines.slice(lines.length - (maxLines - headLines)).join("\n");
  }
  const headChars = Math.floor(maxChars * 0.4);
  const tailChars = maxChars - headChars;
  if (head.length + tail.length > maxChars) {
    if (tail === "") tail = head.slice(head.length - tailChars);
    head = head.slice(0, headChars);
    tail = tail.slice(Math.max(0, tail.length - tailChars));
  }
  const omitted = text.length - head.length - tail.length + alreadyDropped;
  return `${head}\n…[${omitted} characters omitted; filter the output (grep, head, tail) to see this part]…\n${tail}`;
}

function outputLimits(config: Readonly<Record<string, unknown>>): OutputLimits {
  const maxBytes = configNumber(config, ["limits", "tool_output", "max_bytes"]) ?? 50_000;
  const maxLines = configNumber(config, ["limits", "tool_output", "max_lines"]) ?? 2000;
  // Leave room under the registry's own caps for the status line and the omission marker.
  return { maxChars: Math.floor(maxBytes * 0.9), maxLines: Math.max(10, maxLines - 10) };
}

function configNumber(config: Readonly<Record<string, unknown>>, path: string[]): number | undefined {
  let value: unknown = config;
  for (const key of path) {
    value = typeof value === "object" && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  }
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : undefined;
}
