/**
 * Turns what the user typed after `hermes skills install` (or what `lock.json` recorded) into a
 * {@link SourceSpec}, and a spec into a {@link SkillBundle}:
 *
 * - a local folder holding SKILL.md, or a folder of several skills (pick one with `select`);
 * - a git remote (`https://….git`, `git@host:path`, `ssh://`, `file://`, or anything with `--git`),
 *   optionally `#ref`, `#ref:subdir` or `#:subdir`;
 * - an http(s) URL ending in `.md`: that SKILL.md alone;
 * - an http(s) URL to `/.well-known/skills/index.json`, a path under it, or a site root (probing
 *   that path), or a `well-known:` identifier;
 * - a registry identifier (router.ts): `official/…`, `skills-sh/…`, `github/…`, `clawhub/…`,
 *   `claude-marketplace/…`, `lobehub/…`, `browse-sh/…`, or a bare `owner/repo/path` (GitHub) that
 *   is not a folder on disk.
 */
import { existsSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, resolve } from "node:path";
import { type BundleLimits, bundleName, HubError, type HubSourceKind, type SkillBundle } from "./bundle.js";
import { fetchGitSkill, type GitSpec, looksLikeGitRemote, parseGitSpec } from "./git.js";
import type { LookupFn } from "./http.js";
import { findSkillDirs, readSkillFolder, selectCandidate } from "./local.js";
import { fetchUrlSkill, fetchWellKnownSkill, indexUrlFor, parseWellKnownIdentifier } from "./remote.js";
import { adapterById, adapterClaiming } from "./router.js";

export type SourceSpec =
  | { kind: "local"; path: string }
  | ({ kind: "git" } & GitSpec)
  | { kind: "url"; url: string }
  | { kind: "well-known"; indexUrl: string; name?: string }
  | { kind: "hub"; source: string; identifier: string; notFolder?: string };

export interface FetchOptions {
  limits?: BundleLimits;
  /** Per-request HTTP timeout. */
  timeoutMs?: number;
  gitTimeoutMs?: number;
  /** Which skill to take from a source holding several. */
  select?: string;
  fetch?: typeof fetch;
  /** Progress lines (stderr in the CLI). */
  log?: (message: string) => void;
  /** Environment for registry endpoints and the GitHub token; default process.env. */
  env?: Readonly<Record<string, string | undefined>>;
  /** The Hermes home (for the taps file). */
  home?: string;
  /** The identifier came from a chat: no private or loopback address, even one written literally. */
  remoteRequest?: boolean;
  /** Name resolution for the private-address check; tests inject one. */
  lookup?: LookupFn;
}

/**
 * Parses an install argument. `git` forces the git source (`--git URL`). Relative paths resolve
 * against `cwd`. Throws a usage {@link HubError} for something that is none of the supported forms.
 */
export function parseSourceArgument(arg: string, options: { git?: boolean; cwd?: string } = {}): SourceSpec {
  const value = arg.trim();
  if (value === "") throw new HubError("missing source: give a folder, a git URL or an https URL.", 2);
  if (options.git) return { kind: "git", ...parseGitSpec(value) };
  if (value.startsWith("-")) throw new HubError(`"${value}" looks like an option, not a source.`, 2);
  const claimed = adapterClaiming(value);
  if (claimed) return { kind: "hub", source: claimed.id, identifier: value };
  if (value.startsWith("well-known:")) {
    const { indexUrl, name } = parseWellKnownIdentifier(value);
    return { kind: "well-known", indexUrl, name };
  }
  if (looksLikeGitRemote(value)) return { kind: "git", ...parseGitSpec(value) };
  if (/^https?:\/\//i.test(value)) {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new HubError(`"${value}" is not a valid URL.`, 2);
    }
    const fragment = url.hash ? decodeURIComponent(url.hash.slice(1)) : undefined;
    const path = url.pathname;
    const wellKnown = /\/\.well-known\/skills\/([^/]+)(?:\/SKILL\.md)?\/?$/i.exec(path);
    if (/\/index\.json$/i.test(path)) {
      return {
        kind: "well-known",
        indexUrl: value.replace(/#.*$/, ""),
        ...(fragment ? { name: fragment } : {}),
      };
    }
    if (wellKnown?.[1])
      return { kind: "well-known", indexUrl: indexUrlFor(value), name: decodeURIComponent(wellKnown[1]) };
    if (/\.md$/i.test(path)) return { kind: "url", url: value };
    return { kind: "well-known", indexUrl: indexUrlFor(value), ...(fragment ? { name: fragment } : {}) };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
    throw new HubError(`unsupported source "${value}": use a folder, a git URL or an https URL.`, 2);
  }
  const path = resolve(options.cwd ?? process.cwd(), value.replace(/^~(?=\/|$)/, homedir()));
  if (!existsSync(path) && /^[A-Za-z0-9][\w.-]*\/[\w.-]+\/[\w./-]+$/.test(value) && !value.startsWith(".")) {
    return { kind: "hub", source: "github", identifier: value, notFolder: path };
  }
  if (!existsSync(path)) {
    throw new HubError(`no folder or file at ${path} (and "${value}" is not a URL or a git address).`, 2);
  }
  return { kind: "local", path };
}

