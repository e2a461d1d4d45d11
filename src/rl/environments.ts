/**
 * The environments Hermes ships, by the name `hermes rl serve NAME` takes. Each entry says what it
 * needs to start (its task file) and builds the environment from it.
 */
import { loadTaskFile, TerminalTasksEnvironment } from "./terminal-tasks.js";
import type { RlEnvironment } from "./types.js";

export interface EnvironmentInput {
  /** `--tasks FILE`. */
  tasksFile: string | undefined;
  /** Hand out each task this many times (`--epochs`). */
  epochs: number;
  env: Readonly<Record<string, string | undefined>>;
  onCommand?: (line: string) => void;
}

export interface EnvironmentEntry {
  name: string;
  description: string;
  /** What `--tasks` must hold, for `hermes rl list` and the error when it is missing. */
  tasks: string;
  create(input: EnvironmentInput): RlEnvironment;
}

export const RL_ENVIRONMENTS: readonly EnvironmentEntry[] = [
  {
    name: "terminal-tasks",
    description: "shell tasks in a fresh directory, rewarded by the fraction of test commands that pass",
    tasks:
      'JSONL, one task a line: {"id", "prompt", "files": {path: text}, "setup", "test": cmd | [cmds], "timeout"}',
    create(input) {
      if (!input.tasksFile) {
        throw new Error(`terminal-tasks needs --tasks FILE (${this.tasks}).`);
      }
      return new TerminalTasksEnvironment({
        tasks: loadTaskFile(input.tasksFile),
        env: input.env,
        epochs: input.epochs,
        ...(input.onCommand ? { onCommand: input.onCommand } : {}),
      });
    },
  },
];

export function findEnvironment(name: string): EnvironmentEntry | undefined {
  return RL_ENVIRONMENTS.find((entry) => entry.name === name);
}
