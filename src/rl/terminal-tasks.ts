/**
 * The environment Hermes ships: terminal tasks. A task file (JSONL, one task a line, or a JSON
 * array) lists tasks `{id?, prompt, files?, setup?, test, timeout?}`:
 *
 * - `files`: `{relative path: text}` written into the rollout's fresh working directory; a path
 *   that leads outside it (absolute, `..`) refuses the whole task file;
 * - `setup`: a shell command run there before the agent starts (a failing setup fails the rollout
 *   with reward 0, since the agent never had its task);
 * - `test`: one command, or a list; each runs in the working directory after the agent finished,
 *   and the reward is the fraction that exit 0 (1 or 0 for one command);
 * - `timeout`: seconds for each setup/test command (default 60).
 *
 * Setup and test commands are the task author's, not the model's, so they do not go through the
 * approval policy; they run in the rollout's directory, in their own process group (killed whole at
 * the timeout or on interrupt), with provider keys and platform tokens scrubbed from their
 * environment. A test often runs what the agent wrote: that code ran under approvals when the agent
 * ran it, and runs here with the same scrubbed environment and limits.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, join, normalize, sep } from "node:path";
import { execLocal } from "../environments/local/process.js";
import { scrubEnv } from "../util/env-scrub.js";
import type { RlEnvironment, RlItem, Rollout } from "./types.js";

export const DEFAULT_COMMAND_TIMEOUT_S = 60;

export interface TerminalTask extends RlItem {
  files: Record<string, string>;
  setup: string | undefined;
  tests: string[];
  timeoutS: number;
}

export class TaskFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TaskFileError";
  }
}

/** A relative path that stays inside the directory it is joined to; undefined otherwise. */
export function safeRelativePath(path: string): string | undefined {
  if (!path || isAbsolute(path) || path.includes("\0")) return undefined;
  const clean = normalize(path);
  if (clean === "." || clean === ".." || clean.startsWith(`..${sep}`)) return undefined;
  return clean;
}

/** One task from its parsed JSON; throws `TaskFileError` naming `where` and what is wrong. */
export function readTask(raw: unknown, where: string, index: number): TerminalTask {
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) {
    throw new TaskFileError(`${where}: a task must be a JSON object with "prompt" and "test".`);
  }
  const rec = raw as Record<string, unknown>;
  const prompt = rec["prompt"];
  if (typeof prompt !== "string" || !prompt.trim())
    throw new TaskFileError(`${where}: "prompt" must be a non-empty string.`);
  const test = rec["test"];
  const tests = typeof test === "string" ? [test] : Array.isArray(test) ? test : undefined;
  if (!tests || tests.length === 0 || tests.some((t) => typeof t !== "string" || !t.trim())) {
    throw new TaskFileError(`${where}: "test" must be a command or a non-empty list of commands.`);
  }
  const setup = rec["setup"];
  if (setup !== undefined && typeof setup !== "string")
    throw new TaskFileError(`${where}: "setup" must be a command string.`);
  const files: Record<string, string> = {};
  const rawFiles = rec["files"];
  if (rawFiles !== undefined) {
    if (!rawFiles || typeof rawFiles !== "object" || Array.isArray(rawFiles)) {
      throw new TaskFileError(`${where}: "files" must map relative paths to file contents.`);
    }
    for (const [path, content] of Object.entries(rawFiles as Record<string, unknown>)) {
      const safe = safeRelativePath(path);
      if (!safe)
        throw new TaskFileError(
          `${where}: file path ${JSON.stringify(path)} leads outside the task's directory.`,
        );
      if (typeof content !== "string")
        throw new TaskFileError(`${where}: the content of ${path} must be a string.`);
      files[safe] = content;
    }
  }
  const timeout = rec["timeout"];
  if (timeout !== undefined && (typeof timeout !== "number" || !(timeout > 0))) {
    throw new TaskFileError(`${where}: "timeout" must be a positive number of seconds.`);
  }
  const id = typeof rec["id"] === "string" && rec["id"].trim() ? rec["id"].trim() : `task-${index + 1}`;
  return {
    id,
    prompt,
    files,
    setup: typeof setup === "string" && setup.trim() ? setup : undefined,
    tests: tests as string[],
    timeoutS: typeof timeout === "number" ? timeout : DEFAULT_COMMAND_TIMEOUT_S,
  };
}

