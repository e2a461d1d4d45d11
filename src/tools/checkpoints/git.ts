/**
 * Running git against the shadow store. Every call gets a clean environment: only PATH and a
 * locale from the caller's, `GIT_DIR` pointing at the store (never the user's `.git`), the working
 * directory as `GIT_WORK_TREE`, a per-project index, and no global or system configuration, so the
 * user's `~/.gitconfig` (signing, hooks paths, pagers, credential helpers, fsmonitor), their
 * repository's own `.git/config` and hooks, and any `GIT_*` variable they exported cannot reach it.
 */
import { execFile } from "node:child_process";

export interface GitResult {
  ok: boolean;
  code: number;
  stdout: string;
  stderr: string;
}

export interface GitTarget {
  /** The shadow store (a bare repository under `<home>/checkpoints/store`). */
  store: string;
  /** The directory being checkpointed; absent for store-only commands (gc, update-ref -d). */
  workTree?: string;
  /** The project's own index file inside the store. */
  index?: string;
}

/** Seconds one git command may take; a snapshot of a huge tree is cut off rather than hang a turn. */
const GIT_TIMEOUT_MS = 60_000;

/** The environment every store command runs with (nothing inherited but PATH and the locale). */
export function gitEnv(target: GitTarget, parent: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {
    PATH: parent.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    LANG: "C",
    LC_ALL: "C",
    // HOME and XDG_CONFIG_HOME point into the store so no per-user file is ever read.
    HOME: target.store,
    XDG_CONFIG_HOME: target.store,
    GIT_DIR: target.store,
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_CONFIG_SYSTEM: "/dev/null",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_TERMINAL_PROMPT: "0",
    // Paths are names, never pathspec magic: a file called `*` or `:(top)` is just that file.
    GIT_LITERAL_PATHSPECS: "1",
    GIT_AUTHOR_NAME: "Hermes Checkpoint",
    GIT_AUTHOR_EMAIL: "hermes@local",
    GIT_COMMITTER_NAME: "Hermes Checkpoint",
    GIT_COMMITTER_EMAIL: "hermes@local",
  };
  if (target.workTree !== undefined) env.GIT_WORK_TREE = target.workTree;
  if (target.index !== undefined) env.GIT_INDEX_FILE = target.index;
  return env;
}

/**
 * Options that hold whatever the store's own config says: no hooks, no fsmonitor, no signing, no
 * automatic gc in the middle of a turn, symlinks stored as links (never followed).
 */
const SAFE_OPTIONS = [
  "-c",
  "core.hooksPath=/dev/null",
  "-c",
  "core.fsmonitor=false",
  "-c",
  "core.symlinks=true",
  "-c",
  "commit.gpgSign=false",
  "-c",
  "gc.auto=0",
  "-c",
  "core.quotePath=false",
  "-c",
  "advice.addEmbeddedRepo=false",
];

/**
 * Runs `git args` for `target`; never throws (a missing git or a timeout is a failed result).
 * `cwd` is the work tree when there is one, else the store.
 */
export function runGit(args: readonly string[], target: GitTarget, input?: string): Promise<GitResult> {
  return new Promise((resolve) => {
    const child = execFile(
      "git",
      [...SAFE_OPTIONS, ...args],
      {
        cwd: target.workTree ?? target.store,
        env: gitEnv(target),
        timeout: GIT_TIMEOUT_MS,
        maxBuffer: 256 * 1024 * 1024,
        encoding: "utf8",
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        const why = error && typeof error.code !== "number" ? `${error.message}\n` : "";
        resolve({ ok: !error, code, stdout, stderr: `${why}${stderr}`.trim() });
      },
    );
    if (input !== undefined) child.stdin?.end(input);
    else child.stdin?.end();
  });
}

/** Like `runGit`, but a failure throws an Error naming the command and git's message. */
export async function git(args: readonly string[], target: GitTarget, input?: string): Promise<string> {
  const result = await runGit(args, target, input);
  if (!result.ok) {
    throw new Error(
      `git ${args[0] ?? ""} failed in the checkpoint store: ${result.stderr || `exit ${result.code}`}`,
    );
  }
  return result.stdout;
}
