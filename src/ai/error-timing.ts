/**
 * Retry timing as providers state it: `Retry-After` (seconds or an HTTP date), `retry-after-ms`,
 * the rate-limit reset header families, Go-style durations ("6m0s") and "try again in 2s" in
 * message text. Pure: every function takes the clock as `now`.
 */
import type { HeaderBag } from "./error-types.js";

/** A header bag (Headers, Map or plain record) as a lower-case-keyed map; undefined when none. */
export function normaliseHeaders(source: unknown): Map<string, string> | undefined {
  if (typeof source !== "object" || source === null || Array.isArray(source)) return undefined;
  const out = new Map<string, string>();
  const put = (value: unknown, key: unknown) => {
    const v = Array.isArray(value) ? value[0] : value;
    if (typeof key === "string" && (typeof v === "string" || typeof v === "number"))
      out.set(key.toLowerCase(), String(v));
  };
  const forEach = (source as { forEach?: unknown }).forEach;
  if (typeof forEach === "function") forEach.call(source, put);
  else for (const [key, value] of Object.entries(source)) put(value, key);
  return out.size > 0 ? out : undefined;
}

/**
 * Parses a duration as providers write it: "1s", "6m0s", "20ms", "1h2m3.5s", "32.9s", or a bare
 * number of seconds, into ms. Undefined when it is not one.
 */
export function parseDuration(value: string): number | undefined {
  const text = value.trim().toLowerCase();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const m = /^(?:([\d.]+)h)?(?:([\d.]+)m(?!s))?(?:([\d.]+)s)?(?:([\d.]+)ms)?$/.exec(text);
  if (!m || text === "") return undefined;
  const ms =
    Number(m[1] ?? 0) * 3_600_000 + Number(m[2] ?? 0) * 60_000 + Number(m[3] ?? 0) * 1000 + Number(m[4] ?? 0);
  return Number.isFinite(ms) ? Math.round(ms) : undefined;
}

/**
 * Milliseconds to wait for a `Retry-After` value: delta seconds ("3", "1.5", or a number) or an
 * HTTP date. Undefined when absent or unparseable; never negative.
 */
export function parseRetryAfter(value: string | number | null | undefined, now: number = Date.now()) {
  if (typeof value === "number")
    return Number.isFinite(value) ? Math.max(0, Math.round(value * 1000)) : undefined;
  const text = value?.trim();
  if (!text) return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const date = /[a-z]/i.test(text) ? Date.parse(text) : Number.NaN;
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** An instant from a reset header: epoch ms, epoch seconds, delta seconds, a duration or a date. */
function parseResetValue(value: string, now: number): number | undefined {
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) {
    const n = Number(text);
    return n > 1e12 ? Math.round(n) : n > 1e9 ? Math.round(n * 1000) : now + Math.round(n * 1000);
  }
  const duration = parseDuration(text);
  if (duration !== undefined) return now + duration;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : date;
}

/**
 * Retry timing from response headers: `retry-after-ms` / `retry-after` → `retryAfterMs`, and the
 * rate-limit reset family → `resetAt` (epoch ms): OpenAI/Groq `x-ratelimit-reset-requests|tokens`
 * ("6m0s"), Anthropic `anthropic-ratelimit-*-reset` (RFC 3339), OpenRouter `X-RateLimit-Reset`
 * (epoch ms). Where the matching `*-remaining` header is 0 the latest of those resets wins (that
 * limit was hit); otherwise the earliest. Past resets are ignored. `{}` when nothing usable.
 */
export function parseResetHeaders(
  headers: HeaderBag | undefined,
  now: number = Date.now(),
): { retryAfterMs?: number; resetAt?: number } {
  const map = normaliseHeaders(headers);
  if (!map) return {};
  const out: { retryAfterMs?: number; resetAt?: number } = {};
  const ms = map.get("retry-after-ms")?.trim();
  const after =
    ms && /^\d+(\.\d+)?$/.test(ms) ? Math.round(Number(ms)) : parseRetryAfter(map.get("retry-after"), now);
  if (after !== undefined) out.retryAfterMs = after;
  const exhausted: number[] = [];
  const all: number[] = [];
  for (const [name, value] of map) {
    if (!/^(x-ratelimit-reset|anthropic-ratelimit-.*reset)/.test(name)) continue;
    const at = parseResetValue(value, now);
    if (at === undefined || at <= now) continue;
    all.push(at);
    if (map.get(name.replace("reset", "remaining"))?.trim() === "0") exhausted.push(at);
  }
  if (exhausted.length > 0) out.resetAt = Math.max(...exhausted);
  else if (all.length > 0) out.resetAt = Math.min(...all);
  return out;
}

const UNIT_MS: Readonly<Record<string, number>> = { mil: 1, min: 60_000, h: 3_600_000 };

/** "try again in 2.004s", "try again after 1 seconds", "Please retry in 32.9s" → ms. */
export function retryDelayFromText(text: string): number | undefined {
  const lead = /(?:try again|retry)(?: in| after)? /.source;
  const worded = new RegExp(
    `${lead}([\\d.]+)\\s*(milliseconds?|seconds?|secs?|minutes?|mins?|hours?)\\b`,
  ).exec(text);
  if (worded?.[1] && worded[2]) {
    const unit = worded[2].slice(0, 3);
    return Math.round(Number(worded[1]) * (UNIT_MS[unit] ?? UNIT_MS[unit.slice(0, 1)] ?? 1000));
  }
  const compact = new RegExp(`${lead}((?:[\\d.]+(?:ms|h|m|s))+)`).exec(text);
  return compact?.[1] ? parseDuration(compact[1]) : undefined;
}
