/**
 * DM pairing in PostgreSQL: the same rules as the pairing files (pairing.ts: 8-character codes,
 * 1 h life, one request per user per 10 min, 3 pending per platform, 5 misses lock approvals for
 * 1 h), shared by every instance. Only a salted hash of each code is stored.
 *
 * Every change runs in one transaction that first locks the platform's row in
 * `gateway_pairing_platforms` (`SELECT … FOR UPDATE`): the counterpart of the file lock, so two
 * instances approving the same code approve it once (the other counts a miss), rate limits and
 * the failure streak are counted across instances, and at most 3 requests are ever pending.
 */
import { randomBytes as cryptoRandomBytes, randomInt as cryptoRandomInt } from "node:crypto";
import {
  type ApprovedUser,
  CODE_TTL_SECONDS,
  type CodeRequest,
  codeMatches,
  drawCode,
  hashCode,
  LOCKOUT_SECONDS,
  MAX_FAILED_ATTEMPTS,
  MAX_PENDING_PER_PLATFORM,
  normalizeCode,
  normalizePlatform,
  type PairingRecords,
  PairingUsageError,
  type PairingUser,
  type PendingRequest,
  RATE_LIMIT_SECONDS,
  toHex,
} from "../gateway/pairing.js";
import type { PgDatabase, PgQueryable } from "./database.js";
import { keyDigest, objectKeyOrder, storableText } from "./gateway-common.js";

export interface PgPairingOptions {
  /** Clock in epoch seconds (default: the system clock). */
  now?: () => number;
  /** Uniform integer in [0, max) from a CSPRNG (default `crypto.randomInt`). */
  randomInt?: (max: number) => number;
  /** `n` random bytes for salts and request ids (default `crypto.randomBytes`). */
  randomBytes?: (n: number) => Uint8Array;
}

interface PendingRow {
  platform: string;
  request_id: string;
  hash: string;
  salt: string;
  user_id: string;
  user_name: string;
  created_at: number;
}

interface ApprovedRow {
  platform: string;
  user_id: string;
  user_name: string;
  approved_at: number | null;
}

/** A user id or name as a usage error when PostgreSQL cannot store it. */
function userText(what: string, value: string): string {
  try {
    return storableText(what, value);
  } catch (error) {
    throw new PairingUsageError((error as Error).message);
  }
}

/** Locks the platform's row (creating it) and answers its failure streak and lockout end. */
async function lockPlatform(
  c: PgQueryable,
  platform: string,
): Promise<{ failures: number; lockedUntil: number }> {
  await c.query("INSERT INTO gateway_pairing_platforms (platform) VALUES ($1) ON CONFLICT DO NOTHING", [
    platform,
  ]);
  const [row] = await c.query<{ failures: number; locked_until: number }>(
    "SELECT failures, locked_until FROM gateway_pairing_platforms WHERE platform = $1 FOR UPDATE",
    [platform],
  );
  return { failures: row?.failures ?? 0, lockedUntil: row?.locked_until ?? 0 };
}

/** Drops the platform's requests past their hour (and, when given, the user's own). */
async function dropExpired(c: PgQueryable, platform: string, now: number, userId?: string): Promise<void> {
  await c.query(
    `DELETE FROM gateway_pairing_pending
      WHERE platform = $1 AND ($2::float8 - created_at > $3::float8 OR user_id = $4)`,
    [platform, now, CODE_TTL_SECONDS, userId ?? null],
  );
}

const approvedUser = (r: ApprovedRow): ApprovedUser => ({
  platform: r.platform,
  userId: r.user_id,
  userName: r.user_name,
  approvedAt: r.approved_at ?? undefined,
});

/** Approved users of one platform in the order its file would list them. */
async function approvedOf(c: PgQueryable, platform: string): Promise<ApprovedUser[]> {
  const rows = await c.query<ApprovedRow>(
    "SELECT platform, user_id, user_name, approved_at FROM gateway_pairing_approved WHERE platform = $1 ORDER BY seq",
    [platform],
  );
  return objectKeyOrder(rows, (r) => r.user_id).map(approvedUser);
}