/**
 * The spec `check` re-fetches from, rebuilt from a lock entry's `source` and `identifier`. Throws
 * a {@link HubError} for sources this implementation cannot fetch (Python-only registries).
 */
export function specFromLock(source: string, identifier: string): SourceSpec {
  switch (source as HubSourceKind) {
    case "local":
      return { kind: "local", path: identifier };
    case "git":
      return { kind: "git", ...parseGitSpec(identifier) };
    case "url":
      return { kind: "url", url: identifier };
    case "well-known": {
      const { indexUrl, name } = parseWellKnownIdentifier(identifier);
      return { kind: "well-known", indexUrl, name };
    }
    default:
      {
        const adapter = adapterById(source);
        if (adapter) return { kind: "hub", source: adapter.id, identifier };
      }
      throw new HubError(
        `cannot fetch from source "${source}" (${identifier}); it is not a source Hermes-TS knows.`,
      );
  }
}

/** Fetches the skill a spec points at. Throws {@link HubError} with an exit code on failure. */
export async function fetchSkill(spec: SourceSpec, options: FetchOptions = {}): Promise<SkillBundle> {
  const remote = {
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.log ? { log: options.log } : {}),
    ...(options.remoteRequest ? { remoteRequest: true } : {}),
    ...(options.lookup ? { lookup: options.lookup } : {}),
  };
  switch (spec.kind) {
    case "local":
      return fetchLocalSkill(spec.path, options);
    case "git":
      return fetchGitSkill(spec, {
        ...(options.limits ? { limits: options.limits } : {}),
        ...(options.gitTimeoutMs ? { timeoutMs: options.gitTimeoutMs } : {}),
        ...(options.select ? { select: options.select } : {}),
        ...(options.log ? { log: options.log } : {}),
      });
    case "url":
      return fetchUrlSkill(spec.url, remote);
    case "well-known":
      return fetchWellKnownSkill(spec.indexUrl, spec.name ?? options.select, remote);
    case "hub": {
      const adapter = adapterById(spec.source);
      if (!adapter) throw new HubError(`unknown source "${spec.source}".`, 2);
      const fetched = adapter.fetch(spec.identifier, {
        env: options.env ?? process.env,
        ...(options.home ? { home: options.home } : {}),
        ...(options.limits ? { limits: options.limits } : {}),
        ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
        ...(options.fetch ? { fetch: options.fetch } : {}),
        ...(options.lookup ? { lookup: options.lookup } : {}),
        ...(options.log ? { log: options.log } : {}),
      });
      // A bare owner/repo/path that was meant as a folder gets both readings in its error.
      const { notFolder } = spec;
      return notFolder === undefined
        ? fetched
        : fetched.catch((error: unknown) => {
            throw error instanceof HubError
              ? new HubError(
                  `no folder at ${notFolder}, and as a GitHub skill: ${error.message}`,
                  error.exitCode,
                )
              : error;
          });
    }
  }
}

async function fetchLocalSkill(path: string, options: FetchOptions): Promise<SkillBundle> {
  let dir = path;
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) throw new HubError(`no folder at ${path}.`, 2);
  if (stat.isFile()) {
    if (basename(path) !== "SKILL.md")
      throw new HubError(`${path} is a file; give the folder that holds SKILL.md.`, 2);
    dir = dirname(path);
  }
  const chosen = selectCandidate(await findSkillDirs(dir), options.select, dir);
  const { files, warnings } = await readSkillFolder(chosen.dir, options.limits);
  return {
    name: bundleName(files.get("SKILL.md") ?? Buffer.alloc(0), basename(chosen.dir)),
    files,
    source: "local",
    identifier: chosen.dir,
    metadata: { path: chosen.dir },
    warnings,
  };
}

/** A short description of a spec for progress lines and errors. */
export function describeSpec(spec: SourceSpec): string {
  switch (spec.kind) {
    case "local":
      return spec.path;
    case "git":
      return spec.url;
    case "url":
      return spec.url;
    case "well-known":
      return spec.name ? `${spec.name} from ${spec.indexUrl}` : spec.indexUrl;
    case "hub":
      return `${spec.identifier} (${spec.source})`;
  }
}
