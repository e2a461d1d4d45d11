/**
 * The shadow store's layout, shared with Python Hermes (one home serves both):
 *
 *     <home>/checkpoints/
 *       store/                       a bare git repository, objects shared by every project
 *         refs/hermes/<hash16>       one branch per working directory (sha256 of its real path)
 *         indexes/<hash16>           that project's index, so projects never share staging
 *         projects/<hash16>.json     {workdir, created_at, last_touch}
 *         info/exclude               dependency, build, cache, VCS and secret paths left out
 *       .last_prune                  when auto-prune last ran (seconds since the epoch)
 *       .lock                        held while any process changes the store
 *
 * The store is never inside the working directory it records, and the user's repository (its
 * `.git`, config and hooks) is never read or written: see git.ts.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { withFileLock } from "../../util/file-lock.js";
import { git, runGit } from "./git.js";

/** Paths never snapshotted (upstream's list): restoring them would be slow, huge or leak secrets. */
export const DEFAULT_EXCLUDES = [
  "node_modules/",
  "dist/",
  "build/",
  "target/",
  "out/",
  ".next/",
  ".nuxt/",
  "__pycache__/",
  "*.pyc",
  "*.pyo",
  ".cache/",
  ".pytest_cache/",
  ".mypy_cache/",
  ".ruff_cache/",
  "coverage/",
  ".coverage",
  ".venv/",
  "venv/",
  "env/",
  ".git/",
  ".hg/",
  ".svn/",
  ".worktrees/",
  "*.so",
  "*.dylib",
  "*.dll",
  "*.o",
  "*.a",
  "*.jar",
  "*.class",
  "*.exe",
  "*.obj",
  "*.mp4",
  "*.mov",
  "*.mkv",
  "*.webm",
  "*.zip",
  "*.tar",
  "*.tar.gz",
  "*.tgz",
  "*.7z",
  "*.rar",
  "*.iso",
  ".env",
  ".env.*",
  ".DS_Store",
  "Thumbs.db",
  "*.log",
];

/** Directory names the file-count walk skips, matching the directory entries of DEFAULT_EXCLUDES. */
export const EXCLUDED_DIRS: ReadonlySet<string> = new Set(
  DEFAULT_EXCLUDES.filter((p) => p.endsWith("/")).map((p) => p.slice(0, -1)),
);

export interface StorePaths {
  /** `<home>/checkpoints` */
  base: string;
  /** `<home>/checkpoints/store` */
  store: string;
}

export function storePaths(home: string): StorePaths {
  const base = join(resolve(home), "checkpoints");
  return { base, store: join(base, "store") };
}

/** The canonical form of a working directory: absolute, symlinks resolved (when it exists). */
export function canonicalDir(dir: string): string {
  try {
    return realpathSync(resolve(dir));
  } catch {
    return resolve(dir);
  }
}

/** Upstream's project key: the first 16 hex digits of sha256 of the canonical path. */
export function projectHash(workdir: string): string {
  return createHash("sha256").update(canonicalDir(workdir)).digest("hex").slice(0, 16);
}

export const refName = (hash: string): string => `refs/hermes/${hash}`;
export const indexPath = (store: string, hash: string): string => join(store, "indexes", hash);
const metaPath = (store: string, hash: string): string => join(store, "projects", `${hash}.json`);

/** Runs `fn` holding the store's cross-process lock (other Hermes processes, Python's too). */
export function withStoreLock<T>(paths: StorePaths, fn: () => Promise<T>): Promise<T> {
  return withFileLock(join(paths.base, ".lock"), fn, {
    lockPath: join(paths.base, ".lock"),
    timeoutMs: 30_000,
  });
}

/** Creates the bare store when missing (idempotent). Throws with git's message when it cannot. */
export async function initStore(paths: StorePaths): Promise<void> {
  if (existsSync(join(paths.store, "HEAD"))) return;
  mkdirSync(paths.store, { recursive: true });
  await git(["init", "--bare", "--quiet", paths.store], { store: paths.store });
  const target = { store: paths.store };
  for (const [key, value] of [
    ["user.email", "hermes@local"],
    ["user.name", "Hermes Checkpoint"],
    ["commit.gpgsign", "false"],
    ["gc.auto", "0"],
    ["core.hooksPath", "/dev/null"],
  ] as const) {
    await git(["config", key, value], target);
  }
  mkdirSync(join(paths.store, "indexes"), { recursive: true });
  mkdirSync(join(paths.store, "projects"), { recursive: true });
  mkdirSync(join(paths.store, "info"), { recursive: true });
  writeFileSync(join(paths.store, "info", "exclude"), `${DEFAULT_EXCLUDES.join("\n")}\n`);
}

export interface ProjectMeta {
  hash: string;
  workdir: string;
  created_at: number;
  last_touch: number;
}

/** A project with its checkpoint count and whether its directory still exists (`status`). */
export interface ProjectStatus extends ProjectMeta {
  checkpoints: number;
  exists: boolean;
}

/** Records that `workdir` was checkpointed now (created_at kept from the first time). */
export function touchProject(paths: StorePaths, workdir: string, nowSeconds: number): void {
  const hash = projectHash(workdir);
  const file = metaPath(paths.store, hash);
  const previous = readMeta(file);
  mkdirSync(join(paths.store, "projects"), { recursive: true });
  const meta = {
    ...(previous ?? {}),
    workdir: canonicalDir(workdir),
    created_at: previous?.created_at ?? nowSeconds,
    last_touch: nowSeconds,
  };
  writeFileSync(file, JSON.stringify(meta));
}

function readMeta(file: string): ProjectMeta | undefined {
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
    if (typeof parsed.workdir !== "string") return undefined;
    return {
      hash: "",
      workdir: parsed.workdir,
      created_at: Number(parsed.created_at) || 0,
      last_touch: Number(parsed.last_touch) || 0,
    };
  } catch {
    return undefined;
  }
}

/** Every project the store knows (unreadable metadata files are skipped). */
export function listProjects(paths: StorePaths): ProjectMeta[] {
  let names: string[];
  try {
    names = readdirSync(join(paths.store, "projects"));
  } catch {
    return [];
  }
  const out: ProjectMeta[] = [];
  for (const name of names) {
    if (!name.endsWith(".json")) continue;
    const meta = readMeta(join(paths.store, "projects", name));
    if (meta) out.push({ ...meta, hash: name.slice(0, -".json".length) });
  }
  return out;
}

/** The commit a project's ref points at, or undefined when it has no checkpoint yet. */
export async function refTip(paths: StorePaths, hash: string): Promise<string | undefined> {
  const result = await runGit(["rev-parse", "--verify", "--quiet", `${refName(hash)}^{commit}`], {
    store: paths.store,
  });
  return result.ok ? result.stdout.trim() : undefined;
}
