/**
 * Publishing a skill to a git repository (`hermes skills publish`): the skill is read (regular
 * files only), held to the hub's size and layout limits, scanned (a dangerous verdict is always
 * refused, caution needs `force`) and searched for secrets; then the repository is cloned into a
 * temporary folder, the skill is written to `<path>/<name>/` on a new branch, committed and pushed.
 * When the remote is on GitHub and the `gh` command exists, a pull request is opened with it.
 *
 * git and gh run through execFile with fixed argument lists (a URL is never read as an option: it
 * follows `--`), without a terminal prompt, and the temporary clone is always removed.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { redactText } from "../../util/redact.js";
import { checkBundleFiles, HubError, isBinaryContent, isRecord, safeRelPath } from "./hub/bundle.js";
import { readTree } from "./hub/maintenance.js";
import { type ScanReport, scanSkillBundle } from "./hub/scan.js";
import { nameProblem, skillsRoot } from "./paths.js";

export interface PublishTarget {
  /** What git clones and pushes to. */
  url: string;
  /** Folder inside the repository that holds skills ("skills/" by default, a tap's path). */
  path: string;
  /** `owner/name` when the remote is on GitHub (a pull request can be opened there). */
  githubRepo?: string;
}

export class PublishError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 1,
    readonly report?: ScanReport,
  ) {
    super(message);
    this.name = "PublishError";
  }
}

