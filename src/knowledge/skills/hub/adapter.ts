/**
 * What every registry adapter of the hub shares: the adapter shape (search, inspect, fetch), the
 * context it runs in (endpoints, token, limits, HTTP options), and bounded JSON/byte fetches.
 *
 * Endpoints default to the public services and can be pointed elsewhere (a mirror, or the loopback
 * fakes the tests use) with environment variables:
 * `HERMES_GITHUB_API_URL`, `HERMES_SKILLS_SH_URL`, `HERMES_CLAWHUB_URL`, `HERMES_LOBEHUB_URL`,
 * `HERMES_BROWSE_SH_URL`, `HERMES_OPTIONAL_SKILLS` (the official skills folder) and
 * `HERMES_CLAUDE_MARKETPLACES` (comma-separated `owner/repo` marketplaces to read).
 *
 * A configured endpoint is the one host a registry request may reach on a private or loopback
 * address (the user pointed it there on purpose); every other host, including any URL a
 * registry's own index names, is resolved and refused when it is internal (see http.ts).
 */
import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type BundleLimits, DEFAULT_LIMITS, HubError, type SkillBundle } from "./bundle.js";
import { httpGet, type LookupFn } from "./http.js";
import { hubDir } from "./lock.js";
import type { TrustLevel } from "./trust.js";

/** A search or inspect result. */
export interface HubMeta {
  name: string;
  description: string;
  /** Source id as `--source` spells it (`official`, `github`, `skills-sh`, …). */
  source: string;
  /** What `hermes skills install` takes to install exactly this skill. */
  identifier: string;
  trust: TrustLevel;
  tags: string[];
  extra?: Record<string, unknown>;
}

export interface HubContext {
  env: Readonly<Record<string, string | undefined>>;
  /** The Hermes home (taps live in its skills/.hub/taps.json). */
  home?: string;
  limits?: BundleLimits;
  timeoutMs?: number;
  fetch?: typeof fetch;
  /** Name resolution for the private-address check; tests inject one. */
  lookup?: LookupFn;
  log?: (message: string) => void;
}

export interface HubAdapter {
  id: string;
  /** One line for `hermes skills browse --help` and the sources listing. */
  label: string;
  /** Whether `identifier` (as the user typed it) is this adapter's, by its explicit prefix. */
  claims(identifier: string): boolean;
  search(query: string, limit: number, ctx: HubContext): Promise<HubMeta[]>;
  inspect(identifier: string, ctx: HubContext): Promise<HubMeta | undefined>;
  fetch(identifier: string, ctx: HubContext): Promise<SkillBundle>;
}

const MAX_JSON_BYTES = 8 * 1024 * 1024;

/** The environment variables that point a registry at another endpoint. */
export const ENDPOINT_VARIABLES = [
  "HERMES_GITHUB_API_URL",
  "HERMES_SKILLS_SH_URL",
  "HERMES_CLAWHUB_URL",
  "HERMES_LOBEHUB_URL",
  "HERMES_BROWSE_SH_URL",
] as const;

/** `host[:port]` of every configured endpoint: the only hosts allowed to be private. */
export function configuredHosts(env: HubContext["env"]): string[] {
  const hosts: string[] = [];
  for (const variable of ENDPOINT_VARIABLES) {
    const value = env[variable]?.trim();
    if (!value) continue;
    try {
      hosts.push(new URL(value).host);
    } catch {
      // A malformed endpoint fails when it is used, with its own message.
    }
  }
  return hosts;
}

export function endpoint(ctx: HubContext, variable: string, fallback: string): string {
  const value = ctx.env[variable]?.trim();
  return (value || fallback).replace(/\/+$/, "");
}

export function limitsOf(ctx: HubContext): BundleLimits {
  return ctx.limits ?? DEFAULT_LIMITS;
}

interface GetOptions {
  headers?: Record<string, string>;
  maxBytes?: number;
  /** Refuse redirects to other hosts (API endpoints). Default true. */
  sameHost?: boolean;
}

/** GET returning status and body; throws {@link HubError} on transport failures and size limits. */
export async function getBytes(
  ctx: HubContext,
  url: string,
  options: GetOptions = {},
): Promise<{ status: number; body: Buffer; url: string; headers?: Headers }> {
  return httpGet(url, {
    maxBytes: options.maxBytes ?? limitsOf(ctx).maxFileBytes,
    sameHost: options.sameHost ?? true,
    ...(options.headers ? { headers: options.headers } : {}),
    ...(ctx.timeoutMs ? { timeoutMs: ctx.timeoutMs } : {}),
    ...(ctx.fetch ? { fetch: ctx.fetch } : {}),
    guard: { trustedHosts: configuredHosts(ctx.env), ...(ctx.lookup ? { lookup: ctx.lookup } : {}) },
  });
}

