/**
 * Profile distributions (upstream's `profile_distribution.py`): a profile published as a directory
 * or git repository with `distribution.yaml` at its root, installed with `hermes profile install
 * <source>` and refreshed in place with `hermes profile update <name>`.
 *
 * What is copied: everything at the source's root except user-owned names (credentials, databases,
 * memories, sessions, logs, caches, `local/`, ...), which are neither copied nor ever touched in
 * the profile; `.git` is dropped; `.env.template` lands as `.env.EXAMPLE` (one is written from
 * `env_requires` when the source has none). On update `config.yaml` is kept unless
 * `--force-config`; the other copied paths are replaced. A source holding a symlink is refused
 * before anything is copied, so a distribution cannot point into the user's files.
 */
import { execFileSync } from "node:child_process";
import {
  copyFileSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { ProfileError } from "../../config/errors.js";
import { readDistribution } from "../../config/profile-meta.js";
import { assertNewName, profileDir } from "../../config/profiles.js";

export const MANIFEST = "distribution.yaml";

/** Names at any depth that are the user's, never part of a distribution (upstream's list). */
export const USER_OWNED: ReadonlySet<string> = new Set([
  "auth.json",
  ".env",
  "state.db",
  "state.db-shm",
  "state.db-wal",
  "hermes_state.db",
  "response_store.db",
  "response_store.db-shm",
  "response_store.db-wal",
  "gateway.pid",
  "gateway.sock",
  "gateway_state.json",
  "processes.json",
  "auth.lock",
  "active_profile",
  ".update_check",
  "errors.log",
  ".hermes_history",
  ".anthropic_oauth.json",
  "memories",
  "sessions",
  "logs",
  "plans",
  "workspace",
  "home",
  "image_cache",
  "audio_cache",
  "document_cache",
  "browser_screenshots",
  "checkpoints",
  "sandboxes",
  "backups",
  "cache",
  "hermes-agent",
  ".worktrees",
  "profiles",
  "bin",
  "node_modules",
  "local",
  ".git",
]);

export interface DistributionPlan {
  name: string;
  version: string;
  description: string;
  /** Where it came from, recorded as `source:` so `update` pulls from there again. */
  source: string;
  target: string;
  /** The profile existed before (an update, or an install with --force). */
  existing: boolean;
  skills: number;
  hasCron: boolean;
  /** Required env vars not set anywhere yet (for the after-install hint). */
  envRequired: string[];
}

export interface InstallOptions {
  source: string;
  userHome: string;
  /** Hermes-TS's version, checked against `hermes_requires`. */
  version: string;
  name?: string | undefined;
  force?: boolean | undefined;
  /** Called with the plan before anything is written; false cancels. */
  confirm?: ((plan: DistributionPlan) => Promise<boolean>) | undefined;
  now?: Date | undefined;
}

/** Installs a distribution as a new profile. Returns the plan carried out, or undefined when cancelled. */
export async function installDistribution(options: InstallOptions): Promise<DistributionPlan | undefined> {
  const work = mkdtempSync(join(tmpdir(), "hermes-dist-"));
  try {
    const staged = stageSource(options.source, work);
    const manifest = loadManifest(staged.dir, options.version);
    const name = (options.name ?? String(manifest["name"])).trim();
    assertNewName(name);
    const target = profileDir(name, options.userHome);
    const existing = existsSync(target);
    if (existing && !options.force) {
      throw new ProfileError(
        `profile "${name}" already exists at ${target}. Update it in place with: hermes profile update ${name} (or pass --force to install over it)`,
      );
    }
    const plan = planFor(staged.dir, manifest, name, staged.provenance, target, existing);
    if (options.confirm && !(await options.confirm(plan))) return undefined;
    for (const dir of ["memories", "sessions", "skills", "logs", "cron", "workspace", "home"]) {
      mkdirSync(join(target, dir), { recursive: true });
    }
    copyPayload(staged.dir, target, false, {
      ...manifest,
      name,
      source: staged.provenance,
      installed_at: isoSeconds(options.now),
    });
    return plan;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export interface UpdateOptions {
  name: string;
  userHome: string;
  version: string;
  forceConfig?: boolean | undefined;
  confirm?: ((plan: DistributionPlan) => Promise<boolean>) | undefined;
  now?: Date | undefined;
}

/** Pulls an installed profile's distribution again from its recorded source and applies it. */
export async function updateDistribution(options: UpdateOptions): Promise<DistributionPlan | undefined> {
  const target = profileDir(options.name, options.userHome);
  if (!existsSync(target)) throw new ProfileError(`profile "${options.name}" does not exist.`);
  const info = readDistribution(target);
  if (!info) {
    throw new ProfileError(
      `profile "${options.name}" is not a distribution (no ${MANIFEST}); only profiles installed with hermes profile install can be updated.`,
    );
  }
  if (!info.source) {
    throw new ProfileError(
      `profile "${options.name}" has no recorded source; reinstall it with: hermes profile install <source> --name ${options.name} --force`,
    );
  }
  const work = mkdtempSync(join(tmpdir(), "hermes-dist-"));
  try {
    const staged = stageSource(info.source, work);
    const manifest = loadManifest(staged.dir, options.version);
    const plan = planFor(staged.dir, manifest, options.name, staged.provenance, target, true);
    if (options.confirm && !(await options.confirm(plan))) return undefined;
    copyPayload(staged.dir, target, options.forceConfig !== true, {
      ...manifest,
      name: options.name,
      source: staged.provenance,
      installed_at: isoSeconds(options.now),
    });
    return plan;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The source as a local directory holding `distribution.yaml`: a directory is used in place; a git
 * repository (a URL, a bare repository, or a directory whose root is a work tree without the
 * manifest) is cloned shallowly into `work`. `<repository>#<ref>` pins a branch, tag or commit
 * (upstream's syntax); the pin stays in the recorded source, so `update` pulls the same ref again.
 * Git's remote helpers (`ext::`) and anything that could read as a git option are refused.
 */
export function stageSource(source: string, work: string): { dir: string; provenance: string } {
  const raw = source.trim();
  if (raw === "" || raw.startsWith("-")) throw new ProfileError(`"${source}" is not a distribution source`);
  if (/^[a-z][a-z0-9+.-]*::/i.test(raw)) {
    throw new ProfileError(
      `"${source}": git remote helpers (${raw.split("::")[0]}::) are not allowed as a source`,
    );
  }
  const expand = (path: string) => resolve(path.replace(/^~(?=\/|$)/, process.env["HOME"] ?? "~"));
  // A directory whose name holds "#" is still a directory; otherwise "#" starts a git ref.
  const pinned = isDir(expand(raw)) ? undefined : splitRef(raw);
  const base = pinned?.base ?? raw;
  const ref = pinned?.ref;
  const local = expand(base);
  if (isDir(local)) {
    if (ref === undefined && existsSync(join(local, MANIFEST))) return { dir: local, provenance: local };
    if (!isGitRepo(local)) {
      throw new ProfileError(
        ref === undefined
          ? `no ${MANIFEST} in ${local}; a distribution has one at its root`
          : `${local} is not a git repository, so it has no ref "${ref}" to pin`,
      );
    }
    return { dir: cloneInto(local, work, source, ref), provenance: withRef(local, ref) };
  }
  if (!looksLikeGitUrl(base)) {
    throw new ProfileError(
      `cannot find the distribution "${source}": expected a directory with ${MANIFEST} or a git repository (URL or path)`,
    );
  }
  const url = /^github\.com\/[\w.-]+\/[\w.-]+\/?$/.test(base) ? `https://${base.replace(/\/$/, "")}` : base;
  return { dir: cloneInto(url, work, source, ref), provenance: withRef(base, ref) };
}

/**
 * `<base>#<ref>` split at the last "#", the ref checked: a branch, tag or commit name git accepts
 * and that cannot be read as an option or a revision range. Undefined without a "#"; throws
 * `ProfileError` for an empty or unusable ref.
 */
export function splitRef(source: string): { base: string; ref: string } | undefined {
  const at = source.lastIndexOf("#");
  if (at < 0) return undefined;
  const base = source.slice(0, at);
  const ref = source.slice(at + 1);
  const valid =
    /^[A-Za-z0-9_][A-Za-z0-9._/-]*$/.test(ref) &&
    !ref.includes("..") &&
    !ref.includes("//") &&
    !ref.endsWith("/") &&
    !ref.endsWith(".") &&
    !ref.endsWith(".lock") &&
    !/(^|\/)\./.test(ref);
  if (base === "" || !valid) {
    throw new ProfileError(
      `"${source}": after "#" give a branch, tag or commit of the repository (letters, digits, ".", "_", "-", "/"), for example ${base || "<repository>"}#v1.2.0`,
    );
  }
  return { base, ref };
}

function withRef(source: string, ref: string | undefined): string {
  return ref === undefined ? source : `${source}#${ref}`;
}

const GIT_ENV = { GIT_TERMINAL_PROMPT: "0", GIT_ALLOW_PROTOCOL: "file:git:http:https:ssh" };

function runGit(args: string[], shown: string, what: string): void {
  try {
    execFileSync("git", args, {
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...process.env, ...GIT_ENV },
      timeout: 120_000,
    });
  } catch (error) {
    const stderr = String((error as { stderr?: Buffer }).stderr ?? "").trim();
    if ((error as NodeJS.ErrnoException).code === "ENOENT") {
      throw new ProfileError("git is needed to install a distribution from a repository; install git");
    }
    throw new ProfileError(`git ${what} of ${shown} failed: ${stderr || (error as Error).message}`);
  }
}

/**
 * Clones `url` into `work/clone`, at `ref` when given: a branch or tag shallowly; a commit (which
 * `--branch` cannot name) from a full clone, checked out detached. The ref comes after `--` or as
 * the value of `--branch`, never where git would take it for an option.
 */
function cloneInto(url: string, work: string, shown: string, ref?: string): string {
  const dest = join(work, "clone");
  if (ref === undefined) {
    runGit(["clone", "--quiet", "--depth", "1", "--", url, dest], shown, "clone");
  } else {
    try {
      runGit(["clone", "--quiet", "--depth", "1", `--branch=${ref}`, "--", url, dest], shown, "clone");
    } catch (error) {
      if (!/^[0-9a-f]{7,40}$/i.test(ref)) {
        throw new ProfileError(
          `${(error as Error).message}\n(no branch or tag "${ref}" there; a commit is given by its hash)`,
        );
      }
      rmSync(dest, { recursive: true, force: true });
      runGit(["clone", "--quiet", "--no-checkout", "--", url, dest], shown, "clone");
      runGit(
        ["-C", dest, "checkout", "--quiet", "--detach", `${ref}^{commit}`, "--"],
        shown,
        `checkout of ${ref}`,
      );
    }
  }
  rmSync(join(dest, ".git"), { recursive: true, force: true });
  if (!existsSync(join(dest, MANIFEST))) {
    throw new ProfileError(`no ${MANIFEST} at the root of ${shown}; it is not a Hermes profile distribution`);
  }
  return dest;
}

/** The manifest as a map, checked: a mapping with `name`, and `hermes_requires` met by `version`. */
function loadManifest(dir: string, version: string): Record<string, unknown> {
  rejectSymlinks(dir);
  const path = join(dir, MANIFEST);
  let data: unknown;
  try {
    data = parseYaml(readFileSync(path, "utf8").replace(/^\uFEFF/, ""));
  } catch (error) {
    throw new ProfileError(`${MANIFEST} does not parse: ${(error as Error).message.split("\n")[0]}`);
  }
  if (!data || typeof data !== "object" || Array.isArray(data)) {
    throw new ProfileError(`${MANIFEST} must be a mapping`);
  }
  const manifest = data as Record<string, unknown>;
  if (typeof manifest["name"] !== "string" || manifest["name"].trim() === "") {
    throw new ProfileError(`${MANIFEST} has no "name"`);
  }
  if (manifest["env_requires"] !== undefined && !Array.isArray(manifest["env_requires"])) {
    throw new ProfileError(`${MANIFEST}: env_requires must be a list`);
  }
  checkHermesRequires(String(manifest["hermes_requires"] ?? ""), version);
  return manifest;
}

/**
 * Throws ProfileError when `version` does not satisfy `spec` (one comparator: `>=0.12.0`,
 * `==1.0`, ...; a bare version means `>=`; empty means no requirement).
 */
export function checkHermesRequires(spec: string, version: string): void {
  if (spec.trim() === "") return;
  const match = /^\s*(>=|<=|==|!=|>|<)?\s*(.+?)\s*$/.exec(spec);
  const op = match?.[1] ?? ">=";
  const want = semver(match?.[2] ?? spec);
  const have = semver(version);
  const cmp = have[0] - want[0] || have[1] - want[1] || have[2] - want[2];
  const ok = { ">=": cmp >= 0, "<=": cmp <= 0, "==": cmp === 0, "!=": cmp !== 0, ">": cmp > 0, "<": cmp < 0 }[
    op as ">="
  ];
  if (!ok)
    throw new ProfileError(
      `this distribution requires Hermes ${op}${match?.[2] ?? spec}, and this is ${version}`,
    );
}

function semver(text: string): [number, number, number] {
  const parts = text.trim().replace(/^v/, "").split(/[-+]/)[0]?.split(".") ?? [];
  const nums = [0, 1, 2].map((i) => Number(parts[i] ?? "0"));
  if (nums.some((n) => !Number.isInteger(n) || n < 0)) throw new ProfileError(`"${text}" is not a version`);
  return nums as [number, number, number];
}

/** Refuses any symlink under `dir` (it would copy a pointer into the user's files). */
function rejectSymlinks(dir: string): void {
  const walk = (at: string): void => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isSymbolicLink()) {
        throw new ProfileError(`profile distributions cannot contain symlinks: ${relative(dir, path)}`);
      }
      if (entry.isDirectory() && entry.name !== ".git") walk(path);
    }
  };
  walk(dir);
}

function copyPayload(
  staged: string,
  target: string,
  preserveConfig: boolean,
  manifest: Record<string, unknown>,
): void {
  mkdirSync(target, { recursive: true });
  for (const entry of readdirSync(staged, { withFileTypes: true })) {
    const name = entry.name;
    if (USER_OWNED.has(name) || name === MANIFEST) continue;
    const from = join(staged, name);
    if (name === ".env.template") {
      copyFileSync(from, join(target, ".env.EXAMPLE"));
      continue;
    }
    if (name === "config.yaml" && preserveConfig && existsSync(join(target, name))) continue;
    const dest = join(target, name);
    if (entry.isDirectory()) {
      rmSync(dest, { recursive: true, force: true });
      cpSync(from, dest, { recursive: true, filter: (src) => !USER_OWNED.has(src.split("/").pop() ?? "") });
    } else if (entry.isFile()) {
      copyFileSync(from, dest);
    }
  }
  const env = Array.isArray(manifest["env_requires"]) ? manifest["env_requires"] : [];
  if (env.length > 0 && !existsSync(join(target, ".env.EXAMPLE"))) {
    writeFileSync(join(target, ".env.EXAMPLE"), envTemplate(env));
  }
  writeFileSync(join(target, MANIFEST), stringifyYaml(manifest));
}

function envTemplate(env: unknown[]): string {
  const lines = [
    "# Environment variables this Hermes distribution uses.",
    "# Copy the ones you need to .env and fill in your own values.",
    "",
  ];
  for (const item of env) {
    if (!item || typeof item !== "object") continue;
    const e = item as Record<string, unknown>;
    const name = typeof e["name"] === "string" ? e["name"].trim() : "";
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) continue;
    if (typeof e["description"] === "string" && e["description"])
      lines.push(`# ${e["description"].replace(/\s+/g, " ")}`);
    const required = e["required"] !== false;
    lines.push(`# (${required ? "required" : "optional"})`);
    const value =
      e["default"] === undefined || e["default"] === null ? "" : String(e["default"]).replace(/\s+/g, " ");
    lines.push(`${required ? "" : "# "}${name}=${value}`, "");
  }
  return `${lines.join("\n").trimEnd()}\n`;
}

function planFor(
  dir: string,
  manifest: Record<string, unknown>,
  name: string,
  source: string,
  target: string,
  existing: boolean,
): DistributionPlan {
  const env = Array.isArray(manifest["env_requires"]) ? manifest["env_requires"] : [];
  return {
    name,
    version: String(manifest["version"] ?? "0.1.0"),
    description: typeof manifest["description"] === "string" ? manifest["description"] : "",
    source,
    target,
    existing,
    skills: countFiles(join(dir, "skills"), "SKILL.md"),
    hasCron: countFiles(join(dir, "cron"), ".json") + countFiles(join(dir, "cron"), ".yaml") > 0,
    envRequired: env.flatMap((e: unknown) => {
      const item = e as Record<string, unknown> | null;
      return item && typeof item["name"] === "string" && item["required"] !== false ? [item["name"]] : [];
    }),
  };
}

function countFiles(dir: string, suffix: string): number {
  if (!isDir(dir)) return 0;
  let n = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith(suffix)) n++;
  }
  return n;
}

function looksLikeGitUrl(s: string): boolean {
  return (
    s.endsWith(".git") ||
    /^(https?|ssh|git|file):\/\//.test(s) ||
    /^git@[\w.-]+:/.test(s) ||
    /^github\.com\/[\w.-]+\/[\w.-]+\/?$/.test(s)
  );
}

function isGitRepo(dir: string): boolean {
  return existsSync(join(dir, ".git")) || (existsSync(join(dir, "HEAD")) && isDir(join(dir, "objects")));
}

function isDir(path: string): boolean {
  try {
    return lstatSync(path).isDirectory() || statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function isoSeconds(now: Date | undefined): string {
  return (now ?? new Date()).toISOString().replace(/\.\d{3}Z$/, "+00:00");
}
