/**
 * `-w/--worktree`: the session works in its own git worktree of the current repository, on a new
 * branch `hermes/<name>`, so its edits never touch the user's checkout and parallel sessions never
 * collide. The worktree lives under the home (`<home>/worktrees/<repo>-<hash>/<name>`), so nothing
 * is added to the user's tree or their `.gitignore`. At exit it is removed with its branch when the
 * session left it clean and made no commit; otherwise it is kept and the user told where.
 *
 * With `worktree_sync` (upstream's key, default on) the new branch starts from the freshly fetched
 * remote default branch rather than a possibly stale local HEAD; a fetch that fails (offline, no
 * remote) falls back to HEAD. Git runs in the user's repository with their configuration (a fetch
 * may need their credentials), but never their hooks or fsmonitor.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { basename, join } from "node:path";
import type { HermesConfig } from "../../config/defaults.js";
import type { GitResult } from "./git.js";
import { canonicalDir, projectHash } from "./store.js";

export interface SessionWorktree {
  /** The worktree's directory: the session's working directory. */
  path: string;
  branch: string;
  /** The repository's main working tree (where `-w` was run). */
  repo: string;
  /** The commit the branch started from. */
  base: string;
  /** What the user should know (the fetch failed, so HEAD was used). */
  notes: string[];
}

const NO_HOOKS = ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"];

function repoGit(args: readonly string[], cwd: string, timeoutMs = 60_000): Promise<GitResult> {
  const env: Record<string, string | undefined> = { ...process.env, GIT_TERMINAL_PROMPT: "0" };
  // A GIT_DIR exported in the user's shell must not send these commands to another repository.
  for (const name of ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_NAMESPACE"])
    delete env[name];
  return new Promise((resolve) => {
    execFile(
      "git",
      [...NO_HOOKS, ...args],
      { cwd, env, timeout: timeoutMs, encoding: "utf8" },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        resolve({ ok: !error, code, stdout: stdout.trim(), stderr: stderr.trim() });
      },
    );
  });
}

/** `worktree_sync`: `checkpoints.worktree_sync` when set, else the top-level key (upstream), else on. */
export function worktreeSync(config: HermesConfig): boolean {
  const nested = (config.checkpoints as Record<string, unknown> | undefined)?.worktree_sync;
  if (typeof nested === "boolean") return nested;
  return config.worktree_sync !== false;
}

/** `worktree: true` (top level, or under `checkpoints`) turns `-w` on for every session. */
export function worktreeByDefault(config: HermesConfig): boolean {
  const nested = (config.checkpoints as Record<string, unknown> | undefined)?.worktree;
  return nested === true || config.worktree === true;
}

/** Creates the session's worktree; throws a message the user can act on (not a repository, git missing). */
export async function createSessionWorktree(options: {
  cwd: string;
  home: string;
  sync: boolean;
  name?: string;
}): Promise<SessionWorktree> {
  const top = await repoGit(["rev-parse", "--show-toplevel"], options.cwd);
  if (!top.ok) {
    throw new Error(
      `--worktree needs a git repository, and ${options.cwd} is not in one (${top.stderr || "git failed"}).`,
    );
  }
  const repo = canonicalDir(top.stdout);
  const head = await repoGit(["rev-parse", "--verify", "HEAD"], repo);
  if (!head.ok) throw new Error(`--worktree needs a commit to start from, and ${repo} has none yet.`);
  const stamp = new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  const name = options.name ?? `${stamp}-${randomBytes(3).toString("hex")}`;
  const branch = `hermes/${name}`;
  const parent = join(
    canonicalDir(options.home),
    "worktrees",
    `${basename(repo)}-${projectHash(repo).slice(0, 8)}`,
  );
  const path = join(parent, name);
  mkdirSync(parent, { recursive: true });
  // Worktrees of crashed sessions whose folders were deleted would otherwise block their branch names.
  await repoGit(["worktree", "prune"], repo);

  const notes: string[] = [];
  let base = head.stdout;
  if (options.sync) {
    const fresh = await remoteBase(repo);
    if (fresh.ok) base = fresh.commit;
    else notes.push(`worktree_sync: ${fresh.why}; the worktree starts from the local HEAD.`);
  }
  let added = await repoGit(["worktree", "add", "--quiet", "-b", branch, path, base], repo);
  if (!added.ok && base !== head.stdout) {
    notes.push(
      `worktree_sync: ${base.slice(0, 8)} could not be checked out; the worktree starts from the local HEAD.`,
    );
    base = head.stdout;
    added = await repoGit(["worktree", "add", "--quiet", "-b", branch, path, base], repo);
  }
  if (!added.ok) throw new Error(`Could not create the worktree ${path}: ${added.stderr}`);
  return { path: canonicalDir(path), branch, repo, base, notes };
}

