/**
 * The GitHub source, through the GitHub REST API as upstream's adapter uses it: a skill is
 * `owner/repo/path/to/skill`; its files come from the repository's git tree
 * (`GET /repos/{repo}` for the default branch, `GET /repos/{repo}/git/trees/{branch}?recursive=1`)
 * and are downloaded pinned to that tree's sha (`GET /repos/{repo}/contents/{path}?ref=sha` with the
 * raw media type). Taps list skills with `GET /repos/{repo}/contents/{path}`.
 *
 * Guards: repository and path shapes are checked before any request; tree entries that are
 * symlinks or submodules are skipped, and a skill whose SKILL.md links one is refused; sizes and
 * counts from the tree are checked against the limits before anything is downloaded; redirects to
 * another host are refused, so the token (GITHUB_TOKEN or GH_TOKEN) only ever goes to the API host.
 */

import {
  endpoint,
  getBytes,
  getJson,
  type HubContext,
  type HubMeta,
  limitsOf,
  rateLimited,
  str,
} from "./adapter.js";
import {
  bundleName,
  checkBundleFiles,
  formatSize,
  HubError,
  isRecord,
  isValidSkillName,
  readFrontmatter,
  type SkillBundle,
  safeRelPath,
} from "./bundle.js";
import { linkedSupportFiles } from "./remote.js";
import { githubTrust, type TrustLevel } from "./trust.js";

const OWNER = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/;
const REPO = /^[A-Za-z0-9._-]{1,100}$/;
const REF = /^[\w./-]{1,200}$/;

export function githubApi(ctx: HubContext): string {
  return endpoint(ctx, "HERMES_GITHUB_API_URL", "https://api.github.com");
}

function headers(ctx: HubContext, raw = false): Record<string, string> {
  const token = ctx.env["GITHUB_TOKEN"]?.trim() || ctx.env["GH_TOKEN"]?.trim();
  return {
    accept: raw ? "application/vnd.github.v3.raw" : "application/vnd.github.v3+json",
    ...(token ? { authorization: `token ${token}` } : {}),
  };
}

/** Whether `repo` is a plain `owner/name` GitHub repository (no paths, URLs or dots-only names). */
export function isRepoName(repo: string): boolean {
  const [owner, name, ...rest] = repo.split("/");
  return (
    rest.length === 0 &&
    owner !== undefined &&
    name !== undefined &&
    OWNER.test(owner) &&
    REPO.test(name) &&
    name !== "." &&
    name !== ".."
  );
}