/** GET and parse JSON; undefined for a 404, a {@link HubError} for other failures. */
export async function getJson(
  ctx: HubContext,
  url: string,
  options: GetOptions = {},
): Promise<unknown | undefined> {
  const res = await getBytes(ctx, url, { maxBytes: MAX_JSON_BYTES, ...options });
  if (res.status === 404) return undefined;
  rateLimited(res);
  if (res.status !== 200) throw new HubError(`${url} answered HTTP ${res.status}.`);
  try {
    return JSON.parse(res.body.toString("utf8").replace(/^\uFEFF/, ""));
  } catch {
    throw new HubError(`${url} did not return valid JSON.`);
  }
}

/** How long a cached registry listing is reused (as upstream: one hour). */
export const INDEX_CACHE_TTL_SECONDS = 3600;

/**
 * A listing computed at most once an hour per home, kept in `skills/.hub/index-cache/<key>.json`
 * (listing a GitHub tap costs a request per skill). Failures are never cached; without a home, or
 * with `HERMES_SKILLS_NO_CACHE=1`, nothing is cached. Only searches and browsing use it: installs,
 * inspect and update checks always fetch.
 */
export async function cachedListing<T>(ctx: HubContext, key: string, compute: () => Promise<T>): Promise<T> {
  if (!ctx.home || ctx.env["HERMES_SKILLS_NO_CACHE"] === "1") return compute();
  const dir = join(hubDir(ctx.home), "index-cache");
  const file = join(dir, `${key.replace(/[^\w.-]+/g, "_").slice(0, 120)}.json`);
  try {
    const info = await stat(file);
    if (Date.now() - info.mtimeMs < INDEX_CACHE_TTL_SECONDS * 1000) {
      return JSON.parse(await readFile(file, "utf8")) as T;
    }
  } catch {
    // Missing or unreadable: compute it.
  }
  const value = await compute();
  try {
    await mkdir(dir, { recursive: true });
    await writeFile(join(hubDir(ctx.home), ".ignore"), "# hub internals: quarantine and caches\n*\n");
    await writeFile(file, JSON.stringify(value));
  } catch {
    // A cache that cannot be written only costs requests.
  }
  return value;
}

/** Throws a clear error for an exhausted rate limit (429, or GitHub's 403 with no requests left). */
export function rateLimited(res: { status: number; url: string; headers?: Headers }): void {
  const exhausted =
    res.status === 429 || (res.status === 403 && res.headers?.get("x-ratelimit-remaining") === "0");
  if (!exhausted) return;
  const github = res.headers?.has("x-ratelimit-limit") === true;
  const reset = Number(res.headers?.get("x-ratelimit-reset") ?? "NaN");
  const when = Number.isFinite(reset)
    ? ` until ${new Date(reset * 1000).toISOString().slice(11, 16)} UTC`
    : "";
  throw new HubError(
    `${new URL(res.url).host} is rate limiting requests${when}.` +
      (github
        ? " Without a token GitHub allows 60 requests an hour; set GITHUB_TOKEN or GH_TOKEN to raise it."
        : " Try again later."),
  );
}

/** Every query word appears in one of the fields (case-insensitive); an empty query matches all. */
export function matchesWords(query: string, ...fields: unknown[]): boolean {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return true;
  const hay = fields
    .map((f) => (Array.isArray(f) ? f.join(" ") : typeof f === "string" ? f : ""))
    .join(" ")
    .toLowerCase();
  return words.every((w) => hay.includes(w));
}

export function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}

export function strList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

/** Strips a known prefix (`clawhub/`, `skills-sh/`, …) from an identifier. */
export function stripPrefix(identifier: string, prefixes: readonly string[]): string {
  const found = prefixes.find((p) => identifier.startsWith(p));
  return found ? identifier.slice(found.length) : identifier;
}

/** A refusal that names the source, for identifiers that do not resolve. */
export function notFound(source: string, identifier: string): HubError {
  return new HubError(`${source} has no skill "${identifier}".`);
}
