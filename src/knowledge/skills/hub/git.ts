/**
 * The git source: a shallow clone into a temporary folder (git run through execFile, never a
 * shell), then the folder rules of local.ts. A spec is `URL`, `URL#ref`, `URL#ref:subdir` or
 * `URL#:subdir` (also `….git:subdir`); the identifier recorded for an installed skill always names
 * the subfolder of the chosen skill, so `check` re-fetches exactly that skill.
 */
import { execFile } from "node:child_process";
import { mkdtemp, realpath, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative, sep } from "node:path";
import {
  type BundleLimits,
  bundleName,
  DEFAULT_LIMITS,
  HubError,
  type SkillBundle,
  safeRelPath,
} from "./bundle.js";
import { findSkillDirs, readSkillFolder, selectCandidate } from "./local.js";

export interface GitSpec {
  url: string;
  ref?: string;
  subdir?: string;
}

export const DEFAULT_GIT_TIMEOUT_MS = 120_000;

const GIT_URL = /^(?:https?:\/\/|ssh:\/\/|git:\/\/|file:\/\/|[\w.-]+@[\w.-]+:)/i;
const REF = /^[\w./-]{1,200}$/;

/** Whether `arg` is written like a git remote (scp-like `git@host:path`, or ssh/git/file URLs). */
export function looksLikeGitRemote(arg: string): boolean {
  return (
    /^(?:ssh:\/\/|git:\/\/|file:\/\/|[\w.-]+@[\w.-]+:)/i.test(arg) ||
    /^https?:\/\/[^#]*\.git(?:[#:/]|$)/i.test(arg)
  );
}

/** Parses a git spec; throws a usage error for a URL git cannot be trusted with. */
export function parseGitSpec(spec: string): GitSpec {
  let url = spec.trim();
  let ref: string | undefined;
  let subdir: string | undefined;
  const hash = url.lastIndexOf("#");
  if (hash >= 0) {
    const fragment = url.slice(hash + 1);
    url = url.slice(0, hash);
    const colon = fragment.indexOf(":");
    ref = colon >= 0 ? fragment.slice(0, colon) : fragment;
    if (colon >= 0) subdir = fragment.slice(colon + 1);
  } else {
    const m = /^(.+\.git):([^/\d][^:]*)$/.exec(url);
    if (m?.[1] && m[2]) {
      url = m[1];
      subdir = m[2];
    }
  }
  if (!GIT_URL.test(url) || url.startsWith("-")) {
    throw new HubError(`"${url}" is not a git URL (https://…, ssh://…, git@host:path or file://…).`, 2);
  }
  if (/^[a-z]+::/i.test(url)) throw new HubError(`git transport helpers are refused (${url}).`, 2);
  const out: GitSpec = { url };
  if (ref) {
    if (!REF.test(ref) || ref.startsWith("-") || ref.includes("..")) {
      throw new HubError(`"${ref}" is not a valid git ref.`, 2);
    }
    out.ref = ref;
  }
  if (subdir) {
    const safe = safeRelPath(subdir);
    if (!safe) throw new HubError(`"${subdir}" is not a safe folder inside the repository.`, 2);
    out.subdir = safe;
  }
  return out;
}

export function formatGitSpec(spec: GitSpec): string {
  if (!spec.ref && !spec.subdir) return spec.url;
  return `${spec.url}#${spec.ref ?? ""}${spec.subdir ? `:${spec.subdir}` : ""}`;
}

export interface GitFetchOptions {
  limits?: BundleLimits;
  timeoutMs?: number;
  /** Skill to pick when the repository (or subfolder) holds several. */
  select?: string;
  log?: (message: string) => void;
}

/** Clones `spec` shallowly and reads the chosen skill out of it; the clone is always removed. */
export async function fetchGitSkill(spec: GitSpec, options: GitFetchOptions = {}): Promise<SkillBundle> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS;
  const tmp = await mkdtemp(join(tmpdir(), "hermes-skill-git-"));
  const checkout = join(tmp, "repo");
  try {
    options.log?.(`Cloning ${spec.url}${spec.ref ? ` at ${spec.ref}` : ""} …`);
    await clone(spec, checkout, timeoutMs);
    const commit = (await git(["-C", checkout, "rev-parse", "HEAD"], timeoutMs)).trim();
    const realCheckout = await realpath(checkout);
    let root = realCheckout;
    if (spec.subdir) {
      root = join(realCheckout, ...spec.subdir.split("/"));
      const real = await realpath(root).catch(() => undefined);
      const isDir = real ? (await stat(real)).isDirectory() : false;
      if (!real || !isDir || (real !== realCheckout && !real.startsWith(realCheckout + sep))) {
        throw new HubError(`the repository has no folder "${spec.subdir}".`, 2);
      }
      root = real;
    }
    const where = `${spec.url}${spec.subdir ? ` (${spec.subdir})` : ""}`;
    const chosen = selectCandidate(await findSkillDirs(root), options.select, where);
    const { files, warnings } = await readSkillFolder(chosen.dir, options.limits ?? DEFAULT_LIMITS);
    const subdir = relative(realCheckout, chosen.dir).split(sep).join("/");
    const identifier = formatGitSpec({
      url: spec.url,
      ...(spec.ref ? { ref: spec.ref } : {}),
      ...(subdir ? { subdir } : {}),
    });
    const folderName = subdir ? (subdir.split("/").pop() ?? "") : repoName(spec.url);
    return {
      name: bundleName(files.get("SKILL.md") ?? Buffer.alloc(0), folderName),
      files,
      source: "git",
      identifier,
      metadata: { url: spec.url, ...(spec.ref ? { ref: spec.ref } : {}), commit, source_revision: commit },
      warnings,
    };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

function repoName(url: string): string {
  const last = url.replace(/\/+$/, "").split(/[/:]/).pop() ?? "";
  return last.replace(/\.git$/, "");
}

async function clone(spec: GitSpec, dest: string, timeoutMs: number): Promise<void> {
  const base = ["-c", "protocol.ext.allow=never", "clone", "--quiet", "--no-tags"];
  try {
    await git(
      [
        ...base,
        "--depth",
        "1",
        "--single-branch",
        ...(spec.ref ? ["--branch", spec.ref] : []),
        "--",
        spec.url,
        dest,
      ],
      timeoutMs,
    );
    return;
  } catch (error) {
    // A commit id cannot be cloned with --branch: clone everything, then check it out.
    if (!spec.ref || !/^[0-9a-f]{7,40}$/i.test(spec.ref)) throw error;
  }
  await rm(dest, { recursive: true, force: true });
  await git([...base, "--", spec.url, dest], timeoutMs);
  await git(
    ["-C", dest, "-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", spec.ref],
    timeoutMs,
  );
}

function git(args: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      "git",
      args,
      {
        timeout: timeoutMs,
        maxBuffer: 4 * 1024 * 1024,
        env: {
          ...process.env,
          GIT_TERMINAL_PROMPT: "0",
          GIT_SSH_COMMAND: process.env["GIT_SSH_COMMAND"] ?? "ssh -o BatchMode=yes",
          LC_ALL: "C",
        },
      },
      (error, stdout, stderr) => {
        if (!error) {
          resolve(stdout);
          return;
        }
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "ENOENT") {
          reject(new HubError("git is not installed; install git to add skills from a repository."));
          return;
        }
        if ((error as { killed?: boolean }).killed) {
          reject(
            new HubError(
              `git ${args.includes("clone") ? "clone" : (args[2] ?? "")} took longer than ${Math.round(timeoutMs / 1000)} s.`,
            ),
          );
          return;
        }
        const detail = stderr.trim().split("\n").slice(-3).join(" ").trim() || error.message;
        reject(new HubError(`git failed: ${detail}`));
      },
    );
  });
}
