/**
 * Small pieces the PostgreSQL gateway stores share.
 *
 * Keys that come from outside (a chat's session key, a user id, a route or conversation name, an
 * "always" command) can be any length, and a PostgreSQL btree refuses index entries over about
 * 2.7 kB; so tables key such values by their SHA-256 (`keyDigest`) and keep the text beside it.
 * PostgreSQL text cannot hold the NUL character either: `storableText` refuses it with an error
 * naming the value, where a file store would have written it (JSON documents are stored as text
 * with NUL escaped, so they carry it unharmed).
 */
import { createHash } from "node:crypto";

/** A value a PostgreSQL gateway store cannot keep as given; nothing was written. */
export class PgStoreInputError extends Error {
  override name = "PgStoreInputError";
}

/** SHA-256 of `parts` joined by NUL (a separator no stored part can contain). */
export function keyDigest(...parts: string[]): Buffer {
  return createHash("sha256").update(parts.join("\u0000"), "utf8").digest();
}

/** `value`, refused with a clear error when it contains NUL (PostgreSQL text cannot store it). */
export function storableText(what: string, value: string): string {
  if (typeof value !== "string") throw new PgStoreInputError(`${what} must be text`);
  if (value.includes("\u0000")) {
    throw new PgStoreInputError(`${what} contains a NUL character, which PostgreSQL cannot store`);
  }
  return value;
}

const ARRAY_INDEX = /^(0|[1-9][0-9]*)$/;

/** Whether JavaScript orders `key` as an array index (before every other key of an object). */
function isArrayIndex(key: string): boolean {
  return ARRAY_INDEX.test(key) && Number(key) < 4_294_967_295;
}

/**
 * `rows` (already in insertion order) in the order a JavaScript object with those keys lists
 * them: array-index keys ascending first, then the rest as inserted. The file stores keep JSON
 * objects, so this is the order their listings have.
 */
export function objectKeyOrder<T>(rows: readonly T[], key: (row: T) => string): T[] {
  const indexed = rows.filter((r) => isArrayIndex(key(r)));
  const others = rows.filter((r) => !isArrayIndex(key(r)));
  indexed.sort((a, b) => Number(key(a)) - Number(key(b)));
  return [...indexed, ...others];
}

/** Parses a JSON object stored as text; undefined when it is not one (a damaged row counts as absent). */
export function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
