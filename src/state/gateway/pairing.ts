/**
 * DM pairing: an unknown user who writes to the bot privately gets a one-time code, and the owner
 * approves it from the command line (`hermes pairing approve telegram ABCD2345`). Same rules as
 * Python Hermes (`gateway/pairing.py`): 8-character codes from a 32-character alphabet without
 * 0/O/1/I, drawn with a CSPRNG; codes live 1 h; one request per user per 10 min; at most 3 pending
 * per platform; 5 failed approvals in a row lock that platform's approvals for 1 h.
 *
 * Only a salted hash of each code is stored, so a code is known to exactly two parties: the user
 * who received it and the owner who types it. No message, log line or error this module produces
 * contains a code; {@link PairingStore.requestCode} returns it once, for the adapter to send.
 *
 * Every read-modify-write runs under one file lock for the pairing directory, and every file is
 * replaced atomically with mode 0600 (see pairing-files.ts for the shapes).
 */
import {
  createHash,
  randomBytes as cryptoRandomBytes,
  randomInt as cryptoRandomInt,
  timingSafeEqual,
} from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { withFileLock } from "../../util/file-lock.js";
import { type Asynchronous, asyncView } from "../async-view.js";
import {
  type ApprovedFile,
  approvedPath,
  createdAt,
  isHashedEntry,
  type PendingFile,
  pairingDir,
  pendingPath,
  platformsWithFile,
  type RateLimitsFile,
  rateLimitsPath,
  readJsonObject,
  writeJsonObject,
} from "./pairing-files.js";

export { PairingFileError, pairingDir } from "./pairing-files.js";

/** Unambiguous alphabet: no 0/O or 1/I. */
export const CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
export const CODE_LENGTH = 8;
export const CODE_TTL_SECONDS = 3600;
export const RATE_LIMIT_SECONDS = 600;
export const LOCKOUT_SECONDS = 3600;
export const MAX_PENDING_PER_PLATFORM = 3;
export const MAX_FAILED_ATTEMPTS = 5;

/** A platform name that is not safe as part of a file name, or a blank user id. */
export class PairingUsageError extends Error {
  override name = "PairingUsageError";
}

export interface PairingStoreOptions {
  /** HERMES_HOME; the store lives in `<home>/pairing` (see {@link pairingDir}). */
  home: string;
  /** Clock in epoch seconds (default: the system clock). */
  now?: () => number;
  /** Uniform integer in [0, max) from a CSPRNG (default `crypto.randomInt`). */
  randomInt?: (max: number) => number;
  /** `n` random bytes for salts and request ids (default `crypto.randomBytes`). */
  randomBytes?: (n: number) => Uint8Array;
  /** How long to wait for another process holding the pairing lock (default 10 s). */
  lockTimeoutMs?: number;
}

export interface PairingUser {
  id: string;
  name?: string | undefined;
}

/** What {@link PairingStore.requestCode} answers. Only `created` carries a code. */
export type CodeRequest =
  | { status: "created"; code: string; expiresAt: number }
  | { status: "already_approved" }
  /** The user asked less than 10 min ago; their earlier code (if still pending) stays valid. */
  | { status: "rate_limited"; retryAt: number }
  | { status: "too_many_pending"; max: number }
  | { status: "locked_out"; until: number };

export type ApproveResult =
  | { status: "approved"; platform: string; userId: string; userName: string }
  /** No live request matches; `lockedOutUntil` is set when this failure started a lockout. */
  | { status: "invalid"; attemptsLeft: number; lockedOutUntil?: number }
  | { status: "locked_out"; until: number };

export interface PendingRequest {
  platform: string;
  /** Server-side request id (16 hex); empty for legacy plaintext entries. Never the code. */
  requestId: string;
  userId: string;
  userName: string;
  createdAt: number;
  expiresAt: number;
}

export interface ApprovedUser {
  platform: string;
  userId: string;
  userName: string;
  approvedAt: number | undefined;
}

const PLATFORM_PATTERN = /^[a-z0-9][a-z0-9_]{0,63}$/;

