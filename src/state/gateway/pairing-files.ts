/**
 * The pairing store's files, laid out and shaped as Python Hermes writes them
 * (`gateway/pairing.py`), so a home moves between the two implementations unchanged:
 *
 * - `<platform>-pending.json`: `{ <16-hex request id>: {hash, salt, user_id, user_name, created_at} }`
 *   where `hash` is hex SHA-256 of `salt bytes + code`, `salt` 16 random bytes in hex and
 *   `created_at` epoch seconds. Only the hash is stored: the code itself exists only in the DM
 *   sent to the user. Older Hermes wrote `{ <code>: {user_id, user_name, created_at} }`; such
 *   entries are listed until they expire but never approved (as Hermes does).
 * - `<platform>-approved.json`: `{ <user_id>: {user_name, approved_at} }`.
 * - `_rate_limits.json`: `{ "<platform>:<user_id>": last request time,
 *   "_failures:<platform>": consecutive failed approvals, "_lockout:<platform>": lockout end }`.
 *
 * Every file is written atomically with mode 0600. A file that does not parse is reported and
 * never overwritten (Python Hermes would read it as empty and replace it).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { atomicWriteFile } from "../../util/atomic-write.js";

export interface PendingEntry {
  hash?: string;
  salt?: string;
  user_id?: string;
  user_name?: string;
  created_at?: number;
  [extra: string]: unknown;
}

export interface ApprovedEntry {
  user_name?: string;
  approved_at?: number;
  [extra: string]: unknown;
}

export type PendingFile = Record<string, PendingEntry>;
export type ApprovedFile = Record<string, ApprovedEntry>;
export type RateLimitsFile = Record<string, number>;

export const FILE_MODE = 0o600;
export const RATE_LIMITS_FILE = "_rate_limits.json";

/** A pairing file exists but is not a JSON object. Its message names the file and the fix. */
export class PairingFileError extends Error {
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(
      `${path} could not be read as pairing data (${reason}). It was left untouched; fix it, ` +
        "or move it aside to start that list afresh.",
    );
    this.name = "PairingFileError";
  }
}

/**
 * The pairing directory of a home: `<home>/pairing`, unless only the newer Python layout
 * `<home>/platforms/pairing` exists, in which case that one (Hermes prefers the old name when
 * both could apply, so the two implementations always agree).
 */
export function pairingDir(home: string): string {
  const legacy = join(home, "pairing");
  const modern = join(home, "platforms", "pairing");
  if (!existsSync(legacy) && existsSync(modern)) return modern;
  return legacy;
}

export const pendingPath = (dir: string, platform: string): string => join(dir, `${platform}-pending.json`);
export const approvedPath = (dir: string, platform: string): string => join(dir, `${platform}-approved.json`);
export const rateLimitsPath = (dir: string): string => join(dir, RATE_LIMITS_FILE);

/** Reads a JSON object file; `{}` when it does not exist. Throws {@link PairingFileError} otherwise. */
export function readJsonObject<T extends object>(path: string): T {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return {} as T;
    throw new PairingFileError(path, (error as Error).message);
  }
  // Python reads with utf-8-sig: a BOM written by a Windows editor is fine.
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.trim() === "") return {} as T;
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new PairingFileError(path, `invalid JSON: ${(error as Error).message}`);
  }
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    throw new PairingFileError(path, "expected a JSON object");
  }
  return data as T;
}

/** Writes a JSON object atomically with mode 0600, indented like Python's `json.dump(indent=2)`. */
export async function writeJsonObject(path: string, data: object): Promise<void> {
  await atomicWriteFile(path, `${JSON.stringify(data, null, 2)}\n`, { mode: FILE_MODE });
}

/** Platforms with a `<platform>-<suffix>.json` file, sorted; `_`-prefixed files are shared state. */
export function platformsWithFile(dir: string, suffix: "pending" | "approved"): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const tail = `-${suffix}.json`;
  return names
    .filter((n) => n.endsWith(tail) && !n.startsWith("_") && !n.startsWith("."))
    .map((n) => n.slice(0, -tail.length))
    .sort();
}

/** A pending entry written by current Hermes (salted hash), as opposed to a legacy plaintext one. */
export function isHashedEntry(entry: unknown): entry is PendingEntry & { hash: string; salt: string } {
  return (
    typeof entry === "object" &&
    entry !== null &&
    typeof (entry as PendingEntry).hash === "string" &&
    typeof (entry as PendingEntry).salt === "string"
  );
}

/** `created_at` of a pending entry when it is a number; malformed entries count as expired. */
export function createdAt(entry: unknown): number | undefined {
  const value = typeof entry === "object" && entry !== null ? (entry as PendingEntry).created_at : undefined;
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}