/** Pairing codes and approved users of every instance sharing `db` (migration 300). */
export function pgPairingRecords(db: PgDatabase, options: PgPairingOptions = {}): PairingRecords {
  const clock = options.now ?? (() => Date.now() / 1000);
  const randomInt = options.randomInt ?? ((max: number) => cryptoRandomInt(max));
  const randomBytes = options.randomBytes ?? ((n: number) => cryptoRandomBytes(n));

  async function isApprovedIn(c: PgQueryable, platform: string, userId: string): Promise<boolean> {
    const rows = await c.query(
      "SELECT 1 FROM gateway_pairing_approved WHERE platform = $1 AND user_digest = $2",
      [platform, keyDigest(userId)],
    );
    return rows.length > 0;
  }

  return {
    async requestCode(platform: string, user: PairingUser): Promise<CodeRequest> {
      const p = normalizePlatform(platform);
      const userId = userText("The user id", user.id.trim());
      if (!userId) throw new PairingUsageError("A pairing request needs the sender's user id.");
      const userName = userText("The user name", user.name ?? "");
      return db.tx(async (c) => {
        const now = clock();
        const { lockedUntil } = await lockPlatform(c, p);
        if (now < lockedUntil) return { status: "locked_out", until: lockedUntil };
        if (await isApprovedIn(c, p, userId)) return { status: "already_approved" };
        const digest = keyDigest(userId);
        const [last] = await c.query<{ last_request: number }>(
          "SELECT last_request FROM gateway_pairing_requests WHERE platform = $1 AND user_digest = $2",
          [p, digest],
        );
        if (last && now - last.last_request < RATE_LIMIT_SECONDS) {
          return { status: "rate_limited", retryAt: last.last_request + RATE_LIMIT_SECONDS };
        }
        // A new code supersedes the same user's older one, so one person never holds two slots.
        await dropExpired(c, p, now, userId);
        const [count] = await c.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM gateway_pairing_pending WHERE platform = $1",
          [p],
        );
        if ((count?.n ?? 0) >= MAX_PENDING_PER_PLATFORM) {
          return { status: "too_many_pending", max: MAX_PENDING_PER_PLATFORM };
        }
        const code = drawCode(randomInt);
        const salt = randomBytes(16);
        await c.query(
          `INSERT INTO gateway_pairing_pending (platform, request_id, hash, salt, user_id, user_name, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7)`,
          [p, toHex(randomBytes(8)), hashCode(code, salt), toHex(salt), userId, userName, now],
        );
        await c.query(
          `INSERT INTO gateway_pairing_requests (platform, user_digest, user_id, last_request)
           VALUES ($1, $2, $3, $4)
           ON CONFLICT (platform, user_digest) DO UPDATE SET last_request = EXCLUDED.last_request`,
          [p, digest, userId, now],
        );
        // Request times older than the rate window decide nothing any more.
        await c.query(
          "DELETE FROM gateway_pairing_requests WHERE platform = $1 AND $2::float8 - last_request >= $3::float8",
          [p, now, RATE_LIMIT_SECONDS],
        );
        return { status: "created", code, expiresAt: now + CODE_TTL_SECONDS };
      });
    },

    async approve(platform, code) {
      const p = normalizePlatform(platform);
      const wanted = normalizeCode(code);
      return db.tx(async (c) => {
        const now = clock();
        const { failures, lockedUntil } = await lockPlatform(c, p);
        if (now < lockedUntil) return { status: "locked_out", until: lockedUntil };
        await dropExpired(c, p, now);
        const live = await c.query<PendingRow>(
          "SELECT request_id, hash, salt, user_id, user_name FROM gateway_pairing_pending WHERE platform = $1 ORDER BY seq",
          [p],
        );
        const match = live.find((row) => codeMatches(wanted, row.hash, row.salt));
        if (match) {
          await c.query("DELETE FROM gateway_pairing_pending WHERE platform = $1 AND request_id = $2", [
            p,
            match.request_id,
          ]);
          await c.query(
            `INSERT INTO gateway_pairing_approved (platform, user_digest, user_id, user_name, approved_at)
             VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (platform, user_digest) DO UPDATE
               SET user_name = EXCLUDED.user_name, approved_at = EXCLUDED.approved_at`,
            [p, keyDigest(match.user_id), match.user_id, match.user_name, now],
          );
          if (failures)
            await c.query("UPDATE gateway_pairing_platforms SET failures = 0 WHERE platform = $1", [p]);
          return { status: "approved", platform: p, userId: match.user_id, userName: match.user_name };
        }
        const streak = failures + 1;
        if (streak >= MAX_FAILED_ATTEMPTS) {
          const until = now + LOCKOUT_SECONDS;
          await c.query(
            "UPDATE gateway_pairing_platforms SET failures = 0, locked_until = $2 WHERE platform = $1",
            [p, until],
          );
          return { status: "invalid", attemptsLeft: 0, lockedOutUntil: until };
        }
        await c.query("UPDATE gateway_pairing_platforms SET failures = $2 WHERE platform = $1", [p, streak]);
        return { status: "invalid", attemptsLeft: MAX_FAILED_ATTEMPTS - streak };
      });
    },

    async list() {
      // Expired requests are left out here and deleted under the platform's lock by the next
      // request or approval (deleting them here could deadlock with one).
      const rows = await db.query<PendingRow>(
        `SELECT platform, request_id, user_id, user_name, created_at FROM gateway_pairing_pending
          WHERE $1::float8 - created_at <= $2::float8
          ORDER BY platform COLLATE "C", seq`,
        [clock(), CODE_TTL_SECONDS],
      );
      const pending: PendingRequest[] = rows.map((r) => ({
        platform: r.platform,
        requestId: r.request_id,
        userId: r.user_id,
        userName: r.user_name,
        createdAt: r.created_at,
        expiresAt: r.created_at + CODE_TTL_SECONDS,
      }));
      const approvedRows = await db.query<ApprovedRow>(
        `SELECT platform, user_id, user_name, approved_at FROM gateway_pairing_approved
          ORDER BY platform COLLATE "C", seq`,
      );
      const platforms = [...new Set(approvedRows.map((r) => r.platform))];
      const approved = platforms.flatMap((p) =>
        objectKeyOrder(
          approvedRows.filter((r) => r.platform === p),
          (r) => r.user_id,
        ).map(approvedUser),
      );
      return { pending, approved };
    },

    async listApproved(platform) {
      return approvedOf(db, normalizePlatform(platform));
    },

    async revoke(platform, userId) {
      const p = normalizePlatform(platform);
      const rows = await db.query(
        "DELETE FROM gateway_pairing_approved WHERE platform = $1 AND user_digest = $2 RETURNING 1 AS x",
        [p, keyDigest(userId)],
      );
      return rows.length > 0;
    },

    async deny(platform, requestId) {
      const p = normalizePlatform(platform);
      // No stored id is empty or holds NUL (ids are hex), so such a request matches nothing.
      if (requestId === "" || requestId.includes("\u0000")) return false;
      const rows = await db.query(
        `DELETE FROM gateway_pairing_pending
          WHERE platform = $1 AND request_id = $2 AND $3::float8 - created_at <= $4::float8
          RETURNING 1 AS x`,
        [p, requestId, clock(), CODE_TTL_SECONDS],
      );
      return rows.length > 0;
    },

    async clearPending(platform) {
      const only = platform === undefined ? undefined : normalizePlatform(platform);
      return db.tx(async (c) => {
        // The platforms' locks first, in one order, as every other change takes them.
        await c.query(
          `SELECT platform FROM gateway_pairing_platforms WHERE $1::text IS NULL OR platform = $1
            ORDER BY platform FOR UPDATE`,
          [only ?? null],
        );
        const rows = await c.query(
          "DELETE FROM gateway_pairing_pending WHERE $1::text IS NULL OR platform = $1 RETURNING 1 AS x",
          [only ?? null],
        );
        return rows.length;
      });
    },

    async isApproved(platform, userId) {
      const p = normalizePlatform(platform);
      return userId !== "" && isApprovedIn(db, p, userId);
    },

    async approvedIds(platform) {
      const rows = await db.query<{ user_id: string }>(
        "SELECT user_id FROM gateway_pairing_approved WHERE platform = $1",
        [normalizePlatform(platform)],
      );
      return new Set(rows.map((r) => r.user_id));
    },
  };
}