/** Lower-cases and checks a platform name; throws {@link PairingUsageError} for anything else. */
export function normalizePlatform(platform: string): string {
  const p = platform.trim().toLowerCase();
  if (!PLATFORM_PATTERN.test(p)) {
    throw new PairingUsageError(
      `"${platform.slice(0, 80)}" is not a platform name; use the lower-case name Hermes uses (at most 64 characters), e.g. telegram, discord, slack.`,
    );
  }
  return p;
}

/** Upper-cases and trims what the owner typed; codes are case-insensitive. */
export const normalizeCode = (code: string): string => code.trim().toUpperCase();

/** The stored form of a code: hex SHA-256 of the salt bytes followed by the code. */
export const hashCode = (code: string, salt: Uint8Array): string =>
  createHash("sha256").update(salt).update(code, "utf8").digest("hex");

export const toHex = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex");

/** A fresh code: {@link CODE_LENGTH} characters of {@link CODE_ALPHABET} drawn with `randomInt`. */
export function drawCode(randomInt: (max: number) => number): string {
  let code = "";
  for (let i = 0; i < CODE_LENGTH; i++) code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  return code;
}

/** Whether the normalised `code` is the one stored as `hash` with `salt` (hex both); constant time. */
export function codeMatches(code: string, hash: string, salt: string): boolean {
  if (!/^[0-9a-f]*$/i.test(salt)) return false;
  const actual = Buffer.from(hashCode(code, Buffer.from(salt, "hex")), "hex");
  const expected = Buffer.from(hash, "hex");
  return expected.length === actual.length && timingSafeEqual(actual, expected);
}

/** The pairing store of one home. Methods are async (they take the lock); reads never lock. */
export class PairingStore {
  readonly dir: string;
  readonly #now: () => number;
  readonly #randomInt: (max: number) => number;
  readonly #randomBytes: (n: number) => Uint8Array;
  readonly #lockTimeoutMs: number;

  constructor(options: PairingStoreOptions) {
    this.dir = pairingDir(options.home);
    this.#now = options.now ?? (() => Date.now() / 1000);
    this.#randomInt = options.randomInt ?? ((max) => cryptoRandomInt(max));
    this.#randomBytes = options.randomBytes ?? ((n) => cryptoRandomBytes(n));
    this.#lockTimeoutMs = options.lockTimeoutMs ?? 10_000;
  }