/** Parses a task file's text (a JSON array, or JSONL with blank lines allowed). */
export function parseTaskFile(text: string, file: string): TerminalTask[] {
  const trimmed = text.trim();
  if (!trimmed) throw new TaskFileError(`${file} holds no tasks.`);
  if (trimmed.startsWith("[")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch (error) {
      throw new TaskFileError(`${file} is not valid JSON: ${(error as Error).message}`);
    }
    return (parsed as unknown[]).map((raw, i) => readTask(raw, `${file} task ${i + 1}`, i));
  }
  const tasks: TerminalTask[] = [];
  text.split("\n").forEach((line, lineNo) => {
    if (!line.trim()) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch (error) {
      throw new TaskFileError(`${file} line ${lineNo + 1} is not valid JSON: ${(error as Error).message}`);
    }
    tasks.push(readTask(parsed, `${file} line ${lineNo + 1}`, tasks.length));
  });
  return tasks;
}

/** Reward of test outcomes: the fraction that passed. */
export function fractionPassed(exitCodes: readonly (number | null)[]): number {
  if (exitCodes.length === 0) return 0;
  return exitCodes.filter((code) => code === 0).length / exitCodes.length;
}

export interface TerminalTasksOptions {
  tasks: TerminalTask[];
  /** The process environment; provider keys are scrubbed before any command sees it. */
  env: Readonly<Record<string, string | undefined>>;
  /** Hand out each task this many times before the source is used up (default 1). */
  epochs?: number;
  /** Told what each setup/test command did (for `-v`). */
  onCommand?: (line: string) => void;
}

export class TerminalTasksEnvironment implements RlEnvironment<TerminalTask> {
  readonly name = "terminal-tasks";
  readonly description = "terminal tasks: a prompt, files and a setup command; rewarded by test commands";
  private next = 0;
  private readonly env: Record<string, string | undefined>;

  constructor(private readonly options: TerminalTasksOptions) {
    this.env = scrubEnv(options.env);
  }

  async nextItem(): Promise<TerminalTask | undefined> {
    const { tasks } = this.options;
    const total = tasks.length * Math.max(1, this.options.epochs ?? 1);
    if (this.next >= total) return undefined;
    return tasks[this.next++ % tasks.length];
  }

  async prepare(task: TerminalTask, workdir: string, signal: AbortSignal): Promise<void> {
    for (const [path, content] of Object.entries(task.files)) {
      const target = join(workdir, path);
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, content);
    }
    if (!task.setup) return;
    const result = await this.run(task.setup, workdir, task.timeoutS, signal);
    if (result !== 0) {
      throw new Error(
        `Setup of ${task.id} ${result === null ? `was killed after ${task.timeoutS}s` : `exited with code ${result}`}: ${task.setup}`,
      );
    }
  }

  async score(task: TerminalTask, rollout: Rollout, signal: AbortSignal): Promise<number> {
    const codes: (number | null)[] = [];
    for (const test of task.tests) codes.push(await this.run(test, rollout.workdir, task.timeoutS, signal));
    return fractionPassed(codes);
  }

  private async run(
    command: string,
    cwd: string,
    timeoutS: number,
    signal: AbortSignal,
  ): Promise<number | null> {
    const result = await execLocal(command, { cwd, timeoutMs: timeoutS * 1000, signal }, this.env, cwd);
    this.options.onCommand?.(
      `${command} -> ${result.exitCode === null ? "killed" : `exit ${result.exitCode}`}${result.stderr.trim() ? ` (${result.stderr.trim().slice(0, 200)})` : ""}`,
    );
    return result.exitCode;
  }
}

/** Reads a task file from disk (see {@link parseTaskFile}). */
export function loadTaskFile(file: string): TerminalTask[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new TaskFileError(
      `Cannot read the task file ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}.`,
    );
  }
  return parseTaskFile(text, file);
}