const GITHUB_URL =
  /^(?:https:\/\/github\.com\/|git@github\.com:)([A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+?)(?:\.git)?\/?$/;

/** The target for `--repo URL`: any git URL or path, never one that starts with `-`. */
export function repoTarget(url: string): PublishTarget {
  const value = url.trim();
  if (!value || value.startsWith("-")) throw new PublishError(`"${url}" is not a git repository URL.`, 2);
  const gh = GITHUB_URL.exec(value)?.[1];
  return { url: value, path: "skills/", ...(gh ? { githubRepo: gh } : {}) };
}

/**
 * The target for `--to TAP`: a tap from `skills/.hub/taps.json` (`{"taps":[{"repo","path"}]}`),
 * matched by its `owner/name`; it is published to `https://github.com/owner/name.git`.
 */
export function tapTarget(home: string, tap: string): PublishTarget {
  let data: unknown;
  try {
    data = JSON.parse(
      readFileSync(join(skillsRoot(home), ".hub", "taps.json"), "utf8").replace(/^\uFEFF/, ""),
    );
  } catch {
    data = undefined;
  }
  const taps = isRecord(data) && Array.isArray(data["taps"]) ? data["taps"] : [];
  const wanted = tap
    .trim()
    .replace(/^https:\/\/github\.com\//i, "")
    .replace(/(?:\.git)?\/?$/, "")
    .toLowerCase();
  for (const entry of taps) {
    if (!isRecord(entry) || typeof entry["repo"] !== "string") continue;
    const repo = entry["repo"];
    if (repo.toLowerCase() !== wanted || !/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/.test(repo)) continue;
    const rawPath = typeof entry["path"] === "string" ? entry["path"] : "skills/";
    const path = rawPath.trim() === "" ? "" : safeRelPath(rawPath);
    if (path === undefined) throw new PublishError(`the tap ${repo} has an unsafe path "${rawPath}".`, 2);
    return { url: `https://github.com/${repo}.git`, path: path ? `${path}/` : "", githubRepo: repo };
  }
  throw new PublishError(
    `"${tap}" is not a configured tap; add it with hermes skills tap add OWNER/NAME, or pass --repo URL.`,
    2,
  );
}

export interface PreparedSkill {
  name: string;
  files: Map<string, Buffer>;
  report: ScanReport;
}

/** Reads, checks and scans a skill folder for publishing; throws {@link PublishError} when it may not go. */
export async function preparePublish(dir: string, name: string, force: boolean): Promise<PreparedSkill> {
  const problem = nameProblem(name, "skill name");
  if (problem) throw new PublishError(problem, 2);
  const files = await readTree(dir);
  try {
    checkBundleFiles(files);
  } catch (error) {
    throw new PublishError(error instanceof HubError ? error.message : String(error));
  }
  const report = scanSkillBundle(files);
  if (report.verdict === "dangerous") {
    throw new PublishError(
      `${name} was refused: the scan found it dangerous, so it is never published.`,
      1,
      report,
    );
  }
  if (report.verdict === "caution" && !force) {
    throw new PublishError(
      `${name} has a caution verdict; review the findings and pass --force to publish it.`,
      2,
      report,
    );
  }
  for (const [path, content] of files) {
    if (isBinaryContent(path, content)) continue;
    const text = content.toString("utf8");
    if (redactText(text) !== text) {
      throw new PublishError(
        `${path} holds what looks like a secret (an API key or token); remove it before publishing.`,
      );
    }
  }
  return { name, files, report };
}

export interface RunResult {
  stdout: string;
  stderr: string;
}

export type Runner = (command: string, args: string[], cwd: string) => Promise<RunResult>;

/** A runner through execFile with the given environment and no terminal prompts. */
export function execRunner(env: Readonly<Record<string, string | undefined>>, timeoutMs = 120_000): Runner {
  const childEnv: NodeJS.ProcessEnv = { ...env, GIT_TERMINAL_PROMPT: "0", GH_PROMPT_DISABLED: "1" };
  return (command, args, cwd) =>
    new Promise((resolve, reject) => {
      execFile(
        command,
        args,
        { cwd, env: childEnv, timeout: timeoutMs, maxBuffer: 8 * 1024 * 1024 },
        (error, stdout, stderr) => {
          if (error) {
            const detail = `${stderr}`.trim().split("\n").slice(-4).join(" ") || error.message;
            reject(new PublishError(`${command} ${args[0] ?? ""} failed: ${detail}`));
          } else resolve({ stdout: `${stdout}`, stderr: `${stderr}` });
        },
      );
    });
}

/** Whether `command` is an executable file on the PATH of `env`. */
export function onPath(command: string, env: Readonly<Record<string, string | undefined>>): boolean {
  return (env.PATH ?? "").split(delimiter).some((dir) => dir !== "" && existsSync(join(dir, command)));
}

export interface PublishResult {
  branch: string;
  /** Path of the skill inside the repository. */
  repoPath: string;
  /** The pull request URL when one was opened. */
  pullRequest?: string;
  /** False when the repository already held exactly this skill (nothing pushed). */
  changed: boolean;
}

/**
 * Clones `target`, writes the skill on `branch`, commits and pushes; opens a pull request with gh
 * when `useGh` and the remote is on GitHub. Always removes its temporary clone.
 */
export async function publishSkill(
  skill: PreparedSkill,
  target: PublishTarget,
  options: { run: Runner; branch?: string; useGh: boolean; description?: string },
): Promise<PublishResult> {
  const branch = options.branch ?? `add-skill-${skill.name}`;
  if (!/^[A-Za-z0-9._/-]+$/.test(branch) || branch.startsWith("-") || branch.includes("..")) {
    throw new PublishError(`"${branch}" is not a usable branch name.`, 2);
  }
  const tmp = mkdtempSync(join(tmpdir(), "hermes-publish-"));
  const repo = join(tmp, "repo");
  try {
    const { run } = options;
    await run("git", ["clone", "--depth", "1", "--", target.url, repo], tmp);
    // Publishing again continues the branch (a second push of a new root would be rejected).
    const existing = await run(
      "git",
      ["fetch", "-q", "--depth", "1", "origin", `refs/heads/${branch}`],
      repo,
    ).then(
      () => true,
      () => false,
    );
    await run("git", ["checkout", "-q", "-B", branch, ...(existing ? ["FETCH_HEAD"] : [])], repo);
    const repoPath = `${target.path}${skill.name}`;
    const dest = join(repo, ...repoPath.split("/"));
    rmSync(dest, { recursive: true, force: true });
    for (const [rel, content] of skill.files) {
      const file = join(dest, ...rel.split("/"));
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, content);
    }
    await run("git", ["add", "-A", "--", repoPath], repo);
    const status = await run("git", ["status", "--porcelain", "--", repoPath], repo);
    if (status.stdout.trim() === "") return { branch, repoPath, changed: false };
    const identity = await run("git", ["config", "user.email"], repo).then(
      (r) => r.stdout.trim() !== "",
      () => false,
    );
    const who = identity ? [] : ["-c", "user.name=Hermes-TS", "-c", "user.email=hermes@localhost"];
    await run("git", [...who, "commit", "-q", "-m", `Add skill: ${skill.name}`], repo);
    await run("git", ["push", "-q", "origin", `HEAD:refs/heads/${branch}`], repo);
    if (!options.useGh || !target.githubRepo) return { branch, repoPath, changed: true };
    const body =
      `${options.description ? `${options.description}\n\n` : ""}Published with \`hermes skills publish\`; ` +
      `scanned before publishing (verdict: ${skill.report.verdict}).`;
    const pr = await run(
      "gh",
      [
        "pr",
        "create",
        "--repo",
        target.githubRepo,
        "--head",
        branch,
        "--title",
        `Add skill: ${skill.name}`,
        "--body",
        body,
      ],
      repo,
    );
    const url = pr.stdout.trim().split("\n").pop() ?? "";
    return { branch, repoPath, changed: true, ...(url ? { pullRequest: url } : {}) };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