  /**
   * Issues a code for an unknown user who asked in a DM. Returns the code once (for the adapter to
   * send to that user and nowhere else), or why none was issued. A user who asks again while their
   * code is pending gets `rate_limited` within 10 min, and a fresh code replacing the old after.
   */
  async requestCode(platform: string, user: PairingUser): Promise<CodeRequest> {
    const p = normalizePlatform(platform);
    const userId = user.id.trim();
    if (!userId) throw new PairingUsageError("A pairing request needs the sender's user id.");
    return this.#locked(async () => {
      const now = this.#now();
      const limits = this.#limits();
      const lockout = limits[`_lockout:${p}`] ?? 0;
      if (now < lockout) return { status: "locked_out", until: lockout };
      if (Object.hasOwn(this.#approved(p), userId)) return { status: "already_approved" };
      const last = limits[`${p}:${userId}`];
      if (last !== undefined && now - last < RATE_LIMIT_SECONDS) {
        return { status: "rate_limited", retryAt: last + RATE_LIMIT_SECONDS };
      }
      const pending = this.#livePending(p, now);
      // A new code supersedes the same user's older one, so one person never holds two slots.
      for (const [id, entry] of Object.entries(pending)) if (entry.user_id === userId) delete pending[id];
      if (Object.keys(pending).length >= MAX_PENDING_PER_PLATFORM) {
        await this.#savePending(p, pending);
        return { status: "too_many_pending", max: MAX_PENDING_PER_PLATFORM };
      }
      const code = drawCode(this.#randomInt);
      const salt = this.#randomBytes(16);
      pending[toHex(this.#randomBytes(8))] = {
        hash: hashCode(code, salt),
        salt: toHex(salt),
        user_id: userId,
        user_name: user.name ?? "",
        created_at: now,
      };
      await this.#savePending(p, pending);
      limits[`${p}:${userId}`] = now;
      await writeJsonObject(rateLimitsPath(this.dir), limits);
      return { status: "created", code, expiresAt: now + CODE_TTL_SECONDS };
    });
  }

  /**
   * Approves the user whose pending request matches `code` on `platform`. A miss counts toward
   * the lockout (5 in a row lock the platform's approvals for 1 h); a success resets the count.
   * While locked out, even a valid code is refused, so a guessed code cannot slip through.
   */
  async approve(platform: string, code: string): Promise<ApproveResult> {
    const p = normalizePlatform(platform);
    const wanted = normalizeCode(code);
    return this.#locked(async () => {
      const now = this.#now();
      const limits = this.#limits();
      const lockout = limits[`_lockout:${p}`] ?? 0;
      if (now < lockout) return { status: "locked_out", until: lockout };
      const pending = this.#livePending(p, now);
      for (const [id, entry] of Object.entries(pending)) {
        if (!isHashedEntry(entry) || !codeMatches(wanted, entry.hash, entry.salt)) continue;
        delete pending[id];
        await this.#savePending(p, pending);
        const userId = String(entry.user_id ?? "");
        const userName = String(entry.user_name ?? "");
        const approved = this.#approved(p);
        // Defined, not assigned: a user id like `__proto__` is a key like any other.
        Object.defineProperty(approved, userId, {
          value: { user_name: userName, approved_at: now },
          enumerable: true,
          writable: true,
          configurable: true,
        });
        await writeJsonObject(approvedPath(this.dir, p), approved);
        if (limits[`_failures:${p}`]) {
          limits[`_failures:${p}`] = 0;
          await writeJsonObject(rateLimitsPath(this.dir), limits);
        }
        return { status: "approved", platform: p, userId, userName };
      }
      await this.#savePending(p, pending);
      const failures = (limits[`_failures:${p}`] ?? 0) + 1;
      if (failures >= MAX_FAILED_ATTEMPTS) {
        limits[`_failures:${p}`] = 0;
        limits[`_lockout:${p}`] = now + LOCKOUT_SECONDS;
        await writeJsonObject(rateLimitsPath(this.dir), limits);
        return { status: "invalid", attemptsLeft: 0, lockedOutUntil: now + LOCKOUT_SECONDS };
      }
      limits[`_failures:${p}`] = failures;
      await writeJsonObject(rateLimitsPath(this.dir), limits);
      return { status: "invalid", attemptsLeft: MAX_FAILED_ATTEMPTS - failures };
    });
  }

