/**
 * What every registry adapter of the hub shares: the adapter shape (search, inspect, fetch), the
 * context it runs in (endpoints, token, limits, HTTP options), and bounded JSON/byte fetches.
 *
 * Endpoints default to the public services and can be pointed elsewhere (a mirror, or the loopback
 * fakes the tests use) with environment variables:
 * `HERMES_GITHUB_API_URL`, `HERMES_SKILLS_SH_URL`, `HERMES_CLAWHUB_URL`, `HERMES_LOBEHUB_URL`,
 * `HERMES_BROWSE_SH_URL`, `HERMES_OPTIONAL_SKILLS` (the official skills folder) and
 * `HERMES_CLAUDE_MARKETPLACES` (comma-separated `owner/repo` marketplaces to read).
 */
import { type BundleLimits, DEFAULT_LIMITS, HubError, type SkillBundle } from "./bundle.js";
import { httpGet } from "./http.js";
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
): Promise<{ status: number; body: Buffer; url: string }> {
  return httpGet(url, {
    maxBytes: options.maxBytes ?? limitsOf(ctx).maxFileBytes,
    sameHost: options.sameHost ?? true,
    ...(options.headers ? { headers: options.headers } : {}),
    ...(ctx.timeoutMs ? { timeoutMs: ctx.timeoutMs } : {}),
    ...(ctx.fetch ? { fetch: ctx.fetch } : {}),
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
  if (res.status !== 200) throw new HubError(`${url} answered HTTP ${res.status}.`);
  try {
    return JSON.parse(res.body.toString("utf8").replace(/^\uFEFF/, ""));
  } catch {
    throw new HubError(`${url} did not return valid JSON.`);
  }
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
