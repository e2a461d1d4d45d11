/**
 * Which config keys hold secrets, and how to show them without revealing them.
 */
import { isPlainObject } from "./coerce.js";
import { setOwn } from "./merge.js";

const SECRET_NAME =
  /(?:^|_)(?:api_?key|key|token|secret|client_secret|password|passwd|password_hash|credentials?|private_key|access_key|authorization)$/;
// `*_key` names that are not secrets: a hotkey, a file path, a session identifier.
const NOT_SECRET = new Set(["record_key", "ssh_key", "session_key", "sort_key", "primary_key", "hot_key"]);

/**
 * True when a key name (the last segment of a dotted key, or an env var / header name) looks like
 * it holds a secret: `api_key`, `token`, `bot_token`, `*_key`, `password`, `secret`,
 * `Authorization`, `OPENROUTER_API_KEY`. Plurals such as `max_tokens` are not secrets.
 */
export function isSecretKey(name: string): boolean {
  const normalized = name.toLowerCase().replaceAll("-", "_");
  if (NOT_SECRET.has(normalized)) return false;
  return SECRET_NAME.test(normalized) || normalized.endsWith("_key");
}

/** Keeps the first 4 characters of a long secret (`sk-o****`); short ones are masked entirely. */
export function maskSecret(value: string): string {
  if (value.length === 0) return "";
  return value.length <= 8 ? "****" : `${value.slice(0, 4)}****`;
}

/** A deep copy of `value` with the string and number values of secret-looking keys masked. */
export function redactSecrets<T>(value: T): T {
  return redact(value, false) as T;
}

function redact(value: unknown, secret: boolean): unknown {
  if (Array.isArray(value)) return value.map((item) => redact(item, secret));
  if (isPlainObject(value)) {
    const copy: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value)) setOwn(copy, key, redact(child, isSecretKey(key)));
    return copy;
  }
  if (secret && (typeof value === "string" || typeof value === "number")) return maskSecret(String(value));
  return value;
}