/** The fetched tip of the remote's default branch (or of the current branch's upstream). */
async function remoteBase(repo: string): Promise<{ ok: true; commit: string } | { ok: false; why: string }> {
  const remotes = (await repoGit(["remote"], repo)).stdout.split("\n").filter(Boolean);
  const remote = remotes.includes("origin") ? "origin" : remotes[0];
  if (!remote) return { ok: false, why: "the repository has no remote" };
  const fetched = await repoGit(["fetch", "--quiet", remote], repo, 30_000);
  if (!fetched.ok)
    return { ok: false, why: `fetching ${remote} failed (${fetched.stderr.split("\n")[0] ?? ""})` };
  // origin/HEAD exists after a clone; otherwise ask the remote which branch is its default.
  const symref = await repoGit(["ls-remote", "--symref", remote, "HEAD"], repo, 30_000);
  const named = /^ref: refs\/heads\/(\S+)\s+HEAD/m.exec(symref.stdout)?.[1];
  const current = (await repoGit(["symbolic-ref", "--quiet", "--short", "HEAD"], repo)).stdout;
  const candidates = [`${remote}/HEAD`, ...(named ? [`${remote}/${named}`] : []), "@{upstream}"];
  if (current) candidates.push(`${remote}/${current}`);
  for (const ref of candidates) {
    const tip = await repoGit(["rev-parse", "--verify", "--quiet", `${ref}^{commit}`], repo);
    if (tip.ok && tip.stdout) return { ok: true, commit: tip.stdout };
  }
  return { ok: false, why: `${remote} has no default branch and the current branch tracks none` };
}

export type WorktreeEnd = { removed: true } | { removed: false; why: string };

/**
 * At the session's end: removes the worktree and its branch when nothing would be lost (no
 * uncommitted or untracked file, no commit beyond where it started); otherwise keeps both.
 */
export async function finishSessionWorktree(worktree: SessionWorktree): Promise<WorktreeEnd> {
  if (!existsSync(worktree.path)) {
    await repoGit(["worktree", "prune"], worktree.repo);
    return { removed: true };
  }
  const status = await repoGit(["status", "--porcelain", "--untracked-files=all"], worktree.path);
  if (!status.ok) return { removed: false, why: `git status failed there (${status.stderr})` };
  if (status.stdout !== "") return { removed: false, why: "it has uncommitted changes" };
  const ahead = await repoGit(["rev-list", "--count", `${worktree.base}..${worktree.branch}`], worktree.repo);
  if (!ahead.ok || ahead.stdout !== "0")
    return { removed: false, why: `branch ${worktree.branch} has new commits` };
  const removed = await repoGit(["worktree", "remove", worktree.path], worktree.repo);
  if (!removed.ok) return { removed: false, why: removed.stderr };
  await repoGit(["branch", "-D", worktree.branch], worktree.repo);
  rmSync(worktree.path, { recursive: true, force: true });
  return { removed: true };
}

/** The line the model reads about where it works (the system prompt states the real place). */
export function worktreePromptNote(worktree: SessionWorktree): string {
  return (
    `You are working in a git worktree made for this session: ${worktree.path}, on branch ${worktree.branch} ` +
    `(of the repository at ${worktree.repo}). Edit and commit here; the user's own checkout is not touched.`
  );
}