  /** Live pending requests and approved users of every platform (expired requests are dropped). */
  async list(): Promise<{ pending: PendingRequest[]; approved: ApprovedUser[] }> {
    return this.#locked(async () => {
      const now = this.#now();
      const pending: PendingRequest[] = [];
      for (const p of platformsWithFile(this.dir, "pending")) {
        const live = this.#livePending(p, now);
        await this.#savePending(p, live);
        for (const [id, entry] of Object.entries(live)) {
          const created = createdAt(entry) ?? now;
          pending.push({
            platform: p,
            requestId: isHashedEntry(entry) ? id : "",
            userId: String(entry.user_id ?? ""),
            userName: String(entry.user_name ?? ""),
            createdAt: created,
            expiresAt: created + CODE_TTL_SECONDS,
          });
        }
      }
      const approved = platformsWithFile(this.dir, "approved").flatMap((p) => this.listApproved(p));
      return { pending, approved };
    });
  }

  /** Approved users of one platform, in file order. Reads without locking. */
  listApproved(platform: string): ApprovedUser[] {
    const p = normalizePlatform(platform);
    return Object.entries(this.#approved(p)).map(([userId, info]) => ({
      platform: p,
      userId,
      userName: typeof info?.user_name === "string" ? info.user_name : "",
      approvedAt: typeof info?.approved_at === "number" ? info.approved_at : undefined,
    }));
  }

  /** Removes a user's approval. Returns false when they were not approved on that platform. */
  async revoke(platform: string, userId: string): Promise<boolean> {
    const p = normalizePlatform(platform);
    return this.#locked(async () => {
      const approved = this.#approved(p);
      if (!Object.hasOwn(approved, userId)) return false;
      delete approved[userId];
      await writeJsonObject(approvedPath(this.dir, p), approved);
      return true;
    });
  }

  /**
   * Drops one pending request by its server-side id (never the code), as a refusal. Returns false
   * when no live request of that platform has the id.
   */
  async deny(platform: string, requestId: string): Promise<boolean> {
    const p = normalizePlatform(platform);
    return this.#locked(async () => {
      const live = this.#livePending(p, this.#now());
      if (requestId === "" || !Object.hasOwn(live, requestId)) return false;
      delete live[requestId];
      await this.#savePending(p, live);
      return true;
    });
  }

  /** Drops pending requests of one platform, or of all. Returns how many were dropped. */
  async clearPending(platform?: string): Promise<number> {
    const only = platform === undefined ? undefined : normalizePlatform(platform);
    return this.#locked(async () => {
      let count = 0;
      for (const p of only ? [only] : platformsWithFile(this.dir, "pending")) {
        const pending = readJsonObject<PendingFile>(pendingPath(this.dir, p));
        const n = Object.keys(pending).length;
        if (n === 0) continue;
        count += n;
        await writeJsonObject(pendingPath(this.dir, p), {});
      }
      return count;
    });
  }

  /** Whether the user was approved through pairing on the platform. Reads without locking. */
  isApproved(platform: string, userId: string): boolean {
    return userId !== "" && Object.hasOwn(this.#approved(normalizePlatform(platform)), userId);
  }

  /** The approved user ids of a platform, for {@link authorize}'s `approved` set. */
  approvedIds(platform: string): Set<string> {
    return new Set(Object.keys(this.#approved(normalizePlatform(platform))));
  }

  #approved(platform: string): ApprovedFile {
    return readJsonObject<ApprovedFile>(approvedPath(this.dir, platform));
  }

  /** `_rate_limits.json` with non-numeric values dropped (they would compare as garbage). */
  #limits(): RateLimitsFile {
    const raw = readJsonObject<Record<string, unknown>>(rateLimitsPath(this.dir));
    const limits: RateLimitsFile = {};
    for (const [key, value] of Object.entries(raw)) {
      if (typeof value === "number" && Number.isFinite(value)) limits[key] = value;
    }
    return limits;
  }

  /** Pending entries still within their TTL; malformed ones count as expired, as in Hermes. */
  #livePending(platform: string, now: number): PendingFile {
    const all = readJsonObject<PendingFile>(pendingPath(this.dir, platform));
    const live: PendingFile = {};
    for (const [id, entry] of Object.entries(all)) {
      const created = createdAt(entry);
      if (created !== undefined && now - created <= CODE_TTL_SECONDS) live[id] = entry;
    }
    return live;
  }

  /** Writes the pending file only when it changed on disk, so reads do not churn files. */
  async #savePending(platform: string, pending: PendingFile): Promise<void> {
    const path = pendingPath(this.dir, platform);
    const current = readJsonObject<PendingFile>(path);
    if (JSON.stringify(current) === JSON.stringify(pending)) return;
    await writeJsonObject(path, pending);
  }

  #locked<T>(fn: () => Promise<T>): Promise<T> {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    return withFileLock(join(this.dir, "_pairing"), fn, {
      timeoutMs: this.#lockTimeoutMs,
      lockPath: join(this.dir, ".pairing.lock"),
    });
  }
}

const PAIRING_METHODS = [
  "requestCode",
  "approve",
  "list",
  "listApproved",
  "revoke",
  "deny",
  "clearPending",
  "isApproved",
  "approvedIds",
] as const;

/**
 * Pairing codes and the approved-users allowlist as a backend other than the JSON files provides
 * them (asynchronous, see async-view.ts); `pairingRecords` puts `PairingStore` behind it.
 */
export type PairingRecords = Asynchronous<Pick<PairingStore, (typeof PAIRING_METHODS)[number]>>;

export function pairingRecords(store: PairingStore): PairingRecords {
  return asyncView(store, PAIRING_METHODS);
}