/** Splits `owner/repo/path/to/skill`; throws a usage error for anything else. */
export function parseGithubId(identifier: string): { repo: string; path: string } {
  const raw = identifier.replace(/^github\//, "");
  const [owner = "", name = "", ...rest] = raw.split("/");
  const repo = `${owner}/${name}`;
  const path = safeRelPath(rest.join("/"));
  if (!isRepoName(repo) || !path || path !== rest.join("/").replace(/\/+$/, "")) {
    throw new HubError(`"${identifier}" is not a GitHub skill identifier (owner/repo/path/to/skill).`, 2);
  }
  return { repo, path };
}

const encodePath = (path: string) => path.split("/").map(encodeURIComponent).join("/");

interface TreeEntry {
  path: string;
  mode: string;
  type: string;
  size: number;
}

export interface RepoTree {
  branch: string;
  sha: string;
  entries: TreeEntry[];
}

/** The default branch's full tree. Throws when the repository is missing or the tree truncated. */
export async function repoTree(ctx: HubContext, repo: string): Promise<RepoTree> {
  const api = githubApi(ctx);
  const info = await getJson(ctx, `${api}/repos/${repo}`, { headers: headers(ctx) });
  if (!isRecord(info)) throw new HubError(`GitHub has no repository ${repo}.`);
  const branch = str(info["default_branch"]) || "main";
  if (!REF.test(branch) || branch.includes("..")) throw new HubError(`${repo} names an odd default branch.`);
  const tree = await getJson(ctx, `${api}/repos/${repo}/git/trees/${encodePath(branch)}?recursive=1`, {
    headers: headers(ctx),
  });
  if (!isRecord(tree) || !Array.isArray(tree["tree"]))
    throw new HubError(`could not read the tree of ${repo}.`);
  if (tree["truncated"] === true) throw new HubError(`the tree of ${repo} is too large to read.`);
  const entries: TreeEntry[] = tree["tree"].filter(isRecord).map((e) => ({
    path: str(e["path"]),
    mode: str(e["mode"]),
    type: str(e["type"]),
    size: typeof e["size"] === "number" ? e["size"] : 0,
  }));
  return { branch, sha: str(tree["sha"]) || branch, entries };
}

/** One file's bytes, or undefined when GitHub has no such file. */
export async function rawFile(
  ctx: HubContext,
  repo: string,
  path: string,
  ref?: string,
): Promise<Buffer | undefined> {
  const url = `${githubApi(ctx)}/repos/${repo}/contents/${encodePath(path)}${ref ? `?ref=${encodeURIComponent(ref)}` : ""}`;
  const res = await getBytes(ctx, url, { headers: headers(ctx, true) });
  if (res.status === 404) return undefined;
  rateLimited(res);
  if (res.status !== 200) throw new HubError(`${url} answered HTTP ${res.status}.`);
  return res.body;
}

/** Folder listing through the contents API: `[{name, type, path}]`. */
export async function listDir(
  ctx: HubContext,
  repo: string,
  path: string,
): Promise<Array<{ name: string; type: string }>> {
  const clean = path.replace(/^\/+|\/+$/g, "");
  const data = await getJson(ctx, `${githubApi(ctx)}/repos/${repo}/contents/${encodePath(clean)}`, {
    headers: headers(ctx),
  });
  if (!Array.isArray(data)) return [];
  return data.filter(isRecord).map((e) => ({ name: str(e["name"]), type: str(e["type"]) }));
}

function skip(rel: string): boolean {
  const base = rel.split("/").pop() ?? rel;
  return base.startsWith(".") || base.endsWith(".pyc") || rel.split("/").includes("__pycache__");
}

export interface GithubFetchOptions {
  source?: SkillBundle["source"];
  identifier?: string;
  trust?: TrustLevel;
}

/** Downloads the whole skill folder `owner/repo/path` pinned to one tree. */
export async function fetchGithubSkill(
  ctx: HubContext,
  identifier: string,
  options: GithubFetchOptions = {},
): Promise<SkillBundle> {
  const { repo, path } = parseGithubId(identifier);
  const limits = limitsOf(ctx);
  ctx.log?.(`Reading ${repo} from GitHub …`);
  const tree = await repoTree(ctx, repo);
  const prefix = `${path}/`;
  const wanted: Array<{ rel: string; path: string }> = [];
  const irregular = new Set<string>();
  let total = 0;
  for (const entry of tree.entries) {
    if (!entry.path.startsWith(prefix)) continue;
    const rel = entry.path.slice(prefix.length);
    if (entry.type === "tree") continue;
    if (entry.type !== "blob" || entry.mode === "120000") {
      irregular.add(rel);
      continue;
    }
    if (skip(rel)) continue;
    if (safeRelPath(rel) !== rel) throw new HubError(`refused ${identifier}: unsafe file path "${rel}".`);
    if (entry.size > limits.maxFileBytes) {
      throw new HubError(
        `refused ${identifier}: ${rel} is ${formatSize(entry.size)}, over the one-file limit.`,
      );
    }
    total += entry.size;
    if (total > limits.maxTotalBytes)
      throw new HubError(`refused ${identifier}: the skill is over the size limit.`);
    wanted.push({ rel, path: entry.path });
    if (wanted.length > limits.maxFiles)
      throw new HubError(`refused ${identifier}: more than ${limits.maxFiles} files.`);
  }
  if (irregular.has("SKILL.md")) throw new HubError(`refused ${identifier}: its SKILL.md is a symlink.`);
  if (!wanted.some((w) => w.rel === "SKILL.md")) throw new HubError(`${repo} has no skill at ${path}.`);
  const files = new Map<string, Buffer>();
  for (const item of wanted) {
    const content = await rawFile(ctx, repo, item.path, tree.sha);
    if (content === undefined) throw new HubError(`could not download ${repo}/${item.path}.`);
    files.set(item.rel, content);
  }
  const skillMd = files.get("SKILL.md") ?? Buffer.alloc(0);
  const linked = linkedSupportFiles(skillMd.toString("utf8")).filter((f) => irregular.has(f));
  if (linked.length > 0) {
    throw new HubError(
      `refused ${identifier}: SKILL.md links ${linked.join(", ")}, which is a symlink in the repository.`,
    );
  }
  checkBundleFiles(files, limits);
  const dirName = path.split("/").pop() ?? path;
  const warnings =
    irregular.size > 0 ? [`skipped ${irregular.size} symlink(s) or submodule(s) in ${path}`] : [];
  return {
    name: isValidSkillName(dirName) ? dirName : bundleName(skillMd, dirName),
    files,
    source: options.source ?? "github",
    identifier: options.identifier ?? `${repo}/${path}`,
    metadata: {
      repo,
      path,
      source_url: `https://github.com/${repo}/tree/${tree.sha}/${path}`,
      source_revision: tree.sha,
    },
    warnings,
    trust: options.trust ?? githubTrust(repo),
  };
}

/** SKILL.md metadata for `owner/repo/path`, or undefined when there is none. */
export async function inspectGithub(ctx: HubContext, identifier: string): Promise<HubMeta | undefined> {
  const { repo, path } = parseGithubId(identifier);
  const content = await rawFile(ctx, repo, `${path}/SKILL.md`);
  if (content === undefined) return undefined;
  const fm = readFrontmatter(content.toString("utf8"));
  return {
    name: path.split("/").pop() ?? path,
    description: fm.description ?? "",
    source: "github",
    identifier: `${repo}/${path}`,
    trust: githubTrust(repo),
    tags: fm.tags,
    extra: { repo, path, ...(fm.name ? { declared_name: fm.name } : {}) },
  };
}

/** The skills one level below `path` in `repo` (a tap). */
export async function listTapSkills(ctx: HubContext, repo: string, path: string): Promise<HubMeta[]> {
  const prefix = path.replace(/^\/+|\/+$/g, "");
  const out: HubMeta[] = [];
  for (const entry of await listDir(ctx, repo, prefix)) {
    if (entry.type !== "dir" || entry.name.startsWith(".") || entry.name.startsWith("_")) continue;
    if (safeRelPath(entry.name) !== entry.name) continue;
    // A failure (rate limit, server error) fails the whole listing, so a partial one is never cached.
    const meta = await inspectGithub(ctx, `${repo}/${prefix ? `${prefix}/` : ""}${entry.name}`);
    if (meta) out.push(meta);
  }
  return out;
}
